package ptx

import (
	"encoding/binary"
	"math"
	"math/big"
)

// Tensor-core instructions: mma.sync and ldmatrix, performed for a whole
// warp at once by the scheduler (warp.go).
//
// Fragment layouts (PTX ISA 9.7.14.5, "Matrix Fragments for mma.m16n8k32",
// "mma.m16n8k16 with integer type", "mma.m16n8k8"), with g = laneid>>2 and
// q = laneid%4; register i of a fragment holds elements low to high:
//
//	m16n8k32 s8/u8  A (16x32, row): a[i] byte k = A[g+8*(i&1)][4q+k+16*(i>>1)]
//	                B (32x8, col):  b[i] byte k = B[4q+k+16*i][g]
//	m16n8k16 s8/u8  A (16x16, row): a[i] byte k = A[g+8*i][4q+k]
//	                B (16x8, col):  b[0] byte k = B[4q+k][g]
//	m16n8k8 tf32    A (16x8, row):  a[i] = A[g+8*(i&1)][q+4*(i>>1)]
//	                B (8x8, col):   b[i] = B[q+4*i][g]
//	C/D (16x8, s32 or f32, all):     c[i] = C[g+8*(i>>1)][2q+(i&1)]
//
// Integer mma is exact: D = A*B + C computed in 64 bits, then wrapped to 32
// bits, or clamped to the int32 range with .satfinite.
//
// tf32 mma: the hardware reads only the upper 19 bits of each .b32 operand
// (sign, exponent, 10 mantissa bits): the low 13 bits are ignored, i.e. an
// fp32 value that was not rounded with cvt.rna.tf32.f32 is truncated toward
// zero. CUTLASS relies on this (its float->tfloat32_t conversions leave the
// low bits in place "since TF32 does not define the low order bits"), and
// measurements report 1+0.75*2^-10 entering the tensor core as 1.0. This
// interpreter does the same. Products of tf32 values are exact; each D
// element is the exact sum c + sum_k a_k*b_k rounded once to float32
// (round to nearest even, subnormals kept). The PTX ISA leaves the
// accumulation order and rounding unspecified, and real tensor cores align
// and truncate partial sums, so results on a GPU may differ in the last
// bit(s). Any NaN operand or product (inf*0), or infinities of both signs,
// give the canonical NaN 0x7fffffff.

// mma performs mma.sync for the warp starting at thread base.
func (br *blockRun) mma(in *inst, base int) {
	ops := br.k.xops[in.target]
	na, nb, nc := mmaShape(in.wmode)
	dRegs, aRegs, bRegs, cRegs := ops[:nc], ops[nc:nc+na], ops[nc+na:nc+na+nb], ops[nc+na+nb:]
	var out [warpSize][4]uint32
	if in.wmode == mmaTF32K8 {
		var a [16][8]float64
		var b [8][8]float64
		var c [16][8]uint32
		for l := 0; l < warpSize; l++ {
			r := br.laneRegs(base + l)
			g, q := l>>2, l&3
			for i, x := range aRegs {
				a[g+8*(i&1)][q+4*(i>>1)] = tf32(r[x])
			}
			for i, x := range bRegs {
				b[q+4*i][g] = tf32(r[x])
			}
			for i, x := range cRegs {
				c[g+8*(i>>1)][2*q+(i&1)] = uint32(r[x])
			}
		}
		for l := 0; l < warpSize; l++ {
			g, q := l>>2, l&3
			for i := range out[l] {
				row, col := g+8*(i>>1), 2*q+(i&1)
				var p [8]float64
				for k := range p {
					p[k] = a[row][k] * b[k][col]
				}
				out[l][i] = sumF32(c[row][col], p[:])
			}
		}
	} else {
		k := 32
		if in.wmode == mmaI8K16 {
			k = 16
		}
		var a [16][32]int32
		var b [32][8]int32
		var c [16][8]int32
		sa, sb := in.t.k == kS, in.t2.k == kS
		for l := 0; l < warpSize; l++ {
			r := br.laneRegs(base + l)
			g, q := l>>2, l&3
			for i, x := range aRegs {
				row, col := g+8*(i&1), 4*q+16*(i>>1)
				if k == 16 {
					row, col = g+8*i, 4*q
				}
				for j := 0; j < 4; j++ {
					a[row][col+j] = i8(r[x]>>(8*j), sa)
				}
			}
			for i, x := range bRegs {
				for j := 0; j < 4; j++ {
					b[4*q+j+16*i][g] = i8(r[x]>>(8*j), sb)
				}
			}
			for i, x := range cRegs {
				c[g+8*(i>>1)][2*q+(i&1)] = int32(r[x])
			}
		}
		sat := in.flags&flSat != 0
		for l := 0; l < warpSize; l++ {
			g, q := l>>2, l&3
			for i := range out[l] {
				row, col := g+8*(i>>1), 2*q+(i&1)
				var s int64
				for j := 0; j < k; j++ {
					s += int64(a[row][j] * b[j][col])
				}
				s += int64(c[row][col])
				if sat {
					s = max(math.MinInt32, min(math.MaxInt32, s))
				}
				out[l][i] = uint32(s)
			}
		}
	}
	for l := 0; l < warpSize; l++ {
		r := br.laneRegs(base + l)
		for i, x := range dRegs {
			r[x] = uint64(out[l][i])
		}
	}
}

// i8 is the low byte of x as a signed or unsigned 8-bit integer.
func i8(x uint64, signed bool) int32 {
	if signed {
		return int32(int8(x))
	}
	return int32(uint8(x))
}

// tf32 is the value of a .b32 tf32 operand: its low 13 bits are ignored.
func tf32(x uint64) float64 {
	return float64(math.Float32frombits(uint32(x) &^ 0x1fff))
}

// sumF32 is float32(c + sum(p)) rounded once to nearest even, p exact
// products; the canonical NaN for NaN operands or opposite infinities.
func sumF32(cbits uint32, p []float64) uint32 {
	const nan = 0x7fffffff
	c := float64(math.Float32frombits(cbits))
	inf := 0
	if math.IsInf(c, 0) {
		inf = int(math.Copysign(1, c))
	}
	if c != c {
		return nan
	}
	for _, x := range p {
		switch {
		case x != x:
			return nan
		case math.IsInf(x, 0):
			s := int(math.Copysign(1, x))
			if inf == -s {
				return nan
			}
			inf = s
		}
	}
	if inf != 0 {
		return math.Float32bits(float32(math.Inf(inf)))
	}
	// Sum in float64 with error-free transformations: if no addition
	// rounded, the float64 sum is exact and is rounded to float32 once.
	s, exact := c, true
	for _, x := range p {
		t := s + x
		bb := t - s
		if (s-(t-bb))+(x-bb) != 0 {
			exact = false
		}
		s = t
	}
	if exact {
		return math.Float32bits(float32(s))
	}
	// Products and c span less than 600 bits (exponents 2^-298 .. 2^260).
	acc := new(big.Float).SetPrec(1024)
	acc.SetFloat64(c)
	var t big.Float
	for _, x := range p {
		acc.Add(acc, t.SetFloat64(x))
	}
	f, _ := acc.Float32()
	return math.Float32bits(f)
}

// ldmatrix performs ldmatrix.sync.aligned.m8n8.xN{.trans}.b16 for the warp
// starting at thread base. Lanes 8j..8j+7 give the addresses of the eight
// 16-byte rows of matrix j (other lanes' addresses are ignored); lane l
// receives in register j the b16 elements (row l/4, columns 2(l%4) and
// 2(l%4)+1) of matrix j, low half first, or with .trans those of the
// transposed matrix: (rows 2(l%4) and 2(l%4)+1, column l/4).
func (br *blockRun) ldmatrix(in *inst, base int) *ExecError {
	n := int(in.vec)
	var rows [4][8][]byte
	for j := 0; j < n; j++ {
		for r := 0; r < 8; r++ {
			ti := base + 8*j + r
			buf, e := br.mem(ti, in, br.laneRegs(ti)[in.a]+in.off, 16, false)
			if e != nil {
				return e
			}
			rows[j][r] = buf
		}
	}
	var out [4][warpSize]uint32
	trans := in.flags&flTrans != 0
	for j := 0; j < n; j++ {
		for l := 0; l < warpSize; l++ {
			rr, cc := l>>2, 2*(l&3)
			var lo, hi uint16
			if trans {
				lo = binary.LittleEndian.Uint16(rows[j][cc][2*rr:])
				hi = binary.LittleEndian.Uint16(rows[j][cc+1][2*rr:])
			} else {
				lo = binary.LittleEndian.Uint16(rows[j][rr][2*cc:])
				hi = binary.LittleEndian.Uint16(rows[j][rr][2*cc+2:])
			}
			out[j][l] = uint32(lo) | uint32(hi)<<16
		}
	}
	for l := 0; l < warpSize; l++ {
		r := br.laneRegs(base + l)
		for j := 0; j < n; j++ {
			r[in.v[j]] = uint64(out[j][l]) & in.vmask[j]
		}
	}
	return nil
}
