package entropy

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
)

// fuzzTables are the fixed tables the fuzzers code with; which one codes
// symbol i depends on the symbol before it, as in the codec. Every fifth
// symbol goes through an adaptive model instead (the EncodeTotal path).
type fuzzTables struct {
	cum  [][]uint32
	prec []uint
}

func newFuzzTables() fuzzTables {
	var ft fuzzTables
	add := func(probs []float32, prec uint) {
		freq, err := QuantizeProbsTo(nil, probs, prec)
		if err != nil {
			panic(err)
		}
		ft.cum = append(ft.cum, CumulativeTo(nil, freq))
		ft.prec = append(ft.prec, prec)
	}
	peaked := make([]float32, 64)
	peaked[7] = 1
	add(peaked, 24)
	uniform := make([]float32, 256)
	for i := range uniform {
		uniform[i] = 1
	}
	add(uniform, 16)
	add([]float32{1, 1}, 1)
	skew := make([]float32, 17)
	for i := range skew {
		skew[i] = 1 / float32(1+i*i)
	}
	add(skew, 12)
	add(peaked, MaxPrecision)
	return ft
}

// fuzzCoder codes the fuzzers' symbol sequences.
type fuzzCoder struct {
	ft    fuzzTables
	model *Adaptive
	prev  int
	i     int
}

func newFuzzCoder(ft fuzzTables) *fuzzCoder {
	m, _ := NewAdaptive(17, WithIncrement(24), WithLimit(1024))
	return &fuzzCoder{ft: ft, model: m}
}

// alphabet returns the size of the next symbol's alphabet.
func (c *fuzzCoder) alphabet() int {
	if c.i%5 == 4 {
		return c.model.Len()
	}
	return len(c.ft.cum[c.prev%len(c.ft.cum)]) - 1
}

func (c *fuzzCoder) encode(e *Encoder, s int) error {
	var err error
	if c.i%5 == 4 {
		err = c.model.Encode(e, s)
	} else {
		k := c.prev % len(c.ft.cum)
		err = e.EncodeSymbol(s, c.ft.cum[k], c.ft.prec[k])
	}
	c.prev, c.i = s, c.i+1
	return err
}

func (c *fuzzCoder) decode(d *Decoder) (int, error) {
	var s int
	var err error
	if c.i%5 == 4 {
		s, err = c.model.Decode(d)
	} else {
		k := c.prev % len(c.ft.cum)
		s, err = d.DecodeSymbol(c.ft.cum[k], c.ft.prec[k])
	}
	c.prev, c.i = s, c.i+1
	return s, err
}

// fuzzDecode decodes up to n symbols and then calls Finish.
func fuzzDecode(ft fuzzTables, d *Decoder, n int) ([]int, error) {
	c := newFuzzCoder(ft)
	var out []int
	for range n {
		s, err := c.decode(d)
		if err != nil {
			return out, err
		}
		out = append(out, s)
	}
	return out, d.Finish()
}

func fuzzEncode(t *testing.T, ft fuzzTables, syms []int, e *Encoder) {
	c := newFuzzCoder(ft)
	for i, s := range syms {
		if err := c.encode(e, s); err != nil {
			t.Fatalf("symbol %d: %v", i, err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// sentinel returns which of the package's stream errors err is.
func sentinel(err error) error {
	for _, s := range []error{ErrTruncated, ErrCorrupt, ErrTrailingData} {
		if errors.Is(err, s) {
			return s
		}
	}
	return err
}

// FuzzDecode decodes arbitrary bytes as a stream of n symbols. It must never
// panic; the buffer and streaming decoders must agree on every symbol and on
// the error; any error must be one of the stream sentinels; and a stream that
// decodes and passes Finish must be exactly the encoding of what it decoded.
func FuzzDecode(f *testing.F) {
	ft := newFuzzTables()
	f.Add(uint16(0), []byte{0})
	f.Add(uint16(3), []byte{})
	f.Add(uint16(40), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add(uint16(1000), bytes.Repeat([]byte{0x5a}, 64))
	for _, n := range []int{1, 10, 200} {
		syms := make([]int, n)
		c := newFuzzCoder(ft)
		for i := range syms {
			syms[i] = (i * 7919) % c.alphabet()
			c.prev, c.i = syms[i], c.i+1
		}
		e := NewEncoder(nil)
		c = newFuzzCoder(ft)
		for _, s := range syms {
			c.encode(e, s)
		}
		e.Close()
		f.Add(uint16(n), e.Bytes())
	}
	f.Fuzz(func(t *testing.T, n uint16, data []byte) {
		src := data[:len(data):len(data)]
		d1, err1 := NewDecoderBytes(src)
		var got1 []int
		if err1 == nil {
			got1, err1 = fuzzDecode(ft, d1, int(n))
		}
		d2, err2 := NewDecoder(iotest.OneByteReader(bytes.NewReader(data)))
		var got2 []int
		if err2 == nil {
			got2, err2 = fuzzDecode(ft, d2, int(n))
		}
		if !equalInts(got1, got2) || sentinel(err1) != sentinel(err2) {
			t.Fatalf("buffer and streaming decoders differ: %v / %v", err1, err2)
		}
		if err1 != nil {
			if s := sentinel(err1); s != ErrTruncated && s != ErrCorrupt && s != ErrTrailingData {
				t.Fatalf("unexpected error %v", err1)
			}
			return
		}
		e := NewEncoder(nil)
		fuzzEncode(t, ft, got1, e)
		if !bytes.Equal(e.Bytes(), data) {
			t.Fatalf("accepted stream %x is not the encoding %x of its %d symbols", data, e.Bytes(), len(got1))
		}
	})
}

// FuzzRoundTrip encodes an arbitrary symbol sequence (one byte per symbol,
// reduced to the alphabet in force) and checks: the buffer and streaming
// encoders write the same bytes, encoding twice gives the same bytes, and
// both decoders return the sequence and pass Finish.
func FuzzRoundTrip(f *testing.F) {
	ft := newFuzzTables()
	f.Add([]byte{})
	f.Add([]byte{7, 7, 7, 7, 7, 7, 7})
	f.Add([]byte("the quick brown fox jumps over the lazy dog"))
	f.Add(bytes.Repeat([]byte{0, 255, 1, 254}, 100))
	f.Fuzz(func(t *testing.T, data []byte) {
		syms := make([]int, len(data))
		c := newFuzzCoder(ft)
		for i, b := range data {
			syms[i] = int(b) % c.alphabet()
			c.prev, c.i = syms[i], c.i+1
		}
		e1 := NewEncoder(nil)
		fuzzEncode(t, ft, syms, e1)
		e2 := NewEncoder(nil)
		fuzzEncode(t, ft, syms, e2)
		var sb bytes.Buffer
		fuzzEncode(t, ft, syms, NewEncoder(&sb))
		if !bytes.Equal(e1.Bytes(), e2.Bytes()) || !bytes.Equal(e1.Bytes(), sb.Bytes()) {
			t.Fatal("encodings differ")
		}
		d, err := NewDecoderBytes(e1.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		got, err := fuzzDecode(ft, d, len(syms))
		if err != nil || !equalInts(got, syms) {
			t.Fatalf("buffer decoder: %v", err)
		}
		d, err = NewDecoder(iotest.OneByteReader(&sb))
		if err != nil {
			t.Fatal(err)
		}
		got, err = fuzzDecode(ft, d, len(syms))
		if err != nil || !equalInts(got, syms) {
			t.Fatalf("streaming decoder: %v", err)
		}
	})
}

// TestWriteFuzzSeeds writes the checked-in seed corpus of FuzzDecode (valid
// streams, each also truncated and extended by a byte) when run with
// -update; otherwise it checks the corpus is there.
func TestWriteFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
	if !*update {
		if ents, err := os.ReadDir(dir); err != nil || len(ents) == 0 {
			t.Fatalf("no seed corpus in %s (run with -update): %v", dir, err)
		}
		return
	}
	ft := newFuzzTables()
	rng := rand.New(rand.NewPCG(1, 1))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, n int, data []byte) {
		body := fmt.Sprintf("go test fuzz v1\nuint16(%d)\n[]byte(%+q)\n", n, data)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for k, n := range []int{0, 1, 5, 37, 300} {
		syms := make([]int, n)
		c := newFuzzCoder(ft)
		for i := range syms {
			syms[i] = rng.IntN(c.alphabet())
			c.prev, c.i = syms[i], c.i+1
		}
		e := NewEncoder(nil)
		fuzzEncode(t, ft, syms, e)
		b := e.Bytes()
		write(fmt.Sprintf("valid-%d", k), n, b)
		write(fmt.Sprintf("truncated-%d", k), n, b[:len(b)-1])
		write(fmt.Sprintf("extended-%d", k), n, append(append([]byte(nil), b...), 0x80))
	}
}
