package entropy

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// randTable returns a random table of n symbols totalling 2^prec: a
// quantised random distribution whose shape (flat, peaked, sparse) depends
// on the draw.
func randTable(rng *rand.Rand, n int, prec uint) []uint32 {
	p := make([]float32, n)
	switch rng.IntN(4) {
	case 0: // flat-ish
		for i := range p {
			p[i] = rng.Float32() + 0.01
		}
	case 1: // one symbol near 100%
		for i := range p {
			p[i] = rng.Float32() * 1e-9
		}
		p[rng.IntN(n)] = 1
	case 2: // sparse
		for i := range p {
			if rng.IntN(4) == 0 {
				p[i] = rng.Float32()
			}
		}
		p[rng.IntN(n)] += 0.5
	default: // geometric
		x := float32(1)
		r := 0.3 + 0.69*rng.Float32()
		for _, i := range rng.Perm(n) {
			p[i] = x
			x *= r
		}
	}
	t, err := QuantizeProbsTo(nil, p, prec)
	if err != nil {
		panic(err)
	}
	return t
}

// sample draws a symbol from a cumulative table.
func sample(rng *rand.Rand, cum []uint32) int {
	return Lookup(cum, uint32(rng.Uint64N(uint64(cum[len(cum)-1]))))
}

// codedSeq is a sequence of symbols, each with its own table.
type codedSeq struct {
	sym  []int
	cum  [][]uint32
	prec []uint
}

func randSeq(rng *rand.Rand, count int) codedSeq {
	var q codedSeq
	for range count {
		n := []int{2, 3, 17, 64, 64, 256}[rng.IntN(6)]
		prec := uint(8 + rng.IntN(MaxPrecision-7))
		if n > 1<<prec {
			prec = 9
		}
		cum := CumulativeTo(nil, randTable(rng, n, prec))
		q.sym = append(q.sym, sample(rng, cum))
		q.cum = append(q.cum, cum)
		q.prec = append(q.prec, prec)
	}
	return q
}

func (q codedSeq) encode(t testing.TB, w io.Writer) *Encoder {
	t.Helper()
	e := NewEncoder(w)
	for i, s := range q.sym {
		if err := e.EncodeSymbol(s, q.cum[i], q.prec[i]); err != nil {
			t.Fatalf("symbol %d: %v", i, err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return e
}

// decode decodes q's symbols from d and returns the first error (of
// decoding or Finish).
func (q codedSeq) decode(d *Decoder) ([]int, error) {
	var got []int
	for i := range q.sym {
		s, err := d.DecodeSymbol(q.cum[i], q.prec[i])
		if err != nil {
			return got, err
		}
		got = append(got, s)
	}
	return got, d.Finish()
}

func TestRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	streams := 300
	if testing.Short() {
		streams = 40
	}
	for k := range streams {
		q := randSeq(rng, rng.IntN(2000))
		buf := q.encode(t, nil).Bytes()

		var sb bytes.Buffer
		e := q.encode(t, &sb)
		if !bytes.Equal(sb.Bytes(), buf) || e.Len() != int64(len(buf)) {
			t.Fatalf("stream %d: streaming and buffer forms differ (%d vs %d bytes)", k, sb.Len(), len(buf))
		}
		d, err := NewDecoderBytes(buf)
		if err != nil {
			t.Fatal(err)
		}
		got, err := q.decode(d)
		if err != nil {
			t.Fatalf("stream %d (%d symbols, %d bytes): %v", k, len(q.sym), len(buf), err)
		}
		if !equalInts(got, q.sym) {
			t.Fatalf("stream %d: symbols differ", k)
		}
		// Streaming decoder over a reader that returns one byte at a time.
		d, err = NewDecoder(iotest.OneByteReader(bytes.NewReader(buf)))
		if err != nil {
			t.Fatal(err)
		}
		got, err = q.decode(d)
		if err != nil || !equalInts(got, q.sym) {
			t.Fatalf("stream %d: streaming decoder: %v", k, err)
		}
	}
}

func TestRoundTripExtremes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, prec := range []uint{8, 12, 16, 24, MaxPrecision} {
		for _, n := range []int{2, 64, 256} {
			if n > 1<<prec {
				continue
			}
			uniform := make([]float32, n)
			peaked := make([]float32, n)
			for i := range uniform {
				uniform[i] = 1
			}
			peaked[n/2] = 1 // every other symbol gets frequency 1
			for _, probs := range [][]float32{uniform, peaked} {
				freq, err := QuantizeProbsTo(nil, probs, prec)
				if err != nil {
					t.Fatal(err)
				}
				cum := CumulativeTo(nil, freq)
				var q codedSeq
				for i := range 20000 {
					s := Mode(freq)
					if i%97 == 0 || probs[0] == 1 {
						s = rng.IntN(n) // rare symbols too
					}
					q.sym = append(q.sym, s)
					q.cum = append(q.cum, cum)
					q.prec = append(q.prec, prec)
				}
				buf := q.encode(t, nil).Bytes()
				d, _ := NewDecoderBytes(buf)
				got, err := q.decode(d)
				if err != nil || !equalInts(got, q.sym) {
					t.Fatalf("prec %d n %d: %v", prec, n, err)
				}
			}
		}
	}
}

func TestEncodeTotalRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	type step struct{ cum, freq, total uint32 }
	var steps []step
	e := NewEncoder(nil)
	for range 5000 {
		total := uint32(2 + rng.IntN(MaxTotal-1))
		if rng.IntN(2) == 0 {
			total = uint32(2 + rng.IntN(1000))
		}
		cum := uint32(rng.IntN(int(total)))
		freq := 1 + uint32(rng.IntN(int(total-cum)))
		steps = append(steps, step{cum, freq, total})
		if err := e.EncodeTotal(cum, freq, total); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := NewDecoderBytes(e.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		x, err := d.TargetTotal(s.total)
		if err != nil {
			t.Fatal(err)
		}
		if x < s.cum || x >= s.cum+s.freq {
			t.Fatalf("step %d: target %d outside [%d, %d)", i, x, s.cum, s.cum+s.freq)
		}
		if err := d.Consume(s.cum, s.freq); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
}

func TestEmptyStream(t *testing.T) {
	e := NewEncoder(nil)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if got := e.Bytes(); len(got) != 1 {
		t.Fatalf("empty stream is %x, want 1 byte", got)
	}
	d, err := NewDecoderBytes(e.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, err := NewDecoderBytes(nil); !errors.Is(err, ErrTruncated) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("empty input: %v, want ErrTruncated", err)
	}
}

func TestTruncatedAndTrailing(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for k := range 20 {
		q := randSeq(rng, 50+rng.IntN(300))
		buf := q.encode(t, nil).Bytes()
		for cut := range len(buf) {
			for _, form := range []string{"bytes", "reader"} {
				var d *Decoder
				var err error
				src := buf[:cut:cut] // cap = len: a read past the end would panic
				if form == "bytes" {
					d, err = NewDecoderBytes(src)
				} else {
					d, err = NewDecoder(bytes.NewReader(src))
				}
				if err == nil {
					_, err = q.decode(d)
				}
				if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTrailingData) {
					t.Fatalf("stream %d cut to %d of %d bytes (%s): err %v", k, cut, len(buf), form, err)
				}
			}
		}
		long := append(append([]byte(nil), buf...), 0)
		d, _ := NewDecoderBytes(long)
		if _, err := q.decode(d); !errors.Is(err, ErrTrailingData) {
			t.Fatalf("stream %d plus a byte: %v, want ErrTrailingData", k, err)
		}
		d, _ = NewDecoder(bytes.NewReader(long))
		if _, err := q.decode(d); !errors.Is(err, ErrTrailingData) {
			t.Fatalf("stream %d plus a byte (reader): %v, want ErrTrailingData", k, err)
		}
		// Decoding one symbol too few is ErrTrailingData or ErrCorrupt, or no
		// error when the stream is also exactly the encoding of the shorter
		// sequence (its last symbol moved no byte and the flush byte agrees).
		d, _ = NewDecoderBytes(buf)
		short := codedSeq{q.sym[:len(q.sym)-1], q.cum, q.prec}
		if _, err := short.decode(d); err != nil && !errors.Is(err, ErrTrailingData) && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("stream %d one symbol short: %v", k, err)
		} else if err == nil && !bytes.Equal(short.encode(t, nil).Bytes(), buf) {
			t.Fatalf("stream %d one symbol short: accepted, but it is not that sequence's encoding", k)
		}
	}
}

func TestTruncationCountsSentinels(t *testing.T) {
	// How a truncation is reported: mostly ErrTruncated. Logged for the record.
	rng := rand.New(rand.NewPCG(1, 1))
	n := map[error]int{}
	for range 50 {
		q := randSeq(rng, 200)
		buf := q.encode(t, nil).Bytes()
		for cut := range len(buf) {
			d, err := NewDecoderBytes(buf[:cut])
			if err == nil {
				_, err = q.decode(d)
			}
			for _, s := range []error{ErrTruncated, ErrCorrupt, ErrTrailingData} {
				if errors.Is(err, s) {
					n[s]++
				}
			}
		}
	}
	t.Logf("truncations reported as: truncated %d, corrupt %d, trailing %d", n[ErrTruncated], n[ErrCorrupt], n[ErrTrailingData])
}

func TestEncoderErrors(t *testing.T) {
	for _, c := range []struct {
		name       string
		cum, freq  uint32
		prec       uint
		want       error
		totalBased bool
	}{
		{"zero freq", 0, 0, 8, ErrBadFrequency, false},
		{"past total", 200, 57, 8, ErrBadFrequency, false},
		{"prec 0", 0, 1, 0, ErrBadPrecision, false},
		{"prec too big", 0, 1, MaxPrecision + 1, ErrBadPrecision, false},
		{"total 0", 0, 1, 0, ErrBadPrecision, true},
		{"total past", 3, 2, 4, ErrBadFrequency, true},
	} {
		e := NewEncoder(nil)
		var err error
		if c.totalBased {
			err = e.EncodeTotal(c.cum, c.freq, uint32(c.prec))
		} else {
			err = e.Encode(c.cum, c.freq, c.prec)
		}
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if err := e.Encode(0, 1, 1); !errors.Is(err, c.want) {
			t.Errorf("%s: error not sticky: %v", c.name, err)
		}
		if err := e.Close(); !errors.Is(err, c.want) {
			t.Errorf("%s: Close: %v", c.name, err)
		}
	}
	e := NewEncoder(nil)
	if err := e.EncodeSymbol(3, []uint32{0, 1, 2}, 1); !errors.Is(err, ErrBadFrequency) {
		t.Errorf("symbol outside table: %v", err)
	}
	e = NewEncoder(nil)
	if err := e.EncodeSymbol(0, []uint32{0, 1, 3}, 1); !errors.Is(err, ErrBadFrequency) {
		t.Errorf("table not totalling 2^prec: %v", err)
	}
	e = NewEncoder(nil)
	e.Close()
	if err := e.Encode(0, 1, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("Encode after Close: %v", err)
	}
	if err := e.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	w := &failWriter{}
	e = NewEncoder(w)
	for range 100000 {
		e.Encode(0, 1, 16)
	}
	if err := e.Close(); !errors.Is(err, errWrite) {
		t.Errorf("write error: %v", err)
	}
}

var errWrite = errors.New("write failed")

type failWriter struct{}

func (*failWriter) Write(p []byte) (int, error) { return 0, errWrite }

func TestDecoderMisuse(t *testing.T) {
	e := NewEncoder(nil)
	e.Encode(1, 2, 2)
	e.Close()
	d, _ := NewDecoderBytes(e.Bytes())
	if err := d.Consume(0, 1); !errors.Is(err, ErrNoTarget) {
		t.Errorf("Consume without Target: %v", err)
	}
	if _, err := d.Target(0); !errors.Is(err, ErrBadPrecision) {
		t.Errorf("Target(0): %v", err)
	}
	tg, err := d.Target(2)
	if err != nil || tg < 1 || tg >= 3 {
		t.Fatalf("Target: %d %v", tg, err)
	}
	if err := d.Consume(0, 1); !errors.Is(err, ErrBadFrequency) {
		t.Errorf("Consume of the wrong symbol: %v", err)
	}
	if err := d.Consume(1, 2); err != nil {
		t.Errorf("Consume after a rejected one: %v", err)
	}
	if err := d.Finish(); err != nil {
		t.Error(err)
	}
	// Malformed cumulative tables: errors, not panics.
	for _, cum := range [][]uint32{{0, 4}, {4, 0, 4}, {0, 3, 2, 4}, {0, 0, 4}, {}, {4}} {
		d, _ := NewDecoderBytes(e.Bytes())
		if _, err := d.DecodeSymbol(cum, 2); err != nil && !errors.Is(err, ErrBadFrequency) && !errors.Is(err, ErrCorrupt) {
			t.Errorf("cum %v: %v", cum, err)
		}
	}
}

func TestStreamingEncoderChunks(t *testing.T) {
	// Long enough that the streaming encoder writes several chunks.
	rng := rand.New(rand.NewPCG(1, 1))
	cum := CumulativeTo(nil, randTable(rng, 256, 16))
	var q codedSeq
	for range 200000 {
		q.sym = append(q.sym, sample(rng, cum))
		q.cum = append(q.cum, cum)
		q.prec = append(q.prec, 16)
	}
	var sb bytes.Buffer
	q.encode(t, &sb)
	if sb.Len() < 3*streamChunk {
		t.Fatalf("only %d bytes", sb.Len())
	}
	if !bytes.Equal(sb.Bytes(), q.encode(t, nil).Bytes()) {
		t.Fatal("streaming and buffer forms differ")
	}
	d, err := NewDecoder(&sb)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := q.decode(d); err != nil || !equalInts(got, q.sym) {
		t.Fatal(err)
	}
}

func TestResetBufferAppends(t *testing.T) {
	e := NewEncoder(nil)
	e.ResetBuffer([]byte("head"))
	e.Encode(5, 3, 4)
	e.Close()
	out := e.Bytes()
	if string(out[:4]) != "head" || e.Len() != int64(len(out)-4) {
		t.Fatalf("got %q, Len %d", out, e.Len())
	}
	d, _ := NewDecoderBytes(out[4:])
	if tg, _ := d.Target(4); tg < 5 || tg >= 8 {
		t.Fatal(tg)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
