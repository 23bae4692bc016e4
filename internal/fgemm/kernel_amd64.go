//go:build amd64 && !purego

package fgemm

import "golang.org/x/sys/cpu"

// useAsm selects the AVX-512 micro-kernel (tests switch it off to check the
// plain Go kernel in the same build).
var useAsm = cpu.X86.HasAVX512F

// kernel14x32 sets (load == 0) or continues (load != 0) the 14 x 32 block
// at c (row stride ldc, in elements) with the product of the a panel (kc
// steps of 14 floats, step p at a + p*ast bytes) and the b panel (kc steps of
// 32 floats, step p at b + p*bst bytes): for p < kc in order,
// c[i][j] = fma(a[p][i], b[p][j], c[i][j]). With ast = 56 and bst = 128 it
// is kernelGo with one rounding per step.
//
//go:noescape
func kernel14x32(kc int, a, b, c *float32, ldc int, load int, ast int, bst int)

// kernel14x32r is kernel14x32 reading a from 14 rows of stride lda
// (elements): a[p][i] = a[i*lda+p]. The steps and roundings are the same.
//
//go:noescape
func kernel14x32r(kc int, a, b, c *float32, ldc int, load int, lda int, bst int)

// fmaPeak runs n iterations of 24 independent 16-lane fused multiply-adds
// on registers: 768 floating-point operations per iteration.
//
//go:noescape
func fmaPeak(n int)

// geluBackward16, softmaxStrip16 and softmaxBackStrip16 are vec.go's
// kernels on 16 lanes; vec_amd64.s says what each computes.
//
//go:noescape
func geluBackward16(du, dy, pre, act, b *float32, n int)

//go:noescape
func softmaxStrip16(x *float32, rows, stride int, scale float32)

//go:noescape
func softmaxBackStrip16(dp, p *float32, rows, stride int, scale float32)

// kernel8x32 and kernel8x32r are kernel14x32 and kernel14x32r on 8 rows.
//
//go:noescape
func kernel8x32(kc int, a, b, c *float32, ldc int, load int, ast int, bst int)

//go:noescape
func kernel8x32r(kc int, a, b, c *float32, ldc int, load int, lda int, bst int)

// layerNormRows16 and layerNormBackRows16 are LayerNorm and
// LayerNormBackward, add16 Add, residual16 Residual (with a mask) on rows of
// a multiple of 16 floats (norm_amd64.s).
//
//go:noescape
func layerNormRows16(out, x, gain, b *float32, rows, w int, invW, eps float32)

//go:noescape
func layerNormBackRows16(dx, xhat, dg, db, x, dy, gain *float32, rows, w int, invW, eps float32)

//go:noescape
func add16(dst, src *float32, n int)

//go:noescape
func residual16(dst, src, y, b, mask *float32, rows, w int)

// expRows16 is ExpRows on rows of a multiple of 16 floats (vec_amd64.s).
//
//go:noescape
func expRows16(e, x *float32, rows, w int, mx, sum *float32)

// axpyDot16 is AxpyDot on a multiple of 16 floats (norm_amd64.s).
//
//go:noescape
func axpyDot16(gr, w, d *float32, n int, f float32) float32

// adamw16 is AdamW on a multiple of 16 floats (adamw_amd64.s).
//
//go:noescape
func adamw16(w, grad, m, v *float32, n int, h *AdamHyper)
