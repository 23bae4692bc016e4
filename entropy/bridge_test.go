package entropy

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// checkTable verifies the bridge's invariants.
func checkTable(t *testing.T, freq []uint32, n int, prec uint) {
	t.Helper()
	if len(freq) != n {
		t.Fatalf("len %d, want %d", len(freq), n)
	}
	var sum uint64
	for i, f := range freq {
		if f < 1 || f >= 1<<prec {
			t.Fatalf("freq[%d] = %d outside [1, 2^%d)", i, f, prec)
		}
		sum += uint64(f)
	}
	if sum != 1<<prec {
		t.Fatalf("sum %d, want 2^%d", sum, prec)
	}
}

// randValue draws a float32 from a mix meant to hit edge cases: NaN, ±Inf,
// negatives, zeros, subnormals, huge and ordinary values.
func randValue(rng *rand.Rand) float32 {
	switch rng.IntN(20) {
	case 0:
		return float32(math.NaN())
	case 1:
		return float32(math.Inf(1))
	case 2:
		return float32(math.Inf(-1))
	case 3:
		return -rng.Float32()
	case 4, 5, 6:
		return 0
	case 7:
		return math.Float32frombits(uint32(rng.IntN(1 << 23))) // subnormal
	case 8:
		return math.MaxFloat32 * rng.Float32()
	case 9:
		return float32(math.Copysign(0, -1))
	default:
		return rng.Float32() * float32(math.Pow(10, float64(rng.IntN(20)-10)))
	}
}

// TestQuantizeProperties is a rapid-style property test: random lengths,
// precisions and values (including NaN, Inf, negatives and zeros). Every call
// either returns the documented error or a table with the invariants.
func TestQuantizeProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	iters := 200000
	if testing.Short() {
		iters = 20000
	}
	var okProbs, okLogits int
	for range iters {
		n := 2 + rng.IntN(300)
		prec := uint(1 + rng.IntN(MaxPrecision))
		in := make([]float32, n)
		clean := rng.IntN(3) == 0 // no NaN/Inf/negative at all
		for i := range in {
			if clean {
				in[i] = rng.Float32()
			} else {
				in[i] = randValue(rng)
			}
		}
		hasNaN, bad, allZero, allNegInf, posInf := false, false, true, true, false
		for _, v := range in {
			switch {
			case v != v:
				hasNaN = true
			case v < 0 || math.IsInf(float64(v), 0):
				bad = true
			}
			if v > 0 {
				allZero = false
			}
			if !math.IsInf(float64(v), -1) {
				allNegInf = false
			}
			if math.IsInf(float64(v), 1) {
				posInf = true
			}
		}
		dst := make([]uint32, rng.IntN(400)) // previous contents must not matter
		for i := range dst {
			dst[i] = rng.Uint32()
		}
		freq, err := QuantizeProbsTo(dst, in, prec)
		switch {
		case uint64(n) > 1<<prec:
			if !errors.Is(err, ErrAlphabet) {
				t.Fatalf("n %d prec %d: %v, want ErrAlphabet", n, prec, err)
			}
		case hasNaN:
			if !errors.Is(err, ErrNaN) {
				t.Fatalf("NaN: %v", err)
			}
		case bad:
			if !errors.Is(err, ErrBadValue) {
				t.Fatalf("bad value: %v", err)
			}
		case allZero:
			if !errors.Is(err, ErrZeroSum) {
				t.Fatalf("all zero: %v", err)
			}
		default:
			if err != nil {
				t.Fatalf("probs %v: %v", in, err)
			}
			checkTable(t, freq, n, prec)
			again, _ := QuantizeProbsTo(nil, in, prec)
			for i := range again {
				if again[i] != freq[i] {
					t.Fatal("result depends on dst's previous contents")
				}
			}
			okProbs++
		}

		freq, err = QuantizeLogitsTo(dst, in, prec)
		switch {
		case uint64(n) > 1<<prec:
			if !errors.Is(err, ErrAlphabet) {
				t.Fatalf("logits n %d prec %d: %v", n, prec, err)
			}
		case hasNaN:
			if !errors.Is(err, ErrNaN) {
				t.Fatalf("logits NaN: %v", err)
			}
		case posInf:
			if !errors.Is(err, ErrBadValue) {
				t.Fatalf("logits +Inf: %v", err)
			}
		case allNegInf:
			if !errors.Is(err, ErrZeroSum) {
				t.Fatalf("logits all -Inf: %v", err)
			}
		default:
			if err != nil {
				t.Fatalf("logits %v: %v", in, err)
			}
			checkTable(t, freq, n, prec)
			okLogits++
		}
	}
	t.Logf("%d iterations: %d valid probs tables, %d valid logits tables", iters, okProbs, okLogits)
}

func TestQuantizeShapeErrors(t *testing.T) {
	for _, c := range []struct {
		n    int
		prec uint
		want error
	}{
		{1, 16, ErrAlphabet}, {0, 16, ErrAlphabet}, {65, 6, ErrAlphabet},
		{64, 0, ErrBadPrecision}, {64, MaxPrecision + 1, ErrBadPrecision},
	} {
		in := make([]float32, c.n)
		for i := range in {
			in[i] = 1
		}
		if _, err := QuantizeProbsTo(nil, in, c.prec); !errors.Is(err, c.want) {
			t.Errorf("probs n %d prec %d: %v, want %v", c.n, c.prec, err, c.want)
		}
		if _, err := QuantizeLogitsTo(nil, in, c.prec); !errors.Is(err, c.want) {
			t.Errorf("logits n %d prec %d: %v, want %v", c.n, c.prec, err, c.want)
		}
	}
}

func TestQuantizeRules(t *testing.T) {
	// Exact proportional split.
	got, _ := QuantizeProbsTo(nil, []float32{1, 3}, 4)
	if got[0] != 4 || got[1] != 12 {
		t.Errorf("1:3 at 4 bits = %v", got)
	}
	// Ties: the remainder goes to the lowest-index mode.
	got, _ = QuantizeProbsTo(nil, []float32{1, 1, 1}, 4) // 5.33 each -> 5,5,5 + 1
	if got[0] != 6 || got[1] != 5 || got[2] != 5 {
		t.Errorf("1:1:1 at 4 bits = %v", got)
	}
	// Zeros get 1; the excess comes from the mode.
	got, _ = QuantizeProbsTo(nil, []float32{0, 1, 0, 0}, 4)
	if got[0] != 1 || got[1] != 13 || got[2] != 1 || got[3] != 1 {
		t.Errorf("one-hot at 4 bits = %v", got)
	}
	// Tight: 4 symbols in a total of 4.
	got, _ = QuantizeProbsTo(nil, []float32{0, 1, 0, 0}, 2)
	if got[0] != 1 || got[1] != 1 {
		t.Errorf("tight = %v", got)
	}
	// Tight, two large: excess taken from the largest, then the next.
	got, _ = QuantizeProbsTo(nil, []float32{0.5, 0.5, 0, 0, 0, 0, 0}, 3)
	checkTable(t, got, 7, 3)
	if got[0] != 1 || got[1] != 2 {
		t.Errorf("tight two = %v", got)
	}
	// Logits and probabilities of the same distribution agree.
	logits := []float32{0, float32(math.Log(3))}
	got, _ = QuantizeLogitsTo(nil, logits, 16)
	if got[0] != 16384 || got[1] != 49152 {
		t.Errorf("logits 1:3 = %v", got)
	}
}

func TestModeAndLookup(t *testing.T) {
	if Mode(nil) != -1 || Mode([]uint32{3, 7, 7, 1}) != 1 || Mode([]uint32{5}) != 0 {
		t.Error("Mode")
	}
	cum := CumulativeTo(nil, []uint32{2, 1, 5})
	if len(cum) != 4 || cum[3] != 8 {
		t.Fatal(cum)
	}
	for tg, want := range []int{0, 0, 1, 2, 2, 2, 2, 2} {
		if s := Lookup(cum, uint32(tg)); s != want {
			t.Errorf("Lookup(%d) = %d, want %d", tg, s, want)
		}
	}
	if s := Lookup(cum, 100); s != 2 {
		t.Errorf("Lookup past the end = %d", s)
	}
	// Zero-frequency entries are skipped by the search.
	cum = CumulativeTo(cum, []uint32{0, 3, 0, 1})
	if Lookup(cum, 0) != 1 || Lookup(cum, 3) != 3 {
		t.Error("Lookup with empty slices")
	}
}

func TestExpAgainstMath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	worst := 0.0
	check := func(x float64) {
		got, want := Exp(x), math.Exp(x)
		if math.IsInf(want, 1) {
			return // amd64's assembly math.Exp overflows early (709.78 gives +Inf); TestExpAgainstBig covers it
		}
		if want < 0x1p-1022 {
			if got != 0 {
				t.Fatalf("Exp(%g) = %g, want 0 (flushed)", x, got)
			}
			return
		}
		ulps := math.Abs(got-want) / (math.Nextafter(want, math.Inf(1)) - want)
		worst = max(worst, ulps)
		if ulps > 3 {
			t.Fatalf("Exp(%v) = %v, math.Exp %v: %.2f ulp apart", x, got, want, ulps)
		}
	}
	for range 1000000 {
		check((rng.Float64()*2 - 1) * 709)
		check(-rng.ExpFloat64())
	}
	for _, x := range []float64{0, 1e-300, -1e-300, 1e-9, -0.34657359, 0.34657359, 709.78, -708.39} {
		check(x)
	}
	t.Logf("worst distance from math.Exp: %.2f ulp", worst)
	if !math.IsNaN(Exp(math.NaN())) || !math.IsInf(Exp(math.Inf(1)), 1) || Exp(math.Inf(-1)) != 0 ||
		!math.IsInf(Exp(710), 1) || Exp(-709) != 0 || Exp(0) != 1 {
		t.Error("special cases")
	}
}

// bigExp returns e^x correctly rounded to float64, computed with 200-bit
// big.Float arithmetic: e^x = (e^(x/2^12))^(2^12), Taylor series inside.
func bigExp(x float64) float64 {
	const prec = 200
	y := new(big.Float).SetPrec(prec).SetFloat64(x)
	y.SetMantExp(y, -12)
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	for i := int64(1); i < 40; i++ {
		term.Mul(term, y)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(i))
		sum.Add(sum, term)
	}
	for range 12 {
		sum.Mul(sum, sum)
	}
	f, _ := sum.Float64()
	return f
}

// TestExpAgainstBig holds Exp to 1 ulp of the correctly rounded e^x.
func TestExpAgainstBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	worst := 0.0
	for i := range n {
		x := (rng.Float64()*2 - 1) * 708
		switch i % 4 {
		case 0, 2:
			x = -rng.ExpFloat64() * 4
		case 1: // near overflow and near the flush to zero
			x = 709 + rng.Float64()*0.78
			if i%8 == 1 {
				x = -708.39 + rng.Float64()
			}
		}
		got, want := Exp(x), bigExp(x)
		ulps := math.Abs(got-want) / (math.Nextafter(want, math.Inf(1)) - want)
		worst = max(worst, ulps)
		if ulps > 1 {
			t.Fatalf("Exp(%v) = %v, correctly rounded %v: %.2f ulp apart", x, got, want, ulps)
		}
	}
	t.Logf("worst distance from the correctly rounded e^x: %.2f ulp over %d points", worst, n)
}

// TestNoFMA documents the trap the bridge avoids: x*y+z rounds once when
// fused. The explicit float64 conversion must keep the two roundings on every
// architecture. (On amd64 both forms agree; run under qemu-aarch64 to see
// the difference.)
func TestNoFMA(t *testing.T) {
	x, y := float32(1.0000001), float32(1.0000001)
	z := float32(-1.0000002)
	if got := float32(x*y) + z; math.Float32bits(got) != 0 {
		t.Fatalf("float32(x*y)+z = %x, want 0", math.Float32bits(got))
	}
}
