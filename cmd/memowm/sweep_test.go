package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memowm/memowm/bench"
	"github.com/memowm/memowm/internal/atomicfile"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/worldmodel"
)

func TestSweep(t *testing.T) {
	dir := t.TempDir()
	curve := filepath.Join(dir, "c.csv")
	os.WriteFile(curve, []byte("name,params,rate_bits_per_obs\ntiny,168440,4009.1\nsmall,966672,3897.1\n"), 0o644)
	code, out, errs := memowm(t, "sweep", "--curve", curve, "--out", filepath.Join(dir, "a"))
	// No bundle sizes: B = 32P. 32 * (966672 - 168440) / (4009.1 - 3897.1) = 228066.3
	if code != 0 || !strings.Contains(out, "break-even tiny -> small: N > 2.281e+05 observations on the world models' rates alone") || !strings.Contains(out, "gives no bundle sizes") ||
		!strings.Contains(out, "gives no file_bits_per_obs: S and the break-even horizons below are on the world model's rate alone") ||
		!strings.Contains(out, "best capacity by horizon N (S = B/N + R, the world model's rate alone)") {
		t.Fatalf("sweep --curve: %d\n%s%s", code, out, errs)
	}
	for _, f := range []string{"sweep.csv", "sweep.json", "rate_vs_params.svg", "total_vs_params.png", "optimal_params_vs_horizon.svg"} {
		if _, err := os.Stat(filepath.Join(dir, "a", f)); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a", "sweep.json")); err != nil || !strings.Contains(string(b), `"smaller": "tiny",`) ||
		!strings.Contains(string(b), `"larger": "small",`) || !strings.Contains(string(b), `"n": 228066.`) {
		t.Fatalf("sweep.json's break-even: %v\n%s", err, b)
	}
	traj := filepath.Join(dir, "t.arrow")
	if code, _, errs := memowm(t, "sim", "--episodes", "4", "--steps", "20", "--dim", "32", "--out", traj, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs = memowm(t, "sweep", "--train", traj, "--eval", traj, "--presets", "tiny", "--steps", "2", "--out", filepath.Join(dir, "b"), "--quiet")
	if code != 0 || !strings.Contains(out, "tiny           168440 parameters") {
		t.Fatalf("sweep --train: %d\n%s%s", code, out, errs)
	}
	// The trained curve counts each bundle as stored: quantizer and FP32
	// weights, the file's bytes.
	st, err := os.Stat(filepath.Join(dir, "b", "tiny.mwb"))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "b", "curve.csv")); err != nil || !strings.HasPrefix(string(b), "name,params,rate_bits_per_obs,bundle_bytes,steps,lr,init,dropout,train_seconds,history,file_bits_per_obs,file_prior,bundle_sha256,eval_sha256\ntiny,168440,") ||
		!regexp.MustCompile(fmt.Sprintf(`,%d,2,0.003,,0.1,[0-9]+\.[0-9],16,[0-9]+\.[0-9]+,mix,[0-9a-f]{64},[0-9a-f]{64}\n$`, st.Size())).Match(b) {
		t.Fatalf("curve.csv %q %v (bundle %d bytes)", b, err, st.Size())
	}
	if !strings.Contains(out, "B = "+humanBytes(st.Size())+" (the bundle: quantizer, FP32 weights, policy)") || strings.Contains(out, "no bundle sizes") {
		t.Fatalf("sweep --train does not count the bundle: %s", out)
	}
	// A bundle is reused when it records a finished run of the same preset
	// and steps in all; a finished run of fewer steps trains on from its
	// weights; one of more steps is never overwritten; an interrupted one
	// is trained again.
	sweepRun := func(steps string) (int, string) {
		t.Helper()
		code, out, errs := memowm(t, "sweep", "--train", traj, "--eval", traj, "--presets", "tiny", "--steps", steps, "--out", filepath.Join(dir, "b"))
		return code, out + errs
	}
	sweep := func(steps string) string {
		t.Helper()
		code, errs := sweepRun(steps)
		if code != 0 {
			t.Fatalf("sweep --steps %s: %d\n%s", steps, code, errs)
		}
		return errs
	}
	tiny := filepath.Join(dir, "b", "tiny.mwb")
	if errs := sweep("3"); !strings.Contains(errs, "sweep: training "+tiny+" on from its 2 steps to 3 (lr 0.0015)") ||
		!strings.Contains(errs, "fit wm: tiny, 168440 parameters") || !strings.Contains(errs, "1 steps of batch") || strings.Contains(errs, "reusing") {
		t.Fatalf("a 2-step run was not trained on to 3: %s", errs)
	}
	b, err := model.Load(tiny)
	if err != nil {
		t.Fatal(err)
	}
	if b.Training == nil || !b.Training.Complete() || b.Training.PriorSteps != 2 || b.Training.Steps != 1 || b.Training.TotalSteps() != 3 {
		t.Fatalf("training record %+v", b.Training)
	}
	if errs := sweep("3"); !strings.Contains(errs, "sweep: reusing") || !strings.Contains(errs, "(3 in all)") {
		t.Fatalf("a finished run was not reused: %s", errs)
	}
	before, err := os.ReadFile(tiny)
	if err != nil {
		t.Fatal(err)
	}
	if code, errs := sweepRun("2"); code != 1 || !strings.Contains(errs, "trained for 3 steps in all, more than the 2 asked: --steps tiny=3 reuses it") {
		t.Fatalf("a longer-trained bundle: %d %s", code, errs)
	}
	if after, err := os.ReadFile(tiny); err != nil || string(after) != string(before) {
		t.Fatalf("the sweep changed a bundle it refused (%v)", err)
	}
	code, _, errs = memowm(t, "sweep", "--train", traj, "--eval", traj, "--presets", "small", "--steps", "2", "--out", filepath.Join(dir, "x"))
	if code != 0 {
		t.Fatalf("sweep small: %d %s", code, errs)
	}
	if err := os.Rename(filepath.Join(dir, "x", "small.mwb"), filepath.Join(dir, "x", "tiny.mwb")); err != nil {
		t.Fatal(err)
	}
	code, _, errs = memowm(t, "sweep", "--train", traj, "--eval", traj, "--presets", "tiny", "--steps", "2", "--out", filepath.Join(dir, "x"))
	if code != 1 || !strings.Contains(errs, "holds preset small, not tiny: move it away") {
		t.Fatalf("a bundle of another preset: %d %s", code, errs)
	}
	b, err = model.Load(tiny)
	if err != nil {
		t.Fatal(err)
	}
	b.Training = &model.Training{Steps: 1, TargetSteps: 3, Interrupted: true}
	atomicfile.AllowReplace(tiny) // as a later process may (a fit without --force marked it in this one)
	if err := b.Save(tiny); err != nil {
		t.Fatal(err)
	}
	if errs := sweep("3"); !strings.Contains(errs, "not reusing") || !strings.Contains(errs, "interrupted at step 1 of 3") {
		t.Fatalf("an interrupted run was reused: %s", errs)
	}
	if code, _, errs := memowm(t, "sweep", "--out", dir); code != 2 || !strings.Contains(errs, "either --curve") {
		t.Fatalf("no input: %d %s", code, errs)
	}
	// Steps per preset, and early stopping on held-out episodes other than
	// those R(P) is measured on.
	held := filepath.Join(dir, "h.arrow")
	if code, _, errs := memowm(t, "sim", "--episodes", "2", "--steps", "20", "--dim", "32", "--seed", "9", "--out", held, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs = memowm(t, "sweep", "--train", traj, "--eval", traj, "--valid", held, "--patience", "2", "--eval-every", "2",
		"--presets", "tiny", "--steps", "tiny=4", "--out", filepath.Join(dir, "c"))
	if code != 0 || !strings.Contains(out, "(the bundle: quantizer, FP32 weights, policy), 4 steps") ||
		!strings.Contains(errs, "fit wm: step 4: held-out") || !strings.Contains(errs, "sweep: tiny: 168440 parameters, 4 steps") {
		t.Fatalf("sweep --valid --steps tiny=4: %d\n%s%s", code, out, errs)
	}
	// A preset whose training left a checkpoint continues from it.
	e := filepath.Join(dir, "e")
	os.MkdirAll(e, 0o755)
	opqFile := filepath.Join(dir, "c", "shared.opq")
	if code, _, errs := memowm(t, "fit", "--stage", "wm", "--in", traj, "--opq", opqFile, "--preset", "tiny", "--steps", "3", "--keep-checkpoint",
		"--out", filepath.Join(e, "tiny.mwb"), "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs = memowm(t, "sweep", "--train", traj, "--eval", traj, "--opq", opqFile, "--presets", "tiny", "--steps", "5", "--out", e)
	if code != 0 || !strings.Contains(errs, "sweep: continuing tiny from "+filepath.Join(e, "tiny.mwb.ckpt")) ||
		!strings.Contains(errs, "resumed "+filepath.Join(e, "tiny.mwb.ckpt")+" at step 3 of 5") || !strings.Contains(out, ", 5 steps") {
		t.Fatalf("sweep after a checkpoint: %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(e, "tiny.mwb.ckpt")); !os.IsNotExist(err) {
		t.Fatalf("the finished run's checkpoint is still there: %v", err)
	}
	// The checkpoint of a run that continued an earlier one: the sweep
	// counts the earlier steps in its total.
	if code, _, errs := memowm(t, "fit", "--stage", "wm", "--in", traj, "--model", filepath.Join(e, "tiny.mwb"), "--steps", "2", "--keep-checkpoint",
		"--out", filepath.Join(e, "tiny.mwb"), "--force", "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	if code, errs := func() (int, string) {
		code, out, errs := memowm(t, "sweep", "--train", traj, "--eval", traj, "--opq", opqFile, "--presets", "tiny", "--steps", "5", "--out", e)
		return code, out + errs
	}(); code != 1 || !strings.Contains(errs, "trained for 7 steps in all, more than the 5 asked") {
		t.Fatalf("a bundle and checkpoint past the steps asked: %d %s", code, errs)
	}
	ckFile := filepath.Join(e, "tiny.mwb.ckpt")
	stale, err := os.ReadFile(ckFile)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs = memowm(t, "sweep", "--train", traj, "--eval", traj, "--opq", opqFile, "--presets", "tiny", "--steps", "9", "--out", e)
	if code != 0 || !strings.Contains(errs, "resumed "+ckFile+" at step 2 of 4") || !strings.Contains(out, ", 9 steps") {
		t.Fatalf("sweep after a continuation's checkpoint: %d\n%s%s", code, out, errs)
	}
	// A checkpoint older than the finished bundle is not resumed: the
	// bundle is reused, or trained on.
	if err := os.WriteFile(ckFile, stale, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = memowm(t, "sweep", "--train", traj, "--eval", traj, "--opq", opqFile, "--presets", "tiny", "--steps", "9", "--out", e)
	if code != 0 || !strings.Contains(errs, "sweep: reusing") || !strings.Contains(out, ", 9 steps") {
		t.Fatalf("sweep with a stale checkpoint, the steps of the bundle: %d\n%s%s", code, out, errs)
	}
	code, out, errs = memowm(t, "sweep", "--train", traj, "--eval", traj, "--opq", opqFile, "--presets", "tiny", "--steps", "10", "--out", e)
	if code != 0 || !strings.Contains(errs, "on from its 9 steps to 10") || strings.Contains(errs, "resumed") || !strings.Contains(out, ", 10 steps") {
		t.Fatalf("sweep with a stale checkpoint, more steps: %d\n%s%s", code, out, errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--steps", "tiny=4,small=5"}, "not one of the sweep's presets"},
		{[]string{"--presets", "tiny,small", "--steps", "tiny=4"}, "--steps gives none for preset small"},
		{[]string{"--steps", "tiny=0"}, "not a positive step count"},
		{[]string{"--steps", "tiny=4,tiny=5"}, "tiny given twice"},
		{[]string{"--steps", "4,tiny"}, "not a positive step count"},
		{[]string{"--patience", "3"}, "need --valid"},
		{[]string{"--valid", traj}, "are the same file"},
	} {
		args := append([]string{"sweep", "--train", traj, "--eval", traj, "--presets", "tiny", "--out", filepath.Join(dir, "d")}, c.args...)
		if code, _, errs := memowm(t, args...); code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: %d %s (want %q)", c.args, code, errs, c.want)
		}
	}
}

// TestTrainedSteps: sweep's one-line account of a bundle's training says
// "stopped early" only for a run that stopped before its schedule's end.
func TestTrainedSteps(t *testing.T) {
	cases := []struct {
		tr   *model.Training
		want string
	}{
		{nil, "training not recorded"},
		{&model.Training{Steps: 100, TargetSteps: 100}, "100 steps"},
		{&model.Training{Steps: 60, TargetSteps: 100, StoppedEarly: true, RanSteps: 90}, "best held-out loss at step 60 (stopped early at 90 of 100)"},
		{&model.Training{Steps: 95, TargetSteps: 100, StoppedEarly: true, RanSteps: 100}, "best held-out loss at step 95 of 100 (the last evaluations did worse)"},
		{&model.Training{Steps: 100, TargetSteps: 100, Init: worldmodel.InitScaledResidual}, "100 steps from the scaled-residual initialisation"},
		{&model.Training{Steps: 10, TargetSteps: 10, PriorSteps: 5, Init: worldmodel.InitScaledResidual}, "trained 10 of 10 steps, after 5 steps of earlier runs (15 in all), from the scaled-residual initialisation"},
	}
	for _, c := range cases {
		if got := trainedSteps(c.tr); got != c.want {
			t.Errorf("%+v: %q, want %q", c.tr, got, c.want)
		}
	}
}

// TestSweepScaledInit: --scaled-init and --checkpoint-every reach each
// preset's training; a bundle started from another initialisation is not
// reused, nor its checkpoint resumed, and neither is overwritten.
func TestSweepScaledInit(t *testing.T) {
	dir, traj, out, sweep := tinySweep(t)
	code, _, errs := sweep("--steps", "4", "--scaled-init", "--checkpoint-every", "3")
	if code != 0 || !strings.Contains(errs, "residual projections initialised at 0.500") || !strings.Contains(errs, "fit wm: step 3: wrote the checkpoint") ||
		strings.Contains(errs, "step 1: wrote the checkpoint") || !strings.Contains(errs, "4 steps from the scaled-residual initialisation") {
		t.Fatalf("sweep --scaled-init --checkpoint-every 3: %d\n%s", code, errs)
	}
	tiny := filepath.Join(out, "tiny.mwb")
	b, err := model.Load(tiny)
	if err != nil || b.Training.Init != worldmodel.InitScaledResidual {
		t.Fatalf("bundle: %v %+v", err, b.Training)
	}
	if code, _, errs := sweep("--steps", "4", "--scaled-init"); code != 0 || !strings.Contains(errs, "sweep: reusing") {
		t.Fatalf("the same sweep again: %d\n%s", code, errs)
	}
	before, err := os.ReadFile(tiny)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errs := sweep("--steps", "4"); code != 1 || !strings.Contains(errs, "started from the scaled-residual initialisation (--scaled-init); the sweep asks the preset's initialisation") {
		t.Fatalf("a plain sweep over a scaled bundle: %d\n%s", code, errs)
	}
	if after, err := os.ReadFile(tiny); err != nil || string(after) != string(before) {
		t.Fatalf("the sweep changed a bundle it refused (%v)", err)
	}
	// A plain run's checkpoint is not resumed by a scaled sweep.
	code, errs = sweepOnCheckpoint(t, dir, traj, out, nil, "--scaled-init")
	if code != 1 || !strings.Contains(errs, "is a checkpoint of a run started from the preset's initialisation; the sweep asks the scaled-residual") {
		t.Fatalf("a scaled sweep over a plain checkpoint: %d\n%s", code, errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--checkpoint-every", "-1"}, "must not be negative"},
		{[]string{"--curve", "c.csv", "--scaled-init"}, "--curve trains nothing"},
	} {
		args := append([]string{"sweep", "--out", filepath.Join(dir, "d")}, c.args...)
		if c.args[0] != "--curve" {
			args = append(args, "--train", traj, "--eval", traj)
		}
		if code, _, errs := memowm(t, args...); code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: %d %s (want %q)", c.args, code, errs, c.want)
		}
	}
}

// TestSweepFileRate: the sweep's file rate is the whole-file rate that
// 'memowm encode --lambda 0' reports for the same bundle and episodes, run
// apart; S and the break-even horizons count it; a second sweep takes the
// rates from curve.csv by the bundle's and the episodes' SHA-256, and a
// curve.csv that records none, or other episodes, is measured again; an
// evaluation file without episodes is refused before any training.
func TestSweepFileRate(t *testing.T) {
	dir := t.TempDir()
	train, eval, out := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "eval.arrow"), filepath.Join(dir, "s")
	for _, f := range []struct {
		path, seed, episodes, steps string
	}{{train, "1", "4", "20"}, {eval, "5", "2", "10"}} {
		if code, _, errs := memowm(t, "sim", "--episodes", f.episodes, "--steps", f.steps, "--dim", "32", "--seed", f.seed, "--out", f.path, "--quiet"); code != 0 {
			t.Fatal(errs)
		}
	}
	sweep := func() (string, string) {
		t.Helper()
		code, stdout, errs := memowm(t, "sweep", "--train", train, "--eval", eval, "--presets", "tiny,small", "--steps", "2", "--out", out)
		if code != 0 {
			t.Fatalf("sweep: %d\n%s%s", code, stdout, errs)
		}
		return stdout, errs
	}
	stdout, errs := sweep()
	var res struct {
		Curve     []bench.CurvePoint `json:"curve"`
		Horizons  []bench.HorizonRow `json:"horizons"`
		TotalsOn  string             `json:"totals_on"`
		BreakEven []struct {
			N      any `json:"n"`
			ModelN any `json:"n_world_model_alone"`
		} `json:"break_even"`
	}
	if b, err := os.ReadFile(filepath.Join(out, "sweep.json")); err != nil || json.Unmarshal(b, &res) != nil || len(res.Curve) != 2 || len(res.BreakEven) != 1 {
		t.Fatalf("sweep.json: %v %+v", err, res)
	}
	// The file rate is encode's, run apart on the same bundle and episodes.
	for _, p := range res.Curve {
		code, js, errs := memowm(t, "encode", "--model", filepath.Join(out, p.Name+".mwb"), "--in", eval, "--out", filepath.Join(dir, p.Name+".mwm"), "--lambda", "0", "--json")
		var acc accounting
		if code != 0 || json.Unmarshal([]byte(js), &acc) != nil {
			t.Fatalf("encode %s: %d %s%s", p.Name, code, js, errs)
		}
		if acc.Prior != "mix" || acc.Observations != 2*11 || acc.FileBitsPerObs != p.FileRate || p.FilePrior != "mix" || p.FileRate == p.Rate {
			t.Fatalf("%s: sweep's file rate %v (prior %s, R %v), encode's whole file %v (prior %s, %d observations)", p.Name, p.FileRate, p.FilePrior, p.Rate, acc.FileBitsPerObs, acc.Prior, acc.Observations)
		}
		if want := fmt.Sprintf("%-8s %12.0f parameters  file = %.1f  R = %.1f  B = ", p.Name, p.Params, p.FileRate, p.Rate); !strings.Contains(stdout, want) {
			t.Fatalf("the table has no %q:\n%s", want, stdout)
		}
	}
	// S and the break-even count the files' rates; the world models' rates
	// alone give the second horizon.
	if res.TotalsOn != "memory_file" || !strings.Contains(stdout, "(S = B/N + file, the memory file's rate)") {
		t.Fatalf("totals on %q:\n%s", res.TotalsOn, stdout)
	}
	for _, r := range res.Horizons {
		for i, p := range res.Curve {
			if want := 8*float64(p.BundleBytes)/r.N + p.FileRate; math.Abs(r.Total[i]-want) > 1e-9*want {
				t.Fatalf("N = %g, %s: S = %v, want B/N + file = %v", r.N, p.Name, r.Total[i], want)
			}
		}
	}
	tiny, small := res.Curve[0], res.Curve[1]
	horizon := func(ra, rb float64) (any, string) {
		if rb < ra {
			n := 8 * float64(small.BundleBytes-tiny.BundleBytes) / (ra - rb)
			return n, fmt.Sprintf("N > %.4g observations", n)
		}
		return "never", "never"
	}
	n, nText := horizon(tiny.FileRate, small.FileRate)
	mn, mnText := horizon(tiny.Rate, small.Rate)
	if fmt.Sprint(res.BreakEven[0].N) != fmt.Sprint(n) || fmt.Sprint(res.BreakEven[0].ModelN) != fmt.Sprint(mn) ||
		!strings.Contains(stdout, "break-even tiny -> small: "+nText+" on the memory files' rates (on the world models' rates alone: "+mnText+")") {
		t.Fatalf("break-even %+v, want %v and %v:\n%s", res.BreakEven, n, mn, stdout)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "*.mwm")); len(m) != 0 || !strings.Contains(errs, "sweep: tiny: encoded "+eval) {
		t.Fatalf("the encoded files %v are left, or encode did not run:\n%s", m, errs)
	}
	curve, err := os.ReadFile(filepath.Join(out, "curve.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// The same bundles and episodes: the rates from curve.csv, not encoded.
	if stdout2, errs := sweep(); strings.Contains(errs, "encoded") || strings.Count(errs, "not encoding "+eval+" again") != 2 || stdout2 != stdout {
		t.Fatalf("a second sweep:\n%s%s", stdout2, errs)
	}
	// A curve.csv of the columns before file rates: measured again.
	var old []string
	for _, l := range strings.Split(strings.TrimSpace(string(curve)), "\n") {
		old = append(old, strings.Join(strings.Split(l, ",")[:10], ","))
	}
	os.WriteFile(filepath.Join(out, "curve.csv"), []byte(strings.Join(old, "\n")+"\n"), 0o644)
	if stdout2, errs := sweep(); !strings.Contains(errs, "curve.csv does not record which bundle and episodes it measured (no SHA-256): measuring tiny's rates again") ||
		strings.Count(errs, "encoded "+eval) != 2 || stdout2 != stdout {
		t.Fatalf("a sweep over an old curve.csv:\n%s%s", stdout2, errs)
	}
	// Other episodes under the same name: measured again.
	if code, _, errs := memowm(t, "sim", "--episodes", "1", "--steps", "20", "--dim", "32", "--seed", "6", "--out", eval, "--force", "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	if _, errs := sweep(); strings.Contains(errs, "not encoding") || strings.Count(errs, "encoded "+eval+" (") != 2 || !strings.Contains(errs, "21 observations") {
		t.Fatalf("a sweep on other episodes:\n%s", errs)
	}

	// No episodes to measure on: refused, nothing trained.
	empty := filepath.Join(dir, "empty.arrow")
	if code, _, errs := memowm(t, "sim", "--episodes", "0", "--steps", "20", "--dim", "32", "--out", empty, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	code, stdout, errs := memowm(t, "sweep", "--train", train, "--eval", empty, "--presets", "tiny", "--steps", "2", "--out", filepath.Join(dir, "e"))
	if code != 1 || !strings.Contains(errs, "--eval "+empty+" holds no episodes") || strings.Contains(stdout, "S = ") {
		t.Fatalf("an empty --eval: %d\n%s%s", code, stdout, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "e")); !os.IsNotExist(err) {
		t.Fatalf("the sweep of an empty --eval made its folder: %v", err)
	}

	// A given curve with file rates: S and the break-even on them.
	given := filepath.Join(dir, "given.csv")
	os.WriteFile(given, []byte("name,params,rate_bits_per_obs,bundle_bytes,file_bits_per_obs\ntiny,168440,872.4,6048282,183.4\nsmall,966672,649.2,9241214,180.4\n"), 0o644)
	code, stdout, errs = memowm(t, "sweep", "--curve", given, "--out", filepath.Join(dir, "g"))
	// 8 * (9241214 - 6048282) / (183.4 - 180.4) = 8514485.3; on R: 114432.
	if code != 0 || !strings.Contains(stdout, "break-even tiny -> small: N > 8.514e+06 observations on the memory files' rates (on the world models' rates alone: N > 1.144e+05 observations)") ||
		strings.Contains(stdout, "world model's rate alone") || !strings.Contains(stdout, "prior not recorded") {
		t.Fatalf("sweep --curve with file rates: %d\n%s%s", code, stdout, errs)
	}
}
