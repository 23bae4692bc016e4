package reader

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"testing"
)

func TestTrainToy(t *testing.T) {
	states, qs := toyData(600, 1)
	evS, evQ := toyData(300, 2)
	cfg := toyConfig()
	var first, last TrainProgress
	p, rep, err := TrainProbe(states, qs, cfg, func(pr TrainProgress) {
		if pr.Epoch == 1 {
			first = pr
		}
		last = pr
	})
	if err != nil {
		t.Fatal(err)
	}
	if !(last.TrainBits < first.TrainBits/4) {
		t.Errorf("training bits went from %.3f to %.3f", first.TrainBits, last.TrainBits)
	}
	if rep.ValQuestions == 0 || rep.TrainQuestions+rep.ValQuestions != len(qs) || rep.BestEpoch < 1 {
		t.Errorf("report %+v", rep)
	}
	ev, err := Evaluate(p, evS, evQ)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range ev.Kinds {
		t.Logf("%-6s n %3d  accuracy %.3f (chance %.3f)  bits %.3f (chance %.3f)", k.Kind, k.N, k.Accuracy, k.ChanceAccuracy, k.MeanBits, k.ChanceBits)
		if k.Accuracy < 0.9 || k.MeanBits > 0.5*k.ChanceBits {
			t.Errorf("kind %s: accuracy %.3f, %.3f bits: the answer is readable from the state", k.Kind, k.Accuracy, k.MeanBits)
		}
	}
	// Deterministic, whatever GOMAXPROCS.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	cfg.Epochs = 3
	a, _, err := TrainProbe(states, qs, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GOMAXPROCS(3)
	b, _, err := TrainProbe(states, qs, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(probeBytes(t, a), probeBytes(t, b)) {
		t.Fatal("training is not deterministic across GOMAXPROCS")
	}
}

func TestTrainErrors(t *testing.T) {
	states, qs := toyData(20, 1)
	bad := func(f func(*ProbeConfig)) ProbeConfig { c := toyConfig(); f(&c); return c }
	for name, c := range map[string]ProbeConfig{
		"epochs":   bad(func(c *ProbeConfig) { c.Epochs = 0 }),
		"lr":       bad(func(c *ProbeConfig) { c.LR = math.NaN() }),
		"val":      bad(func(c *ProbeConfig) { c.ValFraction = 1 }),
		"proj":     bad(func(c *ProbeConfig) { c.Proj = 0 }),
		"clip":     bad(func(c *ProbeConfig) { c.GradClip = -1 }),
		"patience": bad(func(c *ProbeConfig) { c.Patience = 0 }),
		"batch":    bad(func(c *ProbeConfig) { c.Batch = 0 }),
	} {
		if _, _, err := TrainProbe(states, qs, c, nil); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	if _, _, err := TrainProbe(states[:3], qs, toyConfig(), nil); !errors.Is(err, ErrShape) {
		t.Errorf("count mismatch: %v", err)
	}
	q := *qs[0]
	q.Answer = "nope"
	qs[0] = &q
	if _, _, err := TrainProbe(states, qs, toyConfig(), nil); !errors.Is(err, ErrQuestion) {
		t.Errorf("bad answer: %v", err)
	}
}

func TestEvaluate(t *testing.T) {
	p := randomProbe(toyArch(), 21)
	states, qs := toyData(50, 22)
	ev, err := Evaluate(p, states, qs)
	if err != nil {
		t.Fatal(err)
	}
	bits := mustBits(p, states, qs)
	sum := 0.0
	for _, b := range bits {
		sum += b
	}
	if math.Abs(ev.All.MeanBits-sum/50) > 1e-12 || ev.All.N != 50 || len(ev.Kinds) != 2 {
		t.Fatalf("evaluation %+v, mean bits %v", ev, sum/50)
	}
	if ev.Kinds[0].Kind != "first" || ev.Kinds[0].N+ev.Kinds[1].N != 50 || ev.Kinds[0].ChanceBits != 1 {
		t.Fatalf("kinds %+v", ev.Kinds)
	}
}
