//go:build !amd64 || purego

package igemm

// supported lists the kernels this build can run: the plain Go one.
func supported() []kernelID { return []kernelID{kernelGo} }

func vnniRows(r int, c *int32, ldc int, a *int8, lda int, b *int8, groups int, bias *int32) {
	panic("igemm: no AVX-512 VNNI kernel in this build")
}

func avx2x2x16(c *int32, ldc int, a *int8, lda int, b *int8, groups int) {
	panic("igemm: no AVX2 kernel in this build")
}

func avx2x1x16(c *int32, a *int8, b *int8, groups int) {
	panic("igemm: no AVX2 kernel in this build")
}

func xorCopy(dst *int8, src *int8, n int) {
	panic("igemm: no assembly in this build")
}

func vnniPeak(n int) { panic("igemm: no AVX-512 VNNI kernel in this build") }
