package fgemm

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkZZSmall(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, s := range []struct {
		name    string
		m, k, n int
		f       Flags
	}{
		{"F1_K64", 64, 32, 32, TransB},
		{"F1_K512", 512, 32, 32, TransB},
		{"F2_K64", 32, 64, 32, TransA},
		{"F2_K512", 32, 512, 32, TransA},
		{"B4_K512", 512, 32, 32, Acc},
	} {
		x, y, c := randSlice(rng, 512*512), randSlice(rng, 512*512), make([]float32, 512*512)
		lda, ldb := s.k, s.n
		if s.f&TransA != 0 {
			lda = s.m
		}
		if s.f&TransB != 0 {
			ldb = s.k
		}
		w := NewWorkspace(1)
		b.Run(s.name, func(b *testing.B) {
			var best timer
			for i := 0; i < b.N; i++ {
				best.start()
				for r := 0; r < 100; r++ {
					w.MulTo(c, s.n, x, lda, y, ldb, s.m, s.k, s.n, s.f)
				}
				best.stop()
			}
			b.ReportMetric(float64(100*2*s.m*s.k*s.n)/best.min.Seconds()/1e9, "best-GFLOP/s")
			b.ReportMetric(float64(best.min.Nanoseconds())/100, "best-ns/call")
		})
	}
}
