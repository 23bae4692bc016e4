package entropy

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
//     package's Exp. S = w_0 + w_1 + ... + w_{n-1}, summed left to right in
//     float64. S = 0 is ErrZeroSum.
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
	var sum float64
	bad := false
	for _, p := range probs {
		if p != p {
			return dst, ErrNaN
		}
		bad = bad || p < 0 || p > maxFloat32
		sum += float64(p)
	}
	if bad {
		return dst, ErrBadValue
	}
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
	m := float32(-maxFloat32)
	for _, l := range logits {
		if l != l {
			return dst, ErrNaN
		}
		m = max(m, l) // no NaN here, so max is plain comparison
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
	var sum float64
	for i, l := range logits {
		var e float64 // -Inf (or anything more than 708 below m) weighs 0
		if l >= -maxFloat32 {
			e = Exp(float64(l) - mf)
		}
		w[i] = e
		sum += e
	}
	if sum == 0 {
		return dst, ErrZeroSum
	}
	quantize(dst, w, sum, prec)
	return dst, nil
}

const maxFloat32 = 3.40282346638528859811704183484516925440e+38

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

// quantize is steps 3 and 4 for weights w (all finite, >= 0) with sum > 0.
func quantize[F float32 | float64](dst []uint32, w []F, sum float64, prec uint) {
	total := uint64(1) << prec
	scale := float64(total) / sum
	var got uint64
	mode, mf := 0, uint32(0)
	for i, wi := range w {
		x := float64(float64(wi)*scale) + 0.5
		f := uint32(1)
		if x >= 2 {
			f = uint32(x) // x <= 2^prec + 1: no overflow
		}
		dst[i] = f
		got += uint64(f)
		if f > mf {
			mode, mf = i, f
		}
	}
	if got == total {
		return
	}
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
