package risk

import (
	"fmt"
	"math"

	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/reader"
	"github.com/memowm/memowm/trajectory"
)

// Scorer is the reader as task impact needs it: bits of each question's
// reference answer given the decoded state of its observation.
type Scorer interface {
	Bits(dst []float64, states [][]float32, qs []*trajectory.Question) ([]float64, error)
}

// EditScorer is a Scorer that scores one-slot edits of one base state under
// one question faster than whole states (reader.Probe is one). Its results
// must equal Bits of the edited states.
type EditScorer interface {
	Scorer
	BitsEdits(dst []float64, base []float32, q *trajectory.Question, edits []reader.SlotEdit) ([]float64, error)
}

// Item is one complete state with a question about it and the reference
// prediction's modes for it.
type Item struct {
	Codes []uint8 // the true codes of the question's observation
	Modes []uint8 // the reference prediction's mode per coordinate
	Q     *trajectory.Question
}

// Impacts are the summed counterfactual changes per coordinate.
type Impacts struct {
	Sum    []float64 // sum over errors of the change in answer bits
	SumAbs []float64 // sum over errors of its magnitude
	NErr   []int     // errors per coordinate
}

// Abs returns the impacts with every change replaced by its magnitude: the
// mean size of the reader's reaction, whatever its sign.
func (im *Impacts) Abs() *Impacts {
	return &Impacts{Sum: im.SumAbs, SumAbs: im.SumAbs, NErr: im.NErr}
}

// Floor raises every v[j] below f times the mean of v (taken before any is
// raised, in index order) to that level, in place, and returns how many it
// raised and the level (none for f <= 0). Closed-loop impacts give V_j = 0
// to every coordinate whose fact never changed in the calibration episodes,
// and the rule never keeps a coordinate with V_j = 0, however cheap; a floor
// keeps such coordinates where their entropy is low.
func Floor(v []float64, f float64) (raised int, level float64) {
	if f <= 0 || len(v) == 0 {
		return 0, 0
	}
	m := 0.0
	for _, x := range v {
		m += x
	}
	level = f * m / float64(len(v))
	for j, x := range v {
		if x < level {
			v[j], raised = level, raised+1
		}
	}
	return raised, level
}

// Mean is V_j = Sum_j / NErr_j (0 for a coordinate without errors).
func (im *Impacts) Mean() []float64 {
	v := make([]float64, len(im.Sum))
	for j, s := range im.Sum {
		if im.NErr[j] > 0 {
			v[j] = s / float64(im.NErr[j])
		}
	}
	return v
}

// Shrunk is V_j shrunk towards the mean impact of all errors, with n0
// pseudo-errors: (Sum_j + n0 * Vbar) / (NErr_j + n0), Vbar = sum of Sum /
// sum of NErr. With n0 = 0 it is Mean. Single-coordinate counterfactuals
// read by a confident reader are often exactly 0 (the answer does not move
// for one coordinate), yet omitting many such coordinates together does
// move it; a few pseudo-errors keep those coordinates ordered by their
// error rate instead of all tying at 0 risk.
func (im *Impacts) Shrunk(n0 float64) []float64 {
	var s float64
	var n int
	for j := range im.Sum {
		s += im.Sum[j]
		n += im.NErr[j]
	}
	vbar := 0.0
	if n > 0 {
		vbar = s / float64(n)
	}
	v := make([]float64, len(im.Sum))
	for j := range v {
		if d := float64(im.NErr[j]) + n0; d > 0 {
			v[j] = (im.Sum[j] + n0*vbar) / d
		}
	}
	return v
}

// Impact measures single-coordinate counterfactuals: for every item, the
// reader's bits with the complete state and with each wrongly predicted
// coordinate replaced by its mode (decoded through q, one slot changed).
// Coordinates whose mode is right are skipped: their change is 0 by
// definition. progress, if not nil, is called after each item.
func Impact(q *opq.Quantizer, sc Scorer, items []Item, progress func(done, total int)) (*Impacts, error) {
	J := q.Shape().Codes
	im := &Impacts{Sum: make([]float64, J), SumAbs: make([]float64, J), NErr: make([]int, J)}
	var states [][]float32
	var qs []*trajectory.Question
	var edits []reader.SlotEdit
	var bits []float64
	for n, it := range items {
		if len(it.Codes) != J || len(it.Modes) != J {
			return nil, fmt.Errorf("risk: item %d has %d codes and %d modes, want %d", n, len(it.Codes), len(it.Modes), J)
		}
		base, err := q.Decode(it.Codes)
		if err != nil {
			return nil, fmt.Errorf("risk: item %d: %w", n, err)
		}
		var errs []int
		for j := 0; j < J; j++ {
			if it.Modes[j] != it.Codes[j] {
				errs = append(errs, j)
			}
		}
		if es, ok := sc.(EditScorer); ok {
			bits, err = editBits(es, q, bits, base, it, errs, &edits)
		} else {
			bits, err = stateBits(sc, q, bits, base, it, errs, &states, &qs)
		}
		if err != nil {
			return nil, fmt.Errorf("risk: item %d: %w", n, err)
		}
		for k, j := range errs {
			d := bits[k+1] - bits[0]
			if math.IsNaN(d) || math.IsInf(d, 0) {
				return nil, fmt.Errorf("risk: item %d coordinate %d: the reader returned %g bits", n, j, bits[k+1])
			}
			im.Sum[j] += d
			im.SumAbs[j] += math.Abs(d)
			im.NErr[j]++
		}
		if progress != nil {
			progress(n+1, len(items))
		}
	}
	return im, nil
}

// stateBits scores the base state and every error's counterfactual state:
// bits[0] is the base, bits[k+1] error k's.
func stateBits(sc Scorer, q *opq.Quantizer, bits []float64, base []float32, it Item, errs []int, states *[][]float32, qs *[]*trajectory.Question) ([]float64, error) {
	need := len(errs) + 1
	for len(*states) < need {
		*states = append(*states, make([]float32, len(base)))
	}
	st := (*states)[:need]
	*qs = (*qs)[:0]
	copy(st[0], base)
	*qs = append(*qs, it.Q)
	for k, j := range errs {
		copy(st[k+1], base)
		q.AddCoordinateDelta(st[k+1], j, it.Codes[j], it.Modes[j])
		*qs = append(*qs, it.Q)
	}
	return sc.Bits(bits, st, *qs)
}

// editBits is stateBits through one-slot edits.
func editBits(es EditScorer, q *opq.Quantizer, bits []float64, base []float32, it Item, errs []int, edits *[]reader.SlotEdit) ([]float64, error) {
	d, sub := q.Shape().Dim, q.Subspaces()
	*edits = (*edits)[:0]
	// Edit 0 leaves slot 0 as it is: the base state's bits.
	*edits = append(*edits, reader.SlotEdit{Slot: 0, Values: base[:d]})
	for _, j := range errs {
		s := j / sub
		v := append([]float32(nil), base[s*d:(s+1)*d]...)
		q.AddSlotDelta(v, j, it.Codes[j], it.Modes[j])
		*edits = append(*edits, reader.SlotEdit{Slot: s, Values: v})
	}
	return es.BitsEdits(bits, base, it.Q, *edits)
}

// Policy freezes an error lookup and impacts into a risk policy with lambda
// 0 (lossless until calibration sets lambda). Impacts below 0 clamp to 0;
// they are stored in Q32 bits.
func Policy(c *Calibration, minCount uint64, v []float64) model.Policy {
	binRate, marginal := c.Lookup(minCount)
	impact := make([]uint64, len(v))
	for j, x := range v {
		impact[j] = uint64(math.Round(min(max(x, 0), 1<<30) * (1 << 32)))
	}
	return model.Policy{Kind: model.Risk, BinQ16: c.BinQ16, BinRate: binRate, Marginal: marginal, Impact: impact}
}

// SetDamage is the mean, over items, of the reader's extra answer bits when
// every coordinate in set whose mode is wrong takes its mode at once (the
// others stay true): the damage of omitting the whole set.
func SetDamage(q *opq.Quantizer, sc Scorer, items []Item, set []int) (float64, error) {
	var base, mod [][]float32
	var qs []*trajectory.Question
	for n, it := range items {
		x, err := q.Decode(it.Codes)
		if err != nil {
			return 0, fmt.Errorf("risk: item %d: %w", n, err)
		}
		y := append([]float32(nil), x...)
		for _, j := range set {
			if it.Modes[j] != it.Codes[j] {
				q.AddCoordinateDelta(y, j, it.Codes[j], it.Modes[j])
			}
		}
		base, mod, qs = append(base, x), append(mod, y), append(qs, it.Q)
	}
	if len(items) == 0 {
		return 0, fmt.Errorf("risk: no items")
	}
	a, err := sc.Bits(nil, base, qs)
	if err != nil {
		return 0, fmt.Errorf("risk: %w", err)
	}
	b, err := sc.Bits(nil, mod, qs)
	if err != nil {
		return 0, fmt.Errorf("risk: %w", err)
	}
	var d float64
	for i := range a {
		d += b[i] - a[i]
	}
	return d / float64(len(a)), nil
}
