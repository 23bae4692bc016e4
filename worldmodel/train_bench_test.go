package worldmodel

import (
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkTrainStep times one optimizer step of batch 16 (4 for paper) on
// windows of up to 16 states of random 20-step sequences, per preset.
// GFLOP/s is the mean over the steps; best-GFLOP/s the fastest single step
// (the least disturbed one on a shared machine).
func BenchmarkTrainStep(b *testing.B) {
	for _, name := range []string{"tiny", "small", "base", "paper"} {
		b.Run(name, func(b *testing.B) {
			cfg, _ := Preset(name)
			m, err := New(cfg, 1)
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 1))
			seqs := microSequences(rng, &cfg, 4, 20)
			batch := 16
			if name == "paper" {
				batch = 4
			}
			tr, err := NewTrainer(m, seqs, TrainConfig{Steps: 1 << 30, Batch: batch})
			if err != nil {
				b.Fatal(err)
			}
			tr.Step()
			b.ReportAllocs()
			b.ResetTimer()
			var flops int64
			var tokens int
			var best float64
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				st := tr.Step()
				best = max(best, float64(st.FLOPs)/time.Since(t0).Seconds())
				flops += st.FLOPs
				tokens += st.Tokens
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(flops)/sec/1e9, "GFLOP/s")
			b.ReportMetric(best/1e9, "best-GFLOP/s")
			b.ReportMetric(float64(tokens)/sec, "tokens/s")
		})
	}
}

// BenchmarkDropMask times a dropout mask of 8,192 floats (64 rows of small's
// width 128) at rate 0.1.
func BenchmarkDropMask(b *testing.B) {
	mask := make([]float32, 64*128)
	b.SetBytes(int64(4 * len(mask)))
	for i := 0; i < b.N; i++ {
		dropMask(mask, 0.1, uint64(i), 1, 2)
	}
}
