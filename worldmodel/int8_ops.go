package worldmodel

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/memowm/memowm/entropy"
)

// The int8 profile's integer primitives. Each is a function of integers
// alone, defined exactly here; a backend that claims the profile computes
// the same values (any order of a sum gives the same integer, as no sum
// here can overflow its type).

// rshr is x >> s rounded half up (toward +infinity on a tie), s <= 62.
func rshr(x int64, s uint) int64 {
	if s == 0 {
		return x
	}
	return (x + 1<<(s-1)) >> s
}

// mult is a fixed-point multiplier: apply(v) = rshr(v * M, Sh), with M in
// [2^30, 2^31) (or smaller when Sh is 62) standing for the real ratio
// M / 2^Sh. |v| < 2^32 keeps v*M inside int64.
type mult struct {
	M  int64
	Sh uint8
}

func (m mult) apply(v int64) int64 { return rshr(v*m.M, uint(m.Sh)) }

// applyWide is apply for 0 <= v < 2^63: the product in 128 bits (in 64
// when v < 2^32, the same value).
func (m mult) applyWide(v uint64) uint64 {
	if v < 1<<32 {
		return uint64(m.apply(int64(v)))
	}
	hi, lo := bits.Mul64(v, uint64(m.M))
	if m.Sh == 0 {
		if hi != 0 {
			return math.MaxUint64
		}
		return lo
	}
	var c uint64
	lo, c = bits.Add64(lo, 1<<(m.Sh-1), 0)
	hi += c
	if hi>>m.Sh != 0 {
		return math.MaxUint64
	}
	return hi<<(64-m.Sh) | lo>>m.Sh
}

// newMult returns the multiplier nearest the ratio r >= 0 (conversion
// time only: it is stored in the bundle as integers).
func newMult(r float64) (mult, error) {
	if !(r >= 0) || math.IsInf(r, 0) {
		return mult{}, fmt.Errorf("worldmodel: int8: requantisation ratio %g", r)
	}
	if r == 0 {
		return mult{}, nil
	}
	frac, e := math.Frexp(r) // r = frac 2^e, frac in [0.5, 1)
	M := int64(math.Round(frac * (1 << 31)))
	if M == 1<<31 {
		M, e = 1<<30, e+1
	}
	sh := 31 - e
	if sh < 0 {
		return mult{}, fmt.Errorf("worldmodel: int8: requantisation ratio %g is too large", r)
	}
	if sh > 62 {
		M, sh = int64(math.Round(math.Ldexp(r, 62))), 62
	}
	return mult{M: M, Sh: uint8(sh)}, nil
}

func clamp64(v, lim int64) int64 {
	if v > lim {
		return lim
	}
	if v < -lim {
		return -lim
	}
	return v
}

// isqrt is floor(sqrt(x)): an exact integer. The float square root only
// starts the search; the integer checks after it make the result exact
// whatever that guess's rounding.
func isqrt(x uint64) uint64 {
	r := uint64(math.Sqrt(float64(x)))
	if r > 1<<32-1 {
		r = 1<<32 - 1
	}
	for r*r > x {
		r--
	}
	for r < 1<<32-1 && (r+1)*(r+1) <= x {
		r++
	}
	return r
}

// floorDivRound is a / b rounded half up, b > 0.
func floorDivRound(a, b int64) int64 {
	n := 2*a + b
	q := n / (2 * b)
	if n%(2*b) < 0 {
		q--
	}
	return q
}

// qLN is an integer LayerNorm: for a row x of W residual values,
//
//	mu = round(sum x / W); d_i = x_i - mu
//	var = round(sum d_i^2 / W); std = isqrt(var + Eps), at least 1
//	inv = 2^46 / std (floor); n_i = rshr(d_i inv, 32)          (Q14)
//	y_i = clamp(rshr(n_i G_i, 30) + B_i, -Lim, Lim)
//
// G_i = round(gain_i 2^16 / s) and B_i = round(bias_i / s) for the output
// scale s. Residual values stay within 2^25 (int8Resid), so d_i^2 sums
// fit int64 for W <= 4096 and d_i inv < 2^52.
type qLN struct {
	G   []int64
	B   []int32
	Eps int64
	Lim int64
}

// norm returns a row's mean and 2^46 / std.
func (q *qLN) norm(x []int32) (mu, inv int64) {
	W := int64(len(x))
	var s int64
	for _, v := range x {
		s += int64(v)
	}
	mu = floorDivRound(s, W)
	var ss int64
	for _, v := range x {
		d := int64(v) - mu
		ss += d * d
	}
	std := int64(isqrt(uint64(floorDivRound(ss, W) + q.Eps)))
	if std < 1 {
		std = 1
	}
	return mu, (int64(1) << 46) / std
}

func (q *qLN) to8(dst []int8, x []int32)   { lnTo(q, dst, x) }
func (q *qLN) to16(dst []int16, x []int32) { lnTo(q, dst, x) }

// lnTo is the LayerNorm's output into int8 or int16 (the AVX-512 kernel on
// the first columns, the same integers).
func lnTo[T int8 | int16](q *qLN, dst []T, x []int32) {
	mu, inv := q.norm(x)
	dst = dst[:len(x)]
	g, b := q.G[:len(x)], q.B[:len(x)]
	for i := lnAVX512Rows(dst, x, g, b, mu, inv, q.Lim); i < len(x); i++ {
		n := rshr((int64(x[i])-mu)*inv, 32)
		dst[i] = T(clamp64(rshr(n*g[i], 30)+int64(b[i]), q.Lim))
	}
}

// expSteps is the resolution of the profile's exponential: 1/expSteps nat.
// expTable[i] = round(2^20 e^(-i/256)) for i < 4096 (16 nats), with this
// package's expf (its bits are the same on every machine), and
// expTable[4096] = 0: every index past the table reads it.
const (
	expSteps = 256
	expLen   = 4096
	expOne   = 1 << 20
)

var expTable = func() []int32 {
	t := make([]int32, expLen+1)
	for i := 0; i < expLen; i++ {
		t[i] = int32(math.Round(float64(float32(expOne) * expf(-float32(i)/expSteps))))
	}
	return t
}()

// mult32 is the attention softmax's multiplier: idx = (d M + 2^(Sh-1)) >> Sh
// in uint32 arithmetic, M in [2^9, 2^10) (smaller when Sh is 31). The scores'
// differences d are below 2^21 (head width at most 64, |q|, |k| <= 127), so
// nothing overflows.
type mult32 struct {
	M  uint32
	Sh uint8
}

func newMult32(r float64) (mult32, error) {
	if !(r >= 0) || math.IsInf(r, 0) {
		return mult32{}, fmt.Errorf("worldmodel: int8: softmax ratio %g", r)
	}
	if r == 0 {
		return mult32{}, nil
	}
	frac, e := math.Frexp(r)
	M := uint32(math.Round(frac * (1 << 10)))
	if M == 1<<10 {
		M, e = 1<<9, e+1
	}
	sh := 10 - e
	if sh < 0 {
		return mult32{}, fmt.Errorf("worldmodel: int8: softmax ratio %g is too large", r)
	}
	if sh > 31 {
		M, sh = uint32(math.Round(math.Ldexp(r, 31))), 31
	}
	return mult32{M: M, Sh: uint8(sh)}, nil
}

// softmaxP is the attention softmax of one query row's scores sc (its
// keys; len(sc) <= 2048) into Q14 probabilities:
//
//	mx = max sc; idx_k = min((uint32(mx - sc_k) M + 2^(Sh-1)) >> Sh, 4096)
//	e_k = expTable[idx_k]; Z = sum e_k (< 2^31); b = bitlen(Z) - 1
//	inv = 2^(b+15) / Z (floor); P_k = min(((e_k >> 4) inv + 2^(b-4)) >> (b-3), 16383)
//
// in uint32 arithmetic (Z >= 2^20, so b >= 20). e is scratch (len(sc)).
func softmaxP(p []int16, sc []int32, e []uint32, m mult32) {
	if softmaxAVX512 && len(sc) >= 16 {
		softmaxPAVX512(p, sc, e, m)
		return
	}
	softmaxPGo(p, sc, e, m)
}

// softmaxNorm returns b = bitlen(Z) - 1, inv = 2^(b+15) / Z and 2^(b-4).
func softmaxNorm(Z uint32) (b uint, inv, r2 uint32) {
	b = uint(bits.Len32(Z) - 1)
	return b, uint32((uint64(1) << (b + 15)) / uint64(Z)), uint32(1) << (b - 4)
}

func softmaxPGo(p []int16, sc []int32, e []uint32, m mult32) {
	e = e[:len(sc)]
	p = p[:len(sc)]
	mx := sc[0]
	for _, v := range sc {
		mx = max(mx, v)
	}
	var rnd uint32
	if m.Sh > 0 {
		rnd = 1 << (m.Sh - 1)
	}
	var Z uint32
	for k, v := range sc {
		e[k] = softmaxExp(mx, v, m, rnd)
		Z += e[k]
	}
	b, inv, r2 := softmaxNorm(Z)
	for k, ek := range e {
		p[k] = softmaxQ14(ek, inv, r2, b)
	}
}

// softmaxExp is e_k for score v of a row whose largest is mx.
func softmaxExp(mx, v int32, m mult32, rnd uint32) uint32 {
	return uint32(expTable[min((uint32(mx-v)*m.M+rnd)>>m.Sh, expLen)])
}

// softmaxQ14 is P_k for e_k.
func softmaxQ14(e, inv, r2 uint32, b uint) int16 {
	return int16(min(((e>>4)*inv+r2)>>(b-3), 16383))
}

// packPairs lays out the values v (rows of stride ld, K rows of hd) for
// pvRow: vp[(k/2) 2hd + 2d + k%2] = v[k][d], an odd K padded with a zero row.
func packPairs(vp []int16, v []int8, ld, K, hd int) []int16 {
	n := (K + 1) / 2 * 2 * hd
	if cap(vp) < n {
		vp = make([]int16, n)
	}
	vp = vp[:n]
	if K%2 == 1 {
		clear(vp[n-2*hd:])
	}
	for k := 0; k < K; k++ {
		row := v[k*ld : k*ld+hd]
		base := (k/2)*2*hd + k%2
		for d, x := range row {
			vp[base+2*d] = int16(x)
		}
	}
	return vp
}

// pvRowGo is out[d] = sum_{k<K} p_k v[k][d] (int32, exact: P <= 16383,
// |v| <= 127, K <= 2048) from packPairs' layout; p[K] must be 0 when K is
// odd.
func pvRowGo(out []int32, p []int16, vp []int16, K, hd int) {
	out = out[:hd]
	clear(out)
	for k := 0; k < K; k++ {
		pk := int32(p[k])
		if pk == 0 {
			continue
		}
		base := (k/2)*2*hd + k%2
		for d := range out {
			out[d] += pk * int32(vp[base+2*d])
		}
	}
}

// sigmoid table: the copy gate a = round(2^16 sigmoid(i/64)) for
// i in [-1024, 1024].
const (
	sigSteps = 64
	sigHalf  = 1024
	sigOne   = 1 << 16
)

var sigTable = func() []int64 {
	t := make([]int64, 2*sigHalf+1)
	for i := range t {
		t[i] = int64(math.Round(float64(float32(sigOne) * sigmoidf(float32(i-sigHalf)/sigSteps))))
	}
	return t
}()

// quantizeWeights turns nonnegative integer weights (not all 0, each below
// 2^62 in total) into a frequency table totalling 2^prec, every entry >= 1:
//
//	sh = bitlen(S) - 32; w'_c = w_c >> sh (or << -sh); S' = sum w'_c
//	R = 2^61 / S' (floor); f_c = max(1, rshr(w'_c R, 61 - prec))
//
// then d = 2^prec - sum f goes to (or comes from) the largest entries by
// entropy.FixTotal, entropy.QuantizeProbsTo's step 4. It returns the
// table's mode (entropy.Mode). w is overwritten.
func quantizeWeights(dst []uint32, w []uint64, prec uint) int {
	var S uint64
	for _, v := range w {
		S += v
	}
	sh := bits.Len64(S) - 32
	var S2 uint64
	for i, v := range w {
		if sh >= 0 {
			v >>= uint(sh)
		} else {
			v <<= uint(-sh)
		}
		w[i] = v
		S2 += v
	}
	return tableOf(dst, w, S2, prec)
}

// gateTable is quantizeWeights of the copy-gated weights
//
//	w_c = (2^16 - a) e_c + [c = prev] a Z,   Z = sum e_c (2^20 <= Z < 2^32)
//
// with the shift made as the weights are (their sum is 2^16 Z, so it is
// known first). It fills f and returns the table's mode, the same integers
// as quantizeWeights (TestGateTable). e is overwritten.
func gateTable(f []uint32, e []uint64, Z, a uint64, prev int, prec uint) int {
	sh := uint(bits.Len64(Z) + 16 - 32) // bitlen(2^16 Z) - 32 > 0
	b := sigOne - a
	var S2 uint64
	for c, v := range e {
		v *= b
		if c == prev {
			v += a * Z
		}
		v >>= sh
		e[c] = v
		S2 += v
	}
	return tableOf(f, e, S2, prec)
}

// tableOf is quantizeWeights after the shift: the shifted weights w and
// their sum S2 in [2^31 - len(w), 2^32] to the table f and its mode.
func tableOf(f []uint32, w []uint64, S2 uint64, prec uint) int {
	R := (uint64(1) << 61) / S2
	s := 61 - prec
	half := uint64(1) << (s - 1)
	var got uint64
	mode := 0
	for c, v := range w {
		fc := uint32((v*R + half) >> s)
		if fc == 0 {
			fc = 1
		}
		f[c] = fc
		got += uint64(fc)
		if fc > f[mode] {
			mode = c
		}
	}
	total := uint64(1) << prec
	if got <= total {
		// FixTotal adds to the mode, which stays the mode.
		entropy.FixTotal(f, got, total)
		return mode
	}
	entropy.FixTotal(f, got, total)
	return entropy.Mode(f)
}
