package fgemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func BenchmarkZZRows(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, s := range []struct {
		name    string
		m, k, n int
		f       Flags
	}{
		{"big", 1008, 256, 768, 0},
		{"bigAt", 1008, 1024, 256, TransA},
		{"F2_K512", 32, 512, 32, TransA},
		{"F1_K512", 512, 32, 32, TransB},
	} {
		x, y, c := randSlice(rng, s.m*s.k), randSlice(rng, s.k*s.n), make([]float32, s.m*s.n)
		lda, ldb := s.k, s.n
		if s.f&TransA != 0 {
			lda = s.m
		}
		if s.f&TransB != 0 {
			ldb = s.k
		}
		w := NewWorkspace(1)
		for _, r := range []int{8, 14} {
			b.Run(fmt.Sprintf("%s/mr%d", s.name, r), func(b *testing.B) {
				forceRows = r
				defer func() { forceRows = 0 }()
				var best timer
				reps := max(1, 1<<22/(s.m*s.k*s.n))
				for i := 0; i < b.N; i++ {
					best.start()
					for q := 0; q < reps; q++ {
						w.MulTo(c, s.n, x, lda, y, ldb, s.m, s.k, s.n, s.f)
					}
					best.stop()
				}
				b.ReportMetric(float64(reps*2*s.m*s.k*s.n)/best.min.Seconds()/1e9, "best-GFLOP/s")
			})
		}
	}
}
