package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOPQWarnsAndRecordsHeldOut: a quantizer fit on too few points per
// centroid is said to be untrustworthy (fit and inspect), and fit opq --eval
// records the held-out R^2 that inspect shows.
func TestOPQWarnsAndRecordsHeldOut(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, s := range [][]string{
		{"sim", "--episodes", "8", "--steps", "12", "--dim", "32", "--out", p("t.arrow"), "--quiet"},
		{"sim", "--episodes", "4", "--steps", "12", "--dim", "32", "--seed", "9", "--out", p("e.arrow"), "--quiet"},
	} {
		if code, _, errs := memowm(t, s...); code != 0 {
			t.Fatal(errs)
		}
	}
	code, _, errs := memowm(t, "fit", "opq", "--in", p("t.arrow"), "--eval", p("e.arrow"), "--out", p("q.opq"), "--codewords", "16", "--quiet")
	if code != 0 || !strings.Contains(errs, "warning") || !strings.Contains(errs, "points per centroid") {
		t.Fatalf("fit opq: %d %s", code, errs)
	}
	// encode says how well the bundle's quantizer reconstructs states.
	if code, out, errs := memowm(t, "fit", "--opq", p("q.opq"), "--out", p("q.mwb"), "--preset", "tiny"); code != 0 {
		t.Fatalf("fit: %d %s %s", code, out, errs)
	}
	if code, out, errs := memowm(t, "encode", "--model", p("q.mwb"), "--in", p("e.arrow"), "--out", p("e.mwm"), "--quiet"); code != 0 || !strings.Contains(out, "held-out R^2 0.") {
		t.Fatalf("encode: %d %s %s", code, out, errs)
	}
	code, out, errs := memowm(t, "inspect", p("q.opq"))
	if code != 0 || !strings.Contains(out, "held-out      R^2 0.") || !strings.Contains(out, "warning       opq: the codebooks trained on 6.5 points per centroid") {
		t.Fatalf("inspect: %d\n%s%s", code, out, errs)
	}
}
