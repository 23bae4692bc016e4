//go:build !amd64 || purego

package f32

const useAsm = false

func kernel4x16(c *float32, ldc int, a *float32, lda int, b *float32, ldb int, inner int) {
	panic("f32: no assembly kernel in this build")
}

func kernel1x16(c *float32, a *float32, b *float32, ldb int, inner int) {
	panic("f32: no assembly kernel in this build")
}
