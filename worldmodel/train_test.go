package worldmodel

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/memowm/memowm/trajectory"
)

// TestTapeMatchesForward: the training forward without dropout gives the
// inference forward's bits (same layers, same kernels' order).
func TestTapeMatchesForward(t *testing.T) {
	m := tinyModel(t, 4)
	c := m.Config()
	rng := rand.New(rand.NewPCG(4, 4))
	hs := []History{randomHistory(rng, &c, 1), randomHistory(rng, &c, 5), randomHistory(rng, &c, 3)}
	want, err := newCPU(t, m).Forward(nil, hs)
	if err != nil {
		t.Fatal(err)
	}
	tp := newTape(m, 2)
	tp.forward(hs, false, 0)
	for b := range hs {
		for _, pair := range [][2][]float32{{tp.outs[b].Logits, want[b].Logits}, {tp.outs[b].Gate, want[b].Gate}, {tp.outs[b].Valid, want[b].Valid}} {
			if i := diffAt(pair[0], pair[1]); i >= 0 {
				t.Fatalf("history %d: output %d differs: %g vs %g", b, i, pair[0][i], pair[1][i])
			}
		}
	}
}

// microSequences draws sequences of codes that mostly repeat, with actions.
func microSequences(rng *rand.Rand, c *Config, n, T int) []Sequence {
	seqs := make([]Sequence, n)
	for i := range seqs {
		h := randomHistory(rng, c, T+1)
		for k := range h {
			seqs[i].Codes = append(seqs[i].Codes, h[k].Codes)
			if k < T {
				a := h[k].Action
				if len(a.Payload) > c.MaxPayload {
					a.Payload = a.Payload[:c.MaxPayload]
				}
				seqs[i].Actions = append(seqs[i].Actions, a)
			}
		}
	}
	return seqs
}

// TestDropoutGradient checks the gradient with dropout masks by a
// directional derivative of the (float32) training forward under the same
// masks.
func TestDropoutGradient(t *testing.T) {
	m := microModel(t, 5)
	m.cfg.Dropout = 0.3
	c := m.Config()
	rng := rand.New(rand.NewPCG(5, 5))
	hs, ts := microBatch(rng, &c, []int{2, 3, 1})
	tp := newTape(m, 2)
	lossAt := func() float64 {
		tp.forward(hs, true, 42)
		return tp.lossGrad(ts, false, false).loss(&c)
	}
	g := newParams(&c)
	tp.forward(hs, true, 42)
	tp.lossGrad(ts, true, false)
	tp.backward(g)
	var gg float64
	for _, v := range g.Data {
		gg += float64(v) * float64(v)
	}
	w := append([]float32(nil), m.p.Data...)
	// Central differences along g at two step sizes, combined by Richardson
	// extrapolation (the model is small and sharply curved).
	dir := func(eps float64) float64 {
		for i := range w {
			m.p.Data[i] = w[i] + float32(eps)*g.Data[i]
		}
		lp := lossAt()
		for i := range w {
			m.p.Data[i] = w[i] - float32(eps)*g.Data[i]
		}
		lm := lossAt()
		copy(m.p.Data, w)
		return (lp - lm) / (2 * eps)
	}
	h := 2e-3 / math.Sqrt(gg)
	fd := (4*dir(h/2) - dir(h)) / 3
	rel := math.Abs(fd-gg) / gg
	t.Logf("directional derivative %g, |g|^2 %g: relative error %.2e", fd, gg, rel)
	if rel > 1e-3 {
		t.Fatalf("directional derivative %g, |g|^2 %g: relative error %.2e", fd, gg, rel)
	}
}

// TestLossDecreases trains the tiny preset on one fixed batch.
func TestLossDecreases(t *testing.T) {
	m := tinyModel(t, 6)
	c := m.Config()
	rng := rand.New(rand.NewPCG(6, 6))
	seqs := microSequences(rng, &c, 1, 4) // 4 transitions
	tc := TrainConfig{Steps: 30, Batch: 4, LR: 3e-3, Warmup: 1, Seed: 1}
	tr, err := NewTrainer(m, seqs, tc)
	if err != nil {
		t.Fatal(err)
	}
	first := tr.Step().Loss
	var last float64
	for tr.StepsDone() < tc.Steps {
		last = tr.Step().Loss
	}
	t.Logf("loss %.4f -> %.4f bits per coordinate", first, last)
	if !(last < 0.7*first) {
		t.Fatalf("loss %.4f -> %.4f: did not decrease", first, last)
	}
}

// TestResumeIdentical: a run interrupted by a checkpoint and resumed gives
// the same weights as an uninterrupted one, for 1 and 2 threads.
func TestResumeIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	cfg := microConfig()
	cfg.Dropout = 0.1
	seqs := microSequences(rng, &cfg, 3, 4)
	tc := TrainConfig{Steps: 6, Batch: 3, LR: 1e-2, Seed: 9}
	run := func(threads int, stopAt int) []float32 {
		m, err := New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		tc := tc
		tc.Threads = threads
		tr, err := NewTrainer(m, seqs, tc)
		if err != nil {
			t.Fatal(err)
		}
		for tr.StepsDone() < stopAt {
			tr.Step()
		}
		if stopAt < tc.Steps {
			var buf bytes.Buffer
			if err := tr.WriteCheckpoint(&buf); err != nil {
				t.Fatal(err)
			}
			ck, err := ReadCheckpoint(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if tr, err = ck.Resume(seqs, 0, threads); err != nil {
				t.Fatal(err)
			}
		}
		for tr.StepsDone() < tc.Steps {
			tr.Step()
		}
		return append([]float32(nil), tr.Model().Params().Data...)
	}
	want := run(1, 6)
	for _, c := range [][2]int{{2, 6}, {1, 3}, {2, 2}} {
		if i := diffAt(run(c[0], c[1]), want); i >= 0 {
			t.Fatalf("threads %d, checkpoint at step %d: weight %d differs", c[0], c[1], i)
		}
	}
	// Other data is refused.
	m, _ := New(cfg, 1)
	tr, _ := NewTrainer(m, seqs, tc)
	var buf bytes.Buffer
	tr.WriteCheckpoint(&buf)
	ck, err := ReadCheckpoint(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ck.Resume(seqs[:2], 0, 1); !errors.Is(err, ErrCheckpoint) {
		t.Fatalf("resume on other data: %v", err)
	}
	// Damage is an error, never a panic.
	raw := buf.Bytes()
	for _, at := range []int{0, 10, 20, len(raw) / 2, len(raw) - 1} {
		d := append([]byte(nil), raw...)
		d[at] ^= 0x10
		if _, err := ReadCheckpoint(bytes.NewReader(d)); err == nil {
			t.Fatalf("flip at %d: no error", at)
		}
	}
	for _, n := range []int{0, 7, 30, len(raw) - 1} {
		if _, err := ReadCheckpoint(bytes.NewReader(raw[:n])); !errors.Is(err, ErrCheckpoint) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
}

// TestRunCancel: a cancelled run writes its checkpoint and says so.
func TestRunCancel(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	cfg := microConfig()
	seqs := microSequences(rng, &cfg, 2, 3)
	m, _ := New(cfg, 1)
	tr, err := NewTrainer(m, seqs, TrainConfig{Steps: 100, Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	path := filepath.Join(t.TempDir(), "x.ckpt")
	var evals int
	err = tr.Run(ctx, RunConfig{Eval: Seqs(seqs), EvalEvery: 2, Checkpoint: path, Progress: func(p Progress) {
		if p.Eval != nil {
			evals++
		}
		if p.Step == 5 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	ck, err := LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Step != 5 || evals != 2 {
		t.Fatalf("checkpoint at step %d, %d evaluations", ck.Step, evals)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// TestNoCopyAblation: the ablation closes the gate in the weights too.
func TestNoCopyAblation(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	cfg := microConfig()
	seqs := microSequences(rng, &cfg, 2, 3)
	m, _ := New(cfg, 1)
	tr, err := NewTrainer(m, seqs, TrainConfig{Steps: 3, Batch: 2, NoCopy: true, LR: 1e-2})
	if err != nil {
		t.Fatal(err)
	}
	for tr.StepsDone() < 3 {
		tr.Step()
	}
	b, _ := m.Tensor("copy_head/b")
	for _, v := range b {
		if v != -30 {
			t.Fatalf("copy gate bias %g, want -30", v)
		}
	}
	a, err := tr.Evaluate(seqs)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Evaluate(m, seqs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(a.BitsPerTransition-e.BitsPerTransition) > 1e-6*e.BitsPerTransition {
		t.Fatalf("ablation eval %g, plain eval %g", a.BitsPerTransition, e.BitsPerTransition)
	}
}

// TestInitOutputPriors: the bias follows the marginals, the gate the copy
// rate.
func TestInitOutputPriors(t *testing.T) {
	cfg := microConfig()
	m, _ := New(cfg, 1)
	J := cfg.Coords()
	z0, z1 := make([]uint8, J), make([]uint8, J)
	z1[0] = 3 // one coordinate of J changes
	seqs := []Sequence{{Codes: [][]uint8{z0, z1}, Actions: make([]trajectory.Action, 1)}}
	rate, err := InitOutputPriors(m, seqs)
	if err != nil {
		t.Fatal(err)
	}
	if want := float64(J-1) / float64(J); math.Abs(rate-want) > 1e-12 {
		t.Fatalf("copy rate %g, want %g", rate, want)
	}
	b, _ := m.Tensor("code_head/b")
	C := cfg.Codewords
	if !(b[0] == b[3] && b[3] > b[1] && b[C] > b[C+1]) {
		t.Fatalf("bias %v", b[:2*C])
	}
}

// TestDropMask checks dropMask against the plain form of its rule (draw by
// draw, four 16-bit draws per 64-bit number) and its rate.
func TestDropMask(t *testing.T) {
	for _, rate := range []float64{0, 0.1, 0.5} {
		for _, n := range []int{1, 3, 4, 7, 4096, 4099} {
			got := make([]float32, n)
			dropMask(got, rate, 42, 3, 5)
			var rng rand.PCG
			rng.Seed(42, 0x64726f70<<32|3<<20|5)
			keep := float32(1 / (1 - rate))
			var bits uint64
			dropped := 0
			for i := range got {
				if i%4 == 0 {
					bits = rng.Uint64()
				}
				want := keep
				if bits&0xffff < uint64(rate*65536) {
					want = 0
					dropped++
				}
				bits >>= 16
				if got[i] != want {
					t.Fatalf("rate %g, n %d: mask[%d] = %g, want %g", rate, n, i, got[i], want)
				}
			}
			if n == 4099 && math.Abs(float64(dropped)/float64(n)-rate) > 0.03 {
				t.Fatalf("rate %g: dropped %d of %d", rate, dropped, n)
			}
		}
	}
}
