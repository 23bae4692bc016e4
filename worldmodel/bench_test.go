package worldmodel

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchPredict times Predict for one preset on batch histories of 16 steps
// and reports ms per observation and GFLOP/s (FLOPs as Config.FLOPs counts).
func benchPredict(b *testing.B, preset string, batch int) {
	cfg, err := Preset(preset)
	if err != nil {
		b.Fatal(err)
	}
	m, err := New(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	hs := make([]History, batch)
	for i := range hs {
		hs[i] = randomHistory(rng, &cfg, cfg.MaxHistory)
	}
	r := newCPU(b, m)
	preds, err := r.Predict(nil, hs)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		preds, _ = r.Predict(preds, hs)
	}
	per := b.Elapsed().Seconds() / float64(b.N*batch)
	b.ReportMetric(per*1e3, "ms/obs")
	b.ReportMetric(float64(cfg.FLOPs(cfg.MaxHistory))/per/1e9, "GFLOP/s")
	b.ReportMetric(float64(cfg.FLOPs(cfg.MaxHistory))/1e9, "GFLOP/obs")
	b.ReportMetric(float64(cfg.NumParams()), "params")
}

// BenchmarkPredict: every preset at batch 1 and 8 (paper and medium only
// without -short).
func BenchmarkPredict(b *testing.B) {
	for _, p := range PresetNames() {
		for _, batch := range []int{1, 8} {
			if testing.Short() && (p == "paper" || p == "medium") {
				continue
			}
			b.Run(fmt.Sprintf("%s/batch=%d", p, batch), func(b *testing.B) { benchPredict(b, p, batch) })
		}
	}
}
