//go:build amd64 && !purego

package worldmodel

import "golang.org/x/sys/cpu"

var useAVX512 = cpu.X86.HasAVX512F

// expShift16 sets x[i] = expf(x[i] - shift) for i < n (a multiple of 16).
//
//go:noescape
func expShift16(x *float32, shift float32, n int)

// geluBias16 sets dst[i] = geluf(x[i] + b[i]) for i < n (a multiple of
// 16); dst may be x.
//
//go:noescape
func geluBias16(dst, x, b *float32, n int)
