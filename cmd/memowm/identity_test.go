package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCodesNameTheirQuantizer: a codes file records the quantizer that made
// it, and a bundle with another quantizer refuses it; the bundle's own
// quantizer, and a decode to codes, pass.
func TestCodesNameTheirQuantizer(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	steps := [][]string{
		{"sim", "--episodes", "8", "--steps", "12", "--dim", "32", "--out", p("t.arrow"), "--quiet"},
		{"fit", "opq", "--in", p("t.arrow"), "--out", p("a.opq"), "--codewords", "16", "--seed", "1", "--quiet"},
		{"fit", "opq", "--in", p("t.arrow"), "--out", p("b.opq"), "--codewords", "16", "--seed", "2", "--quiet"},
		{"fit", "--opq", p("a.opq"), "--out", p("a.mwb"), "--preset", "tiny"},
		{"fit", "--opq", p("b.opq"), "--out", p("b.mwb"), "--preset", "tiny"},
		{"quantize", "--opq", p("a.opq"), "--in", p("t.arrow"), "--out", p("c.arrow"), "--quiet"},
		{"encode", "--model", p("a.mwb"), "--in", p("c.arrow"), "--out", p("a.mwm"), "--quiet"},
		{"decode", "--model", p("a.mwb"), "--in", p("a.mwm"), "--out", p("d.arrow")},
		{"encode", "--model", p("a.mwb"), "--in", p("d.arrow"), "--out", p("d.mwm"), "--quiet"},
	}
	for _, s := range steps {
		if code, out, errs := memowm(t, s...); code != 0 {
			t.Fatalf("%v: %d\n%s%s", s, code, out, errs)
		}
	}
	// Honest totals: the summary spreads the bundle over the observations,
	// and compares with fixed width plus the same actions.
	code, out, errs := memowm(t, "encode", "--model", p("a.mwb"), "--in", p("c.arrow"), "--out", p("h.mwm"), "--quiet")
	if code != 0 || !strings.Contains(out, "with the bundle (") || !strings.Contains(out, "plus the same actions") {
		t.Fatalf("encode summary: %d\n%s%s", code, out, errs)
	}
	code, out, _ = memowm(t, "encode", "--model", p("a.mwb"), "--in", p("c.arrow"), "--out", p("j.mwm"), "--quiet", "--json")
	if code != 0 || !strings.Contains(out, `"bundle_bytes": `) || !strings.Contains(out, `"with_bundle_bits_per_obs": `) {
		t.Fatalf("encode --json: %d\n%s", code, out)
	}
	// quantize renames the questions into place with the codes, and a stale
	// questions file beside --out goes when the input has none.
	if _, err := os.Stat(p("c.arrow.questions.jsonl")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p("t.arrow"))
	os.WriteFile(p("n.arrow"), data, 0o644)
	os.WriteFile(p("q.arrow.questions.jsonl"), []byte("stale\n"), 0o644)
	if code, out, errs := memowm(t, "quantize", "--opq", p("a.opq"), "--in", p("n.arrow"), "--out", p("q.arrow"), "--quiet"); code != 0 || !strings.Contains(out, "no questions file") {
		t.Fatalf("quantize without questions: %d %s %s", code, out, errs)
	}
	if _, err := os.Stat(p("q.arrow.questions.jsonl")); !os.IsNotExist(err) {
		t.Fatalf("a stale questions file is left beside the codes: %v", err)
	}
	for _, in := range []string{"c.arrow", "d.arrow"} {
		code, _, errs := memowm(t, "encode", "--model", p("b.mwb"), "--in", p(in), "--out", p("x.mwm"), "--quiet")
		if code == 0 || !strings.Contains(errs, "holds codes of quantizer") {
			t.Fatalf("%s through another quantizer: %d %s", in, code, errs)
		}
	}
}

// TestFitRefusesOtherCodes: fit --stage wm trains on codes only through the
// quantizer that made them (training data and held-out data alike), and
// leaves no corpus file beside the bundle whether it succeeds or fails.
func TestFitRefusesOtherCodes(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, s := range [][]string{
		{"sim", "--episodes", "6", "--steps", "10", "--dim", "32", "--out", p("t.arrow"), "--quiet"},
		{"fit", "opq", "--in", p("t.arrow"), "--out", p("a.opq"), "--codewords", "16", "--seed", "1", "--quiet"},
		{"fit", "opq", "--in", p("t.arrow"), "--out", p("b.opq"), "--codewords", "16", "--seed", "2", "--quiet"},
		{"quantize", "--opq", p("a.opq"), "--in", p("t.arrow"), "--out", p("c.arrow"), "--quiet"},
	} {
		if code, out, errs := memowm(t, s...); code != 0 {
			t.Fatalf("%v: %d\n%s%s", s, code, out, errs)
		}
	}
	fit := func(opqFile, in, eval string) (int, string) {
		code, _, errs := memowm(t, "fit", "--stage", "wm", "--opq", p(opqFile), "--in", p(in), "--eval", p(eval),
			"--preset", "tiny", "--steps", "2", "--batch", "2", "--out", p("w.mwb"), "--quiet", "--force")
		return code, errs
	}
	if code, errs := fit("a.opq", "c.arrow", "t.arrow"); code != 0 {
		t.Fatalf("codes through their own quantizer, states held out: %d %s", code, errs)
	}
	for _, c := range [][3]string{{"b.opq", "c.arrow", "t.arrow"}, {"b.opq", "t.arrow", "c.arrow"}} {
		if code, errs := fit(c[0], c[1], c[2]); code == 0 || !strings.Contains(errs, "holds codes of quantizer") {
			t.Fatalf("%v: %d %s", c, code, errs)
		}
	}
	left, _ := filepath.Glob(p(".memowm-corpus-*"))
	if len(left) != 0 {
		t.Errorf("fit left %v", left)
	}
}
