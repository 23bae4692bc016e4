package fgemm

import (
	"fmt"
	"math"
)

// The row-wise kernels of the training's LayerNorms, biases and residuals,
// with AVX-512 versions for rows of a multiple of 16 floats. Like the rest of
// this package they are not exact: the assembly sums a row in 16 lanes and
// then across them and uses fused multiply-adds, the plain Go loops (the
// fallback) sum it left to right; the tests hold both to float64. Each row's
// result depends only on that row, so splitting rows across goroutines
// changes nothing.

// LayerNorm sets out (rows, w) to the LayerNorm of each row of x (rows, w):
// (x - mean) / sqrt(var + eps) * g + b, with the biased variance. out may be
// x. It panics if a slice is too short.
func LayerNorm(out, x, g, b []float32, rows, w int, eps float32) {
	if rows < 0 || w <= 0 || len(out) < rows*w || len(x) < rows*w || len(g) < w || len(b) < w {
		panic(fmt.Sprintf("fgemm: LayerNorm shape %d x %d does not fit slices of %d, %d, %d, %d", rows, w, len(out), len(x), len(g), len(b)))
	}
	if rows == 0 {
		return
	}
	if useAsm && w%16 == 0 {
		layerNormRows16(&out[0], &x[0], &g[0], &b[0], rows, w, 1/float32(w), eps)
		return
	}
	invW := 1 / float32(w)
	for r := 0; r < rows; r++ {
		xr, or := x[r*w:r*w+w], out[r*w:r*w+w]
		mean, rstd := meanRstd(xr, invW, eps)
		for i, v := range xr {
			or[i] = (v-mean)*rstd*g[i] + b[i]
		}
	}
}

// meanRstd returns the mean of xr and 1/sqrt(variance + eps).
func meanRstd(xr []float32, invW, eps float32) (mean, rstd float32) {
	var s float32
	for _, v := range xr {
		s += v
	}
	mean = s * invW
	var q float32
	for _, v := range xr {
		d := v - mean
		q += d * d
	}
	return mean, float32(1 / math.Sqrt(float64(q*invW+eps)))
}

// LayerNormBackward is the backward of LayerNorm over rows of x (rows, w)
// with gain g, given dy (rows, w), the gradient of its output:
//
//	xhat = (x - mean) rstd;  dxhat = dy g
//	dx   = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))
//	dg  += sum over rows of dy xhat;  db += sum over rows of dy
//
// It writes xhat (rows, w) and dx (rows, w), and adds into dg and db (w),
// whose sums run over the rows in order. dx may be dy. It panics if a slice is
// too short.
func LayerNormBackward(dx, xhat, dg, db, x, dy, g []float32, rows, w int, eps float32) {
	if rows < 0 || w <= 0 || len(dx) < rows*w || len(xhat) < rows*w || len(x) < rows*w || len(dy) < rows*w || len(dg) < w || len(db) < w || len(g) < w {
		panic(fmt.Sprintf("fgemm: LayerNormBackward shape %d x %d does not fit its slices", rows, w))
	}
	if rows == 0 {
		return
	}
	if useAsm && w%16 == 0 {
		layerNormBackRows16(&dx[0], &xhat[0], &dg[0], &db[0], &x[0], &dy[0], &g[0], rows, w, 1/float32(w), eps)
		return
	}
	invW := 1 / float32(w)
	for r := 0; r < rows; r++ {
		xr, dyr := x[r*w:r*w+w], dy[r*w:r*w+w]
		xh, dxr := xhat[r*w:r*w+w], dx[r*w:r*w+w]
		mean, rstd := meanRstd(xr, invW, eps)
		var m1, m2 float32
		for i, v := range xr {
			h := (v - mean) * rstd
			xh[i] = h
			d := dyr[i]
			dg[i] += d * h
			db[i] += d
			d *= g[i]
			m1 += d
			m2 += d * h
		}
		m1 *= invW
		m2 *= invW
		for i := range dxr {
			dxr[i] = rstd * (dyr[i]*g[i] - m1 - xh[i]*m2)
		}
	}
}

// Add sets dst[i] += src[i] for i < len(dst). It panics if src is shorter.
func Add(dst, src []float32) {
	n := len(dst)
	if len(src) < n {
		panic(fmt.Sprintf("fgemm: Add of %d floats into %d", len(src), n))
	}
	i := 0
	if useAsm && n >= 16 {
		i = n &^ 15
		add16(&dst[0], &src[0], i)
	}
	for ; i < n; i++ {
		dst[i] += src[i]
	}
}

// AddBias adds b (w) to each row of x (rows, w). It panics if a slice is too
// short.
func AddBias(x, b []float32, rows, w int) {
	if rows < 0 || w < 0 || len(x) < rows*w || len(b) < w {
		panic(fmt.Sprintf("fgemm: AddBias shape %d x %d does not fit slices of %d, %d", rows, w, len(x), len(b)))
	}
	for r := 0; r < rows; r++ {
		Add(x[r*w:r*w+w], b)
	}
}

// ColSum sets acc (w) to the sum of the rows of x (rows >= 1, w), top to
// bottom. It panics if a slice is too short or rows is 0.
func ColSum(acc, x []float32, rows, w int) {
	if rows < 1 || w < 0 || len(x) < rows*w || len(acc) < w {
		panic(fmt.Sprintf("fgemm: ColSum shape %d x %d does not fit slices of %d, %d", rows, w, len(acc), len(x)))
	}
	copy(acc[:w], x[:w])
	for r := 1; r < rows; r++ {
		Add(acc[:w], x[r*w:r*w+w])
	}
}

// Residual sets dst = src + (y + b) * mask elementwise over rows (rows, w),
// with b (w) added to each row; a nil mask is all ones. dst may be src. It
// panics if a slice is too short.
func Residual(dst, src, y, b, mask []float32, rows, w int) {
	n := rows * w
	if rows < 0 || w < 0 || len(dst) < n || len(src) < n || len(y) < n || len(b) < w || (mask != nil && len(mask) < n) {
		panic(fmt.Sprintf("fgemm: Residual shape %d x %d does not fit its slices", rows, w))
	}
	if n == 0 {
		return
	}
	if useAsm && w%16 == 0 && mask != nil {
		residual16(&dst[0], &src[0], &y[0], &b[0], &mask[0], rows, w)
		return
	}
	for r := 0; r < rows; r++ {
		d, s, yr := dst[r*w:r*w+w], src[r*w:r*w+w], y[r*w:r*w+w]
		if mask == nil {
			for i, v := range s {
				d[i] = v + (yr[i] + b[i])
			}
			continue
		}
		mr := mask[r*w : r*w+w]
		for i, v := range s {
			d[i] = v + (yr[i]+b[i])*mr[i]
		}
	}
}

// AxpyDot sets g[i] += f d[i] and returns the sum of w[i] d[i], for i <
// len(d): one pass of a small layer's backward (a weight row's gradient and
// the input's). It panics if g or w is shorter than d.
func AxpyDot(g, w, d []float32, f float32) float32 {
	n := len(d)
	if len(g) < n || len(w) < n {
		panic(fmt.Sprintf("fgemm: AxpyDot of %d floats with slices of %d, %d", n, len(g), len(w)))
	}
	i := 0
	var acc float32
	if useAsm && n >= 16 {
		i = n &^ 15
		acc = axpyDot16(&g[0], &w[0], &d[0], i, f)
	}
	for ; i < n; i++ {
		g[i] += f * d[i]
		acc += w[i] * d[i]
	}
	return acc
}
