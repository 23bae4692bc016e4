package entropy

import "math"

// The bridge: the one place where a floating-point distribution becomes the
// integer frequency table that the retention rule and the coder read. Writer
// and decoder must get identical tables from identical inputs on any
// machine, so every step is fixed:
//
//  1. Validate. NaN anywhere is ErrNaN. probs: otherwise a negative or
//     infinite probability is ErrBadValue (-0 counts as 0). logits: otherwise
//     +Inf is ErrBadValue; -Inf is a weight of exactly 0.
//  2. Weights w_i in float64: probs form w_i = float64(p_i); logits form
//     w_i = Exp(float64(l_i) - float64(m)), m the largest logit, with this
//     package's Exp. S is their float64 sum in a fixed order: 8 partial sums
//     s_r = w_r + w_{r+8} + w_{r+16} + ... (left to right), then
//     S = ((s_0+s_1) + (s_2+s_3)) + ((s_4+s_5) + (s_6+s_7)). S = 0 is
//     ErrZeroSum.
//  3. scale = float64(2^prec) / S; x_i = float64(w_i*scale) (rounded, never
//     fused); f_i = max(1, trunc(x_i + 0.5)) with the sum in float64, that is
//     x_i rounded half up, then raised to 1.
//  4. d = 2^prec - sum f_i (an integer). The mode m (largest f_i, lowest
//     index on ties) takes all of it when f_m + d >= 1. Otherwise (only when
//     many symbols were raised to 1 and the total is tight) the excess is
//     taken from the largest remaining frequency (lowest index on ties), as
//     much as keeps it at 1, then the next, until d = 0.
//
// Step 4 puts the rounding error where it costs least: on the largest
// frequency, whose relative change is smallest. The result totals exactly
// 2^prec, every f_i >= 1, and none is 2^prec (n >= 2).

// stackWeights is the alphabet size up to which the logits form needs no
// heap allocation.
const stackWeights = 256

// QuantizeProbsTo turns probabilities into a frequency table totalling
// exactly 2^prec, with every frequency at least 1, following the rules above.
// probs need not sum to 1; only their ratios matter. dst is resliced to
// len(probs) (reallocated if its capacity is short) and returned.
//
// It needs 2 <= len(probs) <= 2^prec (ErrAlphabet) and
// 1 <= prec <= MaxPrecision (ErrBadPrecision). NaN is ErrNaN; a negative or
// infinite probability is ErrBadValue; all zeros is ErrZeroSum. On error dst's
// contents are unspecified.
func QuantizeProbsTo(dst []uint32, probs []float32, prec uint) ([]uint32, error) {
	n := len(probs)
	dst, err := checkShape(dst, n, prec)
	if err != nil {
		return dst, err
	}
	// A probability is fine, or -0, when its sign bit is clear and adding
	// 2^23 to its bits (one exponent step) leaves the sign bit clear: NaN and
	// +Inf carry into it, negatives have it. No data-dependent branches.
	var acc uint32
	for _, p := range probs {
		u := math.Float32bits(p)
		acc |= u | (u + 1<<23)
	}
	if acc>>31 != 0 { // something is negative, -0, NaN or infinite: look closer
		if err := checkProbs(probs); err != nil {
			return dst, err
		}
	}
	sum := sum8(probs)
	if sum == 0 {
		return dst, ErrZeroSum
	}
	quantize(dst, probs, sum, prec)
	return dst, nil
}

// QuantizeLogitsTo is QuantizeProbsTo for unnormalised log-probabilities: the
// table of softmax(logits), computed with this package's Exp after
// subtracting the largest logit. -Inf logits are probability 0 (frequency 1);
// NaN is ErrNaN; +Inf is ErrBadValue; all -Inf is ErrZeroSum.
func QuantizeLogitsTo(dst []uint32, logits []float32, prec uint) ([]uint32, error) {
	n := len(logits)
	dst, err := checkShape(dst, n, prec)
	if err != nil {
		return dst, err
	}
	// NaN: magnitude bits above +Inf's, found by a carry into bit 31 (no
	// branch). The max skips NaN, as comparisons with NaN are false.
	var acc uint32
	m := float32(math.Inf(-1))
	for _, l := range logits {
		acc |= math.Float32bits(l)&0x7fffffff + 0x007fffff
		if l > m {
			m = l
		}
	}
	if acc>>31 != 0 {
		return dst, ErrNaN
	}
	if m > maxFloat32 {
		return dst, ErrBadValue
	}
	var stack [stackWeights]float64
	var w []float64
	if n <= stackWeights {
		w = stack[:n]
	} else {
		w = make([]float64, n)
	}
	mf := float64(m)
	for i, l := range logits {
		x := float64(l) - mf // <= 0
		e := 0.0             // for -Inf and anything 708 below m, as Exp
		if x >= expMinNormal {
			e = expKernel(x)
		}
		w[i] = e
	}
	sum := sum8(w)
	if sum == 0 {
		return dst, ErrZeroSum
	}
	quantize(dst, w, sum, prec)
	return dst, nil
}

const maxFloat32 = 3.40282346638528859811704183484516925440e+38

// checkProbs is step 1 for probabilities, the slow way.
func checkProbs(probs []float32) error {
	bad := false
	for _, p := range probs {
		if p != p {
			return ErrNaN
		}
		bad = bad || p < 0 || p > maxFloat32
	}
	if bad {
		return ErrBadValue
	}
	return nil
}

func checkShape(dst []uint32, n int, prec uint) ([]uint32, error) {
	if prec-1 >= MaxPrecision {
		return dst, ErrBadPrecision
	}
	if n < 2 || uint64(n) > 1<<prec {
		return dst, ErrAlphabet
	}
	if cap(dst) < n {
		dst = make([]uint32, n)
	}
	return dst[:n], nil
}

// sum8 is step 2's sum: 8 interleaved partial sums combined pairwise.
func sum8[F float32 | float64](w []F) float64 {
	var s [8]float64
	i := 0
	for ; i+8 <= len(w); i += 8 {
		s[0] += float64(w[i])
		s[1] += float64(w[i+1])
		s[2] += float64(w[i+2])
		s[3] += float64(w[i+3])
		s[4] += float64(w[i+4])
		s[5] += float64(w[i+5])
		s[6] += float64(w[i+6])
		s[7] += float64(w[i+7])
	}
	for r := 0; i < len(w); i, r = i+1, r+1 {
		s[r] += float64(w[i])
	}
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}

// quantize is steps 3 and 4 for weights w (all finite, >= 0) with sum > 0.
func quantize[F float32 | float64](dst []uint32, w []F, sum float64, prec uint) {
	total := uint64(1) << prec
	scale := float64(total) / sum
	var got uint64
	dst = dst[:len(w)]
	for i, wi := range w {
		x := float64(float64(wi)*scale) + 0.5 // in [0.5, 2^prec + 1]
		f := uint32(x)
		f |= (f - 1) >> 31 // 0 becomes 1; f <= 2^28+1 is otherwise unchanged
		dst[i] = f
		got += uint64(f)
	}
	FixTotal(dst, got, total)
}

// FixTotal is step 4 of the rules above: it moves the total of a table
// whose entries are all >= 1 from got to total. The mode (Mode: largest,
// lowest index on ties) takes all of the difference when it stays >= 1;
// otherwise the excess is taken from the largest entries in turn, each
// kept at >= 1 (total must be at least len(dst)). The int8 profile's
// integer tables (package worldmodel) end with it too.
func FixTotal(dst []uint32, got, total uint64) {
	if got == total {
		return
	}
	mode := Mode(dst)
	mf := dst[mode]
	if got < total {
		dst[mode] += uint32(total - got)
		return
	}
	excess := got - total
	if uint64(mf)-1 >= excess {
		dst[mode] -= uint32(excess)
		return
	}
	// Tight total: take from the largest frequencies in turn.
	for excess > 0 {
		m := Mode(dst)
		take := min(uint64(dst[m])-1, excess)
		dst[m] -= uint32(take)
		excess -= take
	}
}
