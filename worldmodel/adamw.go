package worldmodel

import (
	"math"

	"github.com/memowm/memowm/internal/fgemm"
)

// AdamW with decoupled weight decay (Loshchilov and Hutter), as PyTorch's
// torch.optim.AdamW computes it, step t counted from 1:
//
//	w *= 1 - lr wd
//	m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//	w -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
//
// The learning rate warms up linearly, then follows a cosine to MinLR
// (schedule). Gradients are first clipped to a global norm.

// adamW is the optimizer state: first and second moments (P each).
type adamW struct {
	m, v []float32
}

// updateChunk is the number of parameters one parallel update task covers.
const updateChunk = 1 << 14

// gradNorm returns the Euclidean norm of g, summed in float64 in fixed chunks
// and the chunks in order (the same result for any thread count).
func gradNorm(g []float32, threads int) float64 {
	chunks := (len(g) + updateChunk - 1) / updateChunk
	part := make([]float64, chunks)
	parallelN(threads, chunks, func(i int) {
		var s float64
		for _, v := range g[i*updateChunk : min((i+1)*updateChunk, len(g))] {
			s += float64(v) * float64(v)
		}
		part[i] = s
	})
	var s float64
	for _, v := range part {
		s += v
	}
	return math.Sqrt(s)
}

// step applies one update to w with gradient g (scaled by gscale first: the
// clipping factor), at step t >= 1. Elements with frozen[i] (nil: none) are
// left alone.
func (a *adamW) step(w, g []float32, gscale float32, t int, lr float64, tc *TrainConfig, frozen []bool, threads int) {
	if a.m == nil {
		a.m, a.v = make([]float32, len(w)), make([]float32, len(w))
	}
	b1, b2 := tc.Beta1, tc.Beta2
	bc1 := 1 - math.Pow(b1, float64(t))
	bc2 := 1 - math.Pow(b2, float64(t))
	h := fgemm.AdamHyper{
		GScale: gscale, B1: float32(b1), B2: float32(b2),
		Step: float32(lr / bc1), InvBC2: float32(1 / math.Sqrt(bc2)),
		Eps: float32(tc.Eps), Decay: float32(1 - lr*tc.WeightDecay),
	}
	chunks := (len(w) + updateChunk - 1) / updateChunk
	parallelN(threads, chunks, func(ci int) {
		lo, hi := ci*updateChunk, min((ci+1)*updateChunk, len(w))
		if frozen == nil {
			fgemm.AdamW(w[lo:hi], g[lo:hi], a.m[lo:hi], a.v[lo:hi], h)
			return
		}
		// Runs of parameters that are not frozen.
		for i := lo; i < hi; {
			if frozen[i] {
				i++
				continue
			}
			j := i + 1
			for j < hi && !frozen[j] {
				j++
			}
			fgemm.AdamW(w[i:j], g[i:j], a.m[i:j], a.v[i:j], h)
			i = j
		}
	})
}

// schedule returns the learning rate of step t (1-based): linear warm-up
// over Warmup steps to LR, then a cosine from LR to MinLR at Steps.
func (tc *TrainConfig) schedule(t int) float64 {
	if t <= tc.Warmup {
		return tc.LR * float64(t) / float64(tc.Warmup)
	}
	span := tc.Steps - tc.Warmup
	if span <= 0 {
		return tc.LR
	}
	f := float64(min(t-tc.Warmup, span)) / float64(span)
	return tc.MinLR + 0.5*(tc.LR-tc.MinLR)*(1+math.Cos(math.Pi*f))
}
