//go:build !amd64 || purego

package f32

const useAVX512 = false

func kernel8x32(c *float32, ldc int, a *float32, lda int, b *float32, inner int, acc int) {
	panic("f32: no AVX-512 kernel in this build")
}
