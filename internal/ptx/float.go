package ptx

import (
	"math"
	"math/bits"
)

// NaN results are returned in the canonical form NVIDIA GPUs produce for
// .f32 (0x7fffffff); .f64 uses the analogous all-ones pattern.
const (
	nan32 = 0x7fffffff
	nan64 = 0x7fffffffffffffff
)

func f32bits(f float32) uint32 { return math.Float32bits(f) }
func f64bits(f float64) uint64 { return math.Float64bits(f) }
func f32of(v uint64) float32   { return math.Float32frombits(uint32(v)) }
func f64of(v uint64) float64   { return math.Float64frombits(v) }
func isNaN32(f float32) bool   { return f != f }
func box32(f float32) uint64 {
	if f != f {
		return nan32
	}
	return uint64(math.Float32bits(f))
}
func box64(f float64) uint64 {
	if f != f {
		return nan64
	}
	return math.Float64bits(f)
}

// fma32 is a*b+c rounded once to float32: the product is exact in float64,
// the sum is rounded to odd there, and the final rounding to 24 bits is then
// correct (53 >= 2*24+2).
func fma32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	cf := float64(c)
	s := p + cf
	if math.IsInf(s, 0) || s != s || math.IsInf(p, 0) || math.IsInf(cf, 0) {
		return float32(s)
	}
	bb := s - p
	e := (p - (s - bb)) + (cf - bb)
	if e != 0 {
		sb := math.Float64bits(s)
		if (e < 0) != (s < 0) { // |exact| < |s|: truncate toward zero
			sb--
		}
		sb |= 1
		s = math.Float64frombits(sb)
	}
	return float32(s)
}

// fminmax implements PTX min/max: a NaN operand yields the other operand,
// and -0 orders below +0.
func fmin64(a, b float64, max bool) float64 {
	switch {
	case a != a:
		return b
	case b != b:
		return a
	}
	if a == b {
		if a == 0 && math.Signbit(a) != math.Signbit(b) {
			if max {
				return 0
			}
			return math.Copysign(0, -1)
		}
		return a
	}
	if (a < b) != max {
		return a
	}
	return b
}

func fcmp(cmp uint8, a, b float64) bool {
	un := a != a || b != b
	switch cmp {
	case cmpEQ:
		return a == b
	case cmpNE:
		return !un && a != b
	case cmpLT:
		return a < b
	case cmpLE:
		return a <= b
	case cmpGT:
		return a > b
	case cmpGE:
		return a >= b
	case cmpEQU:
		return un || a == b
	case cmpNEU:
		return un || a != b
	case cmpLTU:
		return un || a < b
	case cmpLEU:
		return un || a <= b
	case cmpGTU:
		return un || a > b
	case cmpGEU:
		return un || a >= b
	case cmpNUM:
		return !un
	default: // cmpNAN
		return un
	}
}

func testp(kind uint8, f float64, is32 bool) bool {
	inf, nan := math.IsInf(f, 0), f != f
	sub := false
	if f != 0 && !inf && !nan {
		if is32 {
			sub = math.Abs(f) < 0x1p-126
		} else {
			sub = math.Abs(f) < 0x1p-1022
		}
	}
	switch kind {
	case 0:
		return !inf && !nan
	case 1:
		return inf
	case 2:
		return !nan
	case 3:
		return nan
	case 4:
		return !inf && !nan && f != 0 && !sub
	default:
		return sub
	}
}

// intToFloat rounds the integer (neg, mag) to a float with prec mantissa
// bits (24 or 53) in rounding mode rnd; the result is exact in float64.
func intToFloat(neg bool, mag uint64, prec int, rnd uint8) float64 {
	n := bits.Len64(mag)
	if n > prec {
		shift := n - prec
		kept := mag >> shift
		rem := mag & (1<<shift - 1)
		half := uint64(1) << (shift - 1)
		up := false
		switch rnd {
		case rndRN:
			up = rem > half || rem == half && kept&1 == 1
		case rndRM:
			up = neg && rem != 0
		case rndRP:
			up = !neg && rem != 0
		}
		if up {
			kept++
		}
		f := math.Ldexp(float64(kept), shift)
		if neg {
			f = -f
		}
		return f
	}
	f := float64(mag)
	if neg {
		f = -f
	}
	return f
}

// narrow64 rounds f to float32 in mode rnd (.rn .rz .rm .rp).
func narrow64(f float64, rnd uint8) float32 {
	r := float32(f)
	if f != f || float64(r) == f {
		return r
	}
	switch rnd {
	case rndRZ:
		if math.Abs(float64(r)) > math.Abs(f) {
			r = math.Nextafter32(r, 0)
		}
	case rndRM:
		if float64(r) > f {
			r = math.Nextafter32(r, float32(math.Inf(-1)))
		}
	case rndRP:
		if float64(r) < f {
			r = math.Nextafter32(r, float32(math.Inf(1)))
		}
	}
	return r
}

// roundInt rounds f to an integral value in mode rnd (.rni .rzi .rmi .rpi).
func roundInt(f float64, rnd uint8) float64 {
	switch rnd {
	case rndRNI:
		return math.RoundToEven(f)
	case rndRZI:
		return math.Trunc(f)
	case rndRMI:
		return math.Floor(f)
	default:
		return math.Ceil(f)
	}
}

// sext sign-extends the low 64-sh bits of v.
func sext(v uint64, sh uint8) uint64 { return uint64(int64(v<<sh) >> sh) }

// cvt performs cvt.dt.at on the register bits x; the result is extended to
// 64 bits by the destination type (sign for .s, zero otherwise).
func cvt(in *inst, x uint64) uint64 {
	dt, at := in.t, in.t2
	ext := func(v uint64) uint64 {
		if dt.k == kS {
			return sext(v, 64-dt.bits)
		}
		return v & dt.mask()
	}
	if at.k != kF {
		neg := false
		mag := x & at.mask()
		var sv int64
		if at.k == kS {
			sv = int64(sext(x, 64-at.bits))
			neg = sv < 0
			mag = uint64(sv)
			if neg {
				mag = -mag
			}
		}
		if dt.k == kF {
			prec := 24
			if dt.bits == 64 {
				prec = 53
			}
			f := intToFloat(neg, mag, prec, in.rnd)
			if dt.bits == 32 {
				return uint64(math.Float32bits(float32(f)))
			}
			return math.Float64bits(f)
		}
		if in.flags&flSat == 0 {
			if at.k == kS {
				return ext(uint64(sv))
			}
			return ext(mag)
		}
		// Saturate into the destination range.
		if dt.k == kS {
			hi := uint64(1)<<(dt.bits-1) - 1
			if neg {
				if mag > hi+1 {
					return ext(hi + 1)
				}
				return ext(-mag)
			}
			if mag > hi {
				return ext(hi)
			}
			return ext(mag)
		}
		if neg {
			return 0
		}
		if mag > dt.mask() {
			return dt.mask()
		}
		return mag
	}
	var f float64
	if at.bits == 32 {
		f = float64(f32of(x))
	} else {
		f = f64of(x)
	}
	if dt.k != kF {
		if f != f {
			return 0
		}
		f = roundInt(f, in.rnd)
		if dt.k == kS {
			lim := math.Ldexp(1, int(dt.bits)-1)
			switch {
			case f >= lim:
				return ext(uint64(1)<<(dt.bits-1) - 1)
			case f < -lim:
				return ext(uint64(1) << (dt.bits - 1))
			}
			return ext(uint64(int64(f)))
		}
		lim := math.Ldexp(1, int(dt.bits))
		switch {
		case f >= lim:
			return dt.mask()
		case f <= 0:
			return 0
		}
		return uint64(f)
	}
	switch {
	case dt.bits == 64 && at.bits == 32:
		return box64(f)
	case dt.bits == 32 && at.bits == 64:
		return box32(narrow64(f, in.rnd))
	case dt.bits == 32:
		return box32(float32(roundInt(f, in.rnd)))
	default:
		return box64(roundInt(f, in.rnd))
	}
}
