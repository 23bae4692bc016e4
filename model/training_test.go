package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/memowm/memowm/worldmodel"
)

func TestTraining(t *testing.T) {
	cases := []struct {
		tr       *Training
		complete bool
		str      string
	}{
		{nil, false, "training not recorded"},
		{&Training{}, false, "untrained (random initialisation)"},
		{&Training{Steps: 40, TargetSteps: 100, Interrupted: true}, false, "interrupted at step 40 of 100 (partly trained)"},
		{&Training{Steps: 40, TargetSteps: 100}, false, "trained 40 of 100 steps (partly trained)"},
		{&Training{Steps: 100, TargetSteps: 100, Interrupted: true}, false, "interrupted at step 100 of 100"},
		{&Training{Steps: 100, TargetSteps: 100}, true, "trained 100 of 100 steps"},
		{&Training{Steps: 60, TargetSteps: 100, StoppedEarly: true, RanSteps: 90}, true, "stopped early: the weights of step 60 (best held-out loss; ran 90 of 100 steps)"},
		{&Training{Steps: 95, TargetSteps: 100, StoppedEarly: true, RanSteps: 100}, true, "trained 100 steps, keeping the weights of step 95 (best held-out loss)"},
		{&Training{Imported: strings.Repeat("ab", 32)}, true, "imported from safetensors sha256 abababababab (trained elsewhere)"},
		{&Training{Steps: 50, TargetSteps: 50, PriorSteps: 70}, true, "trained 50 of 50 steps, after 70 steps of earlier runs (120 in all)"},
		{&Training{Steps: 20, TargetSteps: 50, PriorSteps: 70, Interrupted: true}, false, "interrupted at step 20 of 50 (partly trained), after 70 steps of earlier runs (90 in all)"},
		{&Training{Steps: 50, TargetSteps: 50, Init: worldmodel.InitScaledResidual}, true, "trained 50 of 50 steps, from the scaled-residual initialisation"},
		{&Training{Steps: 0, TargetSteps: 10, RanSteps: 4, StoppedEarly: true, PriorSteps: 20}, true, "kept its starting weights: no held-out evaluation beat them (ran 4 of 10 steps), after 20 steps of earlier runs (20 in all)"},
		{&Training{Steps: 0, TargetSteps: 10, RanSteps: 10, StoppedEarly: true, PriorSteps: 20}, true, "kept its starting weights: no held-out evaluation beat them (ran 10 of 10 steps), after 20 steps of earlier runs (20 in all)"},
	}
	for _, c := range cases {
		if c.tr.Complete() != c.complete || c.tr.String() != c.str || (c.tr != nil && c.tr.TotalSteps() != c.tr.Steps+c.tr.PriorSteps) {
			t.Errorf("%+v: complete %v, %q", c.tr, c.tr.Complete(), c.tr.String())
		}
		b := &Bundle{Training: c.tr}
		err := b.CheckTrained()
		switch {
		case c.tr == nil:
			if !errors.Is(err, ErrTrainingUnknown) {
				t.Errorf("no record: %v", err)
			}
		case c.complete && err != nil, !c.complete && (!errors.Is(err, ErrUntrained) || !strings.Contains(err.Error(), c.str)):
			t.Errorf("%+v: CheckTrained %v", c.tr, err)
		}
	}
	for _, bad := range []Training{{Steps: -1}, {TargetSteps: -5}, {Steps: 11, TargetSteps: 10}, {Steps: 5, TargetSteps: 10, RanSteps: 11},
		{Steps: 5, TargetSteps: 10, RanSteps: 4}, {Steps: 0, TargetSteps: 10, StoppedEarly: true}, {Steps: 0, TargetSteps: 10, StoppedEarly: true, PriorSteps: 5}, {Steps: 5, TargetSteps: 10, StoppedEarly: true, Interrupted: true},
		{Imported: "abc"}, {Imported: strings.Repeat("AB", 32)}, {Imported: strings.Repeat("ab", 32), Steps: 3, TargetSteps: 3},
		{Steps: 5, TargetSteps: 5, PriorSteps: -1}, {Imported: strings.Repeat("ab", 32), PriorSteps: 3},
		{Steps: 5, TargetSteps: 5, Init: "orthogonal"}, {Imported: strings.Repeat("ab", 32), Init: worldmodel.InitScaledResidual},
		{Steps: 5, TargetSteps: 5, LR: -1e-3}, {Steps: 5, TargetSteps: 5, LR: 1},
		{Steps: 5, TargetSteps: 5, Seconds: -1}, {Steps: 5, TargetSteps: 5, Seconds: 2, PriorSeconds: 3}, {Steps: 5, TargetSteps: 5, PriorSteps: 4, PriorSeconds: -3},
		{Imported: strings.Repeat("ab", 32), Seconds: 4}, {Imported: strings.Repeat("ab", 32), LR: 1e-3}} {
		b := microBundle(t)
		b.Training = &bad
		if _, err := b.Bytes(); err == nil || (!strings.Contains(err.Error(), "is impossible") && !strings.Contains(err.Error(), "stopped early") && !strings.Contains(err.Error(), "imported") && !strings.Contains(err.Error(), "initialisation") && !strings.Contains(err.Error(), "learning rate") && !strings.Contains(err.Error(), " s after ")) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// TestTotalSeconds: the training time over a run and those it continued
// is known only when every run recorded its own.
func TestTotalSeconds(t *testing.T) {
	for _, c := range []struct {
		tr    *Training
		total float64
		ok    bool
	}{
		{nil, 0, false},
		{&Training{Steps: 5, TargetSteps: 5}, 0, false},
		{&Training{Steps: 5, TargetSteps: 5, Seconds: 12.5}, 12.5, true},
		{&Training{Steps: 5, TargetSteps: 5, Seconds: 12.5, PriorSteps: 7}, 0, false},
		{&Training{Steps: 5, TargetSteps: 5, Seconds: 12.5, PriorSteps: 7, PriorSeconds: 30}, 42.5, true},
		{&Training{Imported: strings.Repeat("ab", 32)}, 0, false},
	} {
		if got, ok := c.tr.TotalSeconds(); got != c.total || ok != c.ok {
			t.Errorf("%+v: %g %v, want %g %v", c.tr, got, ok, c.total, c.ok)
		}
	}
}

// TestTrainingRecord: the record survives the file; a bundle without one
// writes the bytes it always did (pinned: a bundle written before Training
// existed), and a header that is not in its canonical encoding is refused.
func TestTrainingRecord(t *testing.T) {
	b := testBundle(t, 1)
	b.Policy = Policy{Kind: MinEntropy, MinEntropyQ16: 12345}
	data, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	const pinned = "410efe1cfaf52c1604b77b472d53d1fa31e8ee6bf253b64283325a2720cd4a6c"
	if b.HashString() != pinned || bytes.Contains(data[:200], []byte("training")) {
		t.Errorf("a bundle without a training record hashes to %s, pinned %s", b.HashString(), pinned)
	}
	r, err := Read(bytes.NewReader(data))
	if err != nil || r.Training != nil || !errors.Is(r.CheckTrained(), ErrTrainingUnknown) {
		t.Fatalf("old bundle: %v, training %v", err, r.Training)
	}
	b.Training = &Training{Steps: 500, TargetSteps: 500, Init: worldmodel.InitScaledResidual, LR: 1e-3}
	with, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if b.HashString() == pinned {
		t.Fatal("the training record does not change the identity")
	}
	r, err = Read(bytes.NewReader(with))
	if err != nil || *r.Training != *b.Training || r.CheckTrained() != nil {
		t.Fatalf("training record: %v, %+v", err, r.Training)
	}
	// The same header with a space added (and its lengths and checksum
	// fixed) is refused: one bundle, one encoding.
	hlen := int(binary.LittleEndian.Uint32(with[len(Magic)+4:]))
	hdr := with[len(Magic)+8 : len(Magic)+8+hlen]
	spaced := bytes.Replace(hdr, []byte(`,"training"`), []byte(`, "training"`), 1)
	d := append(append(bytes.Clone(with[:len(Magic)+8]), spaced...), with[len(Magic)+8+hlen:]...)
	binary.LittleEndian.PutUint32(d[len(Magic)+4:], uint32(hlen+1))
	if _, err := Read(bytes.NewReader(resealBundle(d))); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "canonical") {
		t.Fatalf("spaced header: %v", err)
	}
}
