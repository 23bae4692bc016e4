package worldmodel

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memowm/memowm/internal/fuzzdamage"
)

// earlyStopData is the early-stopping tests' model, 3 training and 2
// held-out sequences of 4 steps, and a 40-step configuration.
func earlyStopData() (Config, []Sequence, []Sequence, TrainConfig) {
	rng := rand.New(rand.NewPCG(9, 9))
	cfg := microConfig()
	seqs := microSequences(rng, &cfg, 3, 4)
	held := microSequences(rng, &cfg, 2, 4)
	return cfg, seqs, held, TrainConfig{Steps: 40, Batch: 2, Seed: 3}
}

// TestEarlyStop: with a gain threshold no evaluation can meet, the run
// stops after Patience evaluations without one and puts back the weights of
// its lowest evaluation, bit for bit those of a run of that many steps; a
// run whose loss keeps falling runs to its end.
func TestEarlyStop(t *testing.T) {
	cfg, seqs, held, tc := earlyStopData()

	m, _ := New(cfg, 1)
	tr, err := NewTrainer(m, seqs, tc)
	if err != nil {
		t.Fatal(err)
	}
	var last Progress
	evals := map[int]float64{}
	err = tr.Run(context.Background(), RunConfig{Eval: Seqs(held), EvalEvery: 3, Patience: 2, MinDelta: 0.9, Progress: func(p Progress) {
		last = p
		if p.Eval != nil {
			evals[p.Step] = p.Eval.BitsPerTransition
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	stopped, best, ev := tr.EarlyStop()
	// Evaluations at steps 3, 6 and 9; 6 and 9 are no gain of 90% on 3's:
	// stop, keeping the lowest of the three.
	lowest := 3
	for _, s := range []int{6, 9} {
		if evals[s] < evals[lowest] {
			lowest = s
		}
	}
	if !stopped || best != lowest || tr.StepsDone() != 9 || len(evals) != 3 || !last.Stopped || last.BestStep != lowest || last.Best == nil || ev.BitsPerTransition != evals[lowest] {
		t.Fatalf("stopped %v at step %d, best step %d (lowest %d), evaluations %v, last progress %+v", stopped, tr.StepsDone(), best, lowest, evals, last)
	}
	ref, _ := New(cfg, 1)
	rt, err := NewTrainer(ref, seqs, tc)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < lowest; i++ {
		rt.Step()
	}
	if lowest != 9 {
		if i := diffAt(m.p.Data, ref.p.Data); i >= 0 {
			t.Fatalf("the restored weights differ from step %d's at %d", lowest, i)
		}
	}
	if got, err := Evaluate(m, held, 0); err != nil || got.BitsPerTransition != ev.BitsPerTransition {
		t.Fatalf("restored model: %+v %v, best evaluation %+v", got, err, ev)
	}

	// The bookkeeping itself, on made-up evaluations: the weights kept are
	// the lowest evaluation's, patience counts from the last gain of more
	// than MinDelta, and restoreBest puts the kept weights back.
	m4, _ := New(cfg, 1)
	t4, _ := NewTrainer(m4, seqs, tc)
	rc := &RunConfig{Patience: 2, MinDelta: 0.1}
	var at2 []float32
	for i, bits := range []float64{10, 8, 7.5, 7.9} {
		t4.Step()
		stop := t4.observe(EvalStats{BitsPerTransition: bits}, rc)
		if i == 1 {
			at2 = append([]float32(nil), m4.p.Data...)
		}
		// 10: first; 8: a gain of 20%; 7.5: the lowest, but 6% < 10% of 8,
		// so no gain (1); 7.9: no gain (2): stop.
		if stop != (i == 3) || (i == 2 && t4.es.step != 3) {
			t.Fatalf("evaluation %d (%g): stop %v, kept step %d", i, bits, stop, t4.es.step)
		}
	}
	t4.restoreBest()
	if t4.es.step != 3 || t4.es.ev.BitsPerTransition != 7.5 || diffAt(m4.p.Data, at2) < 0 {
		t.Fatalf("kept step %d (%g); restored weights equal step 2's: %v", t4.es.step, t4.es.ev.BitsPerTransition, diffAt(m4.p.Data, at2) < 0)
	}
	m5, _ := New(cfg, 1)
	t5, _ := NewTrainer(m5, seqs, tc)
	for i := 0; i < 3; i++ {
		t5.Step()
	}
	if i := diffAt(m4.p.Data, m5.p.Data); i >= 0 {
		t.Fatalf("the restored weights are not step 3's: they differ at %d", i)
	}

	// No threshold: the loss of this small set keeps falling, so the run
	// finishes, holding the weights of its best evaluation.
	m2, _ := New(cfg, 1)
	tr2, _ := NewTrainer(m2, seqs, TrainConfig{Steps: 12, Batch: 2, Seed: 3, LR: 1e-3})
	var bests []float64
	if err := tr2.Run(context.Background(), RunConfig{Eval: Seqs(seqs), EvalEvery: 4, Patience: 5, Progress: func(p Progress) {
		if p.Eval != nil {
			bests = append(bests, p.Eval.BitsPerTransition)
		}
	}}); err != nil {
		t.Fatal(err)
	}
	if stopped, best, _ := tr2.EarlyStop(); stopped || tr2.StepsDone() != 12 || len(bests) != 3 || !slices.IsSortedFunc(bests, func(a, b float64) int {
		switch {
		case a > b:
			return -1
		case a < b:
			return 1
		}
		return 0
	}) || best != 12 {
		t.Fatalf("stopped %v, %d steps, best %d, evaluations %v", stopped, tr2.StepsDone(), best, bests)
	}

	// Misconfigurations.
	for _, rc := range []RunConfig{{Patience: 2}, {Patience: 2, Eval: Seqs(held)}, {Patience: -1}, {Eval: Seqs(held), EvalEvery: 1, MinDelta: 1}} {
		m3, _ := New(cfg, 1)
		tr3, _ := NewTrainer(m3, seqs, tc)
		if err := tr3.Run(context.Background(), rc); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v", rc, err)
		}
	}
}

// TestContinueKeepsStart: a run that continues trained weights
// (PriorSteps > 0) with patience evaluates them before its first step and
// keeps them as the best to beat; patience counts from the run's own first
// evaluation (a fresh warm-up may raise the loss for a while). Continued on
// codes drawn at random, which only makes the held-out loss worse, it stops
// on its plateau holding the starting weights bit for bit, also when it is
// interrupted and resumed from its checkpoint; continued on the held-out
// data itself, a later step is kept. (A first run does not evaluate its random start: TestEarlyStop
// counts its evaluations.)
func TestContinueKeepsStart(t *testing.T) {
	cfg, _, held, tc := earlyStopData()
	start, _ := New(cfg, 1)
	first := tc
	first.Steps = 10
	pre, err := NewTrainer(start, held, first)
	if err != nil {
		t.Fatal(err)
	}
	if err := pre.Run(context.Background(), RunConfig{}); err != nil {
		t.Fatal(err)
	}
	w0 := slices.Clone(start.p.Data)
	ev0, err := Evaluate(start, held, 0)
	if err != nil {
		t.Fatal(err)
	}
	clone := func() *Model {
		c, _ := New(cfg, 1)
		copy(c.p.Data, w0)
		return c
	}
	noise := microSequences(rand.New(rand.NewPCG(4, 4)), &cfg, 3, 4)
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range noise {
		for _, codes := range noise[i].Codes {
			for j := range codes {
				codes[j] = uint8(rng.IntN(cfg.Codewords))
			}
		}
	}
	cont := TrainConfig{Steps: 40, Batch: 2, Seed: 3, LR: 1e-2, PriorSteps: 10}
	rc := RunConfig{Eval: Seqs(held), EvalEvery: 3, Patience: 2}

	m := clone()
	tr, err := NewTrainer(m, noise, cont)
	if err != nil {
		t.Fatal(err)
	}
	var ps []Progress
	rc1 := rc
	rc1.Progress = func(p Progress) {
		if p.Eval != nil {
			ps = append(ps, p)
		}
	}
	if err := tr.Run(context.Background(), rc1); err != nil {
		t.Fatal(err)
	}
	stopped, best, ev := tr.EarlyStop()
	// Evaluations at 3 (worse than the start, but the run's first: the
	// reference for patience), 6 and 9 (no gain on 3's): stop at 9.
	if !stopped || best != 0 || ev != ev0 || tr.StepsDone() != 9 {
		t.Fatalf("stopped %v at step %d, best step %d %+v; the start: %+v", stopped, tr.StepsDone(), best, ev, ev0)
	}
	if i := diffAt(m.p.Data, w0); i >= 0 {
		t.Fatalf("the kept weights differ from the starting ones at %d", i)
	}
	if len(ps) != 4 || !ps[0].Start || ps[0].Step != 0 || *ps[0].Eval != ev0 || ps[0].BestStep != 0 || ps[1].Start || ps[1].Step != 3 ||
		!(ps[1].Eval.BitsPerTransition > ev0.BitsPerTransition) || ps[2].Stopped || !ps[3].Stopped || ps[3].BestStep != 0 {
		t.Fatalf("progress with evaluations: %+v", ps)
	}

	// Interrupted before its first evaluation, or after it, and resumed:
	// the same end.
	for _, at := range []int{1, 4} {
		m2 := clone()
		t2, _ := NewTrainer(m2, noise, cont)
		ck := interruptAt(t, t2, rc, at)
		if ck.es == nil || ck.es.step != 0 || ck.es.ev != ev0 || ck.es.noRef != (at == 1) {
			t.Fatalf("interrupted at %d: the checkpoint's early stopping: %+v", at, ck.es)
		}
		t3, err := ck.Resume(noise, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := t3.Run(context.Background(), rc); err != nil {
			t.Fatal(err)
		}
		if stopped, best, _ := t3.EarlyStop(); !stopped || best != 0 || t3.StepsDone() != 9 || diffAt(t3.Model().Params().Data, w0) >= 0 {
			t.Fatalf("resumed at %d: stopped %v at %d, best %d", at, stopped, t3.StepsDone(), best)
		}
	}

	// Training on the held-out data itself helps: a later step is kept.
	m4 := clone()
	t4, _ := NewTrainer(m4, held, TrainConfig{Steps: 12, Batch: 2, Seed: 3, LR: 1e-3, PriorSteps: 10})
	if err := t4.Run(context.Background(), RunConfig{Eval: Seqs(held), EvalEvery: 4, Patience: 5}); err != nil {
		t.Fatal(err)
	}
	if stopped, best, _ := t4.EarlyStop(); stopped || best != 12 {
		t.Fatalf("a helpful continuation: stopped %v, best step %d", stopped, best)
	}
}

// TestDefaultLR: a preset's default learning rate is what NewTrainer uses
// when none is given; a configuration that is not a preset gets 3e-4.
func TestDefaultLR(t *testing.T) {
	for name, want := range map[string]float64{"tiny": 3e-3, "small": 2e-3, "base": 2e-3, "medium": 1e-3, "paper": 3e-4} {
		c, err := Preset(name)
		if err != nil || c.DefaultLR() != want {
			t.Errorf("%s: %v %v", name, c.DefaultLR(), err)
		}
	}
	cfg := microConfig()
	m, _ := New(cfg, 1)
	tr, err := NewTrainer(m, microSequences(rand.New(rand.NewPCG(1, 1)), &cfg, 2, 3), TrainConfig{Steps: 10})
	if err != nil || tr.Config().LR != 3e-4 || tr.Config().MinLR != tr.Config().LR/10 {
		t.Fatalf("%+v %v", tr.Config(), err)
	}
	cfg.Preset = "tiny"
	m, _ = New(cfg, 1)
	tr, err = NewTrainer(m, microSequences(rand.New(rand.NewPCG(1, 1)), &cfg, 2, 3), TrainConfig{Steps: 10})
	if err != nil || tr.Config().LR != 3e-3 {
		t.Fatalf("%+v %v", tr.Config(), err)
	}
}

// TestResumeKeepsEarlyStop: a run with patience interrupted after its
// lowest evaluation and resumed from its checkpoint stops at the same step
// with the same weights and best evaluation as the run that was never
// interrupted (the checkpoint carries the lowest evaluation, its weights and
// the count without a gain). A version-1 checkpoint, which has none of it,
// still reads.
func TestResumeKeepsEarlyStop(t *testing.T) {
	cfg, seqs, held, tc := earlyStopData()
	rc := RunConfig{Eval: Seqs(held), EvalEvery: 3, Patience: 2, MinDelta: 0.9}

	m, _ := New(cfg, 1)
	tr, _ := NewTrainer(m, seqs, tc)
	if err := tr.Run(context.Background(), rc); err != nil {
		t.Fatal(err)
	}
	wantStopped, wantBest, wantEv := tr.EarlyStop()

	for _, at := range []int{4, 7, 8} { // after the first evaluation, after the second, one step later
		m2, _ := New(cfg, 1)
		t2, _ := NewTrainer(m2, seqs, tc)
		ck := interruptAt(t, t2, rc, at)
		t3, err := ck.Resume(seqs, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := t3.Run(context.Background(), rc); err != nil {
			t.Fatal(err)
		}
		stopped, best, ev := t3.EarlyStop()
		if stopped != wantStopped || best != wantBest || ev != wantEv || t3.StepsDone() != tr.StepsDone() {
			t.Fatalf("resumed at %d: stopped %v at %d, best %d %+v; uninterrupted: stopped %v at %d, best %d %+v",
				at, stopped, t3.StepsDone(), best, ev, wantStopped, tr.StepsDone(), wantBest, wantEv)
		}
		if i := diffAt(t3.Model().Params().Data, m.p.Data); i >= 0 {
			t.Fatalf("resumed at %d: weight %d differs from the uninterrupted run's", at, i)
		}
	}

	// A checkpoint written on the step the run stopped resumes as stopped,
	// holding the best weights; one resumed without patience drops the state.
	path := filepath.Join(t.TempDir(), "stop.ckpt")
	m6, _ := New(cfg, 1)
	t6, _ := NewTrainer(m6, seqs, tc)
	src := rc
	src.Checkpoint, src.CheckpointEvery = path, 1
	if err := t6.Run(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	ck, err := LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	t7, _ := ck.Resume(seqs, 0, 0)
	if err := t7.Run(context.Background(), rc); err != nil {
		t.Fatal(err)
	}
	if stopped, best, _ := t7.EarlyStop(); !stopped || best != wantBest || t7.StepsDone() != tr.StepsDone() || diffAt(t7.Model().Params().Data, m.p.Data) >= 0 {
		t.Fatalf("resumed after the stop: stopped %v at %d, best %d", stopped, t7.StepsDone(), best)
	}
	ck, _ = LoadCheckpoint(path)
	t8, _ := ck.Resume(seqs, 12, 0)
	if err := t8.Run(context.Background(), RunConfig{}); err != nil {
		t.Fatal(err)
	}
	if stopped, best, _ := t8.EarlyStop(); stopped || best != -1 || t8.StepsDone() != 12 {
		t.Fatalf("resumed without patience: stopped %v at %d, best %d", stopped, t8.StepsDone(), best)
	}

	// A diverged evaluation is never kept and counts as no gain.
	m9, _ := New(cfg, 1)
	t9, _ := NewTrainer(m9, seqs, tc)
	prc := &RunConfig{Patience: 2}
	for i, bits := range []float64{math.NaN(), 10, math.Inf(1), math.NaN()} {
		t9.Step()
		stop := t9.observe(EvalStats{BitsPerTransition: bits}, prc)
		if stop != (i == 3) || (i > 0 && (t9.es.step != 2 || t9.es.ev.BitsPerTransition != 10)) {
			t.Fatalf("evaluation %d (%g): stop %v, kept step %d (%g)", i, bits, stop, t9.es.step, t9.es.ev.BitsPerTransition)
		}
	}
	var nb bytes.Buffer
	if err := t9.WriteCheckpoint(&nb); err != nil {
		t.Fatalf("checkpoint after diverged evaluations: %v", err)
	}

	// Version 1: the same layout without early stopping.
	m4, _ := New(cfg, 1)
	t4, _ := NewTrainer(m4, seqs, tc)
	t4.Step()
	var buf bytes.Buffer
	if err := t4.WriteCheckpoint(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	binary.LittleEndian.PutUint32(b[8:12], 1)
	fuzzdamage.Reseal(b)
	if ck, err := ReadCheckpoint(bytes.NewReader(b)); err != nil || ck.Step != 1 || ck.es != nil {
		t.Fatalf("version 1: %v", err)
	}
	binary.LittleEndian.PutUint32(b[8:12], 3)
	if _, err := ReadCheckpoint(bytes.NewReader(b)); !errors.Is(err, ErrCheckpoint) {
		t.Fatalf("version 3: %v", err)
	}
	// Early stopping in a version 1 file is damage.
	b = append([]byte(nil), nb.Bytes()...)
	binary.LittleEndian.PutUint32(b[8:12], 1)
	fuzzdamage.Reseal(b)
	if _, err := ReadCheckpoint(bytes.NewReader(b)); !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), "version 1") {
		t.Fatalf("version 1 with early stopping: %v", err)
	}
}

// interruptAt runs tr under rc with a checkpoint, cancels it after step at
// and returns the checkpoint it left.
func interruptAt(t *testing.T, tr *Trainer, rc RunConfig, at int) *Checkpoint {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.ckpt")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rc.Checkpoint = path
	rc.Progress = func(p Progress) {
		if p.Step == at {
			cancel()
		}
	}
	if err := tr.Run(ctx, rc); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted at %d: %v", at, err)
	}
	ck, err := LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	return ck
}

// stoppedCheckpoint is a small trainer's checkpoint with early-stopping
// state (version 2, with the best weights' section).
func stoppedCheckpoint(tb testing.TB) []byte {
	cfg, seqs, _, tc := earlyStopData()
	tc.Steps = 4
	m, _ := New(cfg, 1)
	tr, err := NewTrainer(m, seqs, tc)
	if err != nil {
		tb.Fatal(err)
	}
	tr.Step()
	tr.observe(EvalStats{Transitions: 3, BitsPerTransition: 7}, &RunConfig{Patience: 2})
	tr.Step()
	var buf bytes.Buffer
	if err := tr.WriteCheckpoint(&buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzReadCheckpointDamaged damages a checkpoint with early-stopping state
// as FuzzReadDamaged does a weights file (damage): ReadCheckpoint
// never panics, fails only with ErrCheckpoint (which wraps the weights
// file's errors), and without reseal accepts no damage.
func FuzzReadCheckpointDamaged(f *testing.F) {
	file := stoppedCheckpoint(f)
	if _, err := ReadCheckpoint(bytes.NewReader(file)); err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{0, 0, 1}, uint16(0), false)
	f.Add([]byte{20, 0, 0x10}, uint16(0), true) // in the JSON header
	f.Add([]byte{9, 0, 3}, uint16(0), true)     // the version
	f.Add([]byte{}, uint16(len(file)-7), true)
	f.Fuzz(func(t *testing.T, edits []byte, cut uint16, reseal bool) {
		d := fuzzdamage.Damage(file, edits, cut, reseal)
		ck, err := ReadCheckpoint(bytes.NewReader(d))
		if err != nil {
			if !errors.Is(err, ErrCheckpoint) {
				t.Fatalf("error outside ErrCheckpoint: %v", err)
			}
			return
		}
		if !reseal && !bytes.Equal(d, file) {
			t.Fatal("a damaged checkpoint was accepted")
		}
		if ck.es != nil && (ck.es.step < 0 || ck.es.step == 0 && ck.Train.PriorSteps == 0 || ck.es.noRef && ck.es.step != 0 || ck.es.step > ck.Step || len(ck.es.w) != len(ck.m)) {
			t.Fatalf("accepted early-stopping state %d of step %d with %d weights", ck.es.step, ck.Step, len(ck.es.w))
		}
	})
}

// TestElapsed: the time spent in Run is carried by checkpoints, so a resumed
// run counts what it had spent before; a checkpoint with a negative time is
// damage.
func TestElapsed(t *testing.T) {
	cfg, seqs, _, tc := earlyStopData()
	m, _ := New(cfg, 1)
	tr, err := NewTrainer(m, seqs, tc)
	if err != nil || tr.Elapsed() != 0 {
		t.Fatalf("%v, elapsed %v before Run", err, tr.Elapsed())
	}
	path := filepath.Join(t.TempDir(), "e.ckpt")
	ctx, cancel := context.WithCancel(context.Background())
	err = tr.Run(ctx, RunConfig{Checkpoint: path, Progress: func(p Progress) {
		if p.Step == 3 {
			cancel()
		}
	}})
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	spent := tr.Elapsed()
	ck, err := LoadCheckpoint(path)
	if err != nil || spent <= 0 || ck.Elapsed <= 0 || ck.Elapsed > spent {
		t.Fatalf("%v: spent %v, the checkpoint says %v", err, spent, ck.Elapsed)
	}
	t2, err := ck.Resume(seqs, 0, 0)
	if err != nil || t2.Elapsed() != ck.Elapsed {
		t.Fatalf("%v: resumed with %v, the checkpoint says %v", err, t2.Elapsed(), ck.Elapsed)
	}
	if err := t2.Run(context.Background(), RunConfig{}); err != nil || t2.Elapsed() <= ck.Elapsed || t2.StepsDone() != tc.Steps {
		t.Fatalf("%v: %v after the resumed run, %v before", err, t2.Elapsed(), ck.Elapsed)
	}
	t2.elapsed = -time.Second
	var buf bytes.Buffer
	if err := t2.WriteCheckpoint(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCheckpoint(bytes.NewReader(buf.Bytes())); !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), "training time") {
		t.Fatalf("a negative training time: %v", err)
	}
}

// TestKeepBest: with KeepBest and no patience a run takes all its steps and
// ends holding its lowest evaluation's weights, bit for bit those of a run
// of that many steps, here a run on codes drawn at random, whose held-out
// evaluations only get worse; without it, it ends on its last step's.
// Interrupted and resumed from its checkpoint, or resumed from the
// checkpoint of its last step, it ends the same way: the checkpoint holds
// the last step's weights and the best ones apart.
func TestKeepBest(t *testing.T) {
	cfg, _, held, tc := earlyStopData()
	tc.Steps, tc.LR = 12, 1e-2
	seqs := microSequences(rand.New(rand.NewPCG(4, 4)), &cfg, 3, 4)
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range seqs {
		for _, codes := range seqs[i].Codes {
			for j := range codes {
				codes[j] = uint8(rng.IntN(cfg.Codewords))
			}
		}
	}
	rc := RunConfig{Eval: Seqs(held), EvalEvery: 3, KeepBest: true}
	run := func(rc RunConfig) (*Trainer, map[int]float64) {
		t.Helper()
		m, _ := New(cfg, 1)
		tr, err := NewTrainer(m, seqs, tc)
		if err != nil {
			t.Fatal(err)
		}
		evals := map[int]float64{}
		rc.Progress = func(p Progress) {
			if p.Eval != nil {
				evals[p.Step] = p.Eval.BitsPerTransition
			}
		}
		if err := tr.Run(context.Background(), rc); err != nil {
			t.Fatal(err)
		}
		return tr, evals
	}
	tr, evals := run(rc)
	lowest := 3
	for s, b := range evals {
		if b < evals[lowest] {
			lowest = s
		}
	}
	stopped, best, ev := tr.EarlyStop()
	if len(evals) != 4 || lowest == 12 || !(evals[12] > evals[lowest]) {
		t.Fatalf("the construction needs a last evaluation worse than an earlier one: %v", evals)
	}
	if stopped || best != lowest || tr.StepsDone() != 12 || ev.BitsPerTransition != evals[lowest] {
		t.Fatalf("stopped %v after %d steps, kept step %d (%+v); evaluations %v", stopped, tr.StepsDone(), best, ev, evals)
	}
	ref, _ := New(cfg, 1)
	rt, _ := NewTrainer(ref, seqs, tc)
	for range lowest {
		rt.Step()
	}
	if i := diffAt(tr.Model().Params().Data, ref.p.Data); i >= 0 {
		t.Fatalf("the kept weights differ from step %d's at %d", lowest, i)
	}
	if got, err := Evaluate(tr.Model(), held, 0); err != nil || got.BitsPerTransition != evals[lowest] {
		t.Fatalf("the kept model evaluates to %+v %v, want %g", got, err, evals[lowest])
	}

	// Without KeepBest: the last step's weights, no best recorded.
	last, _ := run(RunConfig{Eval: Seqs(held), EvalEvery: 3})
	if _, b, _ := last.EarlyStop(); b != -1 {
		t.Fatalf("without KeepBest: kept step %d", b)
	}
	for range 12 - lowest {
		rt.Step()
	}
	if i := diffAt(last.Model().Params().Data, ref.p.Data); i >= 0 {
		t.Fatalf("without KeepBest the weights differ from the last step's at %d", i)
	}

	// Interrupted after the best evaluation and resumed; resumed from the
	// checkpoint of the last step.
	for _, at := range []int{lowest + 1, 12} {
		m, _ := New(cfg, 1)
		t2, _ := NewTrainer(m, seqs, tc)
		var ck *Checkpoint
		if at < 12 {
			ck = interruptAt(t, t2, rc, at)
		} else {
			path := filepath.Join(t.TempDir(), "end.ckpt")
			rcc := rc
			rcc.Checkpoint = path
			if err := t2.Run(context.Background(), rcc); err != nil {
				t.Fatal(err)
			}
			if i := diffAt(m.p.Data, tr.Model().Params().Data); i >= 0 {
				t.Fatalf("with a checkpoint: weight %d differs", i)
			}
			var err error
			if ck, err = LoadCheckpoint(path); err != nil {
				t.Fatal(err)
			}
			if i := diffAt(ck.Model.p.Data, ref.p.Data); i >= 0 {
				t.Fatalf("the last checkpoint does not hold the last step's weights: %d differs", i)
			}
		}
		if ck.es == nil || ck.es.step != lowest {
			t.Fatalf("checkpoint at %d: best %+v", at, ck.es)
		}
		t3, err := ck.Resume(seqs, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := t3.Run(context.Background(), rc); err != nil {
			t.Fatal(err)
		}
		if stopped, b, _ := t3.EarlyStop(); stopped || b != lowest || t3.StepsDone() != 12 || diffAt(t3.Model().Params().Data, tr.Model().Params().Data) >= 0 {
			t.Fatalf("resumed at %d: stopped %v after %d steps, kept step %d", at, stopped, t3.StepsDone(), b)
		}
	}

	// KeepBest needs held-out data.
	m, _ := New(cfg, 1)
	t4, _ := NewTrainer(m, seqs, tc)
	if err := t4.Run(context.Background(), RunConfig{KeepBest: true}); !errors.Is(err, ErrConfig) {
		t.Fatalf("KeepBest without held-out data: %v", err)
	}
}
