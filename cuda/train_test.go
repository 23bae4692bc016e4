package cuda

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// The engine's tests run the training kernels on the PTX emulator with the
// tiny preset (width 32, 2 heads, MLP 128, 2 blocks, 32 slots) and batches
// of a few short histories of mixed lengths.

// tinyConfig is the tiny preset with the given dropout.
func tinyConfig(t testing.TB, dropout float64) worldmodel.Config {
	t.Helper()
	cfg, err := worldmodel.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dropout = dropout
	return cfg
}

// tinyTrainModel is worldmodel.New(cfg, seed) with every block tensor
// perturbed (seeded), so that no bias or gain gradient is the trivial one
// of the initialisation.
func tinyTrainModel(t testing.TB, cfg worldmodel.Config, seed uint64) *worldmodel.Model {
	t.Helper()
	m, err := worldmodel.New(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 17))
	for l := 0; l < cfg.Layers; l++ {
		for _, ts := range tensors(m.Params().Block(l)) {
			for i := range ts {
				ts[i] += float32(0.05 * rng.NormFloat64())
			}
		}
	}
	return m
}

// randomSeqs returns n sequences of T transitions: states that change a
// few codes at a time, random actions.
func randomSeqs(rng *rand.Rand, cfg *worldmodel.Config, n, T int) []worldmodel.Sequence {
	seqs := make([]worldmodel.Sequence, n)
	J := cfg.Coords()
	for i := range seqs {
		codes := make([]uint8, J)
		for j := range codes {
			codes[j] = uint8(rng.IntN(cfg.Codewords))
		}
		for k := 0; k <= T; k++ {
			for c := 0; c < J/8; c++ {
				codes[rng.IntN(J)] = uint8(rng.IntN(cfg.Codewords))
			}
			seqs[i].Codes = append(seqs[i].Codes, slices.Clone(codes))
			if k < T {
				a := trajectory.Action{Type: trajectory.ActionType(rng.IntN(trajectory.NumActionTypes))}
				if rng.IntN(2) == 0 {
					a.HasPos, a.X, a.Y = true, rng.Float32(), rng.Float32()
				}
				a.Payload = []byte("ab")[:rng.IntN(3)]
				seqs[i].Actions = append(seqs[i].Actions, a)
			}
		}
	}
	return seqs
}

func trainEmu(t testing.TB) Device {
	t.Helper()
	d, err := OpenEmulator()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func newBlocks(t testing.TB, d Device, cfg worldmodel.Config) *Blocks {
	t.Helper()
	b, err := NewBlocks(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// trainCfg: batches of 3 histories of 1 to 3 states (96 to 288 token rows).
var trainCfg = worldmodel.TrainConfig{Steps: 100, Batch: 3, Window: 3, Seed: 7}

// gradTol is the parity tolerance of a gradient tensor: the largest
// difference from the CPU's gradient at most gradRel times the CPU
// tensor's largest magnitude (plus gradAbs for tensors whose gradient is
// zero or nearly).
const (
	gradRel = 1e-4
	gradAbs = 1e-7
	lossRel = 1e-5
)

// TestBlocksGradParity: one step of the same model on the same batch, the
// blocks on the CPU and on the emulator (dropout 0): the same loss within
// lossRel, and every tensor's gradient within gradTol of the CPU's; then a
// few steps later the weights are still close.
func TestBlocksGradParity(t *testing.T) {
	cfg := tinyConfig(t, 0)
	seqs := randomSeqs(rand.New(rand.NewPCG(3, 3)), &cfg, 4, 6)
	stepParity(t, trainEmu(t), cfg, seqs, trainCfg, 3)
}

// TestBlocksGPU runs the parity check on a real GPU when one opens (never
// in CI): the tiny and small presets, full windows, and the step times.
func TestBlocksGPU(t *testing.T) {
	d, err := Open(0)
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	defer d.Close()
	for _, preset := range []string{"tiny", "small"} {
		cfg, err := worldmodel.Preset(preset)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Dropout = 0
		seqs := randomSeqs(rand.New(rand.NewPCG(3, 3)), &cfg, 8, 20)
		tc := worldmodel.TrainConfig{Steps: 100, Batch: 8, Seed: 7}
		t.Logf("%s on %s", preset, d.Info())
		stepParity(t, d, cfg, seqs, tc, 3)
	}
}

// stepParity runs steps training steps of the same model on seqs twice,
// the blocks on the CPU and on d (cfg's dropout should be 0): the same loss
// within lossRel at every step, every tensor's gradient of the first step
// within gradTol of the CPU's, and after the steps the weights within 1%
// of how far they moved.
func stepParity(t *testing.T, d Device, cfg worldmodel.Config, seqs []worldmodel.Sequence, tc worldmodel.TrainConfig, steps int) {
	t.Helper()
	cpuM, devM := tinyTrainModel(t, cfg, 5), tinyTrainModel(t, cfg, 5)
	w0 := slices.Clone(cpuM.Params().Data)
	cpu, err := worldmodel.NewTrainer(cpuM, seqs, tc)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := worldmodel.NewTrainer(devM, seqs, tc)
	if err != nil {
		t.Fatal(err)
	}
	dev.SetBlockEngine(newBlocks(t, d, cfg))
	for s := 1; s <= steps; s++ {
		t0 := time.Now()
		sc := cpu.Step()
		t1 := time.Now()
		sg := dev.Step()
		t2 := time.Now()
		if err := dev.Err(); err != nil {
			t.Fatal(err)
		}
		t.Logf("step %d: loss CPU %.7f (%.2fs), device %.7f (%.2fs)", s, sc.Loss, t1.Sub(t0).Seconds(), sg.Loss, t2.Sub(t1).Seconds())
		if d := math.Abs(sc.Loss - sg.Loss); !(d <= lossRel*math.Abs(sc.Loss)) {
			t.Errorf("step %d: loss %.8f on the device, %.8f on the CPU", s, sg.Loss, sc.Loss)
		}
		if s > 1 {
			continue // the weights differ a little from here on
		}
		worst, worstName := checkGrads(t, cpuM.Params().Tensors, cpu.LastGrad(), dev.LastGrad(), true)
		t.Logf("worst relative gradient difference over every tensor: %.3g (%s)", worst, worstName)
	}
	// The weights after a few steps: the device's moved as the CPU's did.
	wc, wg := cpuM.Params().Data, devM.Params().Data
	var moved, apart float64
	for i := range wc {
		moved += sq(float64(wc[i]) - float64(w0[i]))
		apart += sq(float64(wc[i]) - float64(wg[i]))
	}
	moved, apart = math.Sqrt(moved), math.Sqrt(apart)
	t.Logf("after %d steps: the CPU's weights moved %.4g (L2), the device's are %.3g from them", steps, moved, apart)
	if !(apart <= 1e-2*moved) {
		t.Errorf("after %d steps the weights are %.3g apart, more than 1%% of the %.3g they moved", steps, apart, moved)
	}
}

func sq(x float64) float64 { return x * x }

// TestBlocksOddShapes: the engine against the CPU's blocks for shapes the
// tiny preset does not reach: widths and head widths that are not powers
// of two (partial GEMM tiles, idle attention threads), a head wider than
// the attention's thread block, one block (only the last-state block), and
// split-K weight gradients.
func TestBlocksOddShapes(t *testing.T) {
	base := worldmodel.Config{
		Profile: worldmodel.ProfileF32, MaxHistory: 4, Slots: 3, Subspaces: 5, Codewords: 5, CodeDim: 3,
		Layers: 3, Heads: 3, MLP: 7, ActionTypes: 17, CoordBins: 4, ActionDim: 3, ByteDim: 2,
		PayloadHidden: 3, MaxPayload: 4, Tasks: 1,
	}
	wide := base
	wide.Slots, wide.Subspaces, wide.CodeDim, wide.Heads, wide.Layers, wide.MLP = 2, 136, 1, 1, 1, 9
	for _, cfg := range []worldmodel.Config{base, wide} {
		seqs := randomSeqs(rand.New(rand.NewPCG(4, 4)), &cfg, 3, 5)
		tc := worldmodel.TrainConfig{Steps: 10, Batch: 4, Window: cfg.MaxHistory, Seed: 2}
		cpuM, gpuM := tinyTrainModel(t, cfg, 8), tinyTrainModel(t, cfg, 8)
		cpu, err := worldmodel.NewTrainer(cpuM, seqs, tc)
		if err != nil {
			t.Fatal(err)
		}
		gpu, _ := worldmodel.NewTrainer(gpuM, seqs, tc)
		e := newBlocks(t, trainEmu(t), cfg)
		e.splitRows = 16 // split-K weight gradients (3 or 4 splits)
		gpu.SetBlockEngine(e)
		sc, sg := cpu.Step(), gpu.Step()
		if err := gpu.Err(); err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(sc.Loss - sg.Loss); !(d <= lossRel*math.Abs(sc.Loss)) {
			t.Errorf("width %d, head width %d: loss %.8f on the emulator, %.8f on the CPU", cfg.Width(), cfg.HeadDim(), sg.Loss, sc.Loss)
		}
		worst, name := checkGrads(t, cpuM.Params().Tensors, cpu.LastGrad(), gpu.LastGrad(), false)
		t.Logf("width %d, %d heads of %d, MLP %d, %d blocks: worst relative gradient difference %.3g (%s)",
			cfg.Width(), cfg.Heads, cfg.HeadDim(), cfg.MLP, cfg.Layers, worst, name)
	}
}

// checkGrads compares two gradients tensor by tensor (gradTol) and returns
// the worst relative difference and its tensor; verbose logs the blocks'.
func checkGrads(t *testing.T, ts []worldmodel.Tensor, want, got []float32, verbose bool) (float64, string) {
	t.Helper()
	worst, worstName := 0.0, ""
	for _, tn := range ts {
		c, g := want[tn.Off:tn.Off+tn.Size()], got[tn.Off:tn.Off+tn.Size()]
		var mx, diff float64
		for i := range c {
			mx = max(mx, math.Abs(float64(c[i])))
			diff = max(diff, math.Abs(float64(c[i])-float64(g[i])))
		}
		if !(diff <= gradRel*mx+gradAbs) {
			t.Errorf("%s: gradient differs by %.3g, max |grad| %.3g (tolerance %.3g)", tn.Name, diff, mx, gradRel*mx+gradAbs)
		}
		if mx > 0 && diff/mx > worst {
			worst, worstName = diff/mx, tn.Name
		}
		if verbose && strings.HasPrefix(tn.Name, "layer") {
			t.Logf("%-22s max|grad| %.3g, max diff %.3g (%.2g relative)", tn.Name, mx, diff, diff/mx)
		}
	}
	return worst, worstName
}

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

// failDevice is a Device whose launches of one kernel (any kernel when
// kernel is "") fail.
type failDevice struct {
	Device
	kernel string
}

var errInjected = errors.New("injected launch failure")

func (f *failDevice) Launch(kernel string, grid, block Dim3, shared uint32, args ...uint64) error {
	if f.kernel == "" || f.kernel == kernel {
		return errInjected
	}
	return f.Device.Launch(kernel, grid, block, shared, args...)
}

// TestBlocksErrors: an engine whose device fails (in the forward or only
// in the backward) makes Trainer.Err report it and the step change
// nothing; Backward without a Forward, and arguments that do not fit, are
// errors.
func TestBlocksErrors(t *testing.T) {
	cfg := tinyConfig(t, 0)
	seqs := randomSeqs(rand.New(rand.NewPCG(1, 1)), &cfg, 2, 3)
	for _, kernel := range []string{"", "tr_attn_bwd_kv"} {
		m := tinyTrainModel(t, cfg, 2)
		w0 := slices.Clone(m.Params().Data)
		tr, err := worldmodel.NewTrainer(m, seqs, trainCfg)
		if err != nil {
			t.Fatal(err)
		}
		tr.SetBlockEngine(newBlocks(t, &failDevice{trainEmu(t), kernel}, cfg))
		st := tr.Step()
		if err := tr.Err(); !errors.Is(err, errInjected) || !strings.HasPrefix(err.Error(), "worldmodel: step 1: cuda: blocks") {
			t.Errorf("failing %q: Err() = %v", kernel, err)
		}
		if st != (worldmodel.StepStats{}) || tr.StepsDone() != 0 || !slices.Equal(m.Params().Data, w0) {
			t.Errorf("failing %q: the step changed something: %+v, %d steps done", kernel, st, tr.StepsDone())
		}
		if tr.Step(); tr.StepsDone() != 0 {
			t.Errorf("failing %q: a step ran after the error", kernel)
		}
	}

	b := newBlocks(t, trainEmu(t), cfg)
	m := tinyTrainModel(t, cfg, 2)
	g := m.Params()
	if _, err := b.Backward(make([]float32, cfg.Slots*cfg.Width()), g); err == nil {
		t.Error("Backward before any Forward: no error")
	}
	x0, start := randomBatch(rand.New(rand.NewPCG(1, 2)), &cfg, 2)
	for _, bad := range []struct {
		name  string
		x0    []float32
		start []int
		rate  float64
	}{
		{"short x0", x0[1:], start, 0},
		{"start not at 0", x0, []int{1, 64}, 0},
		{"rows not a multiple of the slots", x0, []int{0, 63}, 0},
		{"history longer than the window", make([]float32, 17*32*32), []int{0, 17 * 32}, 0},
		{"rate 1", x0, start, 1},
	} {
		if _, err := b.Forward(m, bad.x0, bad.start, bad.rate, 1); err == nil || !strings.HasPrefix(err.Error(), "cuda: blocks") {
			t.Errorf("%s: Forward error %v", bad.name, err)
		}
	}
	other := tinyConfig(t, 0)
	other.MLP = 64
	om, err := worldmodel.New(other, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Forward(om, x0, start, 0, 1); err == nil {
		t.Error("a model of another shape: no error")
	}
	if _, err := b.Forward(m, x0, start, 0, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Backward(make([]float32, 5), g); err == nil {
		t.Error("Backward of a wrong-sized gradient: no error")
	}
	if _, err := b.Backward(make([]float32, cfg.Slots*cfg.Width()), om.Params()); err == nil {
		t.Error("Backward into another model's Params: no error")
	}
	if _, err := NewBlocks(nil, cfg); err == nil {
		t.Error("NewBlocks without a device: no error")
	}
	if _, err := NewBlocks(trainEmu(t), other); err != nil {
		t.Errorf("NewBlocks: %v", err)
	}
	other.Heads = 5 // width 32 is not a multiple
	if _, err := NewBlocks(trainEmu(t), other); !errors.Is(err, worldmodel.ErrConfig) {
		t.Errorf("NewBlocks of an invalid config: %v", err)
	}
}

// TestTrainKernelNames: train.ptx has the kernels train.go launches.
func TestTrainKernelNames(t *testing.T) {
	_, texts := ptxModules()
	var got []string
	for _, t := range texts {
		got = append(got, kernelNames(t)...)
	}
	for _, k := range []string{"tr_gemm_nn", "tr_gemm_tn", "tr_gemm_nt", "tr_ln_fwd", "tr_ln_bwd", "tr_colsum_part",
		"tr_ln_part", "tr_colsum_final", "tr_resid", "tr_mask", "tr_bias_gelu", "tr_gelu_bwd", "tr_gather",
		"tr_scatter_add", "tr_zero", "tr_attn_fwd", "tr_attn_bwd_q", "tr_attn_bwd_kv"} {
		if !slices.Contains(got, k) {
			t.Errorf("no kernel %s", k)
		}
	}
}

// BenchmarkBlocksStep: the engine's forward and backward of a tiny-preset
// batch of 2 histories of 4 states (256 token rows) on the emulator (slow:
// an interpreter), with the products' and attention's GFLOP/s.
func BenchmarkBlocksStep(b *testing.B) {
	cfg := tinyConfig(b, 0.1)
	m := tinyTrainModel(b, cfg, 1)
	e := newBlocks(b, trainEmu(b), cfg)
	rng := rand.New(rand.NewPCG(1, 1))
	x0, start := randomBatch(rng, &cfg, 4, 4)
	dxL := make([]float32, 2*cfg.Slots*cfg.Width())
	for i := range dxL {
		dxL[i] = float32(rng.NormFloat64())
	}
	gm, err := worldmodel.New(cfg, 2)
	if err != nil {
		b.Fatal(err)
	}
	var flops int64
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		if _, err := e.Forward(m, x0, start, cfg.Dropout, uint64(n)); err != nil {
			b.Fatal(err)
		}
		if _, err := e.Backward(dxL, gm.Params()); err != nil {
			b.Fatal(err)
		}
		flops += e.FLOPs()
	}
	b.ReportMetric(float64(flops)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
