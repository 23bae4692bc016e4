// Package f32 holds memowm's float32 kernels whose results must not depend on
// the machine: every output element is computed in one documented order, one
// product rounded and then added at a time (no fused multiply-add), so that a
// fast kernel (AVX2 assembly on amd64) and the plain Go loop give the same
// bits, for any blocking, row count or GOMAXPROCS.
//
// # The order
//
// MulTo computes, for every i < n and j < k,
//
//	s := float32(0)
//	for l := 0; l < inner; l++ {
//		s = s + float32(a[i*lda+l]*b[l*ldb+j])
//	}
//	c[i*ldc+j] = s
//
// The AVX2 kernel keeps a 4 x 16 block of c in registers and walks l in the
// same order; lanes are independent elements, never partial sums of one. Rows
// left over below a multiple of 4 (and vector-matrix products, n = 1) run a
// 1 x 16 kernel of the same order; columns past a multiple of 16 run the
// plain loop.
//
// MulParTo and MulPackedTo (gemm.go) compute the same result with an
// AVX-512 8 x 32 kernel, cache blocking and goroutines: the inner dimension
// is cut into chunks of 256, and between chunks each element's running sum
// is stored as float32 and continued, which is the same sequence of roundings
// as one pass; goroutines split the output columns. Pack repacks a matrix
// used many times (weights) once.
//
// Build with the tag purego to force the plain loops.
package f32
