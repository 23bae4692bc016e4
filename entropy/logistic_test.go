package entropy

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// The squash table is part of every mixed memory file: its bytes are pinned.
func TestSquashTablePinned(t *testing.T) {
	h := sha256.New()
	for _, v := range squashTab {
		binary.Write(h, binary.LittleEndian, v)
	}
	const want = "84ead9aa2ebf71e76f6d5552f2f2ab4560d3adcbf365c108a860a6a09c10952e"
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Fatalf("squashTab sha256 %s, pinned %s: the table changed, and with it every mixed memory file", got, want)
	}
	for st := int32(-StretchMax); st <= StretchMax; st++ {
		if got, want := squashTab[st+StretchMax], squashFormula(st); got != want {
			t.Fatalf("squashTab[%d] = %d, the formula gives %d", st, got, want)
		}
	}
}

func TestSquashStretch(t *testing.T) {
	if Squash(0) != 32768 || Squash(-1<<20) != Squash(-StretchMax) || Squash(1<<20) != Squash(StretchMax) {
		t.Fatalf("Squash(0) %d, clamps %d %d", Squash(0), Squash(-1<<20), Squash(1<<20))
	}
	prev := int32(-StretchMax - 1)
	for p := uint32(0); p < P16One; p++ {
		st := Stretch(p)
		if st < prev {
			t.Fatalf("Stretch is not monotone at %d: %d after %d", p, st, prev)
		}
		prev = st
	}
	// Stretch inverts Squash to within the table's resolution.
	for st := int32(-1500); st <= 1500; st++ {
		if back := Stretch(Squash(st)); back-st > 12 || st-back > 12 {
			t.Fatalf("Stretch(Squash(%d)) = %d", st, back)
		}
	}
	if Stretch(32768) < -8 || Stretch(32768) > 8 {
		t.Fatalf("Stretch(1/2) = %d", Stretch(32768))
	}
}

func TestCounter(t *testing.T) {
	c := CounterInit
	if c.P16() != 32768 {
		t.Fatalf("fresh counter %d", c.P16())
	}
	for range 200 {
		c.Update(1, 255)
	}
	if c.P16() < 65000 {
		t.Fatalf("after 200 ones: %d", c.P16())
	}
	for range 200 {
		c.Update(0, 30)
	}
	if c.P16() > 1000 || c.P16() < 1 {
		t.Fatalf("after 200 zeros: %d", c.P16())
	}
	// A biased source: the counter settles near its rate.
	rng := rand.New(rand.NewPCG(1, 2))
	c = CounterInit
	for range 20000 {
		c.Update(boolBit(rng.Float64() < 0.3), 1023)
	}
	if p := float64(c.P16()) / P16One; p < 0.27 || p > 0.33 {
		t.Fatalf("p(1) learnt %.3f, want 0.3", p)
	}
}

func boolBit(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The mixer learns to follow a reliable input and ignore a random one.
func TestMixerLearns(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := NewMixer(3, 1, 0, 6)
	var cost uint64
	n := 20000
	for i := range n {
		y := boolBit(rng.Float64() < 0.5)
		good := int32(800)
		if y == 0 {
			good = -800
		}
		m.Add(256)
		m.Add(good)
		m.Add(int32(rng.IntN(4001) - 2000))
		p := ClampP16(int64(m.Mix(0)))
		if i >= n/2 {
			cost += uint64(CostBitQ16(y, p))
		}
		m.Update(y)
	}
	if bits := float64(cost) / 65536 / float64(n/2); bits > 0.05 {
		t.Fatalf("%.3f bits per bit with a perfect input", bits)
	}
}

func TestAPM(t *testing.T) {
	a := NewAPM(2, 6)
	// Identity at start.
	for _, p := range []uint32{100, 20000, 32768, 50000, 65000} {
		if got := a.Refine(p, 1); absDiff(got, p) > p/20+40 {
			t.Fatalf("fresh APM maps %d to %d", p, got)
		}
	}
	// Context 0: the input says 1/2 but the bit is always 1.
	for range 500 {
		a.Refine(32768, 0)
		a.Update(1)
	}
	if got := a.Refine(32768, 0); got < 60000 {
		t.Fatalf("APM learnt %d", got)
	}
	if got := a.Refine(32768, 1); absDiff(got, 32768) > 100 {
		t.Fatalf("context 1 moved to %d", got)
	}
}

func TestBitRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 5000
	bits := make([]int, n)
	ps := make([]uint32, n)
	for i := range bits {
		ps[i] = 1 + uint32(rng.IntN(P16One-1))
		bits[i] = boolBit(rng.IntN(P16One) < int(ps[i]))
	}
	ps[0], ps[1] = 1, P16One-1
	e := NewEncoder(nil)
	for i, b := range bits {
		if err := e.EncodeBit(b, ps[i]); err != nil {
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
	for i, b := range bits {
		got, err := d.DecodeBit(ps[i])
		if err != nil || got != b {
			t.Fatalf("bit %d: %d %v, want %d", i, got, err, b)
		}
	}
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.DecodeBit(0); err == nil {
		t.Fatal("p1 = 0 accepted")
	}
}

// The tables derived at start-up (by integer arithmetic alone) are pinned
// too: a change would change every mixed memory file.
func TestDerivedTablesPinned(t *testing.T) {
	h := sha256.New()
	for _, v := range stretchTab {
		binary.Write(h, binary.LittleEndian, v)
	}
	for _, v := range counterRecip {
		binary.Write(h, binary.LittleEndian, v)
	}
	const want = "1ae9258a19014081114a51bc97298141b4e22108197b2f4919405f6334f4c007"
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		t.Fatalf("stretch and counter tables sha256 %s, pinned %s", got, want)
	}
}
