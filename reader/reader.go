package reader

import (
	"fmt"
	"math"
	"sort"

	"github.com/memowm/memowm/trajectory"
)

// Reader scores answers: the answer loss l(q, y; Z) = -log2 P_R(y | q, Z) of
// a question's reference answer y = q.Answer given the decoded state Z of the
// observation it asks about (q.Step). A Reader is fixed: the same inputs give
// the same bits.
type Reader interface {
	// Name identifies the reader (for a probe, a checksum of its parameters),
	// so that statistics measured with one reader are not mixed with another's.
	Name() string
	// Shape is the state geometry the reader reads: Slots x Dim values.
	Shape() (slots, dim int)
	// Bits sets dst[i] to the answer bits of qs[i] read from states[i]
	// (Slots*Dim values, slot-major), for every i < len(qs). It writes into
	// dst[:len(qs)], growing dst when its capacity is short, and returns it.
	// Consecutive entries may share one *Question; readers use that to
	// prepare the question once. The error is nil when every pair was scored.
	Bits(dst []float64, states [][]float32, qs []*trajectory.Question) ([]float64, error)
	// BitsEdits sets dst[k] to the answer bits of q read from base with slot
	// edits[k].Slot replaced by edits[k].Values (Dim values), for every k.
	// It equals Bits on the edited states; it is the batched form of the
	// single-coordinate counterfactual (one state, one question, many edits).
	BitsEdits(dst []float64, base []float32, q *trajectory.Question, edits []SlotEdit) ([]float64, error)
}

// SlotEdit replaces one slot of a state: the Dim values of slot Slot.
type SlotEdit struct {
	Slot   int
	Values []float32
}

// Predictor is a Reader that can also name its most likely choice, which
// Evaluate uses to measure accuracy.
type Predictor interface {
	Reader
	// Predict sets dst[i] to the index in qs[i].Choices of the reader's most
	// likely answer (the lowest index on ties), like Bits.
	Predict(dst []int, states [][]float32, qs []*trajectory.Question) ([]int, error)
}

// answerIndex returns the index of q.Answer among q.Choices.
func answerIndex(q *trajectory.Question) (int, error) {
	if q == nil {
		return 0, fmt.Errorf("%w: nil question", ErrQuestion)
	}
	if len(q.Choices) == 0 {
		return 0, fmt.Errorf("%w: episode %d step %d: no choices", ErrQuestion, q.Episode, q.Step)
	}
	for i, c := range q.Choices {
		if c == q.Answer {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%w: episode %d step %d: answer %q is not among its %d choices",
		ErrQuestion, q.Episode, q.Step, q.Answer, len(q.Choices))
}

// checkState reports a state of the wrong length or with a non-finite value.
func checkState(x []float32, slots, dim int, what string) error {
	if len(x) != slots*dim {
		return fmt.Errorf("%w: %s has %d values, want %d x %d = %d", ErrShape, what, len(x), slots, dim, slots*dim)
	}
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("%w: %s: value %v at slot %d, channel %d", ErrShape, what, v, i/dim, i%dim)
		}
	}
	return nil
}

// checkEdit reports an edit out of range.
func checkEdit(e SlotEdit, k, slots, dim int) error {
	if e.Slot < 0 || e.Slot >= slots {
		return fmt.Errorf("%w: edit %d: slot %d outside 0..%d", ErrShape, k, e.Slot, slots-1)
	}
	return checkState(e.Values, 1, dim, fmt.Sprintf("edit %d", k))
}

func grow[T any](dst []T, n int) []T {
	if cap(dst) < n {
		return make([]T, n)
	}
	return dst[:n]
}

// KindStats measures a reader on the questions of one kind.
type KindStats struct {
	Kind string
	N    int
	// Correct counts questions whose predicted choice is the answer; it and
	// Accuracy are -1 (NaN) when the reader is not a Predictor.
	Correct  int
	Accuracy float64
	// MeanBits is the mean answer loss in bits.
	MeanBits float64
	// ChanceAccuracy and ChanceBits are a uniform guess over the choices:
	// mean 1/len(Choices) and mean log2 len(Choices).
	ChanceAccuracy, ChanceBits float64
}

// Evaluation is a reader's accuracy and answer bits, overall and per
// question kind (sorted by kind).
type Evaluation struct {
	All   KindStats
	Kinds []KindStats
}

// Evaluate reads every question from its state (states[i] for qs[i]) and
// measures accuracy (when r is a Predictor) and mean answer bits.
func Evaluate(r Reader, states [][]float32, qs []*trajectory.Question) (Evaluation, error) {
	if len(states) != len(qs) {
		return Evaluation{}, fmt.Errorf("%w: %d states for %d questions", ErrShape, len(states), len(qs))
	}
	bits, err := r.Bits(nil, states, qs)
	if err != nil {
		return Evaluation{}, err
	}
	var pred []int
	p, isPred := r.(Predictor)
	if isPred {
		if pred, err = p.Predict(nil, states, qs); err != nil {
			return Evaluation{}, err
		}
	}
	byKind := map[string]*KindStats{}
	all := &KindStats{Kind: "all"}
	for i, q := range qs {
		ks := byKind[q.Kind]
		if ks == nil {
			ks = &KindStats{Kind: q.Kind}
			byKind[q.Kind] = ks
		}
		ans, _ := answerIndex(q) // Bits checked it
		for _, s := range []*KindStats{ks, all} {
			s.N++
			s.MeanBits += bits[i]
			s.ChanceAccuracy += 1 / float64(len(q.Choices))
			s.ChanceBits += math.Log2(float64(len(q.Choices)))
			if isPred && pred[i] == ans {
				s.Correct++
			}
		}
	}
	finish := func(s *KindStats) KindStats {
		n := float64(max(s.N, 1))
		s.MeanBits /= n
		s.ChanceAccuracy /= n
		s.ChanceBits /= n
		s.Accuracy = float64(s.Correct) / n
		if !isPred {
			s.Correct, s.Accuracy = -1, math.NaN()
		}
		return *s
	}
	ev := Evaluation{All: finish(all)}
	for _, s := range byKind {
		ev.Kinds = append(ev.Kinds, finish(s))
	}
	sort.Slice(ev.Kinds, func(a, b int) bool { return ev.Kinds[a].Kind < ev.Kinds[b].Kind })
	return ev, nil
}
