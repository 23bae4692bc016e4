//go:build amd64 && !purego

package f32

import "golang.org/x/sys/cpu"

var useAVX512 = cpu.X86.HasAVX512F

// kernel8x32 sets (acc == 0) or continues (acc != 0) the 8 x 32 block at c
// (row stride ldc) with the product of the 8 rows at a (stride lda, inner
// values) and the packed panel b (inner rows of 32 floats), in the package's
// order. Strides are in elements.
//
//go:noescape
func kernel8x32(c *float32, ldc int, a *float32, lda int, b *float32, inner int, acc int)
