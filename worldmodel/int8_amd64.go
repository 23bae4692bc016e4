//go:build amd64 && !purego

package worldmodel

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

var softmaxAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW

//go:noescape
func softmaxMaxAVX512(sc *int32, n int) int32

//go:noescape
func softmaxExpAVX512(sc *int32, e *uint32, n int, table *int32, mx int32, m uint32, rnd uint32, sh uint64) (z uint32)

//go:noescape
func softmaxPRowAVX512(p *int16, e *uint32, n int, inv uint32, r2 uint32, sh uint64)

// softmaxPAVX512 is softmaxPGo with AVX-512 over the first multiple of 16
// of the row and the same Go for the rest: the same integers.
func softmaxPAVX512(p []int16, sc []int32, e []uint32, m mult32) {
	n := len(sc)
	e, p = e[:n], p[:n]
	n16 := n &^ 15
	if n16 == 0 {
		softmaxPGo(p, sc, e, m)
		return
	}
	mx := softmaxMaxAVX512(&sc[0], n16)
	for _, v := range sc[n16:] {
		mx = max(mx, v)
	}
	var rnd uint32
	if m.Sh > 0 {
		rnd = 1 << (m.Sh - 1)
	}
	Z := softmaxExpAVX512(&sc[0], &e[0], n16, &expTable[0], mx, m.M, rnd, uint64(m.Sh))
	for k := n16; k < n; k++ {
		e[k] = softmaxExp(mx, sc[k], m, rnd)
		Z += e[k]
	}
	b, inv, r2 := softmaxNorm(Z)
	softmaxPRowAVX512(&p[0], &e[0], n16, inv, r2, uint64(b-3))
	for k := n16; k < n; k++ {
		p[k] = softmaxQ14(e[k], inv, r2, b)
	}
}

//go:noescape
func requant8AVX512(out *int8, acc *int32, bias *int32, m, rnd, sh *int64, n int)

//go:noescape
func residAVX512(x *int32, acc *int32, bias *int32, m, rnd, sh *int64, n int, lim int64)

//go:noescape
func geluAVX512(out *int8, acc *int32, bias *int32, m, rnd, sh *int64, n int, table *int32)

var requantAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL

// rowsAVX512 runs one of the kernels above on the first multiple of 8
// columns of every row, for do (kind 0: requant8, 1: residual, 2: GELU),
// and returns how many columns it did per row.
func (l *rqLinear) rowsAVX512(kind int, out8 []int8, x, acc []int32, rows int, table []int32) int {
	N := l.N
	n8 := N &^ 7
	if !requantAVX512 || n8 == 0 {
		return 0
	}
	for r := 0; r < rows; r++ {
		a := &acc[r*N]
		switch kind {
		case 0:
			requant8AVX512(&out8[r*N], a, &l.Bias[0], &l.m[0], &l.rnd[0], &l.sh[0], n8)
		case 1:
			residAVX512(&x[r*N], a, &l.Bias[0], &l.m[0], &l.rnd[0], &l.sh[0], n8, int8Resid)
		case 2:
			if n16 := N &^ 15; n16 > 0 {
				geluAVX512(&out8[r*N], a, &l.Bias[0], &l.m[0], &l.rnd[0], &l.sh[0], n16, &table[0])
			}
		}
	}
	if kind == 2 {
		return N &^ 15
	}
	return n8
}

//go:noescape
func lnAVX512(out unsafe.Pointer, x *int32, gain *int64, b *int32, n int, mu, inv, lim int64, wide bool)

var lnKernel = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ

// lnAVX512Rows runs the LayerNorm's output on the first multiple of 8
// columns into dst (int8 or int16) and returns how many it did.
func lnAVX512Rows[T int8 | int16](dst []T, x []int32, g []int64, b []int32, mu, inv, lim int64) int {
	n8 := len(x) &^ 7
	if !lnKernel || n8 == 0 {
		return 0
	}
	var zero T
	lnAVX512(unsafe.Pointer(&dst[0]), &x[0], &g[0], &b[0], n8, mu, inv, lim, unsafe.Sizeof(zero) == 2)
	return n8
}

//go:noescape
func pvAVX512(out *int32, p *int16, vp *int16, pairs int, blocks int, stride int)

//go:noescape
func pv32AVX512(out *int32, p *int16, vp *int16, pairs int)

var pvVNNI = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VNNI

// pvRow is pvRowGo with VPDPWSSD when the machine has it and hd is a
// multiple of 16.
func pvRow(out []int32, p []int16, vp []int16, K, hd int) {
	if !pvVNNI || hd%16 != 0 || K < 2 {
		pvRowGo(out, p, vp, K, hd)
		return
	}
	if hd == 32 {
		pv32AVX512(&out[0], &p[0], &vp[0], (K+1)/2)
		return
	}
	pvAVX512(&out[0], &p[0], &vp[0], (K+1)/2, hd/16, 2*hd*2)
}
