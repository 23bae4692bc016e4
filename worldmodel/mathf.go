package worldmodel

import "math"

// The package's own elementary functions. They use only +, -, *, / and
// square roots (IEEE 754 correctly rounded on every architecture), every
// product and sum is rounded on its own (explicit float32 conversions stop
// the compiler from fusing them into FMA on arm64), and branches depend only
// on comparisons; so they give the same bits everywhere. The standard
// library's Exp and Tanh use assembly or FMA on some architectures and are
// not used on the inference path.
//
// Accuracy, checked by TestMathf against math.* in float64 over a dense grid:
// expf within 2 ulp; tanhf within 3e-7 absolute (it is in (-1, 1)); log1pf
// within 2e-7 relative for x >= 0; sigmoidf within 3e-7 absolute.

// sqrt64 is the correctly rounded square root (SQRTSD on amd64, FSQRTD on
// arm64; both IEEE).
func sqrt64(x float64) float64 { return math.Sqrt(x) }

// sqrtf is the correctly rounded float32 square root: the float64 root of a
// float32 rounded to float32 is correctly rounded (53 >= 2*24+2 bits).
func sqrtf(x float32) float32 { return float32(math.Sqrt(float64(x))) }

const (
	expLog2e = float32(1.44269504088896341)
	expLn2Hi = float32(0.693145751953125)      // 0x3f317200: k*ln2Hi is exact for |k| < 2^9
	expLn2Lo = float32(1.42860682030941723e-6) // ln 2 - expLn2Hi
	expMagic = float32(12582912)               // 1.5 * 2^23: x + magic rounds x to an integer
	expHi    = float32(88)                     // above: +Inf
	expLo    = float32(-86.5)                  // below: 0 (keeps the result normal)
)

// expf returns e^x for float32 x: 0 below -86.5, +Inf above 88, NaN for NaN.
//
// Method: k = round(x log2 e) by adding and subtracting 1.5*2^23 (round to
// nearest even, identical in SIMD lanes); r = x - k ln2 in two steps
// (Cody-Waite); e^r by its Taylor polynomial of degree 7 on |r| <= 0.347
// (truncation below 6e-9 relative) in Horner form; then 2^k is added to the
// exponent bits (k in [-125, 127], so the result stays normal).
func expf(x float32) float32 {
	if !(x >= expLo) {
		if x != x {
			return x
		}
		return 0
	}
	if x > expHi {
		return float32(math.Inf(1))
	}
	t := float32(x*expLog2e) + expMagic
	kf := t - expMagic
	k := int32(math.Float32bits(t)) - int32(math.Float32bits(expMagic))
	r := x - float32(kf*expLn2Hi)
	r = r - float32(kf*expLn2Lo)
	p := float32(1.0 / 5040)
	p = float32(p*r) + float32(1.0/720)
	p = float32(p*r) + float32(1.0/120)
	p = float32(p*r) + float32(1.0/24)
	p = float32(p*r) + float32(1.0/6)
	p = float32(p*r) + float32(0.5)
	p = float32(p*r) + 1
	p = float32(p*r) + 1
	return math.Float32frombits(uint32(int32(math.Float32bits(p)) + k<<23))
}

// tanhf returns tanh(x): the odd Taylor polynomial of degree 13 in a = |x|
// for a < 0.5, 1 - 2/(e^{2a}+1) up to a = 9.5, and 1 beyond; then the sign
// of x (x < 0 negates; -0 gives +0). The SIMD kernel computes the same
// branches lane by lane and blends them.
func tanhf(x float32) float32 {
	a := math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
	var y float32
	switch {
	case a < 0.5:
		u := float32(a * a)
		p := float32(21844.0 / 6081075)
		p = float32(p*u) - float32(1382.0/155925)
		p = float32(p*u) + float32(62.0/2835)
		p = float32(p*u) - float32(17.0/315)
		p = float32(p*u) + float32(2.0/15)
		p = float32(p*u) - float32(1.0/3)
		p = float32(p * u)
		y = a + float32(a*p)
	case a < 9.5:
		t := expf(a + a)
		y = 1 - 2/(t+1)
	case a >= 9.5:
		y = 1
	default: // NaN
		return x
	}
	if x < 0 {
		y = -y
	}
	return y
}

// sigmoidf returns 1/(1+e^-x).
func sigmoidf(x float32) float32 { return 1 / (1 + expf(-x)) }

// geluf is the tanh form of GELU (the reference's jax.nn.gelu default):
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
func geluf(x float32) float32 {
	u := float32(x * x)
	u = float32(u * x)
	u = float32(u * 0.044715)
	u = x + u
	u = float32(u * 0.7978845608028654)
	t := tanhf(u)
	h := float32(x * 0.5)
	return float32(h * (1 + t))
}

// log1pf returns log(1 + x) for x >= 0 (the signed-log of action
// displacements), computed in float64 with separately rounded operations:
// m 2^e = 1 + x with m in [sqrt(1/2), sqrt(2)), then
// log m = 2 atanh(s), s = (m-1)/(m+1), by its series to s^15 (|s| < 0.172,
// truncation below 1e-13).
func log1pf(x float32) float32 {
	if !(x >= 0) {
		if x != x {
			return x
		}
		return float32(math.NaN())
	}
	if x > math.MaxFloat32/2 {
		return float32(math.Inf(1))
	}
	v := 1 + float64(x) // exact: a float32 plus 1 fits in 53 bits unless x is huge, then rounded
	bits := math.Float64bits(v)
	e := int64(bits>>52&0x7ff) - 1023
	m := math.Float64frombits(bits&^(0x7ff<<52) | 1023<<52) // [1, 2)
	if m > 1.4142135623730951 {
		m = m / 2
		e++
	}
	s := (m - 1) / (m + 1)
	s2 := float64(s * s)
	p := 1.0 / 15
	for _, c := range [...]float64{1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1} {
		p = float64(p*s2) + c
	}
	lm := float64(2 * float64(s*p))
	return float32(float64(float64(e)*math.Ln2) + lm)
}

// slogf is the signed log: sign(v) log(1 + |v|).
func slogf(v float32) float32 {
	if v < 0 {
		return -log1pf(-v)
	}
	return log1pf(v)
}

// expShift sets x[i] = expf(x[i] - shift): the AVX-512 kernel on multiples
// of 16 where available, the Go code elsewhere (the same bits).
func expShift(x []float32, shift float32) {
	n := 0
	if useAVX512 {
		if n = len(x) &^ 15; n > 0 {
			expShift16(&x[0], shift, n)
		}
	}
	for i := n; i < len(x); i++ {
		x[i] = expf(x[i] - shift)
	}
}

// geluBias sets x[i] = geluf(x[i] + b[i]) (len(b) >= len(x)), with the
// AVX-512 kernel where available (the same bits).
func geluBias(x, b []float32) { geluBiasTo(x, x, b) }

// geluBiasTo sets dst[i] = geluf(x[i] + b[i]) (len(dst) >= len(x) and
// len(b) >= len(x)); dst may be x, but must not overlap it otherwise.
func geluBiasTo(dst, x, b []float32) {
	dst, b = dst[:len(x)], b[:len(x)]
	n := 0
	if useAVX512 {
		if n = len(x) &^ 15; n > 0 {
			geluBias16(&dst[0], &x[0], &b[0], n)
		}
	}
	for i := n; i < len(x); i++ {
		dst[i] = geluf(x[i] + b[i])
	}
}
