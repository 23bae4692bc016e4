package fgemm

import (
	"fmt"
	"math"
)

// The elementwise kernels that sit between the training's products, with
// AVX-512 versions where the machine has them. Like MulTo they are not
// exact: the assembly computes e^x and tanh its own way (within a few
// float32 ulps of the plain Go loops, which are the fallback).

// gelu' constants: the tanh form gelu(u) = 0.5 u (1 + tanh(c (u + k3 u^3))).
const (
	geluC  = 0.7978845608028654
	geluK3 = 0.044715
)

// GeluBackward sets du[i] = dy[i] * gelu'(u) with u = pre[i] + b[i], for the
// tanh form of GELU, given act[i] = gelu(u) (the forward's output): tanh is
// read back from it as t = 2 act/u - 1 (for |u| <= 0.01, t = c u (1 + k3 u^2)),
//
//	gelu'(u) = 0.5 (1 + t) + 0.5 u (1 - t^2) c (1 + 3 k3 u^2)
//
// All slices have du's length; it panics otherwise.
func GeluBackward(du, dy, pre, act, b []float32) {
	n := len(du)
	if len(dy) != n || len(pre) != n || len(act) != n || len(b) != n {
		panic(fmt.Sprintf("fgemm: GeluBackward lengths %d, %d, %d, %d, %d differ", n, len(dy), len(pre), len(act), len(b)))
	}
	i := 0
	if useAsm && n >= 16 {
		i = n &^ 15
		geluBackward16(&du[0], &dy[0], &pre[0], &act[0], &b[0], i)
	}
	for ; i < n; i++ {
		u := pre[i] + b[i]
		var t float32
		if u > 1e-2 || u < -1e-2 {
			t = 2*act[i]/u - 1
		} else {
			t = geluC * u * (1 + geluK3*u*u)
		}
		d := 0.5*(1+t) + 0.5*u*(1-t*t)*geluC*(1+3*geluK3*u*u)
		du[i] = dy[i] * d
	}
}

// SoftmaxCols sets each column j of x (rows x cols, row stride cols) to the
// softmax over the rows of scale * x[:, j] (scale > 0). It panics if x is
// shorter than rows x cols.
func SoftmaxCols(x []float32, rows, cols int, scale float32) {
	if rows < 0 || cols < 0 || len(x) < rows*cols {
		panic(fmt.Sprintf("fgemm: SoftmaxCols shape %d x %d does not fit a slice of %d", rows, cols, len(x)))
	}
	if rows == 0 {
		return
	}
	j := 0
	if useAsm {
		for ; j+16 <= cols; j += 16 {
			softmaxStrip16(&x[j], rows, cols, scale)
		}
	}
	for ; j < cols; j++ {
		mx := x[j]
		for r := 1; r < rows; r++ {
			mx = max(mx, x[r*cols+j])
		}
		mx *= scale
		var sum float32
		for r := 0; r < rows; r++ {
			e := float32(math.Exp(float64(x[r*cols+j]*scale - mx)))
			x[r*cols+j] = e
			sum += e
		}
		inv := 1 / sum
		for r := 0; r < rows; r++ {
			x[r*cols+j] *= inv
		}
	}
}

// SoftmaxColsBackward is the backward of SoftmaxCols: given p (rows x cols),
// its output, and dp, the gradient of p, it sets dp to the gradient of the
// scores x:
//
//	dp[:, j] = p[:, j] (dp[:, j] - sum_r dp[r][j] p[r][j]) scale
//
// It panics if a slice is shorter than rows x cols.
func SoftmaxColsBackward(dp, p []float32, rows, cols int, scale float32) {
	if rows < 0 || cols < 0 || len(dp) < rows*cols || len(p) < rows*cols {
		panic(fmt.Sprintf("fgemm: SoftmaxColsBackward shape %d x %d does not fit slices of %d, %d", rows, cols, len(dp), len(p)))
	}
	if rows == 0 {
		return
	}
	j := 0
	if useAsm {
		for ; j+16 <= cols; j += 16 {
			softmaxBackStrip16(&dp[j], &p[j], rows, cols, scale)
		}
	}
	for ; j < cols; j++ {
		var dot float32
		for r := 0; r < rows; r++ {
			dot += dp[r*cols+j] * p[r*cols+j]
		}
		for r := 0; r < rows; r++ {
			dp[r*cols+j] = p[r*cols+j] * (dp[r*cols+j] - dot) * scale
		}
	}
}

// ExpRows sets, for each row r of x (rows, w > 0), mx[r] to the row's
// maximum, e's row to exp(x - mx[r]) and sum[r] to the sum of e's row: the
// pieces of a softmax (e / sum) and of its log (x - mx - log sum) over each
// row. e may be x. It panics if a slice is too short. For finite x only: the
// assembly's maximum may drop a NaN, and its exp(-Inf - -Inf) is NaN.
func ExpRows(e, x []float32, rows, w int, mx, sum []float32) {
	if rows < 0 || w <= 0 || len(e) < rows*w || len(x) < rows*w || len(mx) < rows || len(sum) < rows {
		panic(fmt.Sprintf("fgemm: ExpRows shape %d x %d does not fit slices of %d, %d, %d, %d", rows, w, len(e), len(x), len(mx), len(sum)))
	}
	if rows == 0 {
		return
	}
	if useAsm && w%16 == 0 {
		expRows16(&e[0], &x[0], rows, w, &mx[0], &sum[0])
		return
	}
	for r := 0; r < rows; r++ {
		xr, er := x[r*w:r*w+w], e[r*w:r*w+w]
		m := xr[0]
		for _, v := range xr {
			m = max(m, v)
		}
		var s float32
		for i, v := range xr {
			er[i] = float32(math.Exp(float64(v - m)))
			s += er[i]
		}
		mx[r], sum[r] = m, s
	}
}
