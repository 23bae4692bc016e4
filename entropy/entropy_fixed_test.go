package entropy

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestLog2Table(t *testing.T) {
	for i, v := range log2Table {
		want := math.Log2(1+float64(i)/1024) * (1 << 24)
		if math.Abs(float64(v)-want) > 0.5+1e-6 {
			t.Fatalf("log2Table[%d] = %d, want %.3f", i, v, want)
		}
	}
}

func TestLog2Q24(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	worst := 0.0
	for range 1000000 {
		x := uint32(rng.Uint64N(1<<uint(1+rng.IntN(32)))) | 1
		got := float64(log2Q24(x)) / (1 << 24)
		d := math.Abs(got - math.Log2(float64(x)))
		worst = max(worst, d)
		if d > 2.5e-7 {
			t.Fatalf("log2Q24(%d) = %.9f, want %.9f", x, got, math.Log2(float64(x)))
		}
	}
	for k := range 32 {
		if log2Q24(1<<k) != uint32(k)<<24 {
			t.Fatalf("log2Q24(2^%d) not exact", k)
		}
	}
	t.Logf("worst |log2Q24 - log2| = %.3g bit", worst)
}

// TestEntropyQ16 holds the integer entropy to |H_Q16/65536 - H| <= 2^-16 bit
// against the float64 formula, and CostQ16 likewise.
func TestEntropyQ16(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	worstH, worstC := 0.0, 0.0
	for k := range 20000 {
		n := []int{2, 17, 64, 256}[k%4]
		prec := uint(9 + rng.IntN(MaxPrecision-8))
		freq := randTable(rng, n, prec)
		if k%7 == 0 { // a non-power-of-two total (adaptive counts)
			for i := range freq {
				freq[i] = 1 + uint32(rng.IntN(5000))
			}
		}
		h := float64(EntropyQ16(freq)) / FixedOne
		d := math.Abs(h - EntropyBits(freq))
		worstH = max(worstH, d)
		if d > 1.0/FixedOne {
			t.Fatalf("EntropyQ16 = %.7f, float %.7f", h, EntropyBits(freq))
		}
		var total uint32
		for _, f := range freq {
			total += f
		}
		for _, f := range freq[:min(8, len(freq))] {
			c := float64(CostQ16(f, total)) / FixedOne
			d := math.Abs(c - CostBits(f, total))
			worstC = max(worstC, d)
			if d > 1.0/FixedOne {
				t.Fatalf("CostQ16(%d, %d) = %.7f, float %.7f", f, total, c, CostBits(f, total))
			}
		}
	}
	t.Logf("worst |EntropyQ16 - H| = %.3g bit, worst |CostQ16 - cost| = %.3g bit", worstH, worstC)
	uniform := make([]uint32, 64)
	for i := range uniform {
		uniform[i] = 1 << 18
	}
	if EntropyQ16(uniform) != 6*FixedOne {
		t.Errorf("uniform 64: %d", EntropyQ16(uniform))
	}
	if EntropyQ16(nil) != 0 || EntropyQ16([]uint32{0, 5, 0}) != 0 {
		t.Error("degenerate tables")
	}
	if CostQ16(0, 16) != math.MaxUint32 || CostQ16(16, 16) != 0 || CostQ16(1, 1<<24) != 24*FixedOne {
		t.Error("CostQ16 special cases")
	}
}
