package entropy

import "io"

// Decoder reads a stream written by Encoder, one symbol at a time in the
// order they were encoded. The table for each symbol may depend on every
// symbol decoded before it: decoding a symbol is
//
//	t, err := d.Target(prec)          // t in [0, 2^prec)
//	s := Lookup(cum, t)               // the symbol whose slice holds t
//	err = d.Consume(cum[s], cum[s+1]-cum[s])
//
// or d.DecodeSymbol(cum, prec), which does the three steps. After the last
// symbol, Finish checks that the stream ended exactly there.
//
// The Decoder never reads beyond its input: past the last byte it supplies
// zeros (the encoder's flush relies on them), at most 6 of them; needing a
// 7th means the input was truncated (ErrTruncated). Invalid input gives
// errors, never panics; the first error is sticky.
type Decoder struct {
	code uint64 // value - low, in [0, rng)
	rng  uint64 // as in Encoder
	r    uint64 // rng / total from the last Target; 0: none pending
	tot  uint64 // total from the last Target

	src     []byte    // input (buffer form) or the read buffer (streaming)
	pos     int       // next byte of src
	base    int64     // stream offset of src[0]
	rd      io.Reader // nil: buffer form
	eof     bool      // rd is exhausted
	virtual int       // zero bytes supplied past the end of the input
	err     error     // sticky
}

// NewDecoder returns a Decoder that reads the stream from r. The stream must
// be r's whole remaining content (wrap r in an io.LimitReader or
// io.SectionReader when the stream is followed by other data): the Decoder
// reads ahead in chunks and Finish expects io.EOF right after the stream.
// It reads the first bytes at once and returns their error, if any.
func NewDecoder(r io.Reader) (*Decoder, error) {
	d := &Decoder{}
	return d, d.Reset(r)
}

// NewDecoderBytes returns a Decoder for the whole-buffer form. It does not
// copy src; src must not change while the Decoder uses it.
func NewDecoderBytes(src []byte) (*Decoder, error) {
	d := &Decoder{}
	return d, d.ResetBytes(src)
}

// Reset starts decoding a new stream read from r, reusing the Decoder's
// buffer. See NewDecoder.
func (d *Decoder) Reset(r io.Reader) error {
	buf := d.src
	if d.rd == nil || cap(buf) < 4096 {
		buf = make([]byte, 4096)
	}
	*d = Decoder{src: buf[:0], rd: r}
	return d.start()
}

// ResetBytes starts decoding a new stream held in src. See NewDecoderBytes.
func (d *Decoder) ResetBytes(src []byte) error {
	*d = Decoder{src: src}
	return d.start()
}

func (d *Decoder) start() error {
	d.rng = fullRange
	for range windowLen {
		b, err := d.next()
		if err != nil {
			d.err = err
			return err
		}
		d.code = d.code<<8 | uint64(b)
	}
	return nil
}

// next returns the next input byte, or a virtual zero past the end.
func (d *Decoder) next() (byte, error) {
	if d.pos < len(d.src) {
		b := d.src[d.pos]
		d.pos++
		return b, nil
	}
	if d.rd != nil && !d.eof {
		if err := d.fill(); err != nil {
			return 0, err
		}
		if d.pos < len(d.src) {
			b := d.src[d.pos]
			d.pos++
			return b, nil
		}
	}
	d.virtual++
	if d.virtual > tailZeros {
		return 0, atByte(ErrTruncated, d.offset())
	}
	return 0, nil
}

// fill reads the next chunk of a streaming input; at EOF it sets d.eof.
func (d *Decoder) fill() error {
	d.base += int64(len(d.src))
	d.src = d.src[:cap(d.src)]
	d.pos = 0
	for tries := 0; ; tries++ {
		n, err := d.rd.Read(d.src)
		if n > 0 {
			d.src = d.src[:n]
			return nil
		}
		if err == io.EOF {
			d.src = d.src[:0]
			d.eof = true
			return nil
		}
		if err != nil {
			d.src = d.src[:0]
			return err
		}
		if tries >= 100 {
			d.src = d.src[:0]
			return io.ErrNoProgress
		}
	}
}

// offset is the stream offset of the next byte.
func (d *Decoder) offset() int64 {
	return d.base + int64(d.pos) + int64(d.virtual)
}

// Target returns the position t in [0, 2^prec) of the next symbol within a
// table whose total is 2^prec: the symbol is the one whose slice
// [cum, cum+freq) holds t. Follow it with Consume. A t outside the table is
// ErrCorrupt.
func (d *Decoder) Target(prec uint) (uint32, error) {
	if d.err != nil {
		return 0, d.err
	}
	if prec-1 >= MaxPrecision {
		return 0, ErrBadPrecision
	}
	d.r = d.rng >> prec
	d.tot = 1 << prec
	t := d.code / d.r
	if t >= d.tot {
		d.r = 0
		d.err = atByte(ErrCorrupt, d.offset())
		return 0, d.err
	}
	return uint32(t), nil
}

// TargetTotal is Target for a table whose total is any value in
// [1, MaxTotal] (see Encoder.EncodeTotal).
func (d *Decoder) TargetTotal(total uint32) (uint32, error) {
	if d.err != nil {
		return 0, d.err
	}
	if total == 0 || total > MaxTotal {
		return 0, ErrBadPrecision
	}
	d.r = d.rng / uint64(total)
	d.tot = uint64(total)
	t := d.code / d.r
	if t >= d.tot {
		d.r = 0
		d.err = atByte(ErrCorrupt, d.offset())
		return 0, d.err
	}
	return uint32(t), nil
}

// Consume removes the symbol owning [cum, cum+freq) from the stream; the slice
// must hold the target returned by the Target or TargetTotal call just before
// (ErrBadFrequency otherwise, which leaves the Decoder unchanged).
func (d *Decoder) Consume(cum, freq uint32) error {
	if d.err != nil {
		return d.err
	}
	if d.r == 0 {
		return ErrNoTarget
	}
	if freq == 0 || uint64(cum)+uint64(freq) > d.tot {
		return ErrBadFrequency
	}
	lo := d.r * uint64(cum)
	if d.code < lo || d.code-lo >= d.r*uint64(freq) {
		return ErrBadFrequency
	}
	d.code -= lo
	d.rng = d.r * uint64(freq)
	d.r = 0
	for d.rng < minRange {
		b, err := d.next()
		if err != nil {
			d.err = err
			return err
		}
		d.code = d.code<<8 | uint64(b)
		d.rng <<= 8
	}
	return nil
}

// DecodeSymbol decodes one symbol with the cumulative table cum (len n+1,
// cum[0] = 0, cum[n] = 2^prec, see CumulativeTo) and returns it. A table
// that is not of that form gives ErrBadFrequency, never a panic.
func (d *Decoder) DecodeSymbol(cum []uint32, prec uint) (int, error) {
	if len(cum) < 2 || prec-1 >= MaxPrecision || cum[len(cum)-1] != 1<<prec {
		if d.err != nil {
			return 0, d.err
		}
		return 0, ErrBadFrequency
	}
	t, err := d.Target(prec)
	if err != nil {
		return 0, err
	}
	s := Lookup(cum, t)
	if err := d.Consume(cum[s], cum[s+1]-cum[s]); err != nil {
		d.r = 0
		return 0, err
	}
	return s, nil
}

// Finish checks that the stream ends after the symbols decoded so far: the
// input must be exactly used up (ErrTrailingData if bytes remain, which is
// also what decoding too few symbols looks like) and its last byte must be
// the one the encoder's flush writes (ErrCorrupt otherwise).
func (d *Decoder) Finish() error {
	if d.err != nil {
		return d.err
	}
	if d.virtual < tailZeros {
		return atByte(ErrTrailingData, d.offset()-int64(tailZeros-d.virtual))
	}
	// Streaming: virtual > 0 only after EOF, so nothing is left to read.
	// The encoder wrote V, the first multiple of 2^48 at or above low, so
	// code = V - low < 2^48.
	if d.code >= minRange {
		return atByte(ErrCorrupt, d.offset()-int64(windowLen))
	}
	return nil
}
