package f32

import "fmt"

// MulTo sets c (n x k, row stride ldc) = a (n x inner, stride lda) times
// b (inner x k, stride ldb), in the order the package documents. It panics if
// a slice is too short for its shape.
func MulTo(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, n, inner, k int) {
	if n == 0 || k == 0 {
		return
	}
	if n < 0 || k < 0 || inner < 0 || lda < inner || ldb < k || ldc < k ||
		len(a) < (n-1)*lda+inner || len(c) < (n-1)*ldc+k || (inner > 0 && len(b) < (inner-1)*ldb+k) {
		panic(fmt.Sprintf("f32: MulTo shapes n=%d inner=%d k=%d with strides %d %d %d do not fit slices of %d, %d, %d",
			n, inner, k, lda, ldb, ldc, len(a), len(b), len(c)))
	}
	i := 0
	if useAsm && inner > 0 {
		kb := k &^ 15
		for ; i+4 <= n; i += 4 {
			for j := 0; j < kb; j += 16 {
				kernel4x16(&c[i*ldc+j], ldc, &a[i*lda], lda, &b[j], ldb, inner)
			}
			if kb < k {
				mulRef(c[i*ldc+kb:], ldc, a[i*lda:], lda, b[kb:], ldb, 4, inner, k-kb)
			}
		}
		// The last rows (and vector-matrix products) one at a time.
		for ; i < n && kb > 0; i++ {
			for j := 0; j < kb; j += 16 {
				kernel1x16(&c[i*ldc+j], &a[i*lda], &b[j], ldb, inner)
			}
			if kb < k {
				mulRef(c[i*ldc+kb:], ldc, a[i*lda:], lda, b[kb:], ldb, 1, inner, k-kb)
			}
		}
	}
	if i < n {
		mulRef(c[i*ldc:], ldc, a[i*lda:], lda, b, ldb, n-i, inner, k)
	}
}

// MulRef is MulTo as the plain loop, the reference that the fast kernel must
// equal bit for bit.
func MulRef(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, n, inner, k int) {
	mulRef(c, ldc, a, lda, b, ldb, n, inner, k)
}

func mulRef(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, n, inner, k int) {
	for i := 0; i < n; i++ {
		ci := c[i*ldc : i*ldc+k]
		clear(ci)
		ai := a[i*lda : i*lda+inner]
		for l, av := range ai {
			bl := b[l*ldb : l*ldb+k]
			for j, bv := range bl {
				ci[j] = ci[j] + float32(av*bv)
			}
		}
	}
}
