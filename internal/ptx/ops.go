package ptx

import (
	"math"
	"math/bits"
)

func floatOp(in *inst, r []uint64) uint64 {
	if in.w == 32 {
		a, b := f32of(r[in.a]), float32(0)
		if in.b >= 0 {
			b = f32of(r[in.b])
		}
		switch in.op {
		case opFAdd:
			return box32(float32(a + b))
		case opFSub:
			return box32(float32(a - b))
		case opFMul:
			return box32(float32(a * b))
		case opFFma:
			return box32(fma32(a, b, f32of(r[in.c])))
		case opFDiv:
			return box32(float32(a / b))
		case opFSqrt:
			return box32(float32(math.Sqrt(float64(a))))
		case opFRcp:
			return box32(float32(1 / a))
		case opFMin:
			return box32(float32(fmin64(float64(a), float64(b), false)))
		default: // opFMax
			return box32(float32(fmin64(float64(a), float64(b), true)))
		}
	}
	a, b := f64of(r[in.a]), 0.0
	if in.b >= 0 {
		b = f64of(r[in.b])
	}
	switch in.op {
	case opFAdd:
		return box64(float64(a + b))
	case opFSub:
		return box64(float64(a - b))
	case opFMul:
		return box64(float64(a * b))
	case opFFma:
		return box64(math.FMA(a, b, f64of(r[in.c])))
	case opFDiv:
		return box64(float64(a / b))
	case opFSqrt:
		return box64(math.Sqrt(a))
	case opFRcp:
		return box64(float64(1 / a))
	case opFMin:
		return box64(fmin64(a, b, false))
	default:
		return box64(fmin64(a, b, true))
	}
}

func regOr(r []uint64, i int32) uint64 {
	if i < 0 {
		return 0
	}
	return r[i]
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func combine(bop uint8, p, c bool) bool {
	switch bop {
	case bopAnd:
		return p && c
	case bopOr:
		return p || c
	}
	return p != c
}

func sat32(v int64) uint64 {
	if v > math.MaxInt32 {
		v = math.MaxInt32
	} else if v < math.MinInt32 {
		v = math.MinInt32
	}
	return uint64(v) & 0xffffffff
}

func icmp(in *inst, a, b uint64) bool {
	if in.t.k == kS {
		return ordered(in.cmp, int64(sext(a, in.sh)), int64(sext(b, in.sh)))
	}
	m := in.t.mask()
	return ordered(in.cmp, a&m, b&m)
}

// ordered is the integer comparison cmp (cmpEQ .. cmpGE) of x and y.
func ordered[T int64 | uint64](cmp uint8, x, y T) bool {
	switch cmp {
	case cmpEQ:
		return x == y
	case cmpNE:
		return x != y
	case cmpLT:
		return x < y
	case cmpLE:
		return x <= y
	case cmpGT:
		return x > y
	}
	return x >= y
}

func mulhiS(a, b uint64, w, sh uint8) uint64 {
	if w == 64 {
		hi, _ := bits.Mul64(a, b)
		if int64(a) < 0 {
			hi -= b
		}
		if int64(b) < 0 {
			hi -= a
		}
		return hi
	}
	return uint64(int64(sext(a, sh)*sext(b, sh)) >> w)
}

func mulhiU(a, b uint64, w uint8) uint64 {
	if w == 64 {
		hi, _ := bits.Mul64(a, b)
		return hi
	}
	m := uint64(1)<<w - 1
	return ((a & m) * (b & m)) >> w
}

func bfe(a, pos, ln uint64, w uint8, signed bool) uint64 {
	msb := uint64(w) - 1
	sbit := uint64(0)
	if signed && ln != 0 {
		i := pos + ln - 1
		if i > msb {
			i = msb
		}
		sbit = (a >> i) & 1
	}
	var keep uint64
	var f uint64
	if pos <= msb {
		keep = ln
		if keep > msb+1-pos {
			keep = msb + 1 - pos
		}
		f = a >> pos
	}
	km := uint64(1)<<keep - 1
	if keep >= 64 {
		km = ^uint64(0)
	}
	f &= km
	if sbit != 0 {
		f |= ^km
	}
	return f
}
