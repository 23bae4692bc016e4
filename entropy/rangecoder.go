package entropy

import (
	"io"
	"math"
)

// Range coder with a 56-bit window, carry propagation and byte-wise output
// (the LZMA "cache + pending 0xFF" scheme, Schindler style, widened from a
// 32-bit to a 56-bit window).
//
// State: low in [0, 2^57) is the bottom of the current interval inside the
// window (bit 56 is a carry not yet added to the bytes already out); rng in
// [2^48, 2^56] is its width. Coding a symbol with cumulative frequency c and
// frequency f out of a total T is
//
//	r   = rng / T         (rng >> prec when T = 2^prec)
//	low = low + r*c
//	rng = r*f
//
// and while rng < 2^48 the top byte of the window is shifted out and rng is
// multiplied by 256.
//
// Loss. The slice of width rng - r*T at the top of the interval is never
// used, so a symbol costs at most log2(rng/(r*T)) <= log2(1 + T/rng) extra
// bits, and since rng >= 2^48 that is below T/2^48/ln2 bits: 8.6e-8 bit at
// T = 2^24 and 1.4e-6 bit at T = 2^28. A 32-bit range (LZMA) with a 24-bit
// total would leave r as small as 1 and lose up to a bit per symbol.
//
// Carries. low + rng <= 2^57 holds after every step (it holds after a shift,
// where low < 2^56 and rng <= 2^56, and coding only shrinks the interval), so
// at most one carry bit sits above the window. A top byte of 0xFF might still
// receive that carry, so it is counted in pending instead of written; the byte
// before the 0xFF run waits in cache. When a byte that cannot receive a carry
// arrives, cache+carry and the pending run (0xFF+carry each) are written and
// are final.
//
// Flush. Close picks V, the smallest multiple of 2^48 at or above low. As
// rng >= 2^48, V lies inside [low, low+rng), so one byte of V is enough: the
// decoder reads zeros past the end of the input. The first byte the cache
// scheme produces is always 0 (nothing can carry into it) and is not written.
// So a stream of n shifted bytes is n+1 bytes long, and a decoder that has
// read 7+n bytes (its 7-byte window plus one per shift) has read exactly 6
// virtual zeros past the end: that is how Finish recognises the end, and a
// decoder that needs a 7th virtual byte knows the input was truncated.

const (
	// MaxPrecision is the largest precision (log2 of a table's total) the
	// coder accepts.
	MaxPrecision = 28
	// MaxTotal is the largest total frequency accepted by EncodeTotal and
	// TargetTotal: 2^MaxPrecision.
	MaxTotal = 1 << MaxPrecision

	windowBits = 56
	windowMask = 1<<windowBits - 1
	topShift   = windowBits - 8 // the top byte of the window
	minRange   = 1 << topShift  // renormalise below this
	fullRange  = 1 << windowBits
	windowLen  = windowBits / 8 // bytes the decoder holds
	tailZeros  = windowLen - 1  // virtual zero bytes a finished decoder has read

	streamChunk = 32 << 10 // streaming encoder writes in chunks of this size
)

// Encoder writes a range-coded stream. Symbols are coded in the order given
// and the Decoder returns them in the same order.
//
// The zero value is not usable; create one with NewEncoder. After Close the
// stream is complete: a streaming Encoder has written it to its io.Writer, a
// buffer Encoder returns it from Bytes.
type Encoder struct {
	low     uint64 // [0, 2^57): interval bottom in the window, plus carry bit
	rng     uint64 // [2^48, 2^56]: interval width
	cache   byte   // last top byte, waiting to see whether a carry reaches it
	pending int64  // number of 0xFF bytes after cache, waiting likewise
	first   bool   // cache holds the virtual leading zero byte
	shifts  int64  // bytes shifted out of the window so far

	buf     []byte    // bytes that are final but not yet handed to w
	base    int       // len(buf) when the stream started (buffer form)
	w       io.Writer // nil: buffer form
	written int64     // bytes already handed to w
	err     error     // sticky
	closed  bool
}

// NewEncoder returns an Encoder. With a non-nil w it streams: final bytes are
// written to w in chunks and the rest at Close; w's errors are returned by
// the next Encode call or by Close. With w == nil it is the whole-buffer form:
// the stream accumulates in memory and Bytes returns it after Close.
func NewEncoder(w io.Writer) *Encoder {
	e := &Encoder{}
	e.Reset(w)
	return e
}

// Reset discards any state and starts a new stream written to w (nil: the
// buffer form, reusing the Encoder's buffer).
func (e *Encoder) Reset(w io.Writer) {
	e.ResetBuffer(e.buf[:0])
	e.w = w
}

// ResetBuffer starts a new stream in the buffer form that is appended to dst:
// after Close, Bytes returns dst followed by the stream.
func (e *Encoder) ResetBuffer(dst []byte) {
	*e = Encoder{
		rng:   fullRange,
		first: true,
		buf:   dst,
		base:  len(dst),
	}
}

// Encode codes the symbol that owns [cum, cum+freq) of a table whose total is
// 2^prec. It needs 1 <= prec <= MaxPrecision, freq >= 1 and
// cum+freq <= 2^prec; otherwise it returns ErrBadFrequency or
// ErrBadPrecision and the Encoder stays failed.
func (e *Encoder) Encode(cum, freq uint32, prec uint) error {
	if e.err != nil {
		return e.err
	}
	if prec-1 >= MaxPrecision {
		return e.fail(ErrBadPrecision)
	}
	if freq == 0 || uint64(cum)+uint64(freq) > 1<<prec {
		return e.fail(ErrBadFrequency)
	}
	r := e.rng >> prec
	e.low += r * uint64(cum)
	e.rng = r * uint64(freq)
	if e.rng < minRange {
		e.renormalise()
	}
	return e.err
}

// EncodeTotal is Encode for a table whose total is any value in
// [1, MaxTotal], not only a power of two (adaptive models). It costs a
// division per symbol.
func (e *Encoder) EncodeTotal(cum, freq, total uint32) error {
	if e.err != nil {
		return e.err
	}
	if total == 0 || total > MaxTotal {
		return e.fail(ErrBadPrecision)
	}
	if freq == 0 || uint64(cum)+uint64(freq) > uint64(total) {
		return e.fail(ErrBadFrequency)
	}
	r := e.rng / uint64(total)
	e.low += r * uint64(cum)
	e.rng = r * uint64(freq)
	if e.rng < minRange {
		e.renormalise()
	}
	return e.err
}

// EncodeSymbol codes symbol s of the cumulative table cum (len n+1, cum[0] = 0,
// cum[n] = 2^prec; see CumulativeTo).
func (e *Encoder) EncodeSymbol(s int, cum []uint32, prec uint) error {
	if s < 0 || s+1 >= len(cum) {
		return e.fail(ErrBadFrequency)
	}
	if prec-1 < MaxPrecision && cum[len(cum)-1] != 1<<prec {
		return e.fail(ErrBadFrequency)
	}
	return e.Encode(cum[s], cum[s+1]-cum[s], prec)
}

func (e *Encoder) renormalise() {
	for e.rng < minRange {
		e.rng <<= 8
		e.shiftLow()
	}
	if e.w != nil && len(e.buf) >= streamChunk {
		e.writeOut()
	}
}

// shiftLow moves the top byte of the window out (into cache or pending).
func (e *Encoder) shiftLow() {
	e.shifts++
	if e.low < 0xFF<<topShift || e.low >= fullRange {
		carry := byte(e.low >> windowBits)
		if e.first {
			e.first = false // the virtual leading zero; carry cannot reach it
		} else {
			e.buf = append(e.buf, e.cache+carry)
		}
		for ; e.pending > 0; e.pending-- {
			e.buf = append(e.buf, 0xFF+carry)
		}
		e.cache = byte(e.low >> topShift)
	} else {
		e.pending++
	}
	e.low = (e.low << 8) & windowMask
}

func (e *Encoder) writeOut() {
	if e.w == nil || len(e.buf) == 0 {
		return
	}
	n, err := e.w.Write(e.buf)
	e.written += int64(n)
	if err == nil && n < len(e.buf) {
		err = io.ErrShortWrite
	}
	e.buf = e.buf[:0]
	if err != nil && e.err == nil {
		e.err = err
	}
}

func (e *Encoder) fail(err error) error {
	if e.err == nil {
		e.err = err
	}
	return e.err
}

// Close ends the stream (one flush byte, see the package doc) and, for a
// streaming Encoder, writes everything left to w. It returns the first error
// met by any call. Calling Close twice returns ErrClosed the second time;
// Encode after Close returns ErrClosed.
func (e *Encoder) Close() error {
	if e.closed {
		return ErrClosed
	}
	e.closed = true
	if e.err != nil {
		return e.err
	}
	// V = ceil(low / 2^48) * 2^48 lies in [low, low+rng) because rng >= 2^48.
	e.low = (e.low + (minRange - 1)) &^ (minRange - 1)
	shifts := e.shifts
	e.shiftLow()      // V's top byte (with its carry) into the cache
	e.shiftLow()      // low is now 0: writes the cache
	e.shifts = shifts // CodedBits excludes the flush
	e.writeOut()
	err := e.err
	e.err = ErrClosed
	return err
}

// Len returns the number of stream bytes produced so far (written to w or
// held in memory, excluding a buffer form's dst prefix). After Close it is
// the length of the stream.
func (e *Encoder) Len() int64 {
	n := e.written + int64(len(e.buf))
	if e.w == nil {
		n -= int64(e.base)
	}
	return n
}

// CodedBits returns the exact information the stream holds so far, in bits,
// before the flush: 8*(bytes shifted out) + log2(2^56/range). It is at least
// the sum of the symbols' ideal code lengths; the excess is the coder's
// rounding loss. It ignores the flush, also after Close, so after Close
// 8*Len() - CodedBits() is the flush cost. It is for measurement (float64,
// math.Log2).
func (e *Encoder) CodedBits() float64 {
	return float64(8*e.shifts) + windowBits - math.Log2(float64(e.rng))
}

// Bytes returns, for the buffer form, dst (from ResetBuffer, or empty)
// followed by the stream. Before Close the stream is incomplete. The slice
// aliases the Encoder's buffer, which Reset reuses. For a streaming Encoder it
// returns nil.
func (e *Encoder) Bytes() []byte {
	if e.w != nil {
		return nil
	}
	return e.buf
}
