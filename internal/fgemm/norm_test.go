package fgemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// lnRef is LayerNorm and its backward of one row in float64.
func lnRef(x, g, b, dy []float32, eps float64) (y, xhat, dx []float64) {
	w := float64(len(x))
	var mean, q float64
	for _, v := range x {
		mean += float64(v)
	}
	mean /= w
	for _, v := range x {
		q += (float64(v) - mean) * (float64(v) - mean)
	}
	rstd := 1 / math.Sqrt(q/w+eps)
	y, xhat, dx = make([]float64, len(x)), make([]float64, len(x)), make([]float64, len(x))
	var m1, m2 float64
	for i, v := range x {
		xhat[i] = (float64(v) - mean) * rstd
		y[i] = xhat[i]*float64(g[i]) + float64(b[i])
		d := float64(dy[i]) * float64(g[i])
		m1 += d
		m2 += d * xhat[i]
	}
	m1 /= w
	m2 /= w
	for i := range x {
		dx[i] = rstd * (float64(dy[i])*float64(g[i]) - m1 - xhat[i]*m2)
	}
	return y, xhat, dx
}

// TestLayerNorm compares LayerNorm and LayerNormBackward with float64 over
// row widths on and off the 16-lane multiple, with offset rows.
func TestLayerNorm(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 7))
		const eps = 1e-5
		for _, sh := range [][2]int{{1, 16}, {3, 32}, {5, 128}, {2, 20}, {4, 7}, {9, 256}} {
			rows, w := sh[0], sh[1]
			x, g, b, dy := randSlice(rng, rows*w), randSlice(rng, w), randSlice(rng, w), randSlice(rng, rows*w)
			for i := range x {
				x[i] = 3*x[i] + 1.5
			}
			y := make([]float32, rows*w)
			LayerNorm(y, x, g, b, rows, w, eps)
			xhat, dx := make([]float32, rows*w), make([]float32, rows*w)
			dg, db := randSlice(rng, w), randSlice(rng, w)
			dg0, db0 := append([]float32(nil), dg...), append([]float32(nil), db...)
			LayerNormBackward(dx, xhat, dg, db, x, dy, g, rows, w, eps)
			wantDg, wantDb := make([]float64, w), make([]float64, w)
			for i := range wantDg {
				wantDg[i], wantDb[i] = float64(dg0[i]), float64(db0[i])
			}
			for r := 0; r < rows; r++ {
				o := r * w
				ry, rh, rdx := lnRef(x[o:o+w], g, b, dy[o:o+w], eps)
				for i := 0; i < w; i++ {
					if d := math.Abs(float64(y[o+i]) - ry[i]); d > 1e-5*(1+math.Abs(ry[i])) {
						t.Fatalf("%dx%d: y[%d][%d] = %g, want %g", rows, w, r, i, y[o+i], ry[i])
					}
					if d := math.Abs(float64(xhat[o+i]) - rh[i]); d > 1e-5*(1+math.Abs(rh[i])) {
						t.Fatalf("%dx%d: xhat[%d][%d] = %g, want %g", rows, w, r, i, xhat[o+i], rh[i])
					}
					if d := math.Abs(float64(dx[o+i]) - rdx[i]); d > 1e-4*(1+math.Abs(rdx[i])) {
						t.Fatalf("%dx%d: dx[%d][%d] = %g, want %g", rows, w, r, i, dx[o+i], rdx[i])
					}
					wantDg[i] += float64(dy[o+i]) * rh[i]
					wantDb[i] += float64(dy[o+i])
				}
			}
			for i := 0; i < w; i++ {
				if d := math.Abs(float64(dg[i]) - wantDg[i]); d > 1e-4*(1+math.Abs(wantDg[i])) {
					t.Fatalf("%dx%d: dg[%d] = %g, want %g", rows, w, i, dg[i], wantDg[i])
				}
				if d := math.Abs(float64(db[i]) - wantDb[i]); d > 1e-4*(1+math.Abs(wantDb[i])) {
					t.Fatalf("%dx%d: db[%d] = %g, want %g", rows, w, i, db[i], wantDb[i])
				}
			}
		}
	})
}

// TestRowKernels checks Add, AddBias, ColSum and Residual against plain
// loops, at lengths around the 16-lane strips (which add in the same order,
// so the results are exact).
func TestRowKernels(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(8, 8))
		for _, sh := range [][2]int{{1, 16}, {3, 32}, {2, 20}, {4, 7}, {5, 128}, {7, 80}} {
			rows, w := sh[0], sh[1]
			n := rows * w
			x, y, b, m := randSlice(rng, n), randSlice(rng, n), randSlice(rng, w), randSlice(rng, n)

			got := append([]float32(nil), x...)
			Add(got[:n-1], y) // a length off the 16-lane multiple
			for i := range got {
				want := x[i]
				if i < n-1 {
					want += y[i]
				}
				if got[i] != want {
					t.Fatalf("Add %d: [%d] = %g, want %g", n-1, i, got[i], want)
				}
			}

			got = append(got[:0], x...)
			AddBias(got, b, rows, w)
			for i := range got {
				if want := x[i] + b[i%w]; got[i] != want {
					t.Fatalf("AddBias %dx%d: [%d] = %g, want %g", rows, w, i, got[i], want)
				}
			}

			acc := make([]float32, w)
			ColSum(acc, x, rows, w)
			for i := range acc {
				want := x[i]
				for r := 1; r < rows; r++ {
					want += x[r*w+i]
				}
				if acc[i] != want {
					t.Fatalf("ColSum %dx%d: [%d] = %g, want %g", rows, w, i, acc[i], want)
				}
			}

			for _, mask := range [][]float32{m, nil} {
				got = make([]float32, n)
				Residual(got, x, y, b, mask, rows, w)
				for i := range got {
					mv := float32(1)
					if mask != nil {
						mv = mask[i]
					}
					want := float64(x[i]) + float64(y[i]+b[i%w])*float64(mv)
					if d := math.Abs(float64(got[i]) - want); d > 1e-6*(1+math.Abs(want)) {
						t.Fatalf("Residual %dx%d mask %v: [%d] = %g, want %g", rows, w, mask != nil, i, got[i], want)
					}
				}
			}
		}
	})
}

// TestRowKernelsPanic checks that short slices panic with the package's
// message instead of reading out of bounds.
func TestRowKernelsPanic(t *testing.T) {
	for name, f := range map[string]func(){
		"LayerNorm": func() {
			LayerNorm(make([]float32, 15), make([]float32, 16), make([]float32, 16), make([]float32, 16), 1, 16, 1e-5)
		},
		"LayerNormBackward": func() {
			LayerNormBackward(make([]float32, 16), make([]float32, 16), make([]float32, 16), make([]float32, 15), make([]float32, 16), make([]float32, 16), make([]float32, 16), 1, 16, 1e-5)
		},
		"Add":     func() { Add(make([]float32, 17), make([]float32, 16)) },
		"AddBias": func() { AddBias(make([]float32, 31), make([]float32, 16), 2, 16) },
		"ColSum":  func() { ColSum(make([]float32, 16), make([]float32, 16), 0, 16) },
		"Residual": func() {
			Residual(make([]float32, 32), make([]float32, 32), make([]float32, 32), make([]float32, 16), make([]float32, 31), 2, 16)
		},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("%s: no panic on short slices", name)
				}
			}()
			f()
		}()
	}
}

// TestAxpyDot checks AxpyDot against float64 at lengths around the 16-lane
// strips.
func TestAxpyDot(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(10, 10))
		for _, n := range []int{1, 15, 16, 17, 48, 96, 128, 131} {
			g, w, d := randSlice(rng, n), randSlice(rng, n), randSlice(rng, n)
			g0 := append([]float32(nil), g...)
			f := float32(rng.NormFloat64())
			got := AxpyDot(g, w, d, f)
			var want float64
			for i := range d {
				want += float64(w[i]) * float64(d[i])
				wg := float64(g0[i]) + float64(f)*float64(d[i])
				if e := math.Abs(float64(g[i]) - wg); e > 1e-6*(1+math.Abs(wg)) {
					t.Fatalf("n=%d: g[%d] = %g, want %g", n, i, g[i], wg)
				}
			}
			if e := math.Abs(float64(got) - want); e > 1e-5*(1+math.Abs(want)) {
				t.Fatalf("n=%d: dot %g, want %g", n, got, want)
			}
		}
	})
}
