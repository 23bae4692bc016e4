package main

import (
	"math"
	"testing"

	"github.com/memowm/memowm/worldmodel"
)

// TestCosts checks the three-way split against the predictive distribution
// written out by hand: p(c) = a [c = prev] + (1 - a) softmax(l)(c).
func TestCosts(t *testing.T) {
	o := worldmodel.Output{
		Logits: []float32{0, 1, 2, 3, 1, 1, 1, 1, -2, 0, 5, 0.5},
		Gate:   []float32{0.3, -1, 2},
		Prev:   []uint8{3, 0, 2},
	}
	y := []uint8{1, 0, 2} // coordinate 0 changed, 1 and 2 kept
	s := costs(&o, y)
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	soft := func(l []float64, c int) float64 {
		var z float64
		for _, v := range l {
			z += math.Exp(v)
		}
		return math.Exp(l[c]) / z
	}
	a0, a1, a2 := sig(0.3), sig(-1), sig(2)
	wantGate := -math.Log2(1 - a0)
	wantSoft := -math.Log2(soft([]float64{0, 1, 2, 3}, 1))
	wantKept := -math.Log2(a1+(1-a1)*0.25) - math.Log2(a2+(1-a2)*soft([]float64{-2, 0, 5, 0.5}, 2))
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"n", s.n, 1}, {"changed", s.changed, 1}, {"gate", s.gate, wantGate}, {"softmax", s.softmax, wantSoft}, {"unchanged", s.unchanged, wantKept}} {
		if math.Abs(c.got-c.want) > 1e-6 {
			t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
		}
	}
	// The parts add up to the code length under ProbsTo's distribution.
	var total float64
	for j, c := range y {
		total -= math.Log2(float64(o.ProbsTo(nil, j)[c]))
	}
	if got := s.gate + s.softmax + s.unchanged; math.Abs(got-total) > 1e-4 {
		t.Errorf("parts add to %g, ProbsTo gives %g", got, total)
	}
	// Unshifted, shiftedCosts is the same total; shifted by d, it is the
	// total with every gate logit moved by d.
	sum := make([]float64, len(gateShifts))
	shiftedCosts(sum, &o, y)
	for i, d := range gateShifts {
		b0, b1, b2 := sig(0.3+d), sig(-1+d), sig(2+d)
		want := -math.Log2((1-b0)*soft([]float64{0, 1, 2, 3}, 1)) - math.Log2(b1+(1-b1)*0.25) -
			math.Log2(b2+(1-b2)*soft([]float64{-2, 0, 5, 0.5}, 2))
		if math.Abs(sum[i]-want) > 1e-6 {
			t.Errorf("shift %g: %g bits, want %g", d, sum[i], want)
		}
		if d == 0 && math.Abs(sum[i]-(s.gate+s.softmax+s.unchanged)) > 1e-9 {
			t.Errorf("unshifted %g bits, costs gives %g", sum[i], s.gate+s.softmax+s.unchanged)
		}
	}
}
