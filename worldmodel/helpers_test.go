package worldmodel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memowm/memowm/trajectory"
)

// randomAction draws an action that exercises every feature.
func randomAction(rng *rand.Rand, c *Config) trajectory.Action {
	a := trajectory.Action{Type: trajectory.ActionType(rng.IntN(c.ActionTypes))}
	if rng.IntN(3) > 0 {
		a.HasPos, a.X, a.Y = true, rng.Float32(), rng.Float32()
	}
	if rng.IntN(2) == 0 {
		a.HasDelta, a.DX, a.DY = true, float32(rng.NormFloat64()*300), float32(rng.NormFloat64()*3)
	}
	n := rng.IntN(c.MaxPayload + 1)
	if rng.IntN(3) == 0 {
		n = 0
	}
	for i := 0; i < n; i++ {
		a.Payload = append(a.Payload, byte(rng.IntN(256)))
	}
	return a
}

// randomHistory draws n steps whose states change a few coordinates at a time.
func randomHistory(rng *rand.Rand, c *Config, n int) History {
	h := make(History, n)
	codes := make([]uint8, c.Coords())
	for j := range codes {
		codes[j] = uint8(rng.IntN(c.Codewords))
	}
	for k := range h {
		for i := 0; i < c.Coords()/8; i++ {
			codes[rng.IntN(len(codes))] = uint8(rng.IntN(c.Codewords))
		}
		h[k] = Step{Codes: append([]uint8(nil), codes...), Action: randomAction(rng, c)}
	}
	return h
}

func tinyModel(t testing.TB, seed uint64) *Model {
	t.Helper()
	cfg, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	// Make the copy gate and the output bias non-trivial (the reference
	// initialises them to zero).
	rng := rand.New(rand.NewPCG(seed, 99))
	for _, name := range []string{"copy_head/w", "copy_head/b", "code_head/b", "mask_head/b"} {
		d, _ := m.Tensor(name)
		for i := range d {
			d[i] = float32(rng.NormFloat64())
		}
	}
	return m
}

func newCPU(t testing.TB, m *Model, opts ...Option) *CPU {
	t.Helper()
	r, err := NewCPU(m, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func forward1(t testing.TB, r *CPU, h History) Output {
	t.Helper()
	outs, err := r.Forward(nil, []History{h})
	if err != nil {
		t.Fatal(err)
	}
	return outs[0]
}

// diffAt returns the first index where a and b differ in bits, -1 if they
// are identical.
func diffAt(a, b []float32) int {
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}
