package entropy

import "math"

// The bridge's own exponential, built from + - * / and bit manipulation only,
// so that it gives the same bits on every architecture: the standard
// library's math.Exp is assembly on some of them (amd64, arm64, s390x) and
// may fuse multiply-adds elsewhere. Every product that feeds a sum is wrapped
// in an explicit float64(...) conversion, which the Go specification says
// rounds and so forbids fusing (Go otherwise emits FMA for x*y+z on arm64,
// ppc64le, s390x and riscv64).

const (
	expLn2Hi = 6.93147180369123816490e-01 // ln 2, upper bits: k*expLn2Hi is exact for |k| < 2^11
	expLn2Lo = 1.90821492927058770002e-10 // ln 2 - expLn2Hi
	expLog2e = 1.44269504088896338700e+00 // 1/ln 2

	expOverflow = 7.09782712893383973096e+02 // above: +Inf
	// expMinNormal = ln(2^-1022): below it the result would be subnormal and
	// Exp returns 0 (flush to zero, the same on every machine).
	expMinNormal = -7.08396418532264106224e+02
	expNearZero  = 1.0 / (1 << 28)

	// Remez coefficients of the rational approximation on [-ln2/2, ln2/2]
	// (fdlibm e_exp.c, as in Go's math.expmulti).
	expP1 = 1.66666666666666657415e-01
	expP2 = -2.77777777770155933842e-03
	expP3 = 6.61375632143793436117e-05
	expP4 = -1.65339022054652515390e-06
	expP5 = 4.13813679705723846039e-08
)

// Exp returns e^x, computed the same way on every architecture (the fdlibm
// algorithm without fused operations). Tests hold it within 3 ulp of
// math.Exp (measured worst: 2 ulp against amd64's math.Exp over 2e6 random
// x) wherever the result is a normal number. Special cases: Exp(NaN) = NaN, Exp(+Inf) = +Inf,
// Exp(x) = +Inf for x > 709.78, and Exp(x) = 0 for x < -708.39 (where e^x is
// below the smallest normal float64) and for x = -Inf.
func Exp(x float64) float64 {
	switch {
	case x != x:
		return x
	case x > expOverflow:
		return math.Inf(1)
	case x < expMinNormal:
		return 0
	case -expNearZero < x && x < expNearZero:
		return 1 + x
	}
	// Reduce: x = k*ln2 + r with |r| <= ln2/2, r carried as hi - lo.
	var k int
	if x < 0 {
		k = int(float64(expLog2e*x) - 0.5)
	} else {
		k = int(float64(expLog2e*x) + 0.5)
	}
	kf := float64(k)
	hi := x - float64(kf*expLn2Hi)
	lo := float64(kf * expLn2Lo)

	// e^r = 1 + r + r*c/(2-c), c = r - t*P(t), t = r^2.
	r := hi - lo
	t := float64(r * r)
	p := float64(t*expP5) + expP4
	p = float64(t*p) + expP3
	p = float64(t*p) + expP2
	p = float64(t*p) + expP1
	c := r - float64(t*p)
	y := 1 - ((lo - float64(r*c)/(2-c)) - hi)
	return scale2(y, k)
}

// scale2 returns y * 2^k for y in [0.5, 2] and k in [-1022, 1024].
func scale2(y float64, k int) float64 {
	if k > 1023 {
		return y * 2 * math.Float64frombits(uint64(1023+1023)<<52)
	}
	return y * math.Float64frombits(uint64(k+1023)<<52)
}
