package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeStatusRecording writes a recording folder of a 40x5 terminal whose
// bottom row is a status line "HP:h T:t" with the facts hp and turn, and
// whose other rows are noise: n screens, turns increasing from 100 and
// each divisible by 7 when held (else never), so that held-out turns are
// values never seen in training written with digits seen at every place.
func writeStatusRecording(t *testing.T, dir string, seed uint64, n int, held bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	os.MkdirAll(dir, 0o755)
	meta := `{"format": "memowm-recording", "version": 1, "kind": "shell", "screen": "text", "width": 40, "height": 5}`
	var screens, actions, facts strings.Builder
	hp := 10 + rng.IntN(10)
	for i := range n {
		turn := 100 + 20*i + rng.IntN(13)
		for (turn%7 == 0) != held {
			turn++
		}
		if rng.IntN(3) == 0 {
			hp = 1 + rng.IntN(30)
		}
		rows := make([]string, 5)
		for y := range 4 {
			b := make([]byte, rng.IntN(30))
			for x := range b {
				b[x] = ".#-|"[rng.IntN(4)]
			}
			rows[y] = string(b)
		}
		rows[4] = fmt.Sprintf("HP:%d T:%d", hp, turn)
		s, _ := json.Marshal(map[string]any{"rows": rows, "cursor": map[string]int{"x": rng.IntN(40), "y": rng.IntN(4)}})
		screens.Write(append(s, '\n'))
		f, _ := json.Marshal(map[string]string{"hp": fmt.Sprint(hp), "turn": fmt.Sprint(turn)})
		facts.Write(append(f, '\n'))
		if i > 0 {
			actions.WriteString(`{"type": "key", "key": "j"}` + "\n")
		}
	}
	for name, s := range map[string]string{"recording.json": meta, "screens.jsonl": screens.String(),
		"actions.jsonl": actions.String(), "facts.jsonl": facts.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTextReaderCLI: import --encoder cells, a quantizer without rotation,
// and fit --stage reader --text read turns and HP values never seen in
// training from held-out sessions' quantised states.
func TestTextReaderCLI(t *testing.T) {
	dir := t.TempDir()
	var train, held []string
	for i := range 6 {
		d := filepath.Join(dir, fmt.Sprintf("tr%d", i))
		writeStatusRecording(t, d, uint64(i), 40, false)
		train = append(train, d)
	}
	for i := range 2 {
		d := filepath.Join(dir, fmt.Sprintf("ho%d", i))
		writeStatusRecording(t, d, uint64(100+i), 40, true)
		held = append(held, d)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	steps := [][]string{
		append([]string{"import", "--encoder", "cells", "--quiet", "--out", p("train.arrow")}, train...),
		append([]string{"import", "--encoder", "cells", "--quiet", "--out", p("held.arrow")}, held...),
		{"fit", "opq", "--rotation", "none", "--in", p("train.arrow"), "--out", p("c.opq"), "--quiet"},
		{"fit", "--opq", p("c.opq"), "--preset", "tiny", "--out", p("b0.mwb"), "--quiet"},
		{"fit", "opq", "--in", p("train.arrow"), "--out", p("pca.opq"), "--quiet"},
		{"fit", "--opq", p("pca.opq"), "--preset", "tiny", "--out", p("bpca.mwb"), "--quiet"},
	}
	for _, a := range steps {
		if code, stdout, stderr := memowm(t, a...); code != 0 {
			t.Fatalf("%v: status %d\n%s%s", a, code, stdout, stderr)
		}
	}
	code, stdout, stderr := memowm(t, "fit", "--stage", "reader", "--text", "--screen", "40x5", "--model", p("b0.mwb"),
		"--in", p("train.arrow"), "--eval", p("held.arrow"), "--out", p("br.mwb"), "--quiet", "--json")
	if code != 0 {
		t.Fatalf("fit --stage reader --text: status %d\n%s%s", code, stdout, stderr)
	}
	var sum struct {
		Reader  string `json:"reader"`
		Kind    string `json:"kind"`
		HeldOut struct {
			Questions  int `json:"questions"`
			Evaluation struct {
				Accuracy float64 `json:"accuracy"`
				MeanBits float64 `json:"mean_bits"`
				Kinds    []struct {
					Kind     string  `json:"kind"`
					Accuracy float64 `json:"accuracy"`
					Chance   float64 `json:"chance_accuracy"`
				} `json:"kinds"`
			} `json:"evaluation"`
		} `json:"held_out"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if !strings.HasPrefix(sum.Reader, "text-") || sum.Kind != "text" || sum.HeldOut.Questions == 0 || len(sum.HeldOut.Evaluation.Kinds) != 2 {
		t.Fatalf("summary %+v\n%s", sum, stdout)
	}
	for _, k := range sum.HeldOut.Evaluation.Kinds {
		if k.Accuracy < 0.9 || k.Accuracy < 3*k.Chance {
			t.Errorf("held-out %s: accuracy %.3f (chance %.3f), want >= 0.9", k.Kind, k.Accuracy, k.Chance)
		}
	}
	// The bundle carries the text reader; inspect names it.
	if code, stdout, _ := memowm(t, "inspect", p("br.mwb")); code != 0 || !strings.Contains(stdout, "reader        "+sum.Reader) {
		t.Errorf("inspect: %d\n%s", code, stdout)
	}
	// --probe takes a bundle's reader too, and reads a file of codes (decoded
	// memory) as it is: lossless memory reads as the quantised states did.
	for _, a := range [][]string{
		{"encode", "--model", p("br.mwb"), "--in", p("held.arrow"), "--out", p("held.mwm"), "--quiet"},
		{"decode", "--model", p("br.mwb"), "--in", p("held.mwm"), "--out", p("held-codes.arrow"), "--what", "codes", "--quiet"},
	} {
		if code, stdout, stderr := memowm(t, a...); code != 0 {
			t.Fatalf("%v: status %d\n%s%s", a, code, stdout, stderr)
		}
	}
	qb, _ := os.ReadFile(p("held.arrow") + ".questions.jsonl")
	os.WriteFile(p("held-codes.arrow")+".questions.jsonl", qb, 0o644)
	code, stdout, stderr = memowm(t, "fit", "--stage", "reader", "--probe", p("br.mwb"), "--model", p("br.mwb"),
		"--in", p("held-codes.arrow"), "--out", p("br2.mwb"), "--quiet", "--json")
	var dec struct {
		Reader     string `json:"reader"`
		Evaluation struct {
			Accuracy float64 `json:"accuracy"`
			MeanBits float64 `json:"mean_bits"`
		} `json:"evaluation"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &dec) != nil || dec.Reader != sum.Reader {
		t.Fatalf("--probe BUNDLE on decoded memory: status %d\n%s%s", code, stdout, stderr)
	}
	if dec.Evaluation.Accuracy != sum.HeldOut.Evaluation.Accuracy || dec.Evaluation.MeanBits != sum.HeldOut.Evaluation.MeanBits {
		t.Errorf("lossless memory reads %.4f / %.4f bits, the quantised states %.4f / %.4f",
			dec.Evaluation.Accuracy, dec.Evaluation.MeanBits, sum.HeldOut.Evaluation.Accuracy, sum.HeldOut.Evaluation.MeanBits)
	}
	// Errors.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"import", "--encoder", "words", "--out", p("x.arrow"), train[0]}, `--encoder "words": want hash or cells`},
		{[]string{"fit", "--stage", "reader", "--text", "--probe", p("br.mwb"), "--model", p("b0.mwb"), "--in", p("train.arrow"), "--out", p("x.mwb")}, "without --reader and --probe"},
		{[]string{"record", "tty", "--encoder", "words", "--out", p("x.arrow"), "--", "sh"}, `--encoder "words": want hash or cells`},
		{[]string{"fit", "--stage", "all", "--text", "--probe", p("br.mwb"), "--in", p("train.arrow"), "--calib", p("held.arrow"), "--out", p("x.mwb")}, "without --reader and --probe"},
		{[]string{"fit", "--stage", "reader", "--text", "--screen", "40x5", "--model", p("bpca.mwb"), "--in", p("train.arrow"), "--out", p("x.mwb")}, "fit opq --rotation none"},
		{[]string{"fit", "--stage", "reader", "--screen", "40x5", "--model", p("b0.mwb"), "--in", p("train.arrow"), "--out", p("x.mwb")}, "--screen is the text reader's"},
		{[]string{"fit", "--stage", "reader", "--probe", p("br.mwb"), "--eval", p("held.arrow"), "--model", p("b0.mwb"), "--in", p("train.arrow"), "--out", p("x.mwb")}, "--eval evaluates a reader this stage trains"},
		{[]string{"fit", "--stage", "all", "--text", "--screen", "10x1022", "--in", p("train.arrow"), "--calib", p("held.arrow"), "--out", p("x.mwb")}, "does not fit"},
		{[]string{"fit", "--stage", "reader", "--text", "--screen", "40by5", "--model", p("b0.mwb"), "--in", p("train.arrow"), "--out", p("x.mwb")}, `--screen "40by5"`},
		{[]string{"fit", "--stage", "reader", "--text", "--screen", "10x1022", "--model", p("b0.mwb"), "--in", p("train.arrow"), "--out", p("x.mwb")}, "does not fit"},
	} {
		if code, _, stderr := memowm(t, c.args...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: status %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	for _, f := range []string{"x.arrow", "x.mwb"} {
		if _, err := os.Stat(p(f)); err == nil {
			t.Errorf("a failed command left %s", f)
		}
	}
}

func TestImpactFloorFlag(t *testing.T) {
	for _, f := range []string{"-0.1", "1.5", "NaN"} {
		code, _, stderr := memowm(t, "fit", "--stage", "risk", "--impact-floor", f, "--model", "x.mwb", "--in", "x.arrow", "--out", filepath.Join(t.TempDir(), "y.mwb"))
		if code != 2 || !strings.Contains(stderr, "--impact-floor") {
			t.Errorf("--impact-floor %s: status %d, %q", f, code, stderr)
		}
	}
}
