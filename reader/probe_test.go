package reader

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/memowm/memowm/trajectory"
)

func TestGradient(t *testing.T) {
	a := toyArch()
	p := randomProbe(a, 1)
	states, qs := toyData(6, 2)
	l := p.lay
	for ex := range qs {
		pq, err := p.prepare(qs[ex])
		if err != nil {
			t.Fatal(err)
		}
		sc := p.newScratch()
		loss := func() float64 {
			p.project(sc.y, sc.xs, states[ex], a.Slots, 0)
			pq, _ := p.prepare(qs[ex])
			return p.forward(sc.ac, sc.y, -1, nil, pq)
		}
		loss()
		pattern := func() (m uint64) {
			for h, z := range sc.ac.z {
				if z > 0 {
					m |= 1 << h
				}
			}
			return m
		}
		base := pattern()
		g := make([]float64, l.n)
		dy := make([]float64, a.Slots*a.Proj)
		p.backward(g, dy, sc.ac, sc.y, pq, 1)
		// Wp: dWp[d,k] = sum_s xs[s,d] dy[s,k].
		for d := 0; d < a.Dim; d++ {
			for k := 0; k < a.Proj; k++ {
				for s := 0; s < a.Slots; s++ {
					g[l.wp+d*a.Proj+k] += float64(sc.xs[s*a.Dim+d]) * dy[s*a.Proj+k]
				}
			}
		}
		checked := 0
		for i := l.trainable; i < l.n; i++ {
			if g[i] == 0 && i%7 != 0 {
				continue // most untouched buckets; still sample some zeros
			}
			const eps = 1e-3
			w0 := p.w[i]
			p.w[i] = w0 + eps
			lp := loss()
			pp := pattern()
			p.w[i] = w0 - eps
			lm := loss()
			pm := pattern()
			p.w[i] = w0
			if pp != base || pm != base {
				continue // the step crosses a relu kink: no derivative to compare
			}
			num := (lp - lm) / (float64(w0+eps) - float64(w0-eps))
			if math.Abs(num-g[i]) > 5e-4+2e-2*math.Abs(num) {
				t.Errorf("example %d, parameter %d (%s): analytic %.6g, numeric %.6g", ex, i, l.name(i), g[i], num)
			}
			checked++
		}
		if checked < 100 {
			t.Fatalf("only %d parameters checked", checked)
		}
	}
}

func (l layout) name(i int) string {
	names := []struct {
		s   string
		off int
	}{{"wp", l.wp}, {"qk", l.qk}, {"qs", l.qs}, {"qh", l.qh}, {"w1", l.w1}, {"b1", l.b1}, {"ce", l.ce}, {"cb", l.cb}}
	n := "?"
	for _, x := range names {
		if i >= x.off {
			n = x.s
		}
	}
	return n
}

func TestBatchEqualsOneByOne(t *testing.T) {
	p := randomProbe(toyArch(), 3)
	states, qs := toyData(100, 4)
	// Share one *Question between neighbours, as callers may.
	for i := 1; i < len(qs); i += 4 {
		qs[i] = qs[i-1]
		states[i] = states[i-1]
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var ref []float64
	for _, procs := range []int{1, 2, 5} {
		runtime.GOMAXPROCS(procs)
		batch := mustBits(p, states, qs)
		pred, err := p.Predict(nil, states, qs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range qs {
			one := mustBits(p, states[i:i+1], qs[i:i+1])
			if math.Float64bits(one[0]) != math.Float64bits(batch[i]) {
				t.Fatalf("GOMAXPROCS %d, question %d: batch %v, alone %v", procs, i, batch[i], one[0])
			}
			probs, err := p.Probs(nil, states[i], qs[i])
			if err != nil {
				t.Fatal(err)
			}
			ans, _ := answerIndex(qs[i])
			if got := -math.Log2(probs[ans]); math.Abs(got-batch[i]) > 1e-9 {
				t.Fatalf("question %d: Probs gives %v bits, Bits %v", i, got, batch[i])
			}
			best := 0
			for c := range probs {
				if probs[c] > probs[best] {
					best = c
				}
			}
			if pred[i] != best {
				t.Fatalf("question %d: Predict %d, argmax Probs %d", i, pred[i], best)
			}
		}
		if ref == nil {
			ref = batch
		}
		for i := range ref {
			if math.Float64bits(ref[i]) != math.Float64bits(batch[i]) {
				t.Fatalf("GOMAXPROCS %d changes question %d: %v vs %v", procs, i, batch[i], ref[i])
			}
		}
	}
}

func TestEditsEqualBits(t *testing.T) {
	a := toyArch()
	p := randomProbe(a, 5)
	states, qs := toyData(40, 6)
	base, q := states[0], qs[0]
	var edits []SlotEdit
	var edited [][]float32
	for k := 1; k < len(states); k++ {
		s := k % a.Slots
		v := states[k][s*a.Dim : (s+1)*a.Dim]
		edits = append(edits, SlotEdit{Slot: s, Values: v})
		x := append([]float32(nil), base...)
		copy(x[s*a.Dim:], v)
		edited = append(edited, x)
	}
	got, err := p.BitsEdits(nil, base, q, edits)
	if err != nil {
		t.Fatal(err)
	}
	same := make([]*trajectory.Question, len(edited))
	for i := range same {
		same[i] = q
	}
	want := mustBits(p, edited, same)
	for k := range want {
		if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
			t.Fatalf("edit %d: BitsEdits %v, Bits of the edited state %v", k, got[k], want[k])
		}
	}
	// An edit that writes the slot's own values changes nothing.
	self, err := p.BitsEdits(nil, base, q, []SlotEdit{{Slot: 2, Values: base[2*a.Dim : 3*a.Dim]}})
	if err != nil {
		t.Fatal(err)
	}
	if b := mustBits(p, states[:1], qs[:1]); self[0] != b[0] {
		t.Fatalf("identity edit: %v, unedited %v", self[0], b[0])
	}
	// dst is reused when it is large enough.
	buf := make([]float64, 0, 100)
	out, _ := p.BitsEdits(buf, base, q, edits)
	if &out[0] != &buf[:1][0] {
		t.Fatal("dst with capacity was not reused")
	}
}

func TestProbeErrors(t *testing.T) {
	a := toyArch()
	p := randomProbe(a, 7)
	states, qs := toyData(3, 8)
	nan := append([]float32(nil), states[0]...)
	nan[5] = float32(math.NaN())
	badAns := *qs[0]
	badAns.Answer = "durian"
	noChoices := *qs[0]
	noChoices.Choices = nil
	cases := []struct {
		name string
		run  func() error
		want error
	}{
		{"short state", func() error { _, err := p.Bits(nil, [][]float32{states[0][:10]}, qs[:1]); return err }, ErrShape},
		{"nan state", func() error { _, err := p.Bits(nil, [][]float32{nan}, qs[:1]); return err }, ErrShape},
		{"count mismatch", func() error { _, err := p.Bits(nil, states[:2], qs[:1]); return err }, ErrShape},
		{"answer not a choice", func() error { _, err := p.Bits(nil, states[:1], []*trajectory.Question{&badAns}); return err }, ErrQuestion},
		{"no choices", func() error { _, err := p.Bits(nil, states[:1], []*trajectory.Question{&noChoices}); return err }, ErrQuestion},
		{"nil question", func() error { _, err := p.Bits(nil, states[:1], []*trajectory.Question{nil}); return err }, ErrQuestion},
		{"edit slot", func() error {
			_, err := p.BitsEdits(nil, states[0], qs[0], []SlotEdit{{Slot: a.Slots, Values: states[0][:a.Dim]}})
			return err
		}, ErrShape},
		{"edit width", func() error {
			_, err := p.BitsEdits(nil, states[0], qs[0], []SlotEdit{{Slot: 0, Values: states[0][:3]}})
			return err
		}, ErrShape},
		{"predict shape", func() error { _, err := p.Predict(nil, [][]float32{nil}, qs[:1]); return err }, ErrShape},
		{"probs question", func() error { _, err := p.Probs(nil, states[0], &badAns); return err }, ErrQuestion},
	}
	for _, c := range cases {
		err := c.run()
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		} else if msg := err.Error(); !strings.HasPrefix(msg, "reader: ") {
			t.Errorf("%s: message %q lacks the reader: prefix", c.name, msg)
		}
	}
}

func TestUnseenChoiceGetsScore(t *testing.T) {
	p := randomProbe(toyArch(), 9)
	states, qs := toyData(1, 10)
	q := *qs[0]
	q.Choices = append([]string{"never-seen-1", "never-seen-2"}, q.Choices...)
	probs, err := p.Probs(nil, states[0], &q)
	if err != nil {
		t.Fatal(err)
	}
	s := 0.0
	for _, v := range probs {
		if !(v > 0) {
			t.Fatalf("choice probability %v", v)
		}
		s += v
	}
	if math.Abs(s-1) > 1e-12 {
		t.Fatalf("probabilities sum to %v", s)
	}
}
