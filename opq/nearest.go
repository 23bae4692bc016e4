package opq

import "github.com/memowm/memowm/internal/f32"

// assignRows is how many points k-means assigns per call of nearest.
const assignRows = 192

// mulTo sets c (n x k, stride ldc) = a (n x inner, stride lda) * b (inner x k,
// stride ldb), every element summed over l in order as f32.MulTo documents:
//
//	for i, j: c[i][j] = 0; for l in 0..inner-1: c[i][j] += float32(a[i][l]*b[l][j])
func mulTo(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, n, inner, k int) {
	f32.MulTo(c, ldc, a, lda, b, ldb, n, inner, k)
}

// nearest sets codes[i*codeStride] to the index of the codeword of (bookT,
// norms) nearest to row i of a (n rows of sd values, stride lda): the
// smallest norms[c] - 2<a_i, c>, the lowest c on ties. If best is not nil,
// best[i] receives that value (the squared distance minus |a_i|^2). dots
// is scratch of n*k values.
func nearest(codes []uint8, codeStride int, best []float32, a []float32, lda, n, sd int, bookT, norms []float32, dots []float32) {
	k := len(norms)
	mulTo(dots, k, a, lda, bookT, k, n, sd, k)
	for i := 0; i < n; i++ {
		row := dots[i*k : (i+1)*k]
		c, v := argmin(row, norms)
		codes[i*codeStride] = uint8(c)
		if best != nil {
			best[i] = v
		}
	}
}

// argmin returns the c with the smallest norms[c] - 2*dots[c] (lowest c on
// ties) and that value.
func argmin(dots, norms []float32) (int, float32) {
	norms = norms[:len(dots)]
	bc, bv := 0, norms[0]-float32(2*dots[0])
	for c := 1; c < len(dots); c++ {
		if v := norms[c] - float32(2*dots[c]); v < bv {
			bc, bv = c, v
		}
	}
	return bc, bv
}
