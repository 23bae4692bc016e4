package sim

import (
	"math/rand/v2"
)

// encoder is the fixed, seeded map from a screen (one cell per slot) to a state:
//
//	state[s] = 0.5*pos[s] + 0.7*kind[k] + content(k, a, b) + 0.4*hover*hov + noise*N(0, 1)
//
// where every embedding is a vector of standard normals drawn from WorldSeed and
// a hash of what it embeds.
type encoder struct {
	dim   int
	seed  uint64
	pos   [NumSlots][]float32
	kinds [numKinds][]float32
	hover []float32
	cache map[cell][]float32
}

// encoderCacheBytes bounds the content embeddings an encoder keeps (it
// forgets them all when full): 2,048 of 512 channels. They are redrawn on
// demand, so the bound changes speed, never a state.
const encoderCacheBytes = 4 << 20

func newEncoder(seed uint64, dim int) *encoder {
	e := &encoder{dim: dim, seed: seed, cache: map[cell][]float32{}}
	for s := range e.pos {
		e.pos[s] = e.vector(1, uint64(s))
	}
	for k := range e.kinds {
		e.kinds[k] = e.vector(2, uint64(k))
	}
	e.hover = e.vector(3, 0)
	return e
}

// vector draws the embedding of (domain, key).
func (e *encoder) vector(domain, key uint64) []float32 {
	rng := rand.New(rand.NewPCG(e.seed^mix(domain), mix(key)))
	v := make([]float32, e.dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// mix is SplitMix64's finaliser.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (e *encoder) content(c cell) []float32 {
	key := cell{kind: c.kind, a: c.a, b: c.b}
	if v, ok := e.cache[key]; ok {
		return v
	}
	if len(e.cache) >= max(encoderCacheBytes/(4*e.dim), 64) {
		clear(e.cache)
	}
	v := e.vector(4, mix(uint64(c.kind)<<32|uint64(uint32(c.a)))^uint64(uint32(c.b)))
	e.cache[key] = v
	return v
}

// encode writes the state of screen into dst (NumSlots*dim values), drawing the
// jitter from rng.
func (e *encoder) encode(dst []float32, screen *[NumSlots]cell, noise float64, rng *rand.Rand) {
	for s := range screen {
		c := screen[s]
		out := dst[s*e.dim : (s+1)*e.dim]
		pos, kind, content := e.pos[s], e.kinds[c.kind], e.content(c)
		for i := range out {
			// Each product is converted explicitly so that no platform fuses it
			// into a multiply-add (the sim world is the same on every machine).
			v := float32(float32(0.5)*pos[i]) + float32(float32(0.7)*kind[i]) + content[i]
			if c.hovered {
				v += float32(float32(0.4) * e.hover[i])
			}
			if noise > 0 {
				v += float32(noise * rng.NormFloat64())
			}
			out[i] = v
		}
	}
}

// skip draws from rng exactly what encode draws, without computing a state:
// the jitter of one observation.
func (e *encoder) skip(noise float64, rng *rand.Rand) {
	if noise > 0 {
		for range NumSlots * e.dim {
			rng.NormFloat64()
		}
	}
}
