package f32

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

func randSlice(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * math.Exp(2*rng.NormFloat64()))
	}
	return v
}

// TestMulMatchesReference compares MulTo with the plain loop bit for bit over
// many shapes and strides, with NaN guard bands around every row of c.
func TestMulMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	nan := float32(math.NaN())
	for trial := 0; trial < 400; trial++ {
		n, inner, k := 1+rng.IntN(13), rng.IntN(70), 1+rng.IntN(70)
		if trial%10 == 0 {
			n, inner, k = 4+rng.IntN(130), 512, 16*(1+rng.IntN(8))
		}
		lda, ldb, ldc := inner+rng.IntN(3), k+rng.IntN(3), k+2+rng.IntN(3)
		a, b := randSlice(rng, n*lda), randSlice(rng, max(inner, 1)*ldb)
		got, want := make([]float32, n*ldc+1), make([]float32, n*ldc+1)
		for i := range got {
			got[i], want[i] = nan, nan
		}
		MulTo(got[1:], ldc, a, lda, b, ldb, n, inner, k)
		MulRef(want[1:], ldc, a, lda, b, ldb, n, inner, k)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d inner=%d k=%d strides %d %d %d: element %d is %g, reference %g", n, inner, k, lda, ldb, ldc, i, got[i], want[i])
			}
		}
		// The guard bands are untouched.
		if got[0] == got[0] {
			t.Fatal("MulTo wrote before c")
		}
		for i := 0; i < n; i++ {
			for j := k; j < ldc && i*ldc+j+1 < len(got); j++ {
				if g := got[i*ldc+j+1]; g == g {
					t.Fatalf("MulTo wrote into the stride gap of row %d", i)
				}
			}
		}
	}
}

// TestMulMatchesGonum checks that MulTo equals gonum's Sgemm without
// transposes, whose per-element order is the same. gonum's pure-Go kernels
// let the compiler fuse multiply-adds where the architecture has them (all
// but amd64 at its default level), so the bits agree only on amd64; MulTo
// itself is checked against MulRef on every architecture
// (TestMulMatchesReference; scripts/cross-arm64.sh runs it under arm64).
func TestMulMatchesGonum(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("skipped on %s: gonum's Sgemm fuses multiply-adds here", runtime.GOARCH)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	n, inner, k := 128, 512, 64
	a, b := randSlice(rng, n*inner), randSlice(rng, inner*k)
	got, want := make([]float32, n*k), make([]float32, n*k)
	MulTo(got, k, a, inner, b, k, n, inner, k)
	gonum.Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, n, k, inner, 1, a, inner, b, k, 0, want, k)
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("element %d: %g, gonum %g", i, got[i], want[i])
		}
	}
}

func TestMulPanicsOnShortSlices(t *testing.T) {
	defer func() {
		if p := recover(); p == nil {
			t.Fatal("no panic")
		}
	}()
	MulTo(make([]float32, 3), 2, make([]float32, 4), 2, make([]float32, 4), 2, 2, 2, 2)
}

func benchMul(b *testing.B, f func(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, n, inner, k int)) {
	rng := rand.New(rand.NewPCG(3, 3))
	n, inner, k := 128, 512, 512
	x, m, y := randSlice(rng, n*inner), randSlice(rng, inner*k), make([]float32, n*k)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := 0; j < k; j += 64 {
			f(y[j:], k, x, inner, m[j:], k, n, inner, 64)
		}
	}
	b.ReportMetric(float64(2*n*inner*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkMul is a 128x512 times 512x512 product in column tiles of 64 (the
// OPQ rotation of 4 states) on one core.
func BenchmarkMul(b *testing.B) { benchMul(b, MulTo) }

// BenchmarkMulRef is BenchmarkMul with the plain loop.
func BenchmarkMulRef(b *testing.B) { benchMul(b, MulRef) }

// BenchmarkMulGonum is BenchmarkMul with gonum's serial Sgemm.
func BenchmarkMulGonum(b *testing.B) {
	benchMul(b, func(c []float32, ldc int, a []float32, lda int, bb []float32, ldb int, n, inner, k int) {
		gonum.Implementation{}.Sgemm(blas.NoTrans, blas.NoTrans, n, k, inner, 1, a, lda, bb, ldb, 0, c, ldc)
	})
}
