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
	code, out, errs := memowm(t, "inspect", p("q.opq"))
	if code != 0 || !strings.Contains(out, "held-out      R^2 0.") || !strings.Contains(out, "warning       opq: the codebooks trained on 6.5 points per centroid") {
		t.Fatalf("inspect: %d\n%s%s", code, out, errs)
	}
}
