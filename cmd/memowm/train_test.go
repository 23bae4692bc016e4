package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
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
	"time"

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
	if code != 0 || !strings.Contains(errs, "training on 1-state histories, but the model's window is 16 states,\n        which the codec fills: an ablation") {
		t.Fatalf("--window 1: %d %s", code, errs)
	}
}

// TestFitKeepsBest: with --eval, fit --stage wm writes the weights of its
// best held-out evaluation, and says which step and what the last
// evaluation gave; --keep last writes the last step's. The construction: a
// high rate on a small set, whose held-out figure falls, then rises again
// (best at step 6 of 12). A run resumed from the checkpoint of its last step
// writes the same bundle, byte for byte.
func TestFitKeepsBest(t *testing.T) {
	dir := t.TempDir()
	traj, held := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "h.arrow")
	mustRun(t,
		[]string{"sim", "--episodes", "6", "--steps", "12", "--dim", "32", "--out", traj, "--quiet"},
		[]string{"sim", "--episodes", "3", "--steps", "12", "--dim", "32", "--seed", "7", "--out", held, "--quiet"},
	)
	fit := func(out string, extra ...string) (string, string) {
		t.Helper()
		args := append([]string{"fit", "--stage", "wm", "--in", traj, "--eval", held, "--preset", "tiny", "--steps", "12", "--eval-every", "2",
			"--batch", "4", "--lr", "0.03", "--out", out}, extra...)
		code, o, errs := memowm(t, args...)
		if code != 0 {
			t.Fatalf("%v: %d\n%s%s", args, code, o, errs)
		}
		return o, errs
	}
	best, last := filepath.Join(dir, "best.mwb"), filepath.Join(dir, "last.mwb")
	o, errs := fit(best, "--keep-checkpoint")
	// The evaluations, from the progress lines.
	evals := map[int]string{}
	low := 0
	for _, m := range regexp.MustCompile(`fit wm: step (\d+): held-out ([0-9.]+) bits/transition`).FindAllStringSubmatch(errs, -1) {
		var s int
		var b float64
		fmt.Sscan(m[1], &s)
		fmt.Sscan(m[2], &b)
		evals[s] = m[2]
		var lb float64
		fmt.Sscan(evals[low], &lb)
		if low == 0 || b < lb {
			low = s
		}
	}
	var lb, l12 float64
	fmt.Sscan(evals[low], &lb)
	fmt.Sscan(evals[12], &l12)
	if len(evals) != 6 || low == 12 || !(l12 > lb) {
		t.Fatalf("the construction needs a last evaluation worse than an earlier one: %v\n%s", evals, errs)
	}
	for _, want := range []string{
		fmt.Sprintf("trained 12 steps, keeping the weights of step %d (best held-out loss)", low),
		fmt.Sprintf("held-out  %s bits/transition over 36 transitions", evals[low]),
		fmt.Sprintf("kept      the weights of step %d, the best held-out evaluation: %s bits/transition;\n          the last, at step 12, gave %s (+", low, evals[low], evals[12]),
	} {
		if !strings.Contains(o, want) {
			t.Errorf("the summary does not say %q:\n%s", want, o)
		}
	}
	if !strings.Contains(errs, "fit wm: held-out evaluations every 2 steps on all 36 transitions;\n        the bundle gets the weights of the best one") {
		t.Errorf("progress does not say the evaluations choose the weights:\n%s", errs)
	}
	b, err := model.Load(best)
	if err != nil || b.Training.Steps != low || b.Training.RanSteps != 12 || !b.Training.StoppedEarly || b.CheckTrained() != nil {
		t.Fatalf("the bundle records %+v (%v)", b.Training, err)
	}

	// --keep last: the last step's weights, whose held-out figure is the
	// last evaluation's; the summary names the better one it did not keep.
	o, _ = fit(last, "--keep", "last", "--json")
	var sum struct {
		HeldOut struct {
			Bits float64 `json:"bits_per_transition"`
		} `json:"held_out"`
		Kept struct {
			Weights  string  `json:"weights"`
			Step     int     `json:"step"`
			LastStep int     `json:"last_eval_step"`
			LowStep  int     `json:"lowest_eval_step"`
			LowBits  float64 `json:"lowest_eval_bits_per_transition"`
			LastBits float64 `json:"last_eval_bits_per_transition"`
		} `json:"kept"`
		Training struct {
			Steps        int  `json:"steps"`
			StoppedEarly bool `json:"stopped_early"`
		} `json:"training"`
	}
	if err := json.Unmarshal([]byte(o), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Kept.Weights != "last" || sum.Kept.Step != 12 || sum.Kept.LastStep != 12 || sum.Kept.LowStep != low || fmt.Sprintf("%.1f", sum.HeldOut.Bits) != evals[12] ||
		sum.Kept.LastBits != sum.HeldOut.Bits || sum.Training.Steps != 12 || sum.Training.StoppedEarly {
		t.Fatalf("--keep last: %+v (evaluations %v)", sum, evals)
	}
	bl, err := model.Load(last)
	if err != nil || slices.Equal(bl.Model.Params().Data, b.Model.Params().Data) {
		t.Fatalf("--keep last wrote the same weights as --keep best (%v)", err)
	}

	// Resumed from the checkpoint of its last step, no step runs, and it
	// ends on the best weights: the same bundle.
	resumed := filepath.Join(dir, "resumed.mwb")
	if code, o, errs := memowm(t, "fit", "--stage", "wm", "--in", traj, "--eval", held, "--resume", best+".ckpt", "--out", resumed); code != 0 {
		t.Fatalf("resume: %d\n%s%s", code, o, errs)
	}
	want, _ := os.ReadFile(best)
	if got, _ := os.ReadFile(resumed); !bytes.Equal(got, want) {
		t.Fatal("resumed from the last checkpoint, fit wrote another bundle")
	}
}

// TestFitWMRefusesInputs: fit --stage wm checks --out as the other verbs
// do, before any work: it never replaces a file it reads (--in, --eval,
// --opq, --resume, --model unless the run continues it), names a missing
// folder, refuses an existing file without --force, and keeps its
// checkpoint off the files it reads and writes. Nothing is changed.
func TestFitWMRefusesInputs(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t,
		[]string{"sim", "--episodes", "4", "--steps", "10", "--dim", "32", "--out", p("t.arrow"), "--quiet"},
		[]string{"sim", "--episodes", "2", "--steps", "10", "--dim", "32", "--seed", "3", "--out", p("h.arrow"), "--quiet"},
		[]string{"fit", "opq", "--in", p("t.arrow"), "--out", p("q.opq"), "--codewords", "16", "--quiet"},
		[]string{"fit", "--stage", "wm", "--in", p("t.arrow"), "--opq", p("q.opq"), "--preset", "tiny", "--steps", "2", "--keep-checkpoint", "--out", p("a.mwb"), "--quiet"},
	)
	if err := os.Symlink(p("t.arrow"), p("link.mwb")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("x.ckpt"), []byte("not a checkpoint"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []string{"t.arrow", "h.arrow", "q.opq", "a.mwb", "a.mwb.ckpt", "x.ckpt"}
	sums := map[string]string{}
	for _, f := range files {
		sums[f] = fileSum(t, p(f))
	}
	base := []string{"fit", "--stage", "wm", "--in", p("t.arrow"), "--steps", "2", "--quiet"}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--opq", p("q.opq"), "--out", p("t.arrow")}, "is the extension of a trajectory file"},
		{[]string{"--opq", p("q.opq"), "--out", p("link.mwb"), "--force"}, "is --in " + p("t.arrow") + " (the same file, through a link): writing it would replace the input"},
		{[]string{"--opq", p("q.opq"), "--out", p("q.opq"), "--force"}, "is the extension of a quantizer file"},
		{[]string{"--opq", p("q.opq"), "--eval", p("h.arrow"), "--out", p("h.arrow"), "--force"}, "is the extension of a trajectory file"},
		{[]string{"--model", p("a.mwb"), "--preset", "tiny", "--out", p("a.mwb"), "--force"}, "is --model " + p("a.mwb") + " (the same file): writing it would replace the input"},
		{[]string{"--resume", p("a.mwb.ckpt"), "--out", p("a.mwb.ckpt"), "--force"}, "is --resume " + p("a.mwb.ckpt")},
		{[]string{"--opq", p("q.opq"), "--preset", "tiny", "--out", p("nodir/x.mwb")}, "--out " + p("nodir/x.mwb") + ": folder " + p("nodir") + " does not exist"},
		{[]string{"--opq", p("q.opq"), "--preset", "tiny", "--out", p("a.mwb")}, "--out " + p("a.mwb") + " exists: memowm does not replace files; give --force"},
		{[]string{"--opq", p("q.opq"), "--preset", "tiny", "--out", p("n.mwb"), "--checkpoint", p("t.arrow")}, "--checkpoint " + p("t.arrow") + " is --in"},
		{[]string{"--opq", p("q.opq"), "--preset", "tiny", "--out", p("n.mwb"), "--checkpoint", p("n.mwb")}, "--checkpoint " + p("n.mwb") + " is --out"},
		{[]string{"--opq", p("q.opq"), "--preset", "tiny", "--out", p("n.mwb"), "--checkpoint", p("nodir/n.ckpt")}, "folder " + p("nodir") + " does not exist"},
		{[]string{"--opq", p("q.opq"), "--preset", "tiny", "--out", p("n.mwb"), "--keep", "worst", "--eval", p("h.arrow")}, `--keep "worst": want best or last`},
		{[]string{"--opq", p("q.opq"), "--preset", "tiny", "--out", p("n.mwb"), "--keep", "last"}, "give --eval"},
		{[]string{"--opq", p("q.opq"), "--preset", "tiny", "--out", p("n.mwb"), "--keep", "last", "--eval", p("h.arrow"), "--patience", "2"}, "not with --keep last"},
	} {
		code, _, errs := memowm(t, append(slices.Clone(base), c.args...)...)
		if code != 2 || !strings.Contains(errs, c.msg) || strings.Contains(errs, "corpus") {
			t.Errorf("%v: status %d, want 2 and %q:\n%s", c.args, code, c.msg, errs)
		}
	}
	for _, f := range files {
		if got := fileSum(t, p(f)); got != sums[f] {
			t.Errorf("%s changed", f)
		}
	}
	if _, err := os.Stat(p("n.mwb")); !os.IsNotExist(err) {
		t.Errorf("a refused run wrote n.mwb: %v", err)
	}
	// A resumed run writes on the checkpoint it resumed.
	if code, out, errs := memowm(t, append(slices.Clone(base), "--opq", p("q.opq"), "--resume", p("a.mwb.ckpt"), "--checkpoint", p("a.mwb.ckpt"),
		"--steps", "3", "--keep-checkpoint", "--out", p("r.mwb"))...); code != 0 {
		t.Fatalf("resuming on its own checkpoint: %d\n%s%s", code, out, errs)
	}
	// A run that continues --model's world model may write over it, with
	// --force (as sweep trains a bundle on).
	if code, out, errs := memowm(t, append(slices.Clone(base), "--model", p("a.mwb"), "--out", p("a.mwb"), "--force")...); code != 0 {
		t.Fatalf("continuing a bundle into itself: %d\n%s%s", code, out, errs)
	}
	if b, err := model.Load(p("a.mwb")); err != nil || b.Training.PriorSteps != 2 || b.Training.TotalSteps() != 4 {
		t.Fatalf("the continued bundle: %v", err)
	}
}

// fileSum is the SHA-256 of the file at path, in hex.
func fileSum(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// TestFitProgressWidth: fit --stage wm's progress lines fit 80 columns, for
// figures as wide as a long run makes them, and every line a run prints on
// stderr does unless it names a file.
func TestFitProgressWidth(t *testing.T) {
	best := worldmodel.EvalStats{BitsPerTransition: 6143.96}
	p := worldmodel.Progress{StepStats: worldmodel.StepStats{Step: 99999, Loss: 12.34567, GradNorm: 12.3456, LR: 2.86e-3}, Steps: 99999,
		StepsPerSec: 123.456, TokensPerSec: 1234567, GFLOPS: 1234.56, ETA: 12*time.Hour + 34*time.Minute + 56*time.Second,
		Eval: &worldmodel.EvalStats{BitsPerTransition: 9999.94}, Best: &best, BestStep: 99998}
	lines := strings.Split(progressLines(p, 9999.94)+"\n"+evalLine(p), "\n")
	if len(lines) != 3 {
		t.Fatalf("%q", lines)
	}
	for _, l := range lines {
		if len(l) > 80 {
			t.Errorf("%d columns: %q", len(l), l)
		}
	}
	dir := t.TempDir()
	traj := filepath.Join(dir, "t.arrow")
	if code, _, errs := memowm(t, "sim", "--episodes", "6", "--steps", "12", "--dim", "32", "--out", traj, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	code, _, errs := memowm(t, "fit", "--stage", "wm", "--in", traj, "--eval", traj, "--preset", "tiny", "--steps", "3", "--batch", "4", "--out", filepath.Join(dir, "w.mwb"))
	if code != 0 || !strings.Contains(errs, "fit wm: step 3/3  loss ") {
		t.Fatalf("%d %s", code, errs)
	}
	for _, l := range strings.Split(errs, "\n") {
		if len(l) > 80 && !strings.Contains(l, dir) && !strings.Contains(l, "warning: opq") {
			t.Errorf("%d columns: %q", len(l), l)
		}
	}
}
