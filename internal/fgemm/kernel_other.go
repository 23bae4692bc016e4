//go:build !amd64 || purego

package fgemm

// useAsm is false: this build has only the plain Go kernel.
var useAsm = false

func kernel14x32(kc int, a, b, c *float32, ldc int, load int, ast int, bst int) {
	panic("fgemm: no assembly kernel in this build")
}

func kernel14x32r(kc int, a, b, c *float32, ldc int, load int, lda int, bst int) {
	panic("fgemm: no assembly kernel in this build")
}

func fmaPeak(n int) { panic("fgemm: no assembly kernel in this build") }

func geluBackward16(du, dy, pre, act, b *float32, n int) {
	panic("fgemm: no assembly kernel in this build")
}

func softmaxStrip16(x *float32, rows, stride int, scale float32) {
	panic("fgemm: no assembly kernel in this build")
}

func softmaxBackStrip16(dp, p *float32, rows, stride int, scale float32) {
	panic("fgemm: no assembly kernel in this build")
}

func kernel8x32(kc int, a, b, c *float32, ldc int, load int, ast int, bst int) {
	panic("fgemm: no assembly kernel in this build")
}

func kernel8x32r(kc int, a, b, c *float32, ldc int, load int, lda int, bst int) {
	panic("fgemm: no assembly kernel in this build")
}

func layerNormRows16(out, x, gain, b *float32, rows, w int, invW, eps float32) {
	panic("fgemm: no assembly kernel in this build")
}

func layerNormBackRows16(dx, xhat, dg, db, x, dy, gain *float32, rows, w int, invW, eps float32) {
	panic("fgemm: no assembly kernel in this build")
}

func add16(dst, src *float32, n int) { panic("fgemm: no assembly kernel in this build") }

func residual16(dst, src, y, b, mask *float32, rows, w int) {
	panic("fgemm: no assembly kernel in this build")
}

func expRows16(e, x *float32, rows, w int, mx, sum *float32) {
	panic("fgemm: no assembly kernel in this build")
}

func axpyDot16(gr, w, d *float32, n int, f float32) float32 {
	panic("fgemm: no assembly kernel in this build")
}

func adamw16(w, grad, m, v *float32, n int, h *AdamHyper) {
	panic("fgemm: no assembly kernel in this build")
}
