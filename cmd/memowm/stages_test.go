package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStagesAndBench runs every later fit stage and bench on a small sim
// set: the reader trains, risk fills the policy, lambda picks a value within
// epsilon, and bench reports every row.
func TestStagesAndBench(t *testing.T) {
	dir := t.TempDir()
	traj, b0, b1, b2, b3 := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "b0.mwb"), filepath.Join(dir, "b1.mwb"), filepath.Join(dir, "b2.mwb"), filepath.Join(dir, "b3.mwb")
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--episodes", "6", "--steps", "12", "--dim", "32", "--out", traj, "--quiet"}, "wrote"},
		{[]string{"fit", "--in", traj, "--out", b0, "--preset", "tiny", "--quiet"}, "wrote"},
		{[]string{"fit", "--stage", "reader", "--model", b0, "--in", traj, "--out", b1, "--epochs", "3", "--quiet"}, "validation"},
		{[]string{"fit", "--stage", "risk", "--model", b1, "--in", traj, "--out", b2, "--quiet", "--min-count", "10"}, "task impact V_j"},
		{[]string{"fit", "--stage", "lambda", "--model", b2, "--in", traj, "--out", b3, "--epsilon", "0.5", "--refine", "1", "--baselines", "--quiet"}, "rate at matched distortion"},
		{[]string{"inspect", b3}, "calibrated on the mixing prior's distribution"},
	}
	for _, s := range steps {
		code, out, errs := memowm(t, s.args...)
		if code != 0 || !strings.Contains(out, s.want) {
			t.Fatalf("%v: status %d\n%s%s", s.args, code, out, errs)
		}
	}
	code, out, errs := memowm(t, "bench", "--model", b3, "--in", traj, "--json", "--quiet", "--compare-min-entropy", "3")
	var rep struct {
		Compare []struct {
			Name string `json:"name"`
		} `json:"compare"`
		Methods []struct {
			Name  string   `json:"name"`
			Bits  float64  `json:"file_bits_per_obs"`
			Ideal float64  `json:"ideal_bits_per_obs"`
			DNLL  *float64 `json:"delta_nll_bits"`
		} `json:"methods"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || !strings.Contains(out, `"bundle_bytes": `) || !strings.Contains(out, `"bundle_bits_per_obs": `) {
		t.Fatalf("bench: %d %s %s", code, out, errs)
	}
	if len(rep.Compare) != 4 || rep.Compare[2].Name != "teacher-forced" || rep.Compare[3].Name != "mix" {
		t.Fatalf("bench --compare-min-entropy: %s", out)
	}
	names := map[string]bool{}
	for _, m := range rep.Methods {
		names[m.Name] = true
		if m.Bits <= 0 || m.Ideal <= 0 {
			t.Fatalf("row %+v", m)
		}
	}
	for _, n := range []string{"fixed-width", "zstd", "xz", "best-general", "order1-context", "wm-all-send", "wm-gated", "wm-mix", "wm-mix-no-wm", "wm-mix-no-copy", "wm-mix-no-contexts"} {
		if !names[n] {
			t.Fatalf("bench lacks %s: %s", n, out)
		}
	}
	// The bundle's risk policy was calibrated on the mixing prior: encode
	// applies it there by default, refuses the world model's tables, and
	// decodes what it wrote.
	mem := filepath.Join(dir, "g.mwm")
	if code, out, errs := memowm(t, "encode", "--model", b3, "--in", traj, "--out", mem, "--lambda", "0.05"); code != 0 || !strings.Contains(out, "prior mix") || !strings.Contains(out, "mixed distribution") {
		t.Fatalf("encode with a mix-calibrated policy: %d\n%s%s", code, out, errs)
	}
	if code, out, errs := memowm(t, "decode", "--model", b3, "--in", mem, "--out", filepath.Join(dir, "g.arrow")); code != 0 {
		t.Fatalf("decode: %d\n%s%s", code, out, errs)
	}
	for _, c := range [][]string{{"--prior", "wm"}, {"--slot-repeat"}} {
		args := append([]string{"encode", "--model", b3, "--in", traj, "--out", filepath.Join(dir, "x.mwm"), "--lambda", "0.05"}, c...)
		if code, _, errs := memowm(t, args...); code != 2 || !strings.Contains(errs, "calibrated on the mixing prior") {
			t.Fatalf("%v: %d %s", c, code, errs)
		}
	}
	if code, _, errs := memowm(t, "fit", "--stage", "risk", "--model", b1, "--in", traj, "--out", filepath.Join(dir, "x.mwb"), "--prior", "nope"); code != 2 || !strings.Contains(errs, "--prior") {
		t.Fatalf("--prior nope: %d %s", code, errs)
	}
	// Slips: a stage's output over its trajectories, or named as another kind.
	for _, o := range []string{traj, filepath.Join(dir, "x.mwm")} {
		if code, _, errs := memowm(t, "fit", "--stage", "reader", "--model", b0, "--in", traj, "--out", o); code != 2 || !strings.Contains(errs, "--out") {
			t.Fatalf("--out %s: %d %s", o, code, errs)
		}
	}
	// The random-initialisation bundle is said to be untrained, loudly.
	if code, out, errs := memowm(t, "inspect", b0); code != 0 || !strings.Contains(out, "untrained (random initialisation)") {
		t.Fatalf("inspect b0: %d %s %s", code, out, errs)
	}
	if code, _, errs := memowm(t, "fit", "--stage", "reader", "--model", b0, "--in", traj, "--out", filepath.Join(dir, "r0.mwb"), "--epochs", "1", "--quiet"); code != 0 || !strings.Contains(errs, "warning") || !strings.Contains(errs, "untrained") {
		t.Fatalf("a stage on an untrained bundle: %d %s", code, errs)
	}
	// Errors: a stage without its prerequisites.
	if code, _, errs := memowm(t, "fit", "--stage", "risk", "--model", b0, "--in", traj, "--out", filepath.Join(dir, "x.mwb")); code != 1 || !strings.Contains(errs, "has no reader") {
		t.Fatalf("risk without a reader: %d %s", code, errs)
	}
	if code, _, errs := memowm(t, "fit", "--stage", "lambda", "--model", b1, "--in", traj, "--out", filepath.Join(dir, "x.mwb")); code != 1 || !strings.Contains(errs, "risk policy") {
		t.Fatalf("lambda without risk: %d %s", code, errs)
	}
	if code, _, errs := memowm(t, "fit", "--stage", "magic", "--model", b1); code != 2 || !strings.Contains(errs, "unknown stage") {
		t.Fatalf("unknown stage: %d %s", code, errs)
	}
}

// TestFitAll runs every stage with one command.
func TestFitAll(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model and a reader")
	}
	dir := t.TempDir()
	traj, out := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "all.mwb")
	if code, _, errs := memowm(t, "sim", "--episodes", "5", "--steps", "12", "--dim", "32", "--out", traj, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	code, o, errs := memowm(t, "fit", "--stage", "all", "--in", traj, "--calib", traj, "--out", out,
		"--preset", "tiny", "--steps", "3", "--epsilon", "0.5", "--quiet")
	if code != 0 || !strings.Contains(o, "== stage lambda") || !strings.Contains(o, "lambda ") {
		t.Fatalf("fit --stage all: %d\n%s%s", code, o, errs)
	}
	if code, o, _ := memowm(t, "inspect", out); code != 0 || !strings.Contains(o, "policy risk") {
		t.Fatalf("inspect: %s", o)
	}

	// --json: one object with every stage's summary, and nothing else on
	// stdout.
	out = filepath.Join(dir, "all-json.mwb")
	code, o, errs = memowm(t, "fit", "--stage", "all", "--in", traj, "--calib", traj, "--out", out,
		"--preset", "tiny", "--steps", "3", "--epsilon", "0.5", "--baselines", "--quiet", "--json")
	var sum struct {
		Out    string `json:"out"`
		Stages struct {
			WM struct {
				Steps  int    `json:"steps"`
				SHA256 string `json:"bundle_sha256"`
			} `json:"wm"`
			Reader struct {
				Stage      string `json:"stage"`
				Validation struct {
					Questions int      `json:"questions"`
					Accuracy  *float64 `json:"accuracy"`
					Kinds     []struct {
						Kind string `json:"kind"`
					} `json:"kinds"`
				} `json:"validation"`
			} `json:"reader"`
			Risk struct {
				Prior string `json:"prior"`
				Bins  []struct {
					ErrorRate *float64 `json:"error_rate"`
				} `json:"bins"`
				Impact struct {
					Coordinates int `json:"coordinates"`
				} `json:"impact"`
				SlotDamage []float64 `json:"slot_damage"`
			} `json:"risk"`
			Lambda struct {
				Lambda    *float64 `json:"lambda"`
				Rate      float64  `json:"rate_bits_per_obs"`
				SHA256    string   `json:"bundle_sha256"`
				Out       string   `json:"out"`
				Baselines []struct {
					Gating string `json:"gating"`
				} `json:"baselines"`
			} `json:"lambda"`
		} `json:"stages"`
	}
	if code != 0 || json.Unmarshal([]byte(o), &sum) != nil {
		t.Fatalf("fit --stage all --json: %d\n%s%s", code, o, errs)
	}
	checkJSONVocabulary(t, "fit --stage all", o, nil)
	st := sum.Stages
	if sum.Out != out || st.WM.Steps != 3 || st.WM.SHA256 == "" || st.Reader.Stage != "reader" || st.Reader.Validation.Questions == 0 ||
		st.Reader.Validation.Accuracy == nil || len(st.Reader.Validation.Kinds) == 0 || st.Risk.Prior != "mix" || len(st.Risk.Bins) == 0 ||
		st.Risk.Impact.Coordinates == 0 || len(st.Risk.SlotDamage) == 0 || st.Lambda.Lambda == nil || st.Lambda.Rate <= 0 ||
		st.Lambda.Out != out || len(st.Lambda.Baselines) < 2 {
		t.Fatalf("fit --stage all --json: %+v\n%s", sum, o)
	}
	if code, o, _ := memowm(t, "inspect", "--json", out); code != 0 || !strings.Contains(o, st.Lambda.SHA256) {
		t.Fatalf("the JSON's sha256 %s is not the bundle's: %s", st.Lambda.SHA256, o)
	}
	// The baselines calibrated beside lambda are in the bundle, and bench
	// runs them on other episodes next to memowm's rule (when the policy
	// omits anything).
	held := filepath.Join(dir, "held.arrow")
	mustRun(t, []string{"sim", "--episodes", "3", "--steps", "12", "--dim", "32", "--seed", "5", "--out", held, "--quiet"})
	code, o, errs = memowm(t, "bench", "--model", out, "--in", held, "--external=false", "--quiet", "--json")
	var rep struct {
		Baselines []struct {
			Name  string   `json:"name"`
			DNLL  *float64 `json:"delta_nll_bits"`
			Ideal float64  `json:"ideal_bits_per_obs"`
		} `json:"baselines"`
	}
	if code != 0 || json.Unmarshal([]byte(o), &rep) != nil {
		t.Fatalf("bench with baselines: %d %s", code, errs)
	}
	if *st.Lambda.Lambda > 0 {
		t.Logf("bench on held-out episodes: %+v", rep.Baselines)
		if len(rep.Baselines) < 2 || rep.Baselines[0].Name != "memowm" {
			t.Fatalf("bench baselines: %+v (calibrated: %+v)", rep.Baselines, st.Lambda.Baselines)
		}
		for _, r := range rep.Baselines {
			if r.DNLL == nil || !(r.Ideal > 0) {
				t.Errorf("bench baseline %s: %+v", r.Name, r)
			}
		}
	}
}

// TestFitAllSplit: --risk-calib measures the risk tables on their own
// trajectories and --impact reaches the risk stage; a bad --impact is
// refused before any training.
func TestFitAllSplit(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model and a reader")
	}
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t,
		[]string{"sim", "--episodes", "5", "--steps", "12", "--dim", "32", "--out", p("t.arrow"), "--quiet"},
		[]string{"sim", "--episodes", "3", "--steps", "12", "--dim", "32", "--seed", "9", "--out", p("r.arrow"), "--quiet"},
	)
	start := time.Now()
	if code, _, errs := memowm(t, "fit", "--stage", "all", "--in", p("t.arrow"), "--calib", p("t.arrow"), "--out", p("x.mwb"),
		"--preset", "tiny", "--steps", "3", "--impact", "sum"); code != 2 || !strings.Contains(errs, `--impact "sum"`) || time.Since(start) > 5*time.Second {
		t.Fatalf("--impact sum: %d %s (%v)", code, errs, time.Since(start))
	}
	code, o, errs := memowm(t, "fit", "--stage", "all", "--in", p("t.arrow"), "--calib", p("t.arrow"), "--risk-calib", p("r.arrow"),
		"--out", p("all.mwb"), "--preset", "tiny", "--steps", "3", "--epsilon", "0.5", "--impact", "mean", "--json", "--quiet")
	var sum struct {
		Stages struct {
			Risk struct {
				Episodes   int    `json:"episodes"`
				ImpactMode string `json:"impact_mode"`
			} `json:"risk"`
			Lambda struct {
				Episodes int `json:"episodes"`
			} `json:"lambda"`
		} `json:"stages"`
	}
	if code != 0 || json.Unmarshal([]byte(o), &sum) != nil {
		t.Fatalf("fit --stage all --risk-calib: %d\n%s%s", code, o, errs)
	}
	if sum.Stages.Risk.Episodes != 3 || sum.Stages.Risk.ImpactMode != "mean" {
		t.Errorf("the risk stage ran on %d episodes with impact %q, want 3 (--risk-calib) and mean", sum.Stages.Risk.Episodes, sum.Stages.Risk.ImpactMode)
	}
	if sum.Stages.Lambda.Episodes != 0 && sum.Stages.Lambda.Episodes != 5 {
		t.Errorf("the lambda stage ran on %d episodes, want --calib's 5", sum.Stages.Lambda.Episodes)
	}
}
