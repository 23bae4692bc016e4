package cuda

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/memowm/memowm/worldmodel"
)

// randomBatch is a batch for the engine alone: histories of the given
// numbers of states, x0 random (N, W).
func randomBatch(rng *rand.Rand, cfg *worldmodel.Config, lens ...int) ([]float32, []int) {
	start := []int{0}
	for _, n := range lens {
		start = append(start, start[len(start)-1]+n*cfg.Slots)
	}
	x0 := make([]float32, start[len(lens)]*cfg.Width())
	for i := range x0 {
		x0[i] = float32(rng.NormFloat64())
	}
	return x0, start
}

// TestBlocksDropoutGradient checks the engine's gradients with dropout by
// central differences of the forward under the same masks (the same seed):
// the backward must regenerate the forward's masks. The loss is
// sum(xL * r) for a fixed random r, so its gradient of xL is r; the
// directions are a random step of x0 and of every block parameter.
func TestBlocksDropoutGradient(t *testing.T) {
	cfg := tinyConfig(t, 0.3)
	m := tinyTrainModel(t, cfg, 9)
	b := newBlocks(t, trainEmu(t), cfg)
	b.splitRows = 32 // split-K weight gradients (3 splits)
	rng := rand.New(rand.NewPCG(9, 9))
	x0, start := randomBatch(rng, &cfg, 2, 1)
	const rate, seed = 0.3, 77
	r := make([]float32, 2*cfg.Slots*cfg.Width())
	for i := range r {
		r[i] = float32(rng.NormFloat64())
	}
	loss := func(x []float32) float64 {
		xL, err := b.Forward(m, x, start, rate, seed)
		if err != nil {
			t.Fatal(err)
		}
		var s float64
		for i, v := range xL {
			s += float64(v) * float64(r[i])
		}
		return s
	}
	loss(x0)
	gm, err := worldmodel.New(cfg, 1) // a Params to hold the gradient
	if err != nil {
		t.Fatal(err)
	}
	g := gm.Params()
	clear(g.Data)
	dx0, err := b.Backward(r, g)
	if err != nil {
		t.Fatal(err)
	}
	dx0 = slices.Clone(dx0)
	// Along x0.
	v := make([]float32, len(x0))
	var want float64
	for i := range v {
		v[i] = float32(rng.NormFloat64())
		want += float64(dx0[i]) * float64(v[i])
	}
	const eps = 3e-3
	xp, xm := slices.Clone(x0), slices.Clone(x0)
	for i := range v {
		xp[i] += eps * v[i]
		xm[i] -= eps * v[i]
	}
	got := (loss(xp) - loss(xm)) / (2 * eps)
	t.Logf("d loss along x0: backward %.6g, central difference %.6g", want, got)
	if !(math.Abs(got-want) <= 1e-2*math.Abs(want)) {
		t.Errorf("d loss along x0: backward %.6g, central difference %.6g", want, got)
	}
	// Along every block parameter.
	want = 0
	var dirs [][]float32
	for l := 0; l < cfg.Layers; l++ {
		gs := tensors(g.Block(l))
		for k, w := range tensors(m.Params().Block(l)) {
			d := make([]float32, len(w))
			for i := range d {
				d[i] = float32(rng.NormFloat64())
				want += float64(gs[k][i]) * float64(d[i])
			}
			dirs = append(dirs, d)
		}
	}
	const epsW = 1e-3
	step := func(f float32) {
		j := 0
		for l := 0; l < cfg.Layers; l++ {
			for _, w := range tensors(m.Params().Block(l)) {
				for i := range w {
					w[i] += f * dirs[j][i]
				}
				j++
			}
		}
	}
	step(epsW)
	lp := loss(x0)
	step(-2 * epsW)
	lm := loss(x0)
	step(epsW)
	got = (lp - lm) / (2 * epsW)
	t.Logf("d loss along the block parameters: backward %.6g, central difference %.6g", want, got)
	if !(math.Abs(got-want) <= 1e-2*math.Abs(want)) {
		t.Errorf("d loss along the block parameters: backward %.6g, central difference %.6g", want, got)
	}
}

// TestBlocksDropout: with dropout a training step on the engine gives
// finite gradients that differ from the step without it; the engine's
// forward depends on the seed and only on it (the same seed, the same
// bits), and rate 0 applies no mask (the kernel's mask statistics are
// checked directly: the rate's fraction dropped, the rest scaled by
// 1/(1-rate)).
func TestBlocksDropout(t *testing.T) {
	d := trainEmu(t)
	cfg0 := tinyConfig(t, 0)
	seqs := randomSeqs(rand.New(rand.NewPCG(6, 6)), &cfg0, 3, 4)
	grads := map[float64][]float32{}
	for _, rate := range []float64{0, 0.3} {
		cfg := tinyConfig(t, rate)
		m := tinyTrainModel(t, cfg, 3)
		tr, err := worldmodel.NewTrainer(m, seqs, trainCfg)
		if err != nil {
			t.Fatal(err)
		}
		tr.SetBlockEngine(newBlocks(t, d, cfg))
		st := tr.Step()
		if err := tr.Err(); err != nil {
			t.Fatal(err)
		}
		g := tr.LastGrad()
		for i, v := range g {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("dropout %g: gradient %d is %g", rate, i, v)
			}
		}
		grads[rate] = slices.Clone(g)
		t.Logf("dropout %g: loss %.6f, gradient norm %.4g", rate, st.Loss, st.GradNorm)
	}
	// The blocks' gradients differ (the embedding's dropout alone would
	// change them too; the blocks' own masks are checked below).
	cfg := tinyConfig(t, 0)
	m := tinyTrainModel(t, cfg, 3)
	var diff, mx float64
	for _, tn := range m.Params().Tensors {
		if !strings.HasPrefix(tn.Name, "layer") {
			continue
		}
		for i := tn.Off; i < tn.Off+tn.Size(); i++ {
			diff = max(diff, math.Abs(float64(grads[0][i]-grads[0.3][i])))
			mx = max(mx, math.Abs(float64(grads[0][i])))
		}
	}
	if !(diff > 0.01*mx) {
		t.Errorf("the blocks' gradients with dropout 0.3 are within %.3g of those without (max %.3g)", diff, mx)
	}

	// The engine alone: the same seed, the same bits; another seed or rate
	// 0, other outputs.
	b := newBlocks(t, d, cfg)
	x0, start := randomBatch(rand.New(rand.NewPCG(2, 2)), &cfg, 1, 2)
	fwd := func(rate float64, seed uint64) []float32 {
		out, err := b.Forward(m, x0, start, rate, seed)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Clone(out)
	}
	a1, a2, other, none := fwd(0.3, 5), fwd(0.3, 5), fwd(0.3, 6), fwd(0, 5)
	if !slices.Equal(a1, a2) {
		t.Error("two forwards with the same seed differ")
	}
	if slices.Equal(a1, other) || slices.Equal(a1, none) {
		t.Error("the forward does not depend on the dropout seed and rate")
	}
	if !slices.Equal(none, fwd(0, 6)) {
		t.Error("with rate 0 the seed changes the forward")
	}

	// The masks themselves.
	const n = 1 << 14
	buf, err := upload(d, make([]float32, n))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Free(buf)
	ones := make([]float32, n)
	for i := range ones {
		ones[i] = 1
	}
	for _, rate := range []float64{0, 0.25, 0.5} {
		if err := d.Write(buf, bytesOf(ones)); err != nil {
			t.Fatal(err)
		}
		b.rate, b.seed = rate, 11
		run := newLauncher(d)
		elem(run, "tr_mask", n, append([]uint64{a(buf), a(buf), i(n)}, b.dropArgs(3)...)...)
		if run.err != nil {
			t.Fatal(run.err)
		}
		got := make([]float32, n)
		if err := d.Read(bytesOf(got), buf); err != nil {
			t.Fatal(err)
		}
		keep := float32(1 / (1 - rate))
		dropped := 0
		for i, v := range got {
			switch v {
			case 0:
				dropped++
			case keep:
			default:
				t.Fatalf("rate %g: mask value %d is %g, want 0 or %g", rate, i, v, keep)
			}
		}
		frac := float64(dropped) / n
		t.Logf("rate %g: %.4f dropped", rate, frac)
		if math.Abs(frac-rate) > 0.02 || (rate == 0 && dropped != 0) {
			t.Errorf("rate %g: %.4f of the units dropped", rate, frac)
		}
	}
}
