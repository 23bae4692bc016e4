package worldmodel

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestScaleResidualInit: the two residual projections of every block, and
// nothing else, are scaled by 1/sqrt(2 x layers), deterministically.
func TestScaleResidualInit(t *testing.T) {
	cfg, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(cfg, 5)
	f := ScaleResidualInit(b)
	if want := 1 / math.Sqrt(float64(2*cfg.Layers)); math.Abs(f-want) > 1e-15 {
		t.Fatalf("factor %v, want %v", f, want)
	}
	scaled := 0
	for _, tn := range a.Params().Tensors {
		wa, _ := a.Tensor(tn.Name)
		wb, _ := b.Tensor(tn.Name)
		res := strings.HasSuffix(tn.Name, "/attn_out_w") || strings.HasSuffix(tn.Name, "/mlp_w2")
		if res {
			scaled++
		}
		for i := range wa {
			want := wa[i]
			if res {
				want = float32(float64(wa[i]) * f)
			}
			if wb[i] != want {
				t.Fatalf("%s[%d] = %v, want %v", tn.Name, i, wb[i], want)
			}
		}
	}
	if scaled != 2*cfg.Layers {
		t.Fatalf("%d residual projections, want %d", scaled, 2*cfg.Layers)
	}
	c, _ := New(cfg, 5)
	ScaleResidualInit(c)
	if digestF32(b.Params().Data) != digestF32(c.Params().Data) {
		t.Fatal("not deterministic")
	}
}

// TestTrainConfigInit: a training run records a known initialisation and
// refuses a name this build does not know (a checkpoint of a later build).
func TestTrainConfigInit(t *testing.T) {
	m := tinyModel(t, 1)
	cfg := m.Config()
	seqs := microSequences(rand.New(rand.NewPCG(2, 2)), &cfg, 2, 4)
	tr, err := NewTrainer(m, seqs, TrainConfig{Steps: 1, Init: InitScaledResidual})
	if err != nil || tr.Config().Init != InitScaledResidual {
		t.Fatalf("known init: %v", err)
	}
	if _, err := NewTrainer(m, seqs, TrainConfig{Steps: 1, Init: "orthogonal"}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `"orthogonal"`) {
		t.Fatalf("unknown init: %v", err)
	}
}
