package opq

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// impl is gonum's pure-Go BLAS. Its Sgemm without transposes accumulates
// every output element over the inner dimension in index order, one product
// rounded and then added at a time (SSE on amd64, no fused multiply-add), and
// splits work between goroutines by output blocks only; so results do not
// depend on GOMAXPROCS, on the number of rows in a call, or on whether it
// runs serially or in parallel.
var impl gonum.Implementation

// serialRows is the largest row count for which Sgemm with at most 64
// columns stays on its serial path (fewer than 4 blocks of 64x64), so that a
// call allocates nothing and starts no goroutine.
const serialRows = 192

// mulTo sets c (n x k, stride ldc) = a (n x inner, stride lda) * b (inner x k,
// stride ldb). It is the plain loop
//
//	for i, j: c[i][j] = 0; for l in 0..inner-1: c[i][j] += float32(a[i][l]*b[l][j])
func mulTo(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, n, inner, k int) {
	impl.Sgemm(blas.NoTrans, blas.NoTrans, n, k, inner, 1, a, lda, b, ldb, 0, c, ldc)
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
