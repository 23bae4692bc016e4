package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimCodes: sim --opq writes, episode by episode, the same bytes as sim
// followed by quantize (codes, the quantizer's digest, the questions).
func TestSimCodes(t *testing.T) {
	dir := t.TempDir()
	states, q := filepath.Join(dir, "s.arrow"), filepath.Join(dir, "q.opq")
	viaQuantize, direct := filepath.Join(dir, "a.arrow"), filepath.Join(dir, "b.arrow")
	simArgs := []string{"sim", "--episodes", "6", "--steps", "12", "--dim", "32", "--seed", "4", "--quiet"}
	for _, args := range [][]string{
		append(simArgs, "--out", states),
		{"fit", "opq", "--in", states, "--out", q, "--quiet"},
		{"quantize", "--opq", q, "--in", states, "--out", viaQuantize, "--quiet"},
		append(simArgs, "--out", direct, "--opq", q),
	} {
		if code, o, errs := memowm(t, args...); code != 0 {
			t.Fatalf("%v: %d\n%s%s", args, code, o, errs)
		}
	}
	for _, suffix := range []string{"", ".questions.jsonl"} {
		a, err1 := os.ReadFile(viaQuantize + suffix)
		b, err2 := os.ReadFile(direct + suffix)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Fatalf("sim --opq%s differs from sim + quantize (%v %v)", suffix, err1, err2)
		}
	}
	if code, o, _ := memowm(t, "inspect", direct); code != 0 || !strings.Contains(o, "content       codes") {
		t.Fatalf("inspect: %s", o)
	}
	for _, bad := range [][]string{
		{"--opq", q, "--model", q},
		{"--opq", q, "--dim", "64"},
	} {
		args := append([]string{"sim", "--episodes", "2", "--out", filepath.Join(dir, "x.arrow")}, bad...)
		if code, _, errs := memowm(t, args...); code != 2 {
			t.Errorf("%v: %d %s", bad, code, errs)
		}
	}
	if code, _, errs := memowm(t, "sim", "--episodes", "2", "--dim", "32", "--out", filepath.Join(dir, "x.arrow"), "--opq", filepath.Join(dir, "none.opq")); code != 1 || !strings.Contains(errs, "none.opq") {
		t.Errorf("a missing quantizer: %d %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.arrow")); !os.IsNotExist(err) {
		t.Errorf("a refused sim left x.arrow: %v", err)
	}
}
