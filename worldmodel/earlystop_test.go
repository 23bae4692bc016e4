package worldmodel

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestEarlyStop: with a gain threshold no evaluation can meet, the run
// stops after Patience evaluations without a gain and puts back the
// weights of its first evaluation, bit for bit those of a run of that many
// steps; a run whose loss keeps falling runs to its end.
func TestEarlyStop(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	cfg := microConfig()
	seqs := microSequences(rng, &cfg, 3, 4)
	held := microSequences(rng, &cfg, 2, 4)
	tc := TrainConfig{Steps: 40, Batch: 2, Seed: 3}

	m, _ := New(cfg, 1)
	tr, err := NewTrainer(m, seqs, tc)
	if err != nil {
		t.Fatal(err)
	}
	var last Progress
	var evals int
	err = tr.Run(context.Background(), RunConfig{Eval: held, EvalEvery: 3, Patience: 2, MinDelta: 0.9, Progress: func(p Progress) {
		last = p
		if p.Eval != nil {
			evals++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	stopped, best, ev := tr.EarlyStop()
	// Evaluations at steps 3 (the best), 6 and 9 (no gain of 90%): stop.
	if !stopped || best != 3 || tr.StepsDone() != 9 || evals != 3 || !last.Stopped || last.BestStep != 3 || last.Best == nil {
		t.Fatalf("stopped %v at step %d, best step %d, %d evaluations, last progress %+v", stopped, tr.StepsDone(), best, evals, last)
	}
	ref, _ := New(cfg, 1)
	rt, err := NewTrainer(ref, seqs, tc)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		rt.Step()
	}
	if i := diffAt(m.p.Data, ref.p.Data); i >= 0 {
		t.Fatalf("the restored weights differ from step 3's at %d", i)
	}
	if got, err := Evaluate(m, held, 0); err != nil || got.BitsPerTransition != ev.BitsPerTransition {
		t.Fatalf("restored model: %+v %v, best evaluation %+v", got, err, ev)
	}

	// No threshold: the loss of this small set keeps falling, so the run
	// finishes, holding the weights of its best evaluation.
	m2, _ := New(cfg, 1)
	tr2, _ := NewTrainer(m2, seqs, TrainConfig{Steps: 12, Batch: 2, Seed: 3, LR: 1e-3})
	var bests []float64
	if err := tr2.Run(context.Background(), RunConfig{Eval: seqs, EvalEvery: 4, Patience: 5, Progress: func(p Progress) {
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
	for _, rc := range []RunConfig{{Patience: 2}, {Patience: 2, Eval: held}, {Patience: -1}, {Eval: held, EvalEvery: 1, MinDelta: 1}} {
		m3, _ := New(cfg, 1)
		tr3, _ := NewTrainer(m3, seqs, tc)
		if err := tr3.Run(context.Background(), rc); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v", rc, err)
		}
	}
}

// TestDefaultLR: a preset's default learning rate is what NewTrainer uses
// when none is given; a configuration that is not a preset gets 3e-4.
func TestDefaultLR(t *testing.T) {
	for name, want := range map[string]float64{"tiny": 3e-3, "small": 2e-3, "base": 1e-3, "medium": 1e-3, "paper": 3e-4} {
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
