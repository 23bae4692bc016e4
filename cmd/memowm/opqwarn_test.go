package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOPQWarnsAndRecordsHeldOut: a quantizer fit on fewer training states
// than opq.ReliableStates is said to be untrustworthy, with the measured
// numbers and without suggesting fewer codewords (fit and inspect); without
// --eval fit opq asks for a held-out measure; fit opq --eval records the
// held-out R^2 that inspect shows.
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
	const warn = "fit opq: warning: opq: fit on 104 training states, fewer than 1600: expect held-out reconstruction far worse than on the training states " +
		"(measured with the default configuration: held-out R^2 0.75 from 100 sim states, 0.89 from 400, 0.95 from 1600; below 0 from 64 to 200 recorded NetHack states). " +
		"Fit on at least 1600 states; fewer codewords do not fix this"
	if code != 0 || !strings.Contains(errs, warn) || strings.Contains(errs, "--eval HELD") {
		t.Fatalf("fit opq --eval: %d %s", code, errs)
	}
	code, _, errs = memowm(t, "fit", "opq", "--in", p("t.arrow"), "--out", p("n.opq"), "--codewords", "16", "--quiet")
	if code != 0 || !strings.Contains(errs, warn) || !strings.Contains(errs, "fit opq: warning: measure how it reconstructs states it was not fit on: --eval HELD") {
		t.Fatalf("fit opq without --eval: %d %s", code, errs)
	}
	// encode says how well the bundle's quantizer reconstructs states.
	if code, out, errs := memowm(t, "fit", "--opq", p("q.opq"), "--out", p("q.mwb"), "--preset", "tiny"); code != 0 {
		t.Fatalf("fit: %d %s %s", code, out, errs)
	}
	if code, out, errs := memowm(t, "encode", "--model", p("q.mwb"), "--in", p("e.arrow"), "--out", p("e.mwm"), "--quiet"); code != 0 || !strings.Contains(out, "held-out R^2") {
		t.Fatalf("encode: %d %s %s", code, out, errs)
	}
	code, out, errs := memowm(t, "inspect", p("q.opq"))
	if code != 0 || !strings.Contains(out, "held-out      R^2 0.") || !strings.Contains(out, "warning       opq: fit on 104 training states, fewer than 1600") {
		t.Fatalf("inspect: %d\n%s%s", code, out, errs)
	}
}
