package ptx

import (
	"math"
	"math/big"
	"testing"
)

type rmode int

const (
	mRN rmode = iota
	mRZ
	mRM
	mRP
)

func bigOf(f float64) *big.Float {
	if math.IsInf(f, 0) {
		return new(big.Float).SetInf(f < 0)
	}
	return new(big.Float).SetFloat64(f)
}

// pickRounded returns the candidate (a float32 or float64 neighbour set)
// that rounding exact in mode m selects, by exact comparison. Candidates
// are given ascending and include the neighbours of the nearest value.
func pickRounded(exact *big.Float, cands []float64, isEven func(float64) bool, m rmode) float64 {
	if m == mRZ {
		if exact.Sign() >= 0 {
			m = mRM
		} else {
			m = mRP
		}
	}
	switch m {
	case mRM:
		best := math.Inf(-1)
		for _, c := range cands {
			if bigOf(c).Cmp(exact) <= 0 {
				best = c
			}
		}
		return best
	case mRP:
		for _, c := range cands {
			if bigOf(c).Cmp(exact) >= 0 {
				return c
			}
		}
		return math.Inf(1)
	}
	var best float64
	var bestD *big.Float
	for _, c := range cands {
		if math.IsInf(c, 0) {
			continue
		}
		dd := new(big.Float).SetPrec(2000).Sub(bigOf(c), exact)
		dd.Abs(dd)
		if bestD == nil || dd.Cmp(bestD) < 0 || dd.Cmp(bestD) == 0 && isEven(c) {
			best, bestD = c, dd
		}
	}
	return best
}

func round32(exact *big.Float, m rmode) float32 {
	f, _ := exact.Float64()
	r0 := float32(f)
	if math.IsInf(float64(r0), 0) && m == mRN {
		return r0
	}
	lo, hi := math.Nextafter32(r0, float32(math.Inf(-1))), math.Nextafter32(r0, float32(math.Inf(1)))
	cands := []float64{float64(math.Nextafter32(lo, float32(math.Inf(-1)))), float64(lo), float64(r0), float64(hi), float64(math.Nextafter32(hi, float32(math.Inf(1))))}
	even := func(c float64) bool { return math.Float32bits(float32(c))&1 == 0 }
	r := float32(pickRounded(exact, cands, even, m))
	if r == 0 && exact.Signbit() {
		r = float32(math.Copysign(0, -1))
	}
	return r
}

func round64(exact *big.Float, m rmode) float64 {
	r0, _ := exact.Float64()
	lo, hi := math.Nextafter(r0, math.Inf(-1)), math.Nextafter(r0, math.Inf(1))
	cands := []float64{lo, r0, hi}
	even := func(c float64) bool { return math.Float64bits(c)&1 == 0 }
	return pickRounded(exact, cands, even, m)
}

func bigInt(v int64) *big.Float   { return new(big.Float).SetInt64(v) }
func bigUint(v uint64) *big.Float { return new(big.Float).SetUint64(v) }

// refFma32 is a*b+c rounded once, computed exactly with big.Float.
func refFma32(a, b, c float32) float32 {
	naive := float64(a)*float64(b) + float64(c)
	if math.IsNaN(naive) || math.IsInf(naive, 0) || naive == 0 {
		return float32(naive)
	}
	p := new(big.Float).SetPrec(2000).Mul(bigOf(float64(a)), bigOf(float64(b)))
	p.Add(p, bigOf(float64(c)))
	if p.Sign() == 0 {
		return float32(naive)
	}
	return round32(p, mRN)
}

// refConv converts f to an integer of the given width the PTX way: round
// by mode, NaN -> 0, saturate.
func refConv(f float64, m rmode, bits int, signed bool) uint64 {
	if f != f {
		return 0
	}
	switch m {
	case mRN:
		f = math.RoundToEven(f)
	case mRZ:
		f = math.Trunc(f)
	case mRM:
		f = math.Floor(f)
	default:
		f = math.Ceil(f)
	}
	b := new(big.Float).SetFloat64(f)
	var lo, hi *big.Int
	if signed {
		lo = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), uint(bits-1)))
		hi = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(bits-1)), big.NewInt(1))
	} else {
		lo = big.NewInt(0)
		hi = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(bits)), big.NewInt(1))
	}
	v, _ := b.Int(nil)
	switch {
	case math.IsInf(f, 1):
		v = hi
	case math.IsInf(f, -1):
		v = lo
	}
	if v.Cmp(lo) < 0 {
		v = lo
	}
	if v.Cmp(hi) > 0 {
		v = hi
	}
	if v.Sign() < 0 {
		return uint64(v.Int64())
	}
	return v.Uint64()
}

func pmin(a, b float64, isMax bool) float64 {
	switch {
	case a != a:
		return b
	case b != b:
		return a
	case a == 0 && b == 0:
		if isMax == math.Signbit(a) {
			return b
		}
		return a
	case isMax:
		return math.Max(a, b)
	}
	return math.Min(a, b)
}

func f32b(f float32) uint32 { return math.Float32bits(f) }
func f64b(f float64) uint64 { return math.Float64bits(f) }

func refFops32(ua, ub, uc uint32) []uint32 {
	x, y, z := math.Float32frombits(ua), math.Float32frombits(ub), math.Float32frombits(uc)
	o := make([]uint32, 40)
	o[0], o[1], o[2], o[3] = f32b(float32(x+y)), f32b(float32(x-y)), f32b(float32(x*y)), f32b(float32(x/y))
	o[4] = f32b(float32(math.Sqrt(float64(x))))
	o[5] = f32b(refFma32(x, y, z))
	o[6] = f32b(float32(pmin(float64(x), float64(y), false)))
	o[7] = f32b(float32(pmin(float64(x), float64(y), true)))
	o[8] = f32b(float32(1 / x))
	o[9], o[10], o[11] = ua^1<<31, ua&^(1<<31), ua&^(1<<31)|ub&(1<<31)
	for k, m := range []rmode{mRN, mRZ, mRM, mRP} {
		o[12+k] = uint32(refConv(float64(x), m, 32, true))
	}
	o[16] = uint32(refConv(float64(x), mRZ, 32, false))
	o[17] = uint32(refConv(float64(x), mRN, 32, false))
	ll := refConv(float64(x), mRP, 64, true)
	o[18], o[19] = uint32(ll), uint32(ll>>32)
	ull := refConv(float64(x), mRM, 64, false)
	o[20], o[21] = uint32(ull), uint32(ull>>32)
	for k, m := range []rmode{mRN, mRZ, mRM, mRP} {
		o[22+k] = f32b(round32(bigInt(int64(int32(uc))), m))
	}
	o[26] = f32b(round32(bigUint(uint64(uc)), mRN))
	o[27] = f32b(round32(bigUint(uint64(uc)), mRP))
	o[28] = f32b(float32(math.RoundToEven(float64(x))))
	o[29] = f32b(float32(math.Trunc(float64(x))))
	o[30] = f32b(float32(math.Floor(float64(x))))
	o[31] = f32b(float32(math.Ceil(float64(x))))
	o[32], o[33], o[34], o[35] = uint32(bu(x < y)), uint32(bu(x <= y)), uint32(bu(x == y)), uint32(bu(x != y))
	o[36], o[37] = uint32(bu(!(x >= y))), uint32(bu(x != x))
	o[38] = f32b(float32(int16(uc)))
	o[39] = uint32(int32(int16(refConv(float64(x), mRZ, 32, true))))
	return o
}

func refFops64(ua, ub, uc uint64) []uint64 {
	x, y, z := math.Float64frombits(ua), math.Float64frombits(ub), math.Float64frombits(uc)
	o := make([]uint64, 36)
	o[0], o[1], o[2], o[3] = f64b(x+y), f64b(x-y), f64b(float64(x*y)), f64b(x/y)
	o[4] = f64b(math.Sqrt(x))
	o[5] = f64b(math.FMA(x, y, z))
	o[6], o[7] = f64b(pmin(x, y, false)), f64b(pmin(x, y, true))
	o[8] = f64b(1 / x)
	o[9], o[10] = ua^1<<63, ua&^(1<<63)
	for k, m := range []rmode{mRN, mRZ, mRM, mRP} {
		switch {
		case x != x:
			o[11+k] = uint64(f32b(float32(x)))
		case math.IsInf(x, 0) || x == 0:
			o[11+k] = uint64(f32b(float32(x)))
		default:
			o[11+k] = uint64(f32b(round32(bigOf(x), m)))
		}
	}
	o[15] = f64b(float64(math.Float32frombits(uint32(uc))))
	o[16] = uint64(int64(int32(refConv(x, mRN, 32, true))))
	o[17] = uint64(int64(int32(refConv(x, mRZ, 32, true))))
	o[18] = refConv(x, mRM, 64, true)
	o[19] = refConv(x, mRP, 64, true)
	o[20] = refConv(x, mRN, 64, false)
	o[21] = refConv(x, mRZ, 32, false)
	for k, m := range []rmode{mRN, mRZ, mRM, mRP} {
		o[22+k] = f64b(round64(bigInt(int64(uc)), m))
	}
	o[26] = f64b(round64(bigUint(uc), mRN))
	o[27] = uint64(f32b(round32(bigInt(int64(uc)), mRN)))
	o[28] = uint64(f32b(round32(bigUint(uc), mRZ)))
	o[29] = f64b(math.RoundToEven(x))
	o[30] = f64b(math.Floor(x))
	o[31], o[32], o[33], o[34] = bu(x < y), bu(x != y), bu(!(x <= y)), bu(x != x)
	o[35] = f64b(math.FMA(x, x, -y))
	return o
}

var edge32 = []uint32{0, 0x80000000, 0x3f800000, 0xbf800000, 0x3f000000, 0x3fc00000, 0x40200000, 0xc0200000,
	0xbf000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffc00000, 1, 0x007fffff, 0x00800000,
	0x7f7fffff, 0xff7fffff, 0x4f000000, 0xcf000000, 0x4f800000, 0x5f000000, 0xdf000000, 0x5f800000,
	0x4b800001, 0x3dcccccd, 0x40400000, 0x34000000, 0x33800000, 0xcf000001, 0x4effffff}

func TestFloat32(t *testing.T) {
	r := rng(11)
	var in []uint32
	for _, a := range edge32 {
		for _, b := range edge32 {
			in = append(in, a, b, edge32[r.IntN(len(edge32))])
		}
	}
	for i := 0; i < 3000; i++ {
		var v [3]uint32
		for j := range v {
			switch r.IntN(4) {
			case 0:
				v[j] = r.Uint32()
			case 1:
				v[j] = f32b(float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(20)-10))))
			case 2:
				v[j] = uint32(int32(r.NormFloat64() * (1 << 30)))
			default:
				v[j] = edge32[r.IntN(len(edge32))] ^ uint32(r.IntN(3))
			}
		}
		in = append(in, v[:]...)
	}
	n := len(in) / 3
	d := newDev(t)
	out := d.alloc(4 * 40 * n)
	d.launch(kernel(t, "floatops", "fops32"), blocks(n, 128), Dim3{128, 1, 1}, 0, out, d.upload(u32bytes(in)), uint64(n))
	got := bytesU32(d.read(out, 4*40*n))
	for i := 0; i < n; i++ {
		want := refFops32(in[3*i], in[3*i+1], in[3*i+2])
		for k, w := range want {
			g := got[40*i+k]
			isF := k <= 11 || k >= 22 && k <= 31 || k == 38
			if g != w && !(isF && isNaNBits32(g) && isNaNBits32(w)) {
				t.Fatalf("fops32 %#x %#x %#x op %d: got %#x want %#x", in[3*i], in[3*i+1], in[3*i+2], k, g, w)
			}
		}
	}
}

func isNaNBits32(b uint32) bool { return b&0x7fffffff > 0x7f800000 }
func isNaNBits64(b uint64) bool { return b&(1<<63-1) > 0x7ff0000000000000 }

func TestFloat64(t *testing.T) {
	r := rng(12)
	edges := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 1.5, 2.5, -2.5, math.Inf(1), math.Inf(-1), math.NaN(),
		5e-324, 2.2250738585072014e-308, math.MaxFloat64, -math.MaxFloat64, 1 << 31, -(1 << 31), 1 << 32, 1 << 63,
		-(1 << 63), 1 << 64, 1e39, -1e39, 1 + 0x1p-24, 1 + 0x1p-24 + 0x1p-50, 0x1p-150, 0x1.8p-149, 0x1p-149,
		0x1.fffffep127, 0x1.ffffffp127, 2147483647.5, -2147483648.5, 0.1, 3}
	var in []uint64
	for _, a := range edges {
		for _, b := range edges {
			in = append(in, f64b(a), f64b(b), f64b(edges[r.IntN(len(edges))]))
		}
	}
	for i := 0; i < 2000; i++ {
		var v [3]uint64
		for j := range v {
			switch r.IntN(4) {
			case 0:
				v[j] = r.Uint64()
			case 1:
				v[j] = f64b(r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20)))
			case 2:
				v[j] = r.Uint64() >> r.IntN(64)
			default:
				v[j] = f64b(edges[r.IntN(len(edges))]) ^ uint64(r.IntN(3))
			}
		}
		in = append(in, v[:]...)
	}
	n := len(in) / 3
	d := newDev(t)
	out := d.alloc(8 * 36 * n)
	d.launch(kernel(t, "floatops", "fops64"), blocks(n, 128), Dim3{128, 1, 1}, 0, out, d.upload(u64bytes(in)), uint64(n))
	got := bytesU64(d.read(out, 8*36*n))
	for i := 0; i < n; i++ {
		want := refFops64(in[3*i], in[3*i+1], in[3*i+2])
		for k, w := range want {
			g := got[36*i+k]
			is32 := k >= 11 && k <= 14 || k >= 27 && k <= 28
			is64 := k <= 10 || k == 15 || k >= 22 && k <= 26 || k == 29 || k == 30 || k == 35
			nan := is64 && isNaNBits64(g) && isNaNBits64(w) || is32 && isNaNBits32(uint32(g)) && isNaNBits32(uint32(w))
			if g != w && !nan {
				t.Fatalf("fops64 %#x %#x %#x op %d: got %#x want %#x", in[3*i], in[3*i+1], in[3*i+2], k, g, w)
			}
		}
	}
}
