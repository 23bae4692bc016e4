package bench

import (
	"slices"
	"testing"

	"github.com/memowm/memowm/internal/fixture"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/reader"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
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
		names := []string{"fixed-width", "zstd", "zstd-long", "xz", "best-general", "order1-context", "wm-all-send", "wm-repeat", "wm-gated",
			"wm-mix", "wm-mix-no-wm", "wm-mix-no-copy", "wm-mix-no-contexts"}
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
		checkGeneral(t, rep)
		// The mix and its ablations are lossless, measured, and differ.
		mix := row(t, rep, "wm-mix")
		if mix.EncodeObsPerS <= 0 || mix.DecodeObsPerS <= 0 || mix.BitsPerObs > row(t, rep, "fixed-width").BitsPerObs {
			t.Fatalf("wm-mix %+v", mix)
		}
		for _, name := range []string{"wm-mix-no-wm", "wm-mix-no-copy", "wm-mix-no-contexts"} {
			if a := row(t, rep, name); a.IdealBitsPerObs == mix.IdealBitsPerObs || a.Note == "" {
				t.Fatalf("%s: %+v (wm-mix ideal %.2f)", name, a, mix.IdealBitsPerObs)
			}
		}
		gated := row(t, rep, "wm-gated")
		if pol.Lossless() != (gated.KeptFraction == 1) {
			t.Fatalf("policy %v kept %.3f", pol, gated.KeptFraction)
		}
	}
}

func TestGatedDistortion(t *testing.T) {
	s, err := fixture.Get()
	if err != nil {
		t.Fatal(err)
	}
	b, p, err := fixture.Bundle(1, model.Policy{Kind: model.MinEntropy, MinEntropyQ16: 3 << 16})
	if err != nil {
		t.Fatal(err)
	}
	var states [][]float32
	var qs []*trajectory.Question
	for i := range s.Questions {
		q := &s.Questions[i]
		for _, ep := range s.Episodes {
			if ep.ID == q.Episode {
				x, _ := s.Q.Decode(ep.Codes[q.Step])
				states, qs = append(states, x), append(qs, q)
			}
		}
	}
	cfg := reader.DefaultProbeConfig()
	cfg.Epochs, cfg.Slots, cfg.Dim = 3, 32, 32
	if b.Reader, _, err = reader.TrainProbe(states, qs, cfg, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Bytes(); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(b, p, s.Episodes, Options{Batch: 4, Dir: t.TempDir(), Questions: qs})
	if err != nil {
		t.Fatal(err)
	}
	g := row(t, rep, "wm-gated")
	if g.Name != "wm-gated" || g.DeltaNLLBits == nil || g.KeptFraction == 1 {
		t.Fatalf("wm-gated %+v", g)
	}
	t.Logf("wm-gated: kept %.3f, delta NLL %.4f bits", g.KeptFraction, *g.DeltaNLLBits)
}

func TestCompare(t *testing.T) {
	s, err := fixture.Get()
	if err != nil {
		t.Fatal(err)
	}
	b, p, err := fixture.Bundle(1, model.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	// Omit the coordinates below the median entropy of a first prediction.
	ep := s.Episodes[0]
	pr, err := p.Predict(nil, []worldmodel.History{{{Codes: ep.Codes[0], Action: ep.Actions[0]}}})
	if err != nil {
		t.Fatal(err)
	}
	hs := append([]uint32(nil), pr[0].Entropy...)
	slices.Sort(hs)
	cs, err := Compare(b, p, s.Episodes, model.Policy{Kind: model.MinEntropy, MinEntropyQ16: hs[len(hs)/2]}, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 4 || cs[0].Name != "wm-fill" || cs[1].Name != "copy-fill" || cs[2].Name != "teacher-forced" || cs[3].Name != "mix" {
		t.Fatalf("%+v", cs)
	}
	for _, c := range cs {
		if c.KeptFraction <= 0 || c.KeptFraction >= 1 || c.ExactRecovery < 0 || c.ExactRecovery > 1 || c.DeltaNLLBits != nil {
			t.Fatalf("%+v", c)
		}
	}
}
