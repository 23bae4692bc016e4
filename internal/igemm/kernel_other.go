//go:build !amd64 || purego

package igemm

// supported lists the kernels this build can run: the plain Go one.
func supported() []kernelID { return []kernelID{kernelGo} }

func vnniRows(r int, c *int32, ldc int, a *int8, lda int, b *int8, groups int, bias *int32) {
	panic("igemm: no AVX-512 VNNI kernel in this build")
}

func avx2Rows(r int, c *int32, ldc int, a *int16, lda int, b *int8, groups int) {
	panic("igemm: no AVX2 kernel in this build")
}

func extend16(dst *int16, src *int8, n int) {
	panic("igemm: no assembly in this build")
}

func xorCopy(dst *int8, src *int8, n int) {
	panic("igemm: no assembly in this build")
}

func vnniPeak(n int) { panic("igemm: no AVX-512 VNNI kernel in this build") }
