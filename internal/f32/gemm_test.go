package f32

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMulParMatchesReference compares MulParTo (AVX-512 blocked kernel where
// available) with the plain loop bit for bit over shapes that cross every
// blocking boundary, strides and thread counts, with NaN guard bands.
func TestMulParMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	nan := float32(math.NaN())
	for trial := 0; trial < 120; trial++ {
		n, inner, k := 1+rng.IntN(40), rng.IntN(600), 1+rng.IntN(140)
		if trial%8 == 0 {
			n, inner, k = 8*(1+rng.IntN(40)), 256*(1+rng.IntN(3)), 32*(1+rng.IntN(6))
		}
		threads := 1 + rng.IntN(4)
		lda, ldb, ldc := inner+rng.IntN(3), k+rng.IntN(3), k+2+rng.IntN(3)
		a, b := randSlice(rng, n*lda), randSlice(rng, max(inner, 1)*ldb)
		got, want := make([]float32, n*ldc+1), make([]float32, n*ldc+1)
		for i := range got {
			got[i], want[i] = nan, nan
		}
		MulParTo(got[1:], ldc, a, lda, b, ldb, n, inner, k, threads)
		MulRef(want[1:], ldc, a, lda, b, ldb, n, inner, k)
		packed := make([]float32, len(got))
		copy(packed, got)
		MulPackedTo(packed[1:], ldc, a, lda, Pack(b, ldb, inner, k), n, threads)
		for i := range got {
			if math.Float32bits(packed[i]) != math.Float32bits(want[i]) {
				t.Fatalf("packed n=%d inner=%d k=%d: element %d is %g, reference %g", n, inner, k, i, packed[i], want[i])
			}
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d inner=%d k=%d strides %d %d %d threads %d: element %d is %g, reference %g",
					n, inner, k, lda, ldb, ldc, threads, i, got[i], want[i])
			}
		}
	}
}

func benchMulPar(b *testing.B, n, inner, k, threads int) {
	rng := rand.New(rand.NewPCG(3, 3))
	x, m, y := randSlice(rng, n*inner), randSlice(rng, inner*k), make([]float32, n*k)
	b.ResetTimer()
	pm := Pack(m, k, inner, k)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		MulPackedTo(y, k, x, inner, pm, n, threads)
	}
	b.ReportMetric(float64(2*n*inner*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkMulPar: the paper model's matmuls on 512 tokens (a 16-step
// history), packed weights, on 1 and 2 goroutines.
func BenchmarkMulPar(b *testing.B) {
	for _, s := range []struct {
		name           string
		n, inner, k, t int
	}{
		{"qkv_512x256x768/t1", 512, 256, 768, 1},
		{"qkv_512x256x768/t2", 512, 256, 768, 2},
		{"mlp1_512x256x4096/t1", 512, 256, 4096, 1},
		{"mlp1_512x256x4096/t2", 512, 256, 4096, 2},
		{"mlp2_512x4096x256/t1", 512, 4096, 256, 1},
		{"mlp2_512x4096x256/t2", 512, 4096, 256, 2},
	} {
		b.Run(s.name, func(b *testing.B) { benchMulPar(b, s.n, s.inner, s.k, s.t) })
	}
}
