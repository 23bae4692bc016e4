package fgemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAdamW compares AdamW with the update in float64 over lengths around
// the 16-lane blocks, gradients of every scale and moments from earlier
// steps, and checks that the slices' ends are left alone.
func TestAdamW(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(6, 6))
		h := AdamHyper{GScale: 0.7, B1: 0.9, B2: 0.999, Step: 2e-3 / (1 - 0.9*0.9*0.9), InvBC2: float32(1 / math.Sqrt(1-math.Pow(0.999, 3))), Eps: 1e-8, Decay: 1 - 2e-3*1e-4}
		for _, n := range []int{1, 15, 16, 17, 48, 100, 333} {
			w, g, m, v := make([]float32, n+1), make([]float32, n+1), make([]float32, n+1), make([]float32, n+1)
			for i := 0; i < n; i++ {
				scale := []float64{0, 1e-6, 1e-3, 1}[rng.IntN(4)]
				w[i] = float32(rng.NormFloat64())
				g[i] = float32(scale * rng.NormFloat64())
				m[i] = float32(0.1 * scale * rng.NormFloat64())
				v[i] = float32(scale * scale * rng.Float64())
			}
			w[n], g[n], m[n], v[n] = 7, 7, 7, 7
			w0, m0, v0 := append([]float32(nil), w...), append([]float32(nil), m...), append([]float32(nil), v...)
			AdamW(w[:n], g[:n], m[:n], v[:n], h)
			for i := 0; i < n; i++ {
				gi := float64(g[i]) * float64(h.GScale)
				wm := float64(h.B1)*float64(m0[i]) + (1-float64(h.B1))*gi
				wv := float64(h.B2)*float64(v0[i]) + (1-float64(h.B2))*gi*gi
				upd := float64(h.Step) * wm / (math.Sqrt(wv)*float64(h.InvBC2) + float64(h.Eps))
				ww := float64(w0[i])*float64(h.Decay) - upd
				// Each value's tolerance is relative to the size of its
				// terms, since they may cancel.
				for _, c := range []struct {
					name           string
					got, want, mag float64
				}{
					{"m", float64(m[i]), wm, math.Abs(float64(h.B1)*float64(m0[i])) + math.Abs((1-float64(h.B1))*gi)},
					{"v", float64(v[i]), wv, wv},
					{"w", float64(w[i]), ww, math.Abs(float64(w0[i])) + math.Abs(upd)},
				} {
					if d := math.Abs(c.got - c.want); d > 1e-6*c.mag+1e-30 {
						t.Fatalf("n=%d, i=%d: %s %g, want %g", n, i, c.name, c.got, c.want)
					}
				}
			}
			if w[n] != 7 || g[n] != 7 || m[n] != 7 || v[n] != 7 {
				t.Fatalf("n=%d: the element past the end changed", n)
			}
		}
	})
}

// TestAdamWLengths checks that slices of different lengths panic.
func TestAdamWLengths(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	AdamW(make([]float32, 4), make([]float32, 4), make([]float32, 3), make([]float32, 4), AdamHyper{})
}

// BenchmarkAdamW times one update of 5,442,304 parameters (base), with the
// assembly kernel where the machine has it and with the plain Go loop.
func BenchmarkAdamW(b *testing.B) {
	const n = 5442304
	rng := rand.New(rand.NewPCG(7, 7))
	w, g, m, v := randSlice(rng, n), randSlice(rng, n), randSlice(rng, n), make([]float32, n)
	h := AdamHyper{GScale: 1, B1: 0.9, B2: 0.999, Step: 1e-3, InvBC2: 1, Eps: 1e-8, Decay: 1}
	for _, asm := range []bool{true, false} {
		if asm && !useAsm {
			continue
		}
		name := map[bool]string{true: "asm", false: "go"}[asm]
		b.Run(name, func(b *testing.B) {
			defer func(u bool) { useAsm = u }(useAsm)
			useAsm = asm
			b.SetBytes(7 * 4 * n)
			for i := 0; i < b.N; i++ {
				AdamW(w, g, m, v, h)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mparams/s")
		})
	}
}
