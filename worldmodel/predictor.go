package worldmodel

import (
	"fmt"

	"github.com/memowm/memowm/entropy"
)

// Prediction is what the coder needs for one history's next state, in
// integers only: for every coordinate j (= s*G + g) an integer frequency
// table, its mode and its entropy. Writer and decoder get the same bits from
// any backend that implements the same profile.
type Prediction struct {
	// Freq is (J, C): coordinate j's table is Freq[j*C : (j+1)*C], every entry
	// >= 1, summing to exactly 1 << Precision (entropy.QuantizeProbsTo).
	Freq []uint32
	// Mode is (J): the most frequent codeword of each table, the lowest on
	// ties (entropy.Mode): the fill value z^.
	Mode []uint8
	// Entropy is (J): each table's entropy in Q16 bits (entropy.EntropyQ16).
	Entropy []uint32
}

// Table returns coordinate j's frequency table (aliasing p.Freq).
func (p *Prediction) Table(j int) []uint32 {
	C := len(p.Freq) / len(p.Mode)
	return p.Freq[j*C : (j+1)*C]
}

// Predictor is the world model as the codec sees it: histories in, integer
// tables out. CPU (profile f32) and Int8CPU (profile int8) are the reference
// backends; another backend (CUDA) must give identical Predictions for the
// same Profile, or refuse it.
//
// A call takes a batch: the codec gives one history per episode that has a
// step to code, so a file of many episodes fills a GPU's lanes with one call
// per step. The int8 profile is the one a GPU reproduces bit for bit: its
// sums are integers, exact in any order.
type Predictor interface {
	// Config is the model's configuration (coordinates, codewords, window).
	Config() Config
	// Profile names the inference profile ("f32" or "int8").
	Profile() string
	// Precision is the log2 of every table's total.
	Precision() uint
	// Predict writes one Prediction per history into dst (resliced and
	// reused, reallocated if short) and returns it. Histories are validated
	// first; errors wrap ErrHistory, ErrCode or ErrAction and name the
	// history. The result does not depend on batch composition or threads.
	Predict(dst []Prediction, hs []History) ([]Prediction, error)
}

var _ Predictor = (*CPU)(nil)

// Config returns the model's configuration.
func (r *CPU) Config() Config { return r.m.cfg }

// Profile returns ProfileF32.
func (r *CPU) Profile() string { return ProfileF32 }

// Precision returns the table precision (WithPrecision; default 24).
func (r *CPU) Precision() uint { return r.prec }

// Predict implements Predictor: Forward, then for every coordinate the
// probabilities of Output.ProbsTo through entropy.QuantizeProbsTo, Mode and
// EntropyQ16.
func (r *CPU) Predict(dst []Prediction, hs []History) ([]Prediction, error) {
	outs, err := r.Forward(make([]Output, len(hs)), hs)
	if err != nil {
		return dst, err
	}
	c := &r.m.cfg
	J, C := c.Coords(), c.Codewords
	dst = sizePredictions(dst, len(hs), J, C)
	errs := make([]error, len(hs)*r.threads)
	r.parallel(len(hs)*r.threads, func(_, t int) {
		b, part := t/r.threads, t%r.threads
		pr := &dst[b]
		// Parts split the coordinates of one history.
		lo, hi := part*J/r.threads, (part+1)*J/r.threads
		var probs []float32
		for j := lo; j < hi; j++ {
			probs = outs[b].ProbsTo(probs, j)
			if _, err := entropy.QuantizeProbsTo(pr.Freq[j*C:j*C+C:j*C+C], probs, r.prec); err != nil {
				errs[t] = fmt.Errorf("worldmodel: history %d coordinate %d: %w", b, j, err)
				return
			}
			f := pr.Freq[j*C : j*C+C]
			pr.Mode[j] = uint8(entropy.Mode(f))
			pr.Entropy[j] = entropy.EntropyQ16(f)
		}
	})
	for _, e := range errs {
		if e != nil {
			return dst, e
		}
	}
	return dst, nil
}

// sizePredictions reslices dst to n Predictions of J coordinates and C
// codewords, reusing their arrays (grown when short).
func sizePredictions(dst []Prediction, n, J, C int) []Prediction {
	if cap(dst) < n {
		dst = append(dst[:cap(dst)], make([]Prediction, n-cap(dst))...)
	}
	dst = dst[:n]
	for b := range dst {
		pr := &dst[b]
		pr.Freq, pr.Mode, pr.Entropy = grow(pr.Freq, J*C), grow(pr.Mode, J), grow(pr.Entropy, J)
	}
	return dst
}
