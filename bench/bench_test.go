package bench

import (
	"testing"

	"github.com/memowm/memowm/internal/fixture"
	"github.com/memowm/memowm/model"
)

func TestRun(t *testing.T) {
	s, err := fixture.Get()
	if err != nil {
		t.Fatal(err)
	}
	for _, pol := range []model.Policy{{Kind: model.KeepAll}, {Kind: model.MinEntropy, MinEntropyQ16: 3 << 16}} {
		b, p, err := fixture.Bundle(1, pol)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(b, p, s.Episodes, Options{Batch: 4, Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		names := []string{"fixed-width", "zstd", "order1-context", "wm-all-send", "wm-gated"}
		if len(rep.Methods) != len(names) {
			t.Fatalf("%d rows", len(rep.Methods))
		}
		obs := 0
		for _, ep := range s.Episodes {
			obs += len(ep.Codes)
		}
		if rep.Observations != obs || rep.Transitions != obs-len(s.Episodes) {
			t.Fatalf("observations %d transitions %d", rep.Observations, rep.Transitions)
		}
		fixed := rep.Methods[0]
		// 16 codewords: 4 bits per code.
		if fixed.BitsPerObs != 1024*4+fixed.ActionBitsPerObs || fixed.RatioFixedWidth != 1 {
			t.Fatalf("fixed width %+v", fixed)
		}
		for i, m := range rep.Methods {
			if m.Name != names[i] || m.ActionBitsPerObs != fixed.ActionBitsPerObs || m.BitsPerObs <= 0 {
				t.Fatalf("row %d: %+v", i, m)
			}
			if m.Name != "wm-gated" && (m.DeltaNLLBits == nil || *m.DeltaNLLBits != 0 || m.KeptFraction != 1) {
				t.Fatalf("lossless row %s: %+v", m.Name, m)
			}
			// Physical is never below ideal beyond rounding (the coder is not magic).
			if m.BitsPerObs < m.IdealBitsPerObs-0.5 {
				t.Fatalf("%s: physical %.2f below ideal %.2f", m.Name, m.BitsPerObs, m.IdealBitsPerObs)
			}
		}
		gated := rep.Methods[4]
		if pol.Lossless() != (gated.KeptFraction == 1) {
			t.Fatalf("policy %v kept %.3f", pol, gated.KeptFraction)
		}
	}
}
