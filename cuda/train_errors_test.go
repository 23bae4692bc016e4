package cuda

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/memowm/memowm/worldmodel"
)

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
