package calib

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memowm/memowm/internal/fixture"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/risk"
	"github.com/memowm/memowm/trajectory"
)

// linearScorer: the answer costs softplus(<w, state>) bits.
type linearScorer struct{ w []float32 }

func (l *linearScorer) Bits(dst []float64, states [][]float32, qs []*trajectory.Question) ([]float64, error) {
	dst = dst[:0]
	for _, s := range states {
		var a float64
		for i, v := range s {
			a += float64(v) * float64(l.w[i])
		}
		dst = append(dst, math.Log1p(math.Exp(a))/math.Ln2)
	}
	return dst, nil
}

func TestSelect(t *testing.T) {
	pts := []Point{
		{Param: 0, Rate: 100, Distortion: 0},
		{Param: 1, Rate: 80, Distortion: 0.02},
		{Param: 2, Rate: 60, Distortion: -0.04},
		{Param: 3, Rate: 60, Distortion: 0.01}, // same rate, later: not chosen
		{Param: 4, Rate: 40, Distortion: 0.2},
	}
	if p, ok := Select(pts, 0.05); !ok || p.Param != 2 {
		t.Fatalf("selected %+v", p)
	}
	if p, ok := Select(pts, 0.015); !ok || p.Param != 3 {
		t.Fatalf("selected %+v at epsilon 0.015", p)
	}
	if _, ok := Select(pts[1:2], 0.01); ok {
		t.Fatal("selected a point outside epsilon")
	}
}

func TestSweep(t *testing.T) {
	s, err := fixture.Get()
	if err != nil {
		t.Fatal(err)
	}
	_, p, err := fixture.Bundle(1, model.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	sc := &linearScorer{w: make([]float32, s.Q.Shape().StateLen())}
	for i := range sc.w {
		sc.w[i] = float32(rng.NormFloat64() / 64)
	}
	var qs []*trajectory.Question
	for i := range s.Questions {
		qs = append(qs, &s.Questions[i])
	}
	keep := map[risk.StepKey]bool{}
	for _, q := range qs {
		keep[risk.StepKey{Episode: q.Episode, Step: q.Step}] = true
	}
	cal, err := risk.Collect(p, s.Episodes, risk.DefaultBinQ16, keep, 8)
	if err != nil {
		t.Fatal(err)
	}
	var items []risk.Item
	for _, q := range qs {
		if q.Step == 0 {
			continue
		}
		for _, ep := range s.Episodes {
			if ep.ID == q.Episode {
				items = append(items, risk.Item{Codes: ep.Codes[q.Step], Modes: cal.Modes[risk.StepKey{Episode: q.Episode, Step: q.Step}], Q: q})
			}
		}
	}
	im, err := risk.Impact(s.Q, sc, items, nil)
	if err != nil {
		t.Fatal(err)
	}
	pol := risk.Policy(cal, 1, im.Mean())
	setup := &Setup{P: p, Q: s.Q, Scorer: sc, Episodes: s.Episodes, Questions: qs, Batch: 3}
	for _, fam := range Families {
		pts, err := setup.Sweep(fam, pol, cal.ErrorRate(), 1, 0.01, 2)
		if err != nil {
			t.Fatal(err)
		}
		// The first point (highest rate) keeps everything: no distortion.
		if pts[0].Distortion != 0 || pts[0].Kept != 1 {
			t.Fatalf("%s: the top point %+v is not lossless", fam, pts[0])
		}
		// The rate falls as fewer coordinates are kept.
		last := pts[len(pts)-1]
		if !(last.Rate < pts[0].Rate) || !(last.Kept < 1) {
			t.Fatalf("%s: the grid never omits anything: %+v", fam, last)
		}
	}
	if _, err := setup.Sweep("oracle", pol, 0, 1, 0.01, 0); err == nil {
		t.Fatal("an unknown family was accepted")
	}
}

// TestGroupDamage: a reader that looks at slot 0 alone is moved only when
// slot 0 is omitted; omitting any other slot leaves every answer exactly as
// it was (kept codes are sent true, whatever the history).
func TestGroupDamage(t *testing.T) {
	s, err := fixture.Get()
	if err != nil {
		t.Fatal(err)
	}
	_, p, err := fixture.Bundle(1, model.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	dim := s.Q.Shape().Dim
	rng := rand.New(rand.NewPCG(5, 5))
	sc := &linearScorer{w: make([]float32, s.Q.Shape().StateLen())}
	for i := range dim { // slot 0 only
		sc.w[i] = float32(rng.NormFloat64() / 8)
	}
	var qs []*trajectory.Question
	for i := range s.Questions {
		qs = append(qs, &s.Questions[i])
	}
	groups, err := risk.SlotGroups(p.Config().Slots*p.Config().Subspaces, p.Config().Subspaces)
	if err != nil {
		t.Fatal(err)
	}
	setup := &Setup{P: p, Q: s.Q, Scorer: sc, Episodes: s.Episodes, Questions: qs, Batch: 4}
	pts, err := setup.GroupDamage(groups[:4])
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 4 {
		t.Fatalf("%d points for 4 groups", len(pts))
	}
	want := 1 - 1/float64(len(groups))
	for g, pt := range pts {
		if pt.Param != float64(g) || pt.Family != "group" {
			t.Fatalf("point %d is %+v", g, pt)
		}
		if math.Abs(pt.Kept-want) > 1e-12 {
			t.Fatalf("group %d kept %.6f, want %.6f", g, pt.Kept, want)
		}
		if g == 0 {
			if !(pt.AbsChange > 0) || pt.AbsChange < math.Abs(pt.Distortion) {
				t.Fatalf("omitting the slot the reader reads: %+v", pt)
			}
		} else if pt.AbsChange != 0 || pt.Distortion != 0 {
			t.Fatalf("omitting slot %d moved a reader of slot 0: %+v", g, pt)
		}
	}
	if _, err := setup.GroupDamage([][]int{{-1}}); err == nil {
		t.Fatal("a coordinate out of range was accepted")
	}
}
