//go:build !amd64 || purego

package worldmodel

const useAVX512 = false

func expShift16(x *float32, shift float32, n int) { panic("worldmodel: no SIMD kernel in this build") }

func geluBias16(dst, x, b *float32, n int) { panic("worldmodel: no SIMD kernel in this build") }
