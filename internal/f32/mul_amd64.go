//go:build amd64 && !purego

package f32

import "golang.org/x/sys/cpu"

var useAsm = cpu.X86.HasAVX2

// kernel4x16 sets the 4 x 16 block at c (row stride ldc) to the product of
// the 4 rows at a (stride lda, inner values) and the inner x 16 block at b
// (stride ldb), in the package's order. Strides are in elements.
//
//go:noescape
func kernel4x16(c *float32, ldc int, a *float32, lda int, b *float32, ldb int, inner int)

// kernel1x16 is kernel4x16 for one row of a: c[0:16] = a[0:inner] times the
// inner x 16 block at b (stride ldb), in the package's order.
//
//go:noescape
func kernel1x16(c *float32, a *float32, b *float32, ldb int, inner int)
