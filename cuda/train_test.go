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
	gradRel = 1e-3
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
	cpuM, gpuM := tinyTrainModel(t, cfg, 5), tinyTrainModel(t, cfg, 5)
	w0 := slices.Clone(cpuM.Params().Data)
	cpu, err := worldmodel.NewTrainer(cpuM, seqs, trainCfg)
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := worldmodel.NewTrainer(gpuM, seqs, trainCfg)
	if err != nil {
		t.Fatal(err)
	}
	gpu.SetBlockEngine(newBlocks(t, trainEmu(t), cfg))
	const steps = 3
	for s := 1; s <= steps; s++ {
		t0 := time.Now()
		sc, sg := cpu.Step(), gpu.Step()
		if err := gpu.Err(); err != nil {
			t.Fatal(err)
		}
		t.Logf("step %d: loss CPU %.7f, emulator %.7f (%.1fs)", s, sc.Loss, sg.Loss, time.Since(t0).Seconds())
		if d := math.Abs(sc.Loss - sg.Loss); !(d <= lossRel*math.Abs(sc.Loss)) {
			t.Errorf("step %d: loss %.8f on the emulator, %.8f on the CPU", s, sg.Loss, sc.Loss)
		}
		if s > 1 {
			continue // the weights differ a little from here on
		}
		gc, gg := cpu.LastGrad(), gpu.LastGrad()
		worst, worstName := 0.0, ""
		for _, tn := range cpuM.Params().Tensors {
			c, g := gc[tn.Off:tn.Off+tn.Size()], gg[tn.Off:tn.Off+tn.Size()]
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
			if strings.HasPrefix(tn.Name, "layer") {
				t.Logf("%-22s max|grad| %.3g, max diff %.3g (%.2g relative)", tn.Name, mx, diff, diff/mx)
			}
		}
		t.Logf("worst relative gradient difference over every tensor: %.3g (%s)", worst, worstName)
	}
	// The weights after a few steps: the emulator's moved as the CPU's did.
	wc, wg := cpuM.Params().Data, gpuM.Params().Data
	var moved, apart float64
	for i := range wc {
		moved += sq(float64(wc[i]) - float64(w0[i]))
		apart += sq(float64(wc[i]) - float64(wg[i]))
	}
	moved, apart = math.Sqrt(moved), math.Sqrt(apart)
	t.Logf("after %d steps: the CPU's weights moved %.4g (L2), the emulator's are %.3g from them", steps, moved, apart)
	if !(apart <= 1e-2*moved) {
		t.Errorf("after %d steps the weights are %.3g apart, more than 1%% of the %.3g they moved", steps, apart, moved)
	}
}

func sq(x float64) float64 { return x * x }
