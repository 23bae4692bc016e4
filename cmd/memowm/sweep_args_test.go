package main

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/memowm/memowm/internal/atomicfile"
	"github.com/memowm/memowm/model"
)

// TestSweepLR: --lr reaches each fresh training and the bundle's record;
// a bundle or checkpoint trained at another rate is not reused, and one
// trained on continues at half the rate asked.
func TestSweepLR(t *testing.T) {
	dir, traj, out, sweep := tinySweep(t)
	if code, _, errs := sweep("--steps", "3", "--lr", "tiny=1e-3"); code != 0 || !strings.Contains(errs, "3 steps of batch 16, lr 0.001 ") ||
		!regexp.MustCompile(`sweep: tiny: 168440 parameters, 3 steps, peak rate 0.001, dropout 0.1, window 16, trained in [0-9.]+ s in all, bundle `).MatchString(errs) {
		t.Fatalf("sweep --lr tiny=1e-3: %d\n%s", code, errs)
	}
	tiny := filepath.Join(out, "tiny.mwb")
	b, err := model.Load(tiny)
	if err != nil || b.Training.LR != 1e-3 {
		t.Fatalf("bundle: %v %+v", err, b.Training)
	}
	if c, err := os.ReadFile(filepath.Join(out, "curve.csv")); err != nil || !regexp.MustCompile(`,3,0.001,,0.1,[0-9]+\.[0-9],16`+curveTail).Match(c) {
		t.Fatalf("curve.csv %q %v", c, err)
	}
	if code, _, errs := sweep("--steps", "3", "--lr", "1e-3"); code != 0 || !strings.Contains(errs, "sweep: reusing") {
		t.Fatalf("the same rate again: %d\n%s", code, errs)
	}
	before, err := os.ReadFile(tiny)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errs := sweep("--steps", "3"); code != 1 || !strings.Contains(errs, "was trained at peak learning rate 0.001; the sweep asks 0.003") ||
		!strings.Contains(errs, "--lr tiny=0.001") {
		t.Fatalf("tiny's own rate over a bundle trained at 1e-3: %d\n%s", code, errs)
	}
	if after, err := os.ReadFile(tiny); err != nil || string(after) != string(before) {
		t.Fatalf("the sweep changed a bundle it refused (%v)", err)
	}
	// A bundle from before bundles recorded their rate is reused, and the
	// sweep says it could not check the rate.
	old, tr := *b, *b.Training
	tr.LR = 0
	old.Training = &tr
	// The sweep's fit marked tiny.mwb not to be replaced, for the rest of
	// this process (a run without --force); the test rewrites it, as a
	// later process would.
	atomicfile.AllowReplace(tiny)
	if err := old.Save(tiny); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := sweep("--steps", "3"); code != 0 || !strings.Contains(errs, "which does not record its peak learning rate: the sweep cannot check it against the 0.003 asked") {
		t.Fatalf("a bundle without its rate: %d\n%s", code, errs)
	}
	if err := b.Save(tiny); err != nil {
		t.Fatal(err)
	}
	// Trained on: half the rate asked, and the record is the continuation's.
	if code, _, errs := sweep("--steps", "5", "--lr", "tiny=1e-3"); code != 0 || !strings.Contains(errs, "on from its 3 steps to 5 (lr 0.0005)") {
		t.Fatalf("trained on: %d\n%s", code, errs)
	}
	if b, err := model.Load(tiny); err != nil || b.Training.LR != 5e-4 || b.Training.PriorSteps != 3 {
		t.Fatalf("continued bundle: %v %+v", err, b.Training)
	}
	// A checkpoint of a run at another rate is not resumed.
	code, errs := sweepOnCheckpoint(t, dir, traj, out, []string{"--lr", "2e-3"})
	if code != 1 || !strings.Contains(errs, "is a checkpoint of a run at peak learning rate 0.002; the sweep asks 0.003") {
		t.Fatalf("the preset's rate over a 2e-3 checkpoint: %d\n%s", code, errs)
	}
	for _, c := range []struct{ lr, want string }{
		{"0", `--lr "0" is not a learning rate in (0, 1)`},
		{"1.5", "not a learning rate in (0, 1)"},
		{"tiny=fast", `--lr tiny: "fast" is not a learning rate in (0, 1)`},
		{"base=1e-3", "not one of the sweep's presets"},
		{"tiny=1e-3,tiny=2e-3", "tiny given twice"},
		{"tiny=1e-3,2e-3", "is not PRESET=VALUE"},
	} {
		if code, _, errs := sweep("--steps", "3", "--lr", c.lr); code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("--lr %s: %d %s (want %q)", c.lr, code, errs, c.want)
		}
	}
	if code, _, errs := memowm(t, "sweep", "--curve", "c.csv", "--lr", "1e-3", "--out", filepath.Join(dir, "d")); code != 2 || !strings.Contains(errs, "--curve trains nothing") {
		t.Errorf("--curve with --lr: %d %s", code, errs)
	}
}

// TestSweepDropout: --dropout reaches each fresh training and the bundle's
// configuration; a bundle trained with another is not reused.
func TestSweepDropout(t *testing.T) {
	_, _, out, sweep := tinySweep(t, "--steps", "2")
	if code, _, errs := sweep("--dropout", "tiny=0"); code != 0 || !strings.Contains(errs, ", dropout 0, ") || !regexp.MustCompile(`2 steps, peak rate 0.003, dropout 0, window 16, trained in [0-9.]+ s in all, bundle `).MatchString(errs) {
		t.Fatalf("sweep --dropout tiny=0: %d\n%s", code, errs)
	}
	tiny := filepath.Join(out, "tiny.mwb")
	if b, err := model.Load(tiny); err != nil || b.Model.Config().Dropout != 0 {
		t.Fatalf("bundle: %v", err)
	}
	if c, err := os.ReadFile(filepath.Join(out, "curve.csv")); err != nil || !regexp.MustCompile(`,2,0.003,,0,[0-9]+\.[0-9],16`+curveTail).Match(c) {
		t.Fatalf("curve.csv %q %v", c, err)
	}
	if code, _, errs := sweep("--dropout", "0"); code != 0 || !strings.Contains(errs, "sweep: reusing") {
		t.Fatalf("the same dropout again: %d\n%s", code, errs)
	}
	if code, _, errs := sweep(); code != 1 || !strings.Contains(errs, "was trained with dropout 0; the sweep asks 0.1") || !strings.Contains(errs, "--dropout tiny=0") {
		t.Fatalf("tiny's own dropout over a bundle trained without: %d\n%s", code, errs)
	}
	for _, c := range []struct{ d, want string }{
		{"1", `--dropout "1" is not a dropout rate in [0, 1)`},
		{"tiny=-0.1", "not a dropout rate in [0, 1)"},
		{"small=0", "not one of the sweep's presets"},
	} {
		if code, _, errs := sweep("--dropout", c.d); code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("--dropout %s: %d %s (want %q)", c.d, code, errs, c.want)
		}
	}
}

// TestSweepHistory: --history reaches each fresh training and the
// bundle's window; a bundle or checkpoint with another window is not
// reused, and the sweep never changes what it refuses.
func TestSweepHistory(t *testing.T) {
	dir, traj, out, sweep := tinySweep(t, "--steps", "2")
	if code, _, errs := sweep("--history", "1"); code != 0 || !regexp.MustCompile(`2 steps, peak rate 0.003, dropout 0.1, window 1, trained in [0-9.]+ s in all, bundle `).MatchString(errs) {
		t.Fatalf("sweep --history 1: %d\n%s", code, errs)
	}
	tiny := filepath.Join(out, "tiny.mwb")
	b, err := model.Load(tiny)
	if err != nil || b.Model.Config().MaxHistory != 1 {
		t.Fatalf("bundle: %v", err)
	}
	if c, err := os.ReadFile(filepath.Join(out, "curve.csv")); err != nil || !regexp.MustCompile(`,2,0.003,,0.1,[0-9]+\.[0-9],1`+curveTail).Match(c) {
		t.Fatalf("curve.csv %q %v", c, err)
	}
	if code, _, errs := sweep("--history", "1"); code != 0 || !strings.Contains(errs, "sweep: reusing") {
		t.Fatalf("the same window again: %d\n%s", code, errs)
	}
	before, err := os.ReadFile(tiny)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errs := sweep(); code != 1 || !strings.Contains(errs, "has a 1-state window; the sweep asks 16 states") || !strings.Contains(errs, "--history 1") {
		t.Fatalf("the preset's window over a one-state bundle: %d\n%s", code, errs)
	}
	if after, err := os.ReadFile(tiny); err != nil || string(after) != string(before) {
		t.Fatalf("the sweep changed a bundle it refused (%v)", err)
	}
	// A checkpoint of a one-state run is not resumed by a sweep that asks
	// the preset's window.
	code, errs := sweepOnCheckpoint(t, dir, traj, out, []string{"--history", "1"})
	if code != 1 || !strings.Contains(errs, "is a checkpoint of a model with a 1-state window; the sweep asks 16 states") {
		t.Fatalf("the preset's window over a one-state checkpoint: %d\n%s", code, errs)
	}
	if code, _, errs := sweep("--history", "-1"); code != 2 || !strings.Contains(errs, "--history -1: want a number of states >= 1") {
		t.Errorf("--history -1: %d %s", code, errs)
	}
	if code, _, errs := memowm(t, "sweep", "--curve", "c.csv", "--history", "1", "--out", filepath.Join(dir, "d")); code != 2 || !strings.Contains(errs, "--curve trains nothing") {
		t.Errorf("--curve with --history: %d %s", code, errs)
	}
}

// curveTail ends a curve.csv row of the sweep: the memory file's rate,
// its prior and the SHA-256s of the bundle and the evaluation episodes.
const curveTail = `,[0-9]+\.[0-9]+,mix,[0-9a-f]{64},[0-9a-f]{64}\n$`

// tinySweep simulates a small trajectory file in a fresh folder and
// returns the folder, the file, the sweep's output folder and a function
// that sweeps preset tiny on the file (training and R on it) with extra
// after the given flags.
func tinySweep(t *testing.T, flags ...string) (dir, traj, out string, sweep func(extra ...string) (int, string, string)) {
	t.Helper()
	dir = t.TempDir()
	traj, out = filepath.Join(dir, "t.arrow"), filepath.Join(dir, "s")
	if code, _, errs := memowm(t, "sim", "--episodes", "4", "--steps", "20", "--dim", "32", "--out", traj, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	sweep = func(extra ...string) (int, string, string) {
		args := append([]string{"sweep", "--train", traj, "--eval", traj, "--presets", "tiny", "--out", out}, flags...)
		return memowm(t, append(args, extra...)...)
	}
	return dir, traj, out, sweep
}

// tinyCheckpointIn leaves in folder p (made) the checkpoint of a 2-step
// tiny training on traj through quantizer q with fit's flags extra, under
// the name a sweep into p looks for: p/tiny.mwb.ckpt. It returns p.
func tinyCheckpointIn(t *testing.T, p, traj, q string, extra ...string) string {
	t.Helper()
	os.MkdirAll(p, 0o755)
	args := []string{"fit", "--stage", "wm", "--in", traj, "--opq", q, "--preset", "tiny", "--steps", "2", "--keep-checkpoint", "--out", filepath.Join(p, "other.mwb"), "--quiet"}
	if code, _, errs := memowm(t, append(args, extra...)...); code != 0 {
		t.Fatal(errs)
	}
	if err := os.Rename(filepath.Join(p, "other.mwb.ckpt"), filepath.Join(p, "tiny.mwb.ckpt")); err != nil {
		t.Fatal(err)
	}
	return p
}

// sweepOnCheckpoint leaves in dir/p the checkpoint of a 2-step tiny
// training with fit's flags fit (tinyCheckpointIn, through the quantizer
// of the sweep in out) and runs a 4-step sweep of tiny on traj into dir/p
// with flags, returning its status and stderr.
func sweepOnCheckpoint(t *testing.T, dir, traj, out string, fit []string, flags ...string) (int, string) {
	t.Helper()
	q := filepath.Join(out, "shared.opq")
	p := tinyCheckpointIn(t, filepath.Join(dir, "p"), traj, q, fit...)
	args := append([]string{"sweep", "--train", traj, "--eval", traj, "--opq", q, "--presets", "tiny", "--steps", "4", "--out", p}, flags...)
	code, _, errs := memowm(t, args...)
	return code, errs
}

func TestParseSweepLR(t *testing.T) {
	presets := []string{"tiny", "small", "base"}
	for _, c := range []struct {
		in   string
		want map[string]float64
	}{
		{"", map[string]float64{}},
		{"2e-3", map[string]float64{"tiny": 2e-3, "small": 2e-3, "base": 2e-3}},
		{"base=1e-3", map[string]float64{"base": 1e-3}},
		{" small = 0.002 ,base=1e-3", map[string]float64{"small": 2e-3, "base": 1e-3}},
	} {
		got, err := parseSweepLR(c.in, presets)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %v %v, want %v", c.in, got, err, c.want)
		}
	}
}
