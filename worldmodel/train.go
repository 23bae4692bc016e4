package worldmodel

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"time"
)

// TrainConfig configures training. Zero fields take the defaults that
// DefaultTrainConfig documents.
type TrainConfig struct {
	Steps       int     `json:"steps"`        // optimizer steps (required, >= 1)
	Batch       int     `json:"batch"`        // histories per step (16)
	LR          float64 `json:"lr"`           // peak learning rate (the model's Config.DefaultLR)
	MinLR       float64 `json:"min_lr"`       // learning rate at the end of the cosine (LR/10)
	Warmup      int     `json:"warmup"`       // linear warm-up steps (Steps/20, at most 1000)
	WeightDecay float64 `json:"weight_decay"` // decoupled weight decay (1e-4; < 0: none)
	Beta1       float64 `json:"beta1"`        // (0.9)
	Beta2       float64 `json:"beta2"`        // (0.999)
	Eps         float64 `json:"eps"`          // (1e-8)
	Clip        float64 `json:"clip"`         // global gradient-norm cap (1; < 0: none)
	Window      int     `json:"window"`       // states per history (the model's MaxHistory)
	NoActions   bool    `json:"no_actions"`   // ablation: every action replaced by the empty one
	NoCopy      bool    `json:"no_copy"`      // ablation: the copy gate closed (a = 0) and frozen
	Seed        uint64  `json:"seed"`         // data order and dropout masks
	// PriorSteps is the number of optimizer steps the starting weights had
	// from earlier runs (a trained model continued with a fresh optimizer
	// and schedule). It is recorded, so that the bundle says how far its
	// weights were trained in all, and changes nothing in the optimizer.
	PriorSteps int `json:"prior_steps,omitempty"`
	// PriorSeconds is the wall-clock time the earlier runs of PriorSteps
	// took, when they all recorded it (0: not known). A record, like
	// PriorSteps.
	PriorSeconds float64 `json:"prior_seconds,omitempty"`
	// Init records how the run's first weights were initialised: "" for
	// New's fan-in draw, InitScaledResidual after ScaleResidualInit. Like
	// PriorSteps it is a record (carried by checkpoints into the bundle)
	// and changes nothing in the optimizer.
	Init string `json:"init,omitempty"`
	// Threads is the number of goroutines (runtime.GOMAXPROCS(0)). The
	// result does not depend on it.
	Threads int `json:"-"`
}

// DefaultTrainConfig returns the defaults for a run of steps steps: batch 16,
// AdamW with a peak learning rate of 3e-4 (NewTrainer takes the model's
// Config.DefaultLR instead when LR is 0: 3e-3 for tiny down to 3e-4 for
// paper), warm-up over steps/20 steps (at most 1000), then a cosine to a
// tenth of the peak, weight decay 1e-4, betas 0.9 and 0.999, eps 1e-8,
// gradient-norm cap 1, the model's full window, seed 0.
func DefaultTrainConfig(steps int) TrainConfig {
	tc := TrainConfig{Steps: steps}
	tc.setDefaults(nil)
	return tc
}

func (tc *TrainConfig) setDefaults(c *Config) {
	if tc.Batch == 0 {
		tc.Batch = 16
	}
	if tc.LR == 0 {
		tc.LR = fallbackLR
		if c != nil {
			tc.LR = c.DefaultLR()
		}
	}
	if tc.MinLR == 0 {
		tc.MinLR = tc.LR / 10
	}
	if tc.Warmup == 0 {
		tc.Warmup = max(1, min(tc.Steps/20, 1000))
	}
	if tc.WeightDecay == 0 {
		tc.WeightDecay = 1e-4
	} else if tc.WeightDecay < 0 {
		tc.WeightDecay = 0
	}
	if tc.Beta1 == 0 {
		tc.Beta1 = 0.9
	}
	if tc.Beta2 == 0 {
		tc.Beta2 = 0.999
	}
	if tc.Eps == 0 {
		tc.Eps = 1e-8
	}
	if tc.Clip == 0 {
		tc.Clip = 1
	}
	if tc.Window == 0 && c != nil {
		tc.Window = c.MaxHistory
	}
	if tc.Threads == 0 {
		tc.Threads = runtime.GOMAXPROCS(0)
	}
}

func (tc *TrainConfig) validate(c *Config) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: training: %s", ErrConfig, fmt.Sprintf(format, args...))
	}
	switch {
	case tc.Steps < 1:
		return bad("steps = %d, want >= 1", tc.Steps)
	case tc.PriorSteps < 0:
		return bad("prior steps = %d, want >= 0", tc.PriorSteps)
	case !(tc.PriorSeconds >= 0 && tc.PriorSeconds < 1e12) || tc.PriorSeconds > 0 && tc.PriorSteps == 0:
		return bad("prior time %g s for %d prior steps", tc.PriorSeconds, tc.PriorSteps)
	case !KnownInit(tc.Init):
		return bad("initialisation %q is not one this build knows (%q or %q)", tc.Init, "", InitScaledResidual)
	case tc.Batch < 1 || tc.Batch > 4096:
		return bad("batch = %d is outside [1, 4096]", tc.Batch)
	case !(tc.LR > 0 && tc.LR < 1) || !(tc.MinLR >= 0 && tc.MinLR <= tc.LR):
		return bad("learning rates %g -> %g", tc.LR, tc.MinLR)
	case tc.Warmup < 1:
		return bad("warm-up = %d", tc.Warmup)
	case !(tc.Beta1 >= 0 && tc.Beta1 < 1 && tc.Beta2 >= 0 && tc.Beta2 < 1 && tc.Eps > 0):
		return bad("betas %g, %g, eps %g", tc.Beta1, tc.Beta2, tc.Eps)
	case tc.Window < 1 || tc.Window > c.MaxHistory:
		return bad("window = %d is outside [1, %d]", tc.Window, c.MaxHistory)
	case tc.Threads < 1 || tc.Threads > 1024:
		return bad("threads = %d", tc.Threads)
	}
	return nil
}

// Trainer trains a model in place on sequences of true codes (the paper
// trains on true-code histories; the codec then runs the model on
// reconstructed ones). Each step draws Batch examples in the seeded order,
// runs the training forward (with dropout) and backward, clips the gradient
// and applies AdamW. The same model, data, configuration and seed give the
// same weights bit for bit on one machine and build, for any thread count and
// across a checkpoint and resume.
//
// A Trainer is not safe for concurrent use; the model must not be used for
// inference while a step runs (make a new CPU after training: its packed
// weights are a copy).
type Trainer struct {
	m     *Model
	tc    TrainConfig
	data  Corpus
	ex    []example
	fp    uint32
	ord   order
	tape  *tape
	grad  *Params
	opt   adamW
	step  int
	froze []bool

	hs  []History
	ts  []Step
	buf []History
	wb  []windowBuf // the batch's windows, from a corpus not in memory
	err error       // the first failed read (Err)
	es  earlyStop
	// keepES: es came from a checkpoint, and the next Run continues it.
	keepES bool
	// elapsed is the wall-clock time spent in Run before the current
	// call (carried by checkpoints); runStart is when that call began.
	elapsed  time.Duration
	runStart time.Time
}

// StepStats describe one optimizer step.
type StepStats struct {
	Step     int     // steps done, after this one
	Loss     float64 // objective (bits per coordinate + validity bits per slot, batch mean)
	Bits     float64 // code bits per transition, batch mean (before the update)
	GradNorm float64 // global gradient norm before clipping
	LR       float64 // learning rate used
	Tokens   int     // history tokens (states x slots) of the batch
	FLOPs    int64   // matrix-product FLOPs of the step (3x the forward's)
}

// EvalStats are held-out figures: the teacher-forced ideal code length of
// every transition's next state (z_1..z_T of every sequence) under the model.
type EvalStats struct {
	Transitions       int
	BitsPerTransition float64 // mean over transitions of sum_j -log2 p(z_j)
	ValidBits         float64 // mean validity BCE per transition, in bits (all slots)
}

// NewTrainer returns a trainer that trains m (in place) on seqs. The error
// wraps ErrConfig, ErrHistory, ErrCode or ErrAction.
func NewTrainer(m *Model, seqs []Sequence, tc TrainConfig) (*Trainer, error) {
	return NewTrainerOn(m, Seqs(seqs), tc)
}

// NewTrainerOn returns a trainer that trains m (in place) on data, read a
// window at a time: the same data in memory or in a file give the same
// weights bit for bit. It reads data through once first, to check every
// code and action and take its fingerprint; it then holds 8 bytes per
// transition (the order of examples), besides what data holds. The error
// wraps ErrConfig, ErrHistory, ErrCode or ErrAction, or is data's.
func NewTrainerOn(m *Model, data Corpus, tc TrainConfig) (*Trainer, error) {
	c := &m.cfg
	tc.setDefaults(c)
	if err := tc.validate(c); err != nil {
		return nil, err
	}
	fp, ex, err := c.scanCorpus(data, nil)
	if err != nil {
		return nil, err
	}
	if len(ex) == 0 {
		return nil, fmt.Errorf("%w: no transitions to train on", ErrHistory)
	}
	t := &Trainer{m: m, tc: tc, data: data, ex: ex, fp: fp}
	t.ord = order{seed: tc.Seed, n: len(ex), epoch: -1}
	t.tape = newTape(m, tc.Threads)
	t.grad = newParams(c)
	if tc.NoCopy {
		// The gate closed for good: a = sigmoid(-30) ~ 1e-13, also at
		// inference, and never updated.
		t.froze = make([]bool, len(m.p.Data))
		for _, name := range []string{"copy_head/w", "copy_head/b"} {
			d, _ := m.Tensor(name)
			v := float32(0)
			if name == "copy_head/b" {
				v = -30
			}
			for i := range d {
				d[i] = v
			}
		}
		for _, tn := range m.p.Tensors {
			if tn.Name == "copy_head/w" || tn.Name == "copy_head/b" {
				for i := tn.Off; i < tn.Off+tn.Size(); i++ {
					t.froze[i] = true
				}
			}
		}
	}
	return t, nil
}

// Config returns the training configuration with its defaults filled in.
func (t *Trainer) Config() TrainConfig { return t.tc }

// Model returns the model being trained.
func (t *Trainer) Model() *Model { return t.m }

// StepsDone returns the number of optimizer steps taken.
func (t *Trainer) StepsDone() int { return t.step }

// Elapsed returns the wall-clock time this run has spent in Run so far
// (steps, evaluations and checkpoints), over every Run call and across
// checkpoints and resumes; PriorSeconds is not included.
func (t *Trainer) Elapsed() time.Duration {
	if t.runStart.IsZero() {
		return t.elapsed
	}
	return t.elapsed + time.Since(t.runStart)
}

// Examples returns the number of training examples (transitions).
func (t *Trainer) Examples() int { return len(t.ex) }

// batch fills t.hs and t.ts with step s's examples (0-based).
func (t *Trainer) batch(s int) error {
	B := t.tc.Batch
	if len(t.buf) < B {
		t.buf = make([]History, B)
		t.wb = make([]windowBuf, B)
	}
	t.hs, t.ts = t.hs[:0], t.ts[:0]
	J := t.m.cfg.Coords()
	for i := 0; i < B; i++ {
		e := t.ex[t.ord.at(s*B+i)]
		h, target, err := readWindow(t.buf[i], &t.wb[i], t.data, J, e, t.tc.Window, t.tc.NoActions)
		if err != nil {
			return err
		}
		t.buf[i] = h
		t.hs, t.ts = append(t.hs, h), append(t.ts, target)
	}
	return nil
}

// Err returns the first error reading the training data (a corpus in a
// file), after which Step does nothing; Run returns it.
func (t *Trainer) Err() error { return t.err }

// Step runs one optimizer step. When the training data cannot be read it
// changes nothing and returns zero stats; Err says why.
func (t *Trainer) Step() StepStats {
	c := &t.m.cfg
	s := t.step
	if t.err != nil {
		return StepStats{}
	}
	if err := t.batch(s); err != nil {
		t.err = fmt.Errorf("worldmodel: step %d: reading the training data: %w", s+1, err)
		return StepStats{}
	}
	tp := t.tape
	tp.forward(t.hs, true, t.tc.Seed^uint64(s+1)*0x9e3779b97f4a7c15)
	ls := tp.lossGrad(t.ts, true, t.tc.NoCopy)
	clear(t.grad.Data)
	tp.backward(t.grad)
	norm := gradNorm(t.grad.Data, t.tc.Threads)
	scale := float32(1)
	if t.tc.Clip > 0 && norm > t.tc.Clip {
		scale = float32(t.tc.Clip / norm)
	}
	if tp.engineErr != nil {
		t.err = fmt.Errorf("worldmodel: step %d: %w", s+1, tp.engineErr)
		return StepStats{}
	}
	lr := t.tc.schedule(s + 1)
	t.opt.step(t.m.p.Data, t.grad.Data, scale, s+1, lr, &t.tc, t.froze, t.tc.Threads)
	t.step++
	st := StepStats{Step: t.step, Loss: ls.loss(c), Bits: ls.codeBits / float64(ls.n), GradNorm: norm, LR: lr}
	for _, h := range t.hs {
		st.Tokens += len(h) * c.Slots
		st.FLOPs += 3 * c.FLOPs(len(h))
	}
	return st
}

// Evaluate returns the held-out figures of the current weights on seqs
// (dropout off, windows as in training). The error wraps ErrHistory, ErrCode
// or ErrAction.
func (t *Trainer) Evaluate(seqs []Sequence) (EvalStats, error) {
	return t.EvaluateOn(Seqs(seqs))
}

// EvaluateOn is Evaluate on any corpus.
func (t *Trainer) EvaluateOn(data Corpus) (EvalStats, error) {
	return evaluate(t.m, data, t.tc.Window, t.tc.NoActions, t.tc.NoCopy, t.tc.Threads)
}

// Evaluate returns m's held-out figures on seqs with windows of at most win
// states (0: MaxHistory): the teacher-forced ideal code length of every
// transition, as the lossless codec would spend it up to its integer tables.
func Evaluate(m *Model, seqs []Sequence, win int) (EvalStats, error) {
	if win == 0 {
		win = m.cfg.MaxHistory
	}
	if win < 1 || win > m.cfg.MaxHistory {
		return EvalStats{}, fmt.Errorf("%w: window %d", ErrConfig, win)
	}
	return evaluate(m, Seqs(seqs), win, false, false, runtime.GOMAXPROCS(0))
}

func evaluate(m *Model, data Corpus, win int, noActions, noCopy bool, threads int) (EvalStats, error) {
	c := &m.cfg
	_, ex, err := c.scanCorpus(data, nil)
	if err != nil {
		return EvalStats{}, err
	}
	tp := newTape(m, threads)
	const B = 16
	bufs := make([]History, B)
	wbs := make([]windowBuf, B)
	J := c.Coords()
	var st EvalStats
	var code, valid float64
	for lo := 0; lo < len(ex); lo += B {
		hi := min(lo+B, len(ex))
		hs := make([]History, 0, B)
		ts := make([]Step, 0, B)
		for i := lo; i < hi; i++ {
			h, target, err := readWindow(bufs[i-lo], &wbs[i-lo], data, J, ex[i], win, noActions)
			if err != nil {
				return EvalStats{}, err
			}
			bufs[i-lo] = h
			hs, ts = append(hs, h), append(ts, target)
		}
		tp.forward(hs, false, 0)
		ls := tp.lossGrad(ts, false, noCopy)
		code += ls.codeBits
		valid += ls.validBits
	}
	st.Transitions = len(ex)
	if len(ex) > 0 {
		st.BitsPerTransition = code / float64(len(ex))
		st.ValidBits = valid / float64(len(ex))
	}
	return st, nil
}

// Progress is what Run reports after each step.
type Progress struct {
	StepStats
	Steps   int           // steps of the whole run
	Elapsed time.Duration // since Run started
	// StepsPerSec, TokensPerSec and GFLOPS are averages over the steps since
	// Run started (evaluations and checkpoints not counted); ETA counts them.
	StepsPerSec, TokensPerSec, GFLOPS float64
	ETA                               time.Duration
	Eval                              *EvalStats // set after an evaluation
	Checkpoint                        string     // set after a checkpoint was written
	// Best and BestStep are the lowest held-out figures so far and the step
	// they were measured at (with Patience or KeepBest; nil before the
	// first).
	Best     *EvalStats
	BestStep int
	// Stopped is set on the last Progress of a run that stopped early on
	// its held-out plateau; the model then holds the weights of BestStep.
	Stopped bool
	// Start is set on the Progress Run reports before its first step, for
	// the evaluation of trained starting weights (TrainConfig.PriorSteps >
	// 0, with Patience): Eval and Best are set, StepStats is zero.
	Start bool
}

// RunConfig configures Run.
type RunConfig struct {
	Eval            Corpus         // held-out sequences (optional; Seqs for sequences in memory)
	EvalEvery       int            // evaluate every this many steps and at the end (0: only at the end)
	Checkpoint      string         // checkpoint path (optional)
	CheckpointEvery int            // write a checkpoint every this many steps and at the end (0: only at the end)
	Progress        func(Progress) // called after every step (optional)
	// Patience > 0 turns on early stopping on Eval (which it needs, with
	// EvalEvery > 0): the run keeps the weights of its lowest evaluation
	// and stops when Patience evaluations in a row fail to lower held-out
	// bits/transition by more than MinDelta (relative, e.g. 0.001 for 0.1%)
	// below the last evaluation that did; at the end the model holds the
	// lowest evaluation's weights.
	Patience int
	MinDelta float64
	// KeepBest, with Eval, keeps the weights of the lowest evaluation
	// without stopping early: the run takes all its steps and ends holding
	// the best evaluated weights (Patience > 0 implies it). A run that
	// continues trained weights (TrainConfig.PriorSteps > 0) measures them
	// first, as with Patience, so it never ends worse than it started.
	// EarlyStop reports the step kept.
	KeepBest bool
}

// keepsBest reports whether rc keeps the lowest evaluation's weights.
func (rc *RunConfig) keepsBest() bool { return rc.Patience > 0 || rc.KeepBest }

// EarlyStop reports how the last Run with Patience or KeepBest ended (or,
// before Run, what a resumed checkpoint recorded): whether it stopped before
// its steps on a plateau, the step of the best evaluation (whose weights the
// model holds once Run has ended) and that evaluation. best is -1 when there
// is none (neither Patience nor KeepBest, or no finite evaluation); it is 0
// when no evaluation of the run beat its trained starting weights
// (TrainConfig.PriorSteps > 0), which the model then holds again.
func (t *Trainer) EarlyStop() (stopped bool, best int, ev EvalStats) {
	if !t.es.has {
		return false, -1, EvalStats{}
	}
	return t.es.stopped, t.es.step, t.es.ev
}

// earlyStop is Run's early-stopping state.
type earlyStop struct {
	has  bool // an evaluation was observed
	step int  // step of the lowest evaluation
	ev   EvalStats
	w    []float32 // the weights at step
	ref  float64   // bits/transition of the last evaluation that was a gain
	bad  int       // evaluations since then
	// noRef: only the starting weights were evaluated (step 0 of a
	// continuation); patience counts from the run's first evaluation.
	noRef   bool
	stopped bool
}

// observe records an evaluation at the trainer's current step and reports
// whether the run should stop. The weights kept are the lowest
// evaluation's (or the trained starting weights', when Run measured them);
// patience counts the evaluations since the last one that was a gain of
// more than MinDelta on the gain before it, the run's first evaluation
// being the first gain.
//
// An evaluation that is not finite (a diverged run) is never kept and counts
// as no gain.
func (t *Trainer) observe(ev EvalStats, rc *RunConfig) bool {
	es := &t.es
	if b := ev.BitsPerTransition; math.IsNaN(b) || math.IsInf(b, 0) {
		if !es.has {
			return false
		}
		es.bad++
		return rc.Patience > 0 && es.bad >= rc.Patience
	}
	first := !es.has || es.noRef
	if !es.has || ev.BitsPerTransition < es.ev.BitsPerTransition {
		es.has, es.step, es.ev = true, t.step, ev
		es.w = append(es.w[:0], t.m.p.Data...)
	}
	es.noRef = false
	if first || ev.BitsPerTransition < es.ref*(1-rc.MinDelta) {
		es.ref, es.bad = ev.BitsPerTransition, 0
		return false
	}
	es.bad++
	return rc.Patience > 0 && es.bad >= rc.Patience
}

// restoreBest puts the best evaluation's weights back into the model.
func (t *Trainer) restoreBest() {
	if t.es.has && t.es.step != t.step {
		copy(t.m.p.Data, t.es.w)
	}
}

// Run trains until Steps steps are done or ctx is cancelled. On
// cancellation it writes the checkpoint (when configured) and returns an
// error wrapping ctx.Err(); the weights are those of the last finished step.
// With Patience or KeepBest, a run that ends (its steps done, or stopped on
// its plateau) holds the weights of its lowest evaluation; its last
// checkpoint holds the last step's weights and moments and the lowest
// evaluation's weights, so a resume continues exactly and ends the same way.
func (t *Trainer) Run(ctx context.Context, rc RunConfig) error {
	nEval := 0
	if rc.Eval != nil {
		nEval = rc.Eval.Sequences()
	}
	if rc.Patience < 0 || (rc.Patience > 0 && (nEval == 0 || rc.EvalEvery < 1)) || !(rc.MinDelta >= 0 && rc.MinDelta < 1) {
		return fmt.Errorf("%w: early stopping with patience %d needs held-out sequences evaluated every N >= 1 steps and 0 <= min delta < 1 (have %d sequences, every %d, min delta %g)",
			ErrConfig, rc.Patience, nEval, rc.EvalEvery, rc.MinDelta)
	}
	if rc.KeepBest && nEval == 0 {
		return fmt.Errorf("%w: keeping the best evaluation's weights needs held-out sequences", ErrConfig)
	}
	keep := rc.keepsBest()
	// A run resumed from a checkpoint continues its early stopping (with
	// patience or KeepBest); one that had stopped stays stopped, holding
	// its best weights.
	if !t.keepES || !keep {
		t.es = earlyStop{}
	}
	t.keepES = false
	if t.es.stopped {
		t.restoreBest()
		return nil
	}
	t.runStart = time.Now()
	defer func() {
		t.elapsed += time.Since(t.runStart)
		t.runStart = time.Time{}
	}()
	// A run that continues trained weights measures them first, so that
	// it can never end holding weights worse than it started from: the
	// fresh warm-up may well raise the loss before it lowers it. They are
	// the best to beat, but patience counts from the run's own first
	// evaluation, so that the warm-up's rise alone does not end the run.
	if keep && t.tc.PriorSteps > 0 && t.step == 0 && !t.es.has {
		ev, err := t.EvaluateOn(rc.Eval)
		if err != nil {
			return err
		}
		if b := ev.BitsPerTransition; !math.IsNaN(b) && !math.IsInf(b, 0) {
			t.es = earlyStop{has: true, ev: ev, w: append([]float32(nil), t.m.p.Data...), noRef: true}
		}
		if rc.Progress != nil {
			p := Progress{Steps: t.tc.Steps, Eval: &ev, Start: true}
			if t.es.has {
				best := t.es.ev
				p.Best = &best
			}
			rc.Progress(p)
		}
	}
	start := time.Now()
	startStep := t.step
	var tokens, flops int64
	var train time.Duration
	for t.step < t.tc.Steps {
		if err := ctx.Err(); err != nil {
			if rc.Checkpoint != "" {
				if cerr := t.SaveCheckpoint(rc.Checkpoint); cerr != nil {
					return fmt.Errorf("worldmodel: interrupted at step %d, and the checkpoint failed: %w", t.step, cerr)
				}
			}
			return fmt.Errorf("worldmodel: interrupted at step %d of %d: %w", t.step, t.tc.Steps, err)
		}
		t0 := time.Now()
		st := t.Step()
		if t.err != nil {
			return t.err
		}
		train += time.Since(t0)
		tokens += int64(st.Tokens)
		flops += st.FLOPs
		el := time.Since(start)
		done := t.step - startStep
		p := Progress{StepStats: st, Steps: t.tc.Steps, Elapsed: el}
		if sec := train.Seconds(); sec > 0 {
			p.StepsPerSec = float64(done) / sec
			p.TokensPerSec = float64(tokens) / sec
			p.GFLOPS = float64(flops) / sec / 1e9
			p.ETA = time.Duration(float64(t.tc.Steps-t.step) * el.Seconds() / float64(done) * float64(time.Second))
		}
		end := t.step == t.tc.Steps
		if nEval > 0 && (end || (rc.EvalEvery > 0 && t.step%rc.EvalEvery == 0)) {
			ev, err := t.EvaluateOn(rc.Eval)
			if err != nil {
				return err
			}
			p.Eval = &ev
			if keep {
				if t.observe(ev, &rc) && !end {
					t.es.stopped = true
				}
				if t.es.has {
					best := t.es.ev
					p.Best, p.BestStep = &best, t.es.step
				}
			}
		}
		// The checkpoint holds the last step's weights (with the moments
		// that go with them) and, apart, the best evaluation's: a resume
		// continues this very run.
		if rc.Checkpoint != "" && (end || (rc.CheckpointEvery > 0 && t.step%rc.CheckpointEvery == 0)) {
			if err := t.SaveCheckpoint(rc.Checkpoint); err != nil {
				return err
			}
			p.Checkpoint = rc.Checkpoint
		}
		if keep && (t.es.stopped || end) {
			t.restoreBest()
		}
		p.Stopped = t.es.stopped
		if rc.Progress != nil {
			rc.Progress(p)
		}
		if t.es.stopped {
			break
		}
	}
	if keep && t.step == startStep && t.step >= t.tc.Steps {
		// A run resumed from the checkpoint of its last step: no step
		// ran, and the model holds that step's weights.
		t.restoreBest()
	}
	return nil
}
