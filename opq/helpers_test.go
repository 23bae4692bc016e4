package opq

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/memowm/memowm/sim"
	"github.com/memowm/memowm/trajectory"
)

// small is a geometry for fast tests: 4 slots of 32 channels, 4 subspaces of
// 8 dims per slot.
var small = trajectory.Shape{Slots: 4, Dim: 32, Codes: 16}

// synth returns n states of shape built like an encoder's output: every slot
// is the sum of a slot embedding, one of a few content vectors and a
// correlated nuisance direction, plus noise; channels have different scales
// and offsets so that standardisation matters.
func synth(n int, shape trajectory.Shape, seed uint64) [][]float32 {
	world := rand.New(rand.NewPCG(42, 42))
	vec := func() []float32 {
		v := make([]float32, shape.Dim)
		for i := range v {
			v[i] = float32(world.NormFloat64())
		}
		return v
	}
	slots := make([][]float32, shape.Slots)
	for s := range slots {
		slots[s] = vec()
	}
	contents := make([][]float32, 24)
	for c := range contents {
		contents[c] = vec()
	}
	nuisance := vec()
	scale := make([]float32, shape.StateLen())
	offset := make([]float32, shape.StateLen())
	for i := range scale {
		scale[i] = float32(0.1 + 3*world.Float64())
		offset[i] = float32(10 * world.NormFloat64())
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([][]float32, n)
	for i := range out {
		st := make([]float32, shape.StateLen())
		for s := 0; s < shape.Slots; s++ {
			c := contents[rng.IntN(len(contents))]
			a := float32(rng.NormFloat64())
			for d := 0; d < shape.Dim; d++ {
				k := s*shape.Dim + d
				v := slots[s][d] + c[d] + a*nuisance[d] + float32(0.1*rng.NormFloat64())
				st[k] = v*scale[k] + offset[k]
			}
		}
		out[i] = st
	}
	return out
}

// simStates returns the states of sim episodes with dim channels per slot.
func simStates(t testing.TB, episodes, steps int, seed uint64, dim int) [][]float32 {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.Episodes, cfg.Steps, cfg.Seed = episodes, steps, seed
	cfg.Shape.Dim = dim
	w, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]float32
	for i := 0; i < episodes; i++ {
		ep, _, _ := w.Episode(i)
		out = append(out, ep.States...)
	}
	return out
}

// smallConfig is DefaultConfig for the small geometry with 16 codewords.
func smallConfig() Config {
	cfg := DefaultConfig()
	cfg.Shape = small
	cfg.Codewords = 16
	cfg.RotationStates = 256
	return cfg
}

func mustFit(t testing.TB, states [][]float32, cfg Config) *Quantizer {
	t.Helper()
	q, err := Fit(states, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func fileBytes(t testing.TB, q *Quantizer) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := q.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func flatten(states [][]float32) []float32 {
	var out []float32
	for _, s := range states {
		out = append(out, s...)
	}
	return out
}

func encodeAll(t testing.TB, q *Quantizer, states [][]float32) []uint8 {
	t.Helper()
	codes := make([]uint8, len(states)*q.Shape().Codes)
	if err := q.NewEncoder().EncodeBatch(codes, flatten(states)); err != nil {
		t.Fatal(err)
	}
	return codes
}
