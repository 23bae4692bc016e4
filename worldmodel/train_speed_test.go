package worldmodel

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// The training path's fast kernels (internal/fgemm): they must stay close to
// the exact inference path, keep a step independent of the thread count and
// allocate (almost) nothing once the buffers are sized.

// TestFastForwardNearExact: the training forward with fgemm (train true, no
// dropout) gives the exact forward's outputs within float32 rounding.
func TestFastForwardNearExact(t *testing.T) {
	m := tinyModel(t, 8)
	m.cfg.Dropout = 0
	c := m.Config()
	rng := rand.New(rand.NewPCG(8, 8))
	hs := []History{randomHistory(rng, &c, 16), randomHistory(rng, &c, 5), randomHistory(rng, &c, 1), randomHistory(rng, &c, 11)}
	exact := newTape(m, 2)
	exact.forward(hs, false, 0)
	fast := newTape(m, 2)
	fast.forward(hs, true, 0)
	if !fast.fast || exact.fast {
		t.Fatal("train true did not select the fast kernels, or train false did")
	}
	var worst float64
	for b := range hs {
		for _, pair := range [][2][]float32{
			{fast.outs[b].Logits, exact.outs[b].Logits},
			{fast.outs[b].Gate, exact.outs[b].Gate},
			{fast.outs[b].Valid, exact.outs[b].Valid},
		} {
			for i, v := range pair[0] {
				w := float64(pair[1][i])
				d := math.Abs(float64(v)-w) / (1 + math.Abs(w))
				worst = max(worst, d)
				if !(d < 1e-4) {
					t.Fatalf("history %d output %d: fast %g, exact %g", b, i, v, w)
				}
			}
		}
	}
	t.Logf("largest difference %.2e (relative to 1+|exact|)", worst)
}

// TestStepThreadsIdentical: on the tiny preset (products large enough for
// every fgemm path: in-place operands, edge blocks, both register blocks,
// several goroutines), two training steps give the same weights bit for bit
// on 1, 2 and 3 threads.
func TestStepThreadsIdentical(t *testing.T) {
	cfg, _ := Preset("tiny")
	rng := rand.New(rand.NewPCG(9, 9))
	seqs := microSequences(rng, &cfg, 2, 18)
	var want []float32
	for _, threads := range []int{1, 2, 3} {
		m, err := New(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := NewTrainer(m, seqs, TrainConfig{Steps: 10, Batch: 5, Seed: 4, Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		tr.Step()
		tr.Step()
		got := m.Params().Data
		if want == nil {
			want = append([]float32(nil), got...)
			continue
		}
		if i := diffAt(got, want); i >= 0 {
			t.Fatalf("%d threads: weight %d is %g, 1 thread %g", threads, i, got[i], want[i])
		}
	}
}

// TestStepAllocatesLittle: once a trainer's buffers are sized, a step
// allocates no buffers: what is left are the parallel loops' goroutines.
func TestStepAllocatesLittle(t *testing.T) {
	cfg, _ := Preset("tiny")
	m, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(10, 10))
	tr, err := NewTrainer(m, microSequences(rng, &cfg, 3, 20), TrainConfig{Steps: 1 << 20, Batch: 8, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		tr.Step()
	}
	const steps = 4
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < steps; i++ {
		tr.Step()
	}
	runtime.ReadMemStats(&after)
	bytes := (after.TotalAlloc - before.TotalAlloc) / steps
	objects := (after.Mallocs - before.Mallocs) / steps
	t.Logf("%d bytes in %d objects per step", bytes, objects)
	if bytes > 256<<10 || objects > 2000 {
		t.Fatalf("a step allocates %d bytes in %d objects", bytes, objects)
	}
}
