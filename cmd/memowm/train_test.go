package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/memowm/memowm/entropy"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

func TestStageArg(t *testing.T) {
	cases := []struct {
		args  []string
		stage string
		rest  []string
	}{
		{[]string{"--stage", "wm", "--in", "x"}, "wm", []string{"--in", "x"}},
		{[]string{"--in", "x", "--stage=risk"}, "risk", []string{"--in", "x"}},
		{[]string{"-stage", "reader", "--quiet"}, "reader", []string{"--quiet"}},
		{[]string{"--in", "x"}, "", []string{"--in", "x"}},
	}
	for _, c := range cases {
		stage, rest := stageArg(c.args)
		if stage != c.stage || !reflect.DeepEqual(rest, c.rest) {
			t.Errorf("stageArg(%v) = %q %v, want %q %v", c.args, stage, rest, c.stage, c.rest)
		}
	}
}

// TestFitWMThenEncode trains a tiny model for a few steps and uses the
// bundle at once.
func TestFitWMThenEncode(t *testing.T) {
	dir := t.TempDir()
	traj, bundle, mem := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "b.mwb"), filepath.Join(dir, "m.mwm")
	for _, c := range [][]string{
		{"sim", "--episodes", "4", "--steps", "20", "--dim", "32", "--out", traj, "--quiet"},
		{"fit", "--stage", "wm", "--in", traj, "--preset", "tiny", "--steps", "3", "--batch", "4", "--out", bundle},
		{"encode", "--model", bundle, "--in", traj, "--out", mem, "--quiet"},
		{"verify", "--model", bundle, mem},
	} {
		code, out, errs := memowm(t, c...)
		if code != 0 {
			t.Fatalf("%v: status %d\n%s%s", c, code, out, errs)
		}
		if c[0] == "verify" && !strings.Contains(out, "4 episodes, 84 observations intact") {
			t.Fatalf("verify: %s", out)
		}
	}
}

// TestCheckpointRemovedAfterFinishedRun: a finished fit --stage wm removes
// its checkpoint unless --keep-checkpoint.
func TestCheckpointRemovedAfterFinishedRun(t *testing.T) {
	dir := t.TempDir()
	traj := filepath.Join(dir, "t.arrow")
	if code, _, errs := memowm(t, "sim", "--episodes", "8", "--steps", "12", "--dim", "32", "--out", traj, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	for _, keep := range []bool{false, true} {
		out := filepath.Join(dir, fmt.Sprintf("m%v.mwb", keep))
		args := []string{"fit", "--stage", "wm", "--in", traj, "--out", out, "--preset", "tiny", "--steps", "3", "--checkpoint-every", "1"}
		if keep {
			args = append(args, "--keep-checkpoint")
		}
		if code, o, errs := memowm(t, args...); code != 0 {
			t.Fatalf("%v: %d %s %s", args, code, o, errs)
		}
		_, err := os.Stat(out + ".ckpt")
		if keep != (err == nil) {
			t.Fatalf("--keep-checkpoint=%v: checkpoint %v", keep, err)
		}
	}
}

// TestFitJSON: fit and fit --stage wm print their summaries as JSON.
func TestFitJSON(t *testing.T) {
	dir := t.TempDir()
	traj := filepath.Join(dir, "t.arrow")
	if code, _, errs := memowm(t, "sim", "--episodes", "8", "--steps", "12", "--dim", "32", "--out", traj, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs := memowm(t, "fit", "--in", traj, "--out", filepath.Join(dir, "r.mwb"), "--preset", "tiny", "--json", "--quiet")
	var plain struct {
		Params   int            `json:"params"`
		Training map[string]any `json:"training"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &plain) != nil || plain.Params == 0 || plain.Training == nil {
		t.Fatalf("fit --json: %d\n%s%s", code, out, errs)
	}
	code, out, errs = memowm(t, "fit", "--stage", "wm", "--in", traj, "--eval", traj, "--out", filepath.Join(dir, "w.mwb"), "--preset", "tiny", "--steps", "2", "--json", "--quiet")
	var wm struct {
		Steps   int `json:"steps"`
		HeldOut struct {
			Bits float64 `json:"bits_per_transition"`
		} `json:"held_out"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &wm) != nil || wm.Steps != 2 || wm.HeldOut.Bits <= 0 {
		t.Fatalf("fit --stage wm --json: %d\n%s%s", code, out, errs)
	}
}

// TestFitEarlyStop: with --patience and a gain no evaluation reaches, fit
// stops after that many evaluations without one, keeps the lowest
// evaluation's weights, records the run as stopped early (a finished run:
// encode takes the bundle without a warning) and says so.
func TestFitEarlyStop(t *testing.T) {
	dir := t.TempDir()
	traj, out := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "w.mwb")
	if code, _, errs := memowm(t, "sim", "--episodes", "6", "--steps", "12", "--dim", "32", "--out", traj, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	code, o, errs := memowm(t, "fit", "--stage", "wm", "--in", traj, "--eval", traj, "--out", out, "--preset", "tiny",
		"--steps", "40", "--eval-every", "2", "--patience", "2", "--min-delta", "0.9", "--json")
	var sum struct {
		LR       float64 `json:"lr"`
		Training struct {
			Steps        int  `json:"steps"`
			RanSteps     int  `json:"ran_steps"`
			StoppedEarly bool `json:"stopped_early"`
		} `json:"training"`
	}
	if code != 0 || json.Unmarshal([]byte(o), &sum) != nil || !sum.Training.StoppedEarly || sum.Training.Steps%2 != 0 || sum.Training.Steps < 2 || sum.Training.RanSteps != 6 || sum.LR != 3e-3 {
		t.Fatalf("fit --patience: %d %+v\n%s%s", code, sum, o, errs)
	}
	kept := fmt.Sprintf("keeping the weights of step %d", sum.Training.Steps)
	if !strings.Contains(errs, "stopped early at step 6") || !strings.Contains(errs, kept) {
		t.Fatalf("progress does not say it stopped (%s): %s", kept, errs)
	}
	if code, o, _ := memowm(t, "inspect", out); code != 0 || !strings.Contains(o, fmt.Sprintf("stopped early: the weights of step %d", sum.Training.Steps)) {
		t.Fatalf("inspect: %s", o)
	}
	if code, _, errs := memowm(t, "encode", "--model", out, "--in", traj, "--out", filepath.Join(dir, "m.mwm")); code != 0 || strings.Contains(errs, "untrained") {
		t.Fatalf("encode with an early-stopped bundle: %d %s", code, errs)
	}
	for _, bad := range [][]string{{"--patience", "2"}, {"--patience", "-1", "--eval", traj}, {"--eval", traj, "--min-delta", "1"}, {"--lr", "-1"}} {
		args := append([]string{"fit", "--stage", "wm", "--in", traj, "--out", filepath.Join(dir, "x.mwb"), "--preset", "tiny", "--steps", "2"}, bad...)
		if code, _, errs := memowm(t, args...); code != 2 {
			t.Errorf("%v: %d %s", bad, code, errs)
		}
	}
}

// TestFitScaledInit: --scaled-init scales a fresh model's residual
// projections (fit says by how much) and is refused where no fresh model is
// made: on --resume, and on --model without --preset.
func TestFitScaledInit(t *testing.T) {
	dir := t.TempDir()
	traj, out := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "w.mwb")
	if code, _, errs := memowm(t, "sim", "--episodes", "6", "--steps", "12", "--dim", "32", "--out", traj, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	fit := func(extra ...string) (int, string) {
		args := append([]string{"fit", "--stage", "wm", "--in", traj, "--steps", "2", "--scaled-init"}, extra...)
		code, _, errs := memowm(t, args...)
		return code, errs
	}
	if code, errs := fit("--out", out, "--preset", "tiny", "--keep-checkpoint"); code != 0 || !strings.Contains(errs, "residual projections initialised at 0.500 of the fan-in scale") {
		t.Fatalf("fit --scaled-init: %d %s", code, errs)
	}
	if code, errs := fit("--out", filepath.Join(dir, "p.mwb"), "--model", out, "--preset", "tiny"); code != 0 || !strings.Contains(errs, "initialised at 0.500") {
		t.Fatalf("fit --model --preset --scaled-init: %d %s", code, errs)
	}
	for _, bad := range [][]string{{"--out", filepath.Join(dir, "r.mwb"), "--resume", out + ".ckpt"}, {"--out", filepath.Join(dir, "m.mwb"), "--model", out}} {
		if code, errs := fit(bad...); code != 2 || !strings.Contains(errs, "--scaled-init sets up a fresh model") {
			t.Errorf("%v: %d %s", bad, code, errs)
		}
	}

	// The bundle and the checkpoint record the initialisation; a resumed
	// run and one that continues the bundle keep the record, a fresh
	// preset from it does not.
	initOf := func(path string) string {
		t.Helper()
		b, err := model.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return b.Training.Init
	}
	if got := initOf(out); got != worldmodel.InitScaledResidual {
		t.Errorf("bundle records init %q", got)
	}
	ck, err := worldmodel.LoadCheckpoint(out + ".ckpt")
	if err != nil || ck.Train.Init != worldmodel.InitScaledResidual {
		t.Fatalf("checkpoint init %q, %v", ck.Train.Init, err)
	}
	runs := []struct {
		args []string
		want string
	}{
		{[]string{"--resume", out + ".ckpt", "--steps", "3"}, worldmodel.InitScaledResidual},
		{[]string{"--model", out}, worldmodel.InitScaledResidual},
		{[]string{"--model", out, "--preset", "tiny"}, ""},
	}
	for i, r := range runs {
		o := filepath.Join(dir, fmt.Sprintf("run%d.mwb", i))
		code, stdout, errs := memowm(t, append([]string{"fit", "--stage", "wm", "--in", traj, "--steps", "2", "--out", o}, r.args...)...)
		if code != 0 {
			t.Fatalf("%v: %d %s", r.args, code, errs)
		}
		if got := initOf(o); got != r.want {
			t.Errorf("%v: bundle records init %q, want %q", r.args, got, r.want)
		}
		if strings.Contains(stdout, "initialisation of batch") || strings.Contains(stdout, ") of batch") {
			t.Errorf("%v: the training record runs into the batch: %q", r.args, stdout)
		}
		if named := strings.Contains(stdout, "from the scaled-residual initialisation"); named != (r.want != "") {
			t.Errorf("%v: summary %q names the initialisation: %v", r.args, stdout, named)
		}
	}
}

// TestOrder1Bits checks the held-out order-1 figure, read a chunk of
// states at a time, against the plain count over whole sequences (one
// sequence longer than two chunks, one of a single state).
func TestOrder1Bits(t *testing.T) {
	const J, C = 5, 4
	rng := rand.New(rand.NewPCG(3, 3))
	var seqs []worldmodel.Sequence
	for _, n := range []int{140, 1, 64, 65, 7} {
		var s worldmodel.Sequence
		z := make([]uint8, J)
		for k := range n {
			z[rng.IntN(J)] = uint8(rng.IntN(C))
			s.Codes = append(s.Codes, slices.Clone(z))
			if k > 0 {
				s.Actions = append(s.Actions, trajectory.Action{})
			}
		}
		seqs = append(seqs, s)
	}
	m, err := entropy.NewContextModel(J, C, C)
	if err != nil {
		t.Fatal(err)
	}
	var q16 uint64
	n := 0
	for _, s := range seqs {
		for k := 1; k < len(s.Codes); k++ {
			for j := range J {
				q16 += uint64(m.CostQ16(j, int(s.Codes[k-1][j]), int(s.Codes[k][j])))
				m.Update(j, int(s.Codes[k-1][j]), int(s.Codes[k][j]))
			}
			n++
		}
	}
	want := float64(q16) / 65536 / float64(n)
	got, err := order1Bits(worldmodel.Seqs(seqs), J, C)
	if err != nil || got != want || n != 139+0+63+64+6 {
		t.Fatalf("order1Bits %v %v, want %v over %d transitions", got, err, want, n)
	}
}

// TestFitContinuesTraining: fit --stage wm --model B continues B's trained
// world model, and the new bundle records the earlier runs' steps (through
// a checkpoint too); --preset starts afresh and records none.
func TestFitContinuesTraining(t *testing.T) {
	dir := t.TempDir()
	traj := filepath.Join(dir, "t.arrow")
	if code, _, errs := memowm(t, "sim", "--episodes", "6", "--steps", "12", "--dim", "32", "--out", traj, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	b := func(n string) string { return filepath.Join(dir, n+".mwb") }
	// Every run records its time, so the time over the runs a bundle
	// continued is known, and it grows with each.
	lastSeconds := 0.0
	steps := func(path string) (prior, total int) {
		t.Helper()
		m, err := model.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.CheckTrained(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		sec, ok := m.Training.TotalSeconds()
		if !ok || !(m.Training.Seconds > 0) || m.Training.PriorSteps > 0 && sec <= lastSeconds {
			t.Fatalf("%s: %+v: training time %g %v, the bundle before %g", path, m.Training, sec, ok, lastSeconds)
		}
		lastSeconds = sec
		return m.Training.PriorSteps, m.Training.TotalSteps()
	}
	fit := func(args ...string) (string, string) {
		t.Helper()
		a := append([]string{"fit", "--stage", "wm", "--in", traj, "--batch", "4"}, args...)
		code, out, errs := memowm(t, a...)
		if code != 0 {
			t.Fatalf("%v: status %d\n%s%s", a, code, out, errs)
		}
		return out, errs
	}
	fit("--preset", "tiny", "--steps", "3", "--out", b("a"))
	steps(b("a"))
	out, errs := fit("--model", b("a"), "--steps", "2", "--out", b("b"))
	if p, n := steps(b("b")); p != 3 || n != 5 || !strings.Contains(out, "trained 2 of 2 steps, after 3 steps of earlier runs (5 in all)") ||
		!strings.Contains(errs, "the starting weights had 3 steps of earlier training") {
		t.Fatalf("continued: prior %d, total %d\n%s%s", p, n, out, errs)
	}
	// A checkpoint of a continued run carries the earlier steps to --resume.
	fit("--model", b("b"), "--steps", "2", "--checkpoint-every", "1", "--keep-checkpoint", "--out", b("c"))
	fit("--resume", b("c")+".ckpt", "--steps", "3", "--out", b("d"))
	if p, n := steps(b("d")); p != 5 || n != 8 {
		t.Fatalf("resumed continuation: prior %d, total %d, want 5 and 8", p, n)
	}
	// --preset with --model takes the quantizer only: a fresh start.
	fit("--model", b("b"), "--preset", "tiny", "--steps", "2", "--out", b("e"))
	if p, n := steps(b("e")); p != 0 || n != 2 {
		t.Fatalf("--preset: prior %d, total %d, want 0 and 2", p, n)
	}
	// With --patience a continuation first measures its starting weights,
	// and ends holding them when nothing beats them (here a rate that only
	// makes things worse): the bundle records so, and its world model is
	// the one it started from.
	held := filepath.Join(dir, "h.arrow")
	if code, _, errs := memowm(t, "sim", "--episodes", "3", "--steps", "12", "--dim", "32", "--seed", "7", "--out", held, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	out, errs = fit("--model", b("a"), "--steps", "10", "--lr", "0.5", "--eval", held, "--eval-every", "2", "--patience", "2", "--out", b("f"))
	if !strings.Contains(errs, "fit wm: the starting weights: held-out") || !strings.Contains(errs, "keeping the weights of step 0") ||
		!regexp.MustCompile(`kept its starting weights: no held-out evaluation beat them \(ran \d+ of 10 steps\), after 3 steps of earlier runs \(3 in all\)`).MatchString(out) {
		t.Fatalf("a continuation that only did worse:\n%s%s", out, errs)
	}
	if p, n := steps(b("f")); p != 3 || n != 3 {
		t.Fatalf("kept start: prior %d, total %d, want 3 and 3", p, n)
	}
	ma, err := model.Load(b("a"))
	if err != nil {
		t.Fatal(err)
	}
	mf, err := model.Load(b("f"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ma.Model.Params().Data, mf.Model.Params().Data) {
		t.Fatal("the bundle that kept its starting weights holds other weights")
	}
}

// TestFitHistory: --history sets the new model's window, which the codec
// then uses (a memory file written with it verifies); it sets up a fresh
// model only; --window below the model's window says it is an ablation.
func TestFitHistory(t *testing.T) {
	dir := t.TempDir()
	traj := filepath.Join(dir, "t.arrow")
	if code, _, errs := memowm(t, "sim", "--episodes", "6", "--steps", "12", "--dim", "32", "--out", traj, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	b1, mem := filepath.Join(dir, "h1.mwb"), filepath.Join(dir, "h1.mwm")
	code, _, errs := memowm(t, "fit", "--stage", "wm", "--in", traj, "--preset", "tiny", "--history", "1", "--steps", "3", "--out", b1)
	if code != 0 || !strings.Contains(errs, ", window 1, seed 0") || strings.Contains(errs, "an ablation") {
		t.Fatalf("fit --history 1: %d\n%s", code, errs)
	}
	b, err := model.Load(b1)
	if err != nil || b.Model.Config().MaxHistory != 1 {
		t.Fatalf("bundle: %v", err)
	}
	for _, c := range [][]string{{"encode", "--model", b1, "--in", traj, "--out", mem, "--quiet"}, {"verify", "--model", b1, mem}} {
		if code, out, errs := memowm(t, c...); code != 0 {
			t.Fatalf("%v: %d %s%s", c, code, out, errs)
		}
	}
	if code, out, _ := memowm(t, "inspect", b1); code != 0 || !strings.Contains(out, "window 1;") {
		t.Fatalf("inspect: %d %s", code, out)
	}
	for _, bad := range [][]string{{"--model", b1, "--history", "2"}, {"--resume", b1 + ".ckpt", "--history", "2"}, {"--preset", "tiny", "--history", "-1"}} {
		a := append([]string{"fit", "--stage", "wm", "--in", traj, "--steps", "2", "--out", filepath.Join(dir, "x.mwb")}, bad...)
		if code, _, errs := memowm(t, a...); code != 2 || !strings.Contains(errs, "--history") {
			t.Errorf("%v: %d %s", bad, code, errs)
		}
	}
	code, _, errs = memowm(t, "fit", "--stage", "wm", "--in", traj, "--preset", "tiny", "--window", "1", "--steps", "2", "--out", filepath.Join(dir, "w1.mwb"))
	if code != 0 || !strings.Contains(errs, "training on 1-state histories, but the model's window is 16 states, which the codec fills: an ablation") {
		t.Fatalf("--window 1: %d %s", code, errs)
	}
}
