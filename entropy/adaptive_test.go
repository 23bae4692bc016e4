package entropy

import (
	"errors"
	"math/rand/v2"
	"testing"
)

func TestAdaptiveRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		n    int
		opts []AdaptiveOption
	}{
		{17, nil},
		{256, nil},
		{2, []AdaptiveOption{WithIncrement(4096), WithLimit(1 << 16)}},
		{256, []AdaptiveOption{WithIncrement(1), WithLimit(600)}},
	} {
		enc, err := NewAdaptive(c.n, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		dec, _ := NewAdaptive(c.n, c.opts...)
		syms := make([]int, 30000)
		for i := range syms {
			if rng.IntN(4) == 0 {
				syms[i] = rng.IntN(c.n)
			} else {
				syms[i] = rng.IntN(1 + c.n/8) // skewed
			}
		}
		e := NewEncoder(nil)
		var ideal uint64
		for _, s := range syms {
			ideal += uint64(enc.CostQ16(s))
			if err := enc.Encode(e, s); err != nil {
				t.Fatal(err)
			}
			checkCounts(t, enc.c, enc.extra, &enc.o)
		}
		e.Close()
		d, _ := NewDecoderBytes(e.Bytes())
		for i, s := range syms {
			got, err := dec.Decode(d)
			if err != nil || got != s {
				t.Fatalf("n %d symbol %d: got %d want %d (%v)", c.n, i, got, s, err)
			}
		}
		if err := d.Finish(); err != nil {
			t.Fatal(err)
		}
		idealBytes := float64(ideal) / FixedOne / 8
		if float64(len(e.Bytes())) > idealBytes*1.0001+2 {
			t.Errorf("n %d: %d bytes for %.1f ideal", c.n, len(e.Bytes()), idealBytes)
		}
	}
}

func checkCounts(t *testing.T, c []uint16, extra uint32, o *adaptiveOptions) {
	t.Helper()
	var sum uint32
	for _, v := range c {
		sum += uint32(v)
	}
	if sum != extra || extra+uint32(len(c)) >= o.limit {
		t.Fatalf("counts: extra %d, sum %d, limit %d", extra, sum, o.limit)
	}
}

func TestContextModelRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const coords, alpha = 1024, 64
	enc, err := NewContextModel(coords, alpha, alpha)
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := NewContextModel(coords, alpha, alpha)
	steps := 20
	if testing.Short() {
		steps = 4
	}
	prev := make([]int, coords)
	states := make([][]int, steps)
	e := NewEncoder(nil)
	for s := range states {
		z := make([]int, coords)
		for j := range z {
			z[j] = prev[j]
			if rng.IntN(5) == 0 {
				z[j] = rng.IntN(alpha)
			}
			if err := enc.Encode(e, j, prev[j], z[j]); err != nil {
				t.Fatal(err)
			}
		}
		states[s], prev = z, z
	}
	e.Close()
	d, _ := NewDecoderBytes(e.Bytes())
	prev = make([]int, coords)
	for s := range states {
		for j := range coords {
			got, err := dec.Decode(d, j, prev[j])
			if err != nil || got != states[s][j] {
				t.Fatalf("step %d coord %d: %d want %d (%v)", s, j, got, states[s][j], err)
			}
		}
		prev = states[s]
	}
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
	t.Logf("order-1 baseline: %d steps x %d coords in %d bytes (%.2f bits/coord)", steps, coords, len(e.Bytes()), float64(8*len(e.Bytes()))/float64(steps*coords))
	enc.Reset()
	if enc.CostQ16(3, 4, 5) != CostQ16(1, alpha) {
		t.Error("Reset")
	}
}

func TestAdaptiveOptions(t *testing.T) {
	for _, c := range []struct {
		n    int
		opts []AdaptiveOption
		want error
	}{
		{1, nil, ErrAlphabet},
		{256, []AdaptiveOption{WithIncrement(0)}, ErrOption},
		{256, []AdaptiveOption{WithIncrement(5000)}, ErrOption},
		{256, []AdaptiveOption{WithLimit(1<<16 + 1)}, ErrOption},
		{256, []AdaptiveOption{WithLimit(500)}, ErrOption},
	} {
		if _, err := NewAdaptive(c.n, c.opts...); !errors.Is(err, c.want) {
			t.Errorf("n %d: %v, want %v", c.n, err, c.want)
		}
	}
	if _, err := NewContextModel(0, 64, 64); !errors.Is(err, ErrAlphabet) {
		t.Errorf("no coords: %v", err)
	}
	a, _ := NewAdaptive(4)
	e := NewEncoder(nil)
	if err := a.Encode(e, 4); !errors.Is(err, ErrBadFrequency) {
		t.Errorf("symbol outside alphabet: %v", err)
	}
}
