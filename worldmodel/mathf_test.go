package worldmodel

import (
	"math"
	"testing"
)

func ulps32(a, b float32) int64 {
	ia, ib := int64(int32(math.Float32bits(a))), int64(int32(math.Float32bits(b)))
	if ia < 0 {
		ia = math.MinInt32 - ia
	}
	if ib < 0 {
		ib = math.MinInt32 - ib
	}
	d := ia - ib
	if d < 0 {
		d = -d
	}
	return d
}

// TestMathf holds the package's own functions to the tolerances stated in
// mathf.go, against the standard library in float64.
func TestMathf(t *testing.T) {
	var worstExp int64
	var worstTanh, worstSig, worstLog float64
	for i := -200000; i <= 200000; i++ {
		x := float32(i) / 2000 // [-100, 100]
		if x >= -86.5 && x <= 88 {
			want := float32(math.Exp(float64(x)))
			if d := ulps32(expf(x), want); d > worstExp {
				worstExp = d
				if d > 2 {
					t.Fatalf("expf(%g) = %g, want %g (%d ulp)", x, expf(x), want, d)
				}
			}
		}
		if d := math.Abs(float64(tanhf(x)) - math.Tanh(float64(x))); d > worstTanh {
			worstTanh = d
			if d > 3e-7 {
				t.Fatalf("tanhf(%g) = %g, want %g", x, tanhf(x), math.Tanh(float64(x)))
			}
		}
		want := 1 / (1 + math.Exp(-float64(x)))
		if d := math.Abs(float64(sigmoidf(x)) - want); d > worstSig {
			worstSig = d
			if d > 3e-7 {
				t.Fatalf("sigmoidf(%g) = %g, want %g", x, sigmoidf(x), want)
			}
		}
		if x >= 0 {
			want := math.Log1p(float64(x))
			if d := math.Abs(float64(log1pf(x))-want) / math.Max(want, 1e-30); x > 0 && d > worstLog {
				worstLog = d
				if d > 2e-7 {
					t.Fatalf("log1pf(%g) = %g, want %g", x, log1pf(x), want)
				}
			}
		}
	}
	t.Logf("worst: expf %d ulp, tanhf %.2g abs, sigmoidf %.2g abs, log1pf %.2g rel", worstExp, worstTanh, worstSig, worstLog)
	if expf(-87) != 0 || !math.IsInf(float64(expf(89)), 1) || expf(0) != 1 {
		t.Error("expf special cases")
	}
	if nan := float32(math.NaN()); expf(nan) == expf(nan) || tanhf(nan) == tanhf(nan) {
		t.Error("NaN in should give NaN out")
	}
	if tanhf(20) != 1 || tanhf(-20) != -1 || tanhf(0) != 0 {
		t.Error("tanhf special cases")
	}
	if g := geluf(3); math.Abs(float64(g)-2.99636) > 1e-4 {
		t.Errorf("geluf(3) = %g", g)
	}
}

// TestSIMDMatchesScalar: the AVX-512 kernels give the Go code's bits on a
// dense grid, at the branch boundaries and on special values.
func TestSIMDMatchesScalar(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 kernel in this build")
	}
	var xs []float32
	for i := -400000; i <= 400000; i++ {
		xs = append(xs, float32(i)*0.00025)
	}
	for _, b := range []float32{0.5, 9.5, 4.75, 86.5, 88, 43.25, 44, 0.25} {
		for _, v := range []float32{b, -b, math.Nextafter32(b, 0), math.Nextafter32(b, 100), -math.Nextafter32(b, 0), -math.Nextafter32(b, 100)} {
			xs = append(xs, v)
		}
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	xs = append(xs, nan, inf, -inf, 0, float32(math.Copysign(0, -1)), 1e-40, -1e-40, math.MaxFloat32, -math.MaxFloat32, 1e-6, -1e-6)
	for len(xs)%16 != 0 {
		xs = append(xs, 1)
	}
	zero := make([]float32, len(xs))
	for _, shift := range []float32{0, 1.5, -3} {
		got := append([]float32(nil), xs...)
		expShift(got, shift)
		for i, x := range xs {
			if want := expf(x - shift); math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("expShift(%g, %g) = %g, Go %g", x, shift, got[i], want)
			}
		}
	}
	for _, scale := range []float32{1, 10, 0.01} {
		in := make([]float32, len(xs))
		for i, x := range xs {
			in[i] = float32(x * scale)
		}
		got := append([]float32(nil), in...)
		geluBias(got, zero)
		for i, x := range in {
			if want := geluf(x + zero[i]); math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("geluBias(%g) = %g (%08x), Go %g (%08x)", x, got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
			}
		}
		// Into another slice (the training's forward): the same bits, and
		// the input and the element past the end left alone.
		bias := make([]float32, len(in))
		for i := range bias {
			bias[i] = float32(i%7) * 0.25 * scale
		}
		keep := append([]float32(nil), in...)
		dst := make([]float32, len(in)+1)
		dst[len(in)] = 42
		geluBiasTo(dst, in, bias)
		for i, x := range in {
			if want := geluf(x + bias[i]); math.Float32bits(dst[i]) != math.Float32bits(want) {
				t.Fatalf("geluBiasTo(%g + %g) = %g, Go %g", x, bias[i], dst[i], want)
			}
			if math.Float32bits(x) != math.Float32bits(keep[i]) {
				t.Fatalf("geluBiasTo changed its input at %d", i)
			}
		}
		if dst[len(in)] != 42 {
			t.Fatal("geluBiasTo wrote past the end")
		}
	}
}
