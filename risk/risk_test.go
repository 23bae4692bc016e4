package risk

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memowm/memowm/internal/fixture"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/reader"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// linearScorer is a reader stand-in for tests: the answer costs
// softplus(<w, state>) bits, a smooth, deterministic function of the state.
type linearScorer struct{ w []float32 }

func newLinearScorer(n int) *linearScorer {
	rng := rand.New(rand.NewPCG(9, 9))
	w := make([]float32, n)
	for i := range w {
		w[i] = float32(rng.NormFloat64() / 64)
	}
	return &linearScorer{w: w}
}

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

func setup(t *testing.T) (*fixture.Set, worldmodel.Predictor) {
	t.Helper()
	s, err := fixture.Get()
	if err != nil {
		t.Fatal(err)
	}
	_, p, err := fixture.Bundle(1, model.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

func TestCollect(t *testing.T) {
	s, p := setup(t)
	keep := map[StepKey]bool{{s.Episodes[1].ID, 3}: true}
	c, err := Collect(p, s.Episodes, DefaultBinQ16, keep, 4)
	if err != nil {
		t.Fatal(err)
	}
	// Every coordinate of every step t >= 1 is counted once.
	var steps uint64
	for _, ep := range s.Episodes {
		steps += uint64(len(ep.Codes) - 1)
	}
	var n, e uint64
	for b := range c.BinN {
		n += c.BinN[b]
		e += c.BinErr[b]
	}
	if n != steps*1024 || c.CoordN[7] != steps {
		t.Fatalf("%d predictions counted, want %d", n, steps*1024)
	}
	// The kept modes are the predictor's, and errors match them.
	ep := s.Episodes[1]
	var h worldmodel.History
	for k := 0; k < 3; k++ {
		h = append(h, worldmodel.Step{Codes: ep.Codes[k], Action: ep.Actions[k]})
	}
	pr, err := p.Predict(nil, []worldmodel.History{h})
	if err != nil {
		t.Fatal(err)
	}
	got := c.Modes[StepKey{ep.ID, 3}]
	for j := range got {
		if got[j] != pr[0].Mode[j] {
			t.Fatalf("mode of coordinate %d: %d, predictor %d", j, got[j], pr[0].Mode[j])
		}
	}
	if len(c.Modes) != 1 {
		t.Fatalf("%d steps kept, want 1", len(c.Modes))
	}
	// Batching does not change the counts.
	c1, _ := Collect(p, s.Episodes, DefaultBinQ16, nil, 1)
	for b := range c.BinN {
		if c1.BinN[b] != c.BinN[b] || c1.BinErr[b] != c.BinErr[b] {
			t.Fatal("batch size changed the counts")
		}
	}
	// Lookup: rates in Q16, bins below the minimum count empty.
	rates, marginal := c.Lookup(50)
	for b, r := range rates {
		switch {
		case c.BinN[b] < 50 && r != -1:
			t.Fatalf("bin %d with %d predictions has rate %d", b, c.BinN[b], r)
		case c.BinN[b] >= 50 && math.Abs(float64(r)-float64(c.BinErr[b])*65536/float64(c.BinN[b])) > 0.5:
			t.Fatalf("bin %d rate %d", b, r)
		}
	}
	if want := float64(c.CoordErr[5]) * 65536 / float64(c.CoordN[5]); math.Abs(float64(marginal[5])-want) > 0.5 {
		t.Fatalf("marginal %d, want %g", marginal[5], want)
	}
	if r := c.ErrorRate(); !(r > 0 && r < 1) || e == 0 {
		t.Fatalf("error rate %g", r)
	}
}

func TestImpact(t *testing.T) {
	s, p := setup(t)
	ep := s.Episodes[2]
	keep := map[StepKey]bool{{ep.ID, 4}: true}
	c, err := Collect(p, []*trajectory.Episode{ep}, DefaultBinQ16, keep, 1)
	if err != nil {
		t.Fatal(err)
	}
	q := &trajectory.Question{Episode: ep.ID, Step: 4, Kind: "page"}
	modes := c.Modes[StepKey{ep.ID, 4}]
	sc := newLinearScorer(s.Q.Shape().StateLen())
	im, err := Impact(s.Q, sc, []Item{{Codes: ep.Codes[4], Modes: modes, Q: q}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := s.Q.Decode(ep.Codes[4])
	bb, _ := sc.Bits(nil, [][]float32{base}, []*trajectory.Question{q})
	errs := 0
	for j := range modes {
		if modes[j] == ep.Codes[4][j] {
			// The counterfactual of a coordinate whose mode is right is 0.
			if im.NErr[j] != 0 || im.Sum[j] != 0 {
				t.Fatalf("coordinate %d: right mode counted", j)
			}
			continue
		}
		errs++
		// The change equals the reader's bits on a fully decoded state.
		z := append([]uint8(nil), ep.Codes[4]...)
		z[j] = modes[j]
		x, _ := s.Q.Decode(z)
		b, _ := sc.Bits(nil, [][]float32{x}, []*trajectory.Question{q})
		if im.NErr[j] != 1 || math.Abs(im.Sum[j]-(b[0]-bb[0])) > 1e-4 {
			t.Fatalf("coordinate %d: impact %g, full decode %g", j, im.Sum[j], b[0]-bb[0])
		}
	}
	if errs == 0 {
		t.Fatal("the random model made no errors; the test needs some")
	}
	v := im.Mean()
	pol := Policy(c, 1, v)
	if err := pol.Validate(); err != nil {
		t.Fatal(err)
	}
	for j, x := range v {
		want := uint64(math.Round(max(x, 0) * (1 << 32)))
		if pol.Impact[j] != want {
			t.Fatalf("impact %d in Q32: %d, want %d", j, pol.Impact[j], want)
		}
	}
	// lambda = 0 keeps everything.
	for j := range v {
		if !pol.Keep(j, 1<<17) {
			t.Fatal("lambda 0 omitted a coordinate")
		}
	}
}

// editScorer is linearScorer with the edit interface, built from Bits.
type editScorer struct{ *linearScorer }

func (e editScorer) BitsEdits(dst []float64, base []float32, q *trajectory.Question, edits []reader.SlotEdit) ([]float64, error) {
	var states [][]float32
	var qs []*trajectory.Question
	for _, ed := range edits {
		s := append([]float32(nil), base...)
		copy(s[ed.Slot*len(ed.Values):], ed.Values)
		states, qs = append(states, s), append(qs, q)
	}
	return e.Bits(dst, states, qs)
}

func TestImpactEditsMatchStates(t *testing.T) {
	s, p := setup(t)
	keep := map[StepKey]bool{}
	for _, ep := range s.Episodes {
		keep[StepKey{ep.ID, 2}] = true
	}
	c, err := Collect(p, s.Episodes, DefaultBinQ16, keep, 8)
	if err != nil {
		t.Fatal(err)
	}
	var items []Item
	for _, ep := range s.Episodes {
		items = append(items, Item{Codes: ep.Codes[2], Modes: c.Modes[StepKey{ep.ID, 2}], Q: &trajectory.Question{Episode: ep.ID, Step: 2}})
	}
	ls := newLinearScorer(s.Q.Shape().StateLen())
	a, err := Impact(s.Q, ls, items, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Impact(s.Q, editScorer{ls}, items, nil)
	if err != nil {
		t.Fatal(err)
	}
	for j := range a.Sum {
		if a.NErr[j] != b.NErr[j] || a.Sum[j] != b.Sum[j] {
			t.Fatalf("coordinate %d: states %g/%d, edits %g/%d", j, a.Sum[j], a.NErr[j], b.Sum[j], b.NErr[j])
		}
	}
}

func TestShrunk(t *testing.T) {
	im := &Impacts{Sum: []float64{0, 3, 1}, NErr: []int{0, 3, 1}}
	// Vbar = 4/4 = 1.
	want := []float64{1, 1, 1}
	for j, v := range im.Shrunk(1) {
		if math.Abs(v-want[j]) > 1e-12 {
			t.Fatalf("Shrunk(1)[%d] = %g, want %g", j, v, want[j])
		}
	}
	im = &Impacts{Sum: []float64{0, 0, 8}, NErr: []int{0, 3, 1}}
	// Vbar = 2: (0+2)/1, (0+2)/4, (8+2)/2.
	want = []float64{2, 0.5, 5}
	for j, v := range im.Shrunk(1) {
		if math.Abs(v-want[j]) > 1e-12 {
			t.Fatalf("Shrunk(1)[%d] = %g, want %g", j, v, want[j])
		}
	}
	if m := im.Shrunk(0); m[0] != 0 || m[1] != 0 || m[2] != 8 {
		t.Fatalf("Shrunk(0) %v is not Mean", m)
	}
}

func TestSetDamage(t *testing.T) {
	s, p := setup(t)
	ep := s.Episodes[3]
	keep := map[StepKey]bool{{ep.ID, 5}: true}
	c, err := Collect(p, []*trajectory.Episode{ep}, DefaultBinQ16, keep, 1)
	if err != nil {
		t.Fatal(err)
	}
	it := Item{Codes: ep.Codes[5], Modes: c.Modes[StepKey{ep.ID, 5}], Q: &trajectory.Question{Episode: ep.ID, Step: 5}}
	sc := newLinearScorer(s.Q.Shape().StateLen())
	// The empty set does no damage; a one-coordinate set equals its impact.
	if d, err := SetDamage(s.Q, sc, []Item{it}, nil); err != nil || d != 0 {
		t.Fatalf("empty set: %g %v", d, err)
	}
	im, _ := Impact(s.Q, sc, []Item{it}, nil)
	for j := range it.Codes {
		if it.Modes[j] != it.Codes[j] {
			d, _ := SetDamage(s.Q, sc, []Item{it}, []int{j})
			if math.Abs(d-im.Sum[j]) > 1e-9 {
				t.Fatalf("coordinate %d: set damage %g, impact %g", j, d, im.Sum[j])
			}
			break
		}
	}
}

func TestAbs(t *testing.T) {
	im := &Impacts{Sum: []float64{-2, 1}, SumAbs: []float64{4, 1}, NErr: []int{2, 1}}
	a := im.Abs().Mean()
	if a[0] != 2 || a[1] != 1 {
		t.Fatalf("Abs().Mean() = %v", a)
	}
	if m := im.Mean(); m[0] != -1 {
		t.Fatalf("Mean changed: %v", m)
	}
}

func TestSlotGroups(t *testing.T) {
	g, err := SlotGroups(12, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(g) != 3 || g[1][0] != 4 || g[2][3] != 11 {
		t.Fatalf("groups %v", g)
	}
	for _, bad := range [][2]int{{12, 5}, {12, 0}, {0, 4}} {
		if _, err := SlotGroups(bad[0], bad[1]); err == nil {
			t.Fatalf("SlotGroups(%d, %d) accepted", bad[0], bad[1])
		}
	}
}

func TestGroupImpacts(t *testing.T) {
	groups := [][]int{{0, 1}, {2, 3}, {4, 5}}
	errRate := []float64{0.1, 0.3, 0.5, 0.5, 0, 0}
	v, err := GroupImpacts([]float64{0.8, -0.2, 0.6}, groups, errRate)
	if err != nil {
		t.Fatal(err)
	}
	// 0.8 bits over 0.4 expected wrong modes; a negative damage clamps to
	// 0; a group never wrong spreads its damage evenly.
	want := []float64{2, 2, 0, 0, 0.3, 0.3}
	for j := range want {
		if math.Abs(v[j]-want[j]) > 1e-12 {
			t.Fatalf("V = %v, want %v", v, want)
		}
	}
	// Expected omission risk of a group, sum of err * V, is its damage.
	if r := errRate[0]*v[0] + errRate[1]*v[1]; math.Abs(r-0.8) > 1e-12 {
		t.Fatalf("group 0 risk %g, want its damage 0.8", r)
	}
	for _, c := range []struct {
		d []float64
		g [][]int
	}{
		{[]float64{1}, groups},
		{[]float64{1, 1}, [][]int{{0}, {0}}},
		{[]float64{1}, [][]int{{6}}},
		{[]float64{1}, [][]int{{}}},
	} {
		if _, err := GroupImpacts(c.d, c.g, errRate); err == nil {
			t.Fatalf("GroupImpacts(%v, %v) accepted", c.d, c.g)
		}
	}
}

func TestFloor(t *testing.T) {
	v := []float64{0, 0, 1, 3}
	n, level := Floor(v, 0.5) // mean 1, level 0.5
	if n != 2 || level != 0.5 || v[0] != 0.5 || v[1] != 0.5 || v[2] != 1 || v[3] != 3 {
		t.Fatalf("Floor: raised %d to %v: %v", n, level, v)
	}
	w := []float64{0, 2}
	if n, _ := Floor(w, 0); n != 0 || w[0] != 0 {
		t.Fatalf("floor 0 changed %v", w)
	}
	if n, _ := Floor(nil, 1); n != 0 {
		t.Fatal("empty")
	}
}
