package codec

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/memowm/memowm/model"
)

// recordKeeper keeps everything and records what the rule was asked.
type recordKeeper struct{ seen [][2]uint32 }

func (r *recordKeeper) Keep(j int, hQ16 uint32) bool {
	r.seen = append(r.seen, [2]uint32{uint32(j), hQ16})
	return true
}

// TestMixObserve checks that SimOptions.Observe sees exactly what a lossy
// rule reads, in the same order, on the same loop: every coordinate of
// every changing slot, with the mixed distribution's entropy; the loop
// keeps everything, so it reconstructs the truth.
func TestMixObserve(t *testing.T) {
	b, p, eps := mixFixture(t)
	nb, err := NeighboursOf(b.OPQ)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordKeeper{}
	want, err := SimulateWith(p, rec, eps, SimOptions{Mix: true, Neighbours: nb})
	if err != nil {
		t.Fatal(err)
	}
	type obs struct {
		ep, t, j int
		h        uint32
		mode     uint8
	}
	var got []obs
	st, err := SimulateWith(p, model.Policy{Kind: model.KeepAll}, eps, SimOptions{Mix: true, Neighbours: nb,
		Observe: func(ep, t, j int, h uint32, mode uint8) { got = append(got, obs{ep, t, j, h, mode}) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rec.seen) || len(got) == 0 {
		t.Fatalf("%d observations, the rule was asked %d times", len(got), len(rec.seen))
	}
	var coords, repeated uint64
	for i := range st {
		if st[i].StateBits != want[i].StateBits || !sameCodes(st[i].Recon, eps[i].Codes) {
			t.Fatalf("episode %d: the observed loop differs from the rule's", i)
		}
		coords += st[i].Coords
		repeated += st[i].Repeated
	}
	if uint64(len(got)) != coords-repeated {
		t.Fatalf("%d observations, %d coordinates outside repeated slots", len(got), coords-repeated)
	}
	var wrong int
	for k, o := range got {
		if uint32(o.j) != rec.seen[k][0] || o.h != rec.seen[k][1] {
			t.Fatalf("observation %d: coordinate %d entropy %d, the rule saw %v", k, o.j, o.h, rec.seen[k])
		}
		if o.mode != eps[o.ep].Codes[o.t][o.j] {
			wrong++
		}
		if o.h > 6<<16 {
			t.Fatalf("entropy %d above 6 bits", o.h)
		}
	}
	if wrong == 0 || wrong == len(got) {
		t.Fatalf("%d wrong modes of %d", wrong, len(got))
	}
}

// TestMixPriorChecked refuses a lossy risk policy under the prior it was
// not calibrated on, in the writer and in Simulate; lambda 0 and the
// matching prior pass.
func TestMixPriorChecked(t *testing.T) {
	b, p, eps := mixFixture(t)
	nb, err := NeighboursOf(b.OPQ)
	if err != nil {
		t.Fatal(err)
	}
	cfg := p.Config()
	J := cfg.Coords()
	risk := model.Policy{Kind: model.Risk, BinQ16: 1 << 14, BinRate: make([]int32, 25), Marginal: make([]uint32, J), Impact: make([]uint64, J), LambdaQ32: 1 << 32}
	for i := range risk.BinRate {
		risk.BinRate[i] = 1 << 15
	}
	for j := range risk.Impact {
		risk.Impact[j] = 1 << 32
	}
	dir := t.TempDir()
	for _, c := range []struct {
		prior string
		mix   bool
		want  string
	}{
		{model.PriorMix, false, "calibrated on the mixing prior's distribution"},
		{"", true, "calibrated on the world model's tables"},
		{model.PriorWM, true, "calibrated on the world model's tables"},
		{model.PriorMix, true, ""},
		{model.PriorWM, false, ""},
	} {
		pol := risk
		pol.Prior = c.prior
		for _, lambda := range []uint64{0, 1 << 32} {
			pol.LambdaQ32 = lambda
			want := c.want
			if lambda == 0 {
				want = ""
			}
			w, err := CreateWith(filepath.Join(dir, "m.mwm"), b, p, pol, Options{Mix: c.mix})
			if w != nil {
				w.Abort()
			}
			_, serr := SimulateWith(p, pol, eps[:1], SimOptions{Mix: c.mix, Neighbours: nb})
			for _, e := range []error{err, serr} {
				if (want == "") != (e == nil) || e != nil && !strings.Contains(e.Error(), want) {
					t.Fatalf("prior %q, mix %v, lambda %d: %v, want %q", c.prior, c.mix, lambda, e, want)
				}
			}
		}
	}
}
