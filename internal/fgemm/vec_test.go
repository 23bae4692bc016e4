package fgemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// withKernels runs f with the assembly kernels (where the machine has them)
// and with the plain Go loops.
func withKernels(t *testing.T, f func(t *testing.T)) {
	for _, asm := range []bool{true, false} {
		if asm && !useAsm {
			continue
		}
		name := "go"
		if asm {
			name = "asm"
		}
		t.Run(name, func(t *testing.T) {
			defer func(u bool) { useAsm = u }(useAsm)
			useAsm = asm
			f(t)
		})
	}
}

// TestGeluBackward compares GeluBackward with gelu' in float64 over u
// around zero, small and large.
func TestGeluBackward(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 5))
		for _, n := range []int{1, 15, 16, 17, 100, 333} {
			pre, b, act, dy := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range pre {
				scale := []float64{1e-4, 1e-2, 1, 6}[rng.IntN(4)]
				pre[i] = float32(scale * rng.NormFloat64())
				b[i] = float32(0.1 * scale * rng.NormFloat64())
				u := float64(pre[i] + b[i])
				act[i] = float32(0.5 * u * (1 + math.Tanh(geluC*(u+geluK3*u*u*u))))
				dy[i] = float32(rng.NormFloat64())
			}
			du := make([]float32, n)
			GeluBackward(du, dy, pre, act, b)
			for i := range du {
				u := float64(pre[i] + b[i])
				th := math.Tanh(geluC * (u + geluK3*u*u*u))
				want := float64(dy[i]) * (0.5*(1+th) + 0.5*u*(1-th*th)*geluC*(1+3*geluK3*u*u))
				if d := math.Abs(float64(du[i]) - want); d > 1e-5*math.Abs(float64(dy[i]))+1e-30 {
					t.Fatalf("n=%d: u=%g: du %g, want %g", n, u, du[i], want)
				}
			}
		}
	})
}

// TestSoftmaxCols compares SoftmaxCols and its backward with float64 over
// column counts around the 16-lane strips.
func TestSoftmaxCols(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(6, 6))
		for _, sh := range [][2]int{{1, 16}, {5, 3}, {64, 32}, {33, 17}, {7, 48}, {300, 32}} {
			rows, cols := sh[0], sh[1]
			scale := float32(0.35)
			x, dp := randSlice(rng, rows*cols), randSlice(rng, rows*cols)
			for i := range x {
				x[i] *= 8
			}
			p := append([]float32(nil), x...)
			SoftmaxCols(p, rows, cols, scale)
			ds := append([]float32(nil), dp...)
			SoftmaxColsBackward(ds, p, rows, cols, scale)
			for j := 0; j < cols; j++ {
				mx := math.Inf(-1)
				for r := 0; r < rows; r++ {
					mx = math.Max(mx, float64(scale)*float64(x[r*cols+j]))
				}
				var sum float64
				want := make([]float64, rows)
				for r := range want {
					want[r] = math.Exp(float64(scale)*float64(x[r*cols+j]) - mx)
					sum += want[r]
				}
				var dot float64
				for r := range want {
					want[r] /= sum
					dot += want[r] * float64(dp[r*cols+j])
				}
				for r, w := range want {
					if d := math.Abs(float64(p[r*cols+j]) - w); d > 1e-6*w+1e-9 {
						t.Fatalf("%d x %d: p[%d][%d] = %g, want %g", rows, cols, r, j, p[r*cols+j], w)
					}
					wd := w * (float64(dp[r*cols+j]) - dot) * float64(scale)
					if d := math.Abs(float64(ds[r*cols+j]) - wd); d > 1e-5*w+1e-9 {
						t.Fatalf("%d x %d: ds[%d][%d] = %g, want %g", rows, cols, r, j, ds[r*cols+j], wd)
					}
				}
			}
		}
	})
}

// TestExpRows compares ExpRows with float64 over widths on and off the
// 16-lane multiple, in place and not.
func TestExpRows(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 9))
		for _, sh := range [][2]int{{1, 16}, {3, 64}, {5, 20}, {2, 3}, {7, 256}} {
			rows, w := sh[0], sh[1]
			x := randSlice(rng, rows*w)
			for i := range x {
				x[i] *= 12
			}
			e, mx, sum := make([]float32, rows*w), make([]float32, rows), make([]float32, rows)
			ExpRows(e, x, rows, w, mx, sum)
			in := append([]float32(nil), x...)
			ExpRows(in, in, rows, w, make([]float32, rows), make([]float32, rows))
			for r := 0; r < rows; r++ {
				m := math.Inf(-1)
				for _, v := range x[r*w : r*w+w] {
					m = math.Max(m, float64(v))
				}
				if float64(mx[r]) != m {
					t.Fatalf("%dx%d: mx[%d] = %g, want %g", rows, w, r, mx[r], m)
				}
				var s float64
				for i, v := range x[r*w : r*w+w] {
					want := math.Exp(float64(v) - m)
					s += want
					// x - mx is rounded to float32 first: a relative error of
					// up to |x - mx| 2^-24 before the exponential.
					if d := math.Abs(float64(e[r*w+i]) - want); d > (1e-6+1.2e-7*(m-float64(v)))*want+1e-30 {
						t.Fatalf("%dx%d: e[%d][%d] = %g, want %g", rows, w, r, i, e[r*w+i], want)
					}
					if in[r*w+i] != e[r*w+i] {
						t.Fatalf("%dx%d: in place e[%d][%d] = %g, not %g", rows, w, r, i, in[r*w+i], e[r*w+i])
					}
				}
				if d := math.Abs(float64(sum[r]) - s); d > 1e-5*s {
					t.Fatalf("%dx%d: sum[%d] = %g, want %g", rows, w, r, sum[r], s)
				}
			}
		}
	})
}
