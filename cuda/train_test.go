package cuda

import (
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

// newBlocks is an engine with f32 products (TF32 off: the f32 parity).
func newBlocks(t testing.TB, d Device, cfg worldmodel.Config) *Blocks {
	t.Helper()
	b, err := NewBlocks(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if err := b.SetTF32(false); err != nil {
		t.Fatal(err)
	}
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

// tolerance is a parity check's: gradients (relative to each tensor's
// largest, plus an absolute floor), the loss (relative) and the weights
// after the steps (relative to how far they moved).
type tolerance struct{ grad, abs, loss, weights float64 }

var (
	f32Tol = tolerance{gradRel, gradAbs, lossRel, 1e-2}
	// TF32 keeps 10 mantissa bits of each product input: gradients within
	// 1% of each tensor's largest, the loss within 1e-4, the weights
	// within 2% of their movement.
	tf32Tol = tolerance{1e-2, 1e-6, 1e-4, 2e-2}
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

// TestBlocksTF32: the same with the products on (emulated) tensor cores in
// TF32, against the CPU's f32, within tf32Tol; and the TF32 gradients are
// not the f32 ones (the kernels really ran).
func TestBlocksTF32(t *testing.T) {
	cfg := tinyConfig(t, 0)
	seqs := randomSeqs(rand.New(rand.NewPCG(3, 3)), &cfg, 4, 6)
	if worst := stepParityTol(t, trainEmu(t), cfg, seqs, trainCfg, 3, true, tf32Tol); !(worst > 1e-5) {
		t.Errorf("the TF32 gradients are within %.3g of f32's: the tensor-core kernels did not run", worst)
	}
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
		if d.Has("tr_gemm_nn_tc") {
			t.Logf("%s, TF32", preset)
			stepParityTol(t, d, cfg, seqs, tc, 3, true, tf32Tol)
		}
	}
}

// stepParity runs steps training steps of the same model on seqs twice,
// the blocks on the CPU and on d (cfg's dropout should be 0): the same loss
// within lossRel at every step, every tensor's gradient of the first step
// within gradTol of the CPU's, and after the steps the weights within 1%
// of how far they moved.
func stepParity(t *testing.T, d Device, cfg worldmodel.Config, seqs []worldmodel.Sequence, tc worldmodel.TrainConfig, steps int) {
	t.Helper()
	stepParityTol(t, d, cfg, seqs, tc, steps, false, f32Tol)
}

// stepParityTol returns the worst relative gradient difference of the
// first step.

// stepParityTol is stepParity with the products in TF32 or f32 and the
// tolerance tol.
func stepParityTol(t *testing.T, d Device, cfg worldmodel.Config, seqs []worldmodel.Sequence, tc worldmodel.TrainConfig, steps int, tf32 bool, tol tolerance) float64 {
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
	e := newBlocks(t, d, cfg)
	if err := e.SetTF32(tf32); err != nil {
		t.Fatal(err)
	}
	dev.SetBlockEngine(e)
	worst := 0.0
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
		if d := math.Abs(sc.Loss - sg.Loss); !(d <= tol.loss*math.Abs(sc.Loss)) {
			t.Errorf("step %d: loss %.8f on the device, %.8f on the CPU", s, sg.Loss, sc.Loss)
		}
		if s > 1 {
			continue // the weights differ a little from here on
		}
		var worstName string
		worst, worstName = checkGradsTol(t, cpuM.Params().Tensors, cpu.LastGrad(), dev.LastGrad(), true, tol)
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
	if !(apart <= tol.weights*moved) {
		t.Errorf("after %d steps the weights are %.3g apart, more than %g of the %.3g they moved", steps, apart, tol.weights, moved)
	}
	return worst
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
	return checkGradsTol(t, ts, want, got, verbose, f32Tol)
}

func checkGradsTol(t *testing.T, ts []worldmodel.Tensor, want, got []float32, verbose bool, tol tolerance) (float64, string) {
	t.Helper()
	worst, worstName := 0.0, ""
	for _, tn := range ts {
		c, g := want[tn.Off:tn.Off+tn.Size()], got[tn.Off:tn.Off+tn.Size()]
		var mx, diff float64
		for i := range c {
			mx = max(mx, math.Abs(float64(c[i])))
			diff = max(diff, math.Abs(float64(c[i])-float64(g[i])))
		}
		if !(diff <= tol.grad*mx+tol.abs) {
			t.Errorf("%s: gradient differs by %.3g, max |grad| %.3g (tolerance %.3g)", tn.Name, diff, mx, tol.grad*mx+tol.abs)
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
