package worldmodel

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkPredictProfiles times Predict in the f32 and int8 profiles on
// the same model (random weights, the int8 one calibrated on 32 random
// histories) and the same batch of 8 histories of 16 steps, one after the
// other in one process: compare the two lines of a preset.
//
//	go test ./worldmodel -run '^$' -bench PredictProfiles -benchtime 3x
func BenchmarkPredictProfiles(b *testing.B) {
	for _, p := range PresetNames() {
		if testing.Short() && (p == "paper" || p == "medium") {
			continue
		}
		cfg, err := Preset(p)
		if err != nil {
			b.Fatal(err)
		}
		var m *Model
		var hs []History
		var q *Int8Model
		for _, prof := range []string{ProfileF32, ProfileInt8} {
			b.Run(fmt.Sprintf("%s/%s", p, prof), func(b *testing.B) {
				if m == nil { // made once per preset, when one of its runs is selected
					if m, err = New(cfg, 1); err != nil {
						b.Fatal(err)
					}
					rng := rand.New(rand.NewPCG(1, 1))
					hs = make([]History, 8)
					for i := range hs {
						hs[i] = randomHistory(rng, &cfg, cfg.MaxHistory)
					}
				}
				var pr Predictor
				if prof == ProfileF32 {
					pr = newCPU(b, m)
				} else {
					if q == nil {
						if q, err = CalibrateInt8(m, hs[:4], 2); err != nil {
							b.Fatal(err)
						}
					}
					if pr, err = NewInt8CPU(q); err != nil {
						b.Fatal(err)
					}
				}
				preds, err := pr.Predict(nil, hs)
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					preds, _ = pr.Predict(preds, hs)
				}
				per := b.Elapsed().Seconds() / float64(b.N*len(hs))
				b.ReportMetric(per*1e3, "ms/obs")
				b.ReportMetric(1/per, "obs/s")
				b.ReportMetric(float64(cfg.FLOPs(cfg.MaxHistory))/per/1e9, "GOP/s")
			})
		}
	}
}
