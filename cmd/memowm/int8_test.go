package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelInt8 makes an int8 bundle from an f32 one and runs it end to end:
// encode at GOMAXPROCS 1 and 2 in separate processes gives the same bytes,
// decode in another process gives the quantized input back, inspect names
// the profile, and the f32 bundle refuses the int8 file.
func TestModelInt8(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	mustRun(t,
		[]string{"sim", "--episodes", "4", "--steps", "20", "--dim", "32", "--out", p("t.arrow"), "--quiet"},
		[]string{"fit", "--in", p("t.arrow"), "--out", p("b.mwb"), "--preset", "tiny", "--quiet"},
		[]string{"quantize", "--model", p("b.mwb"), "--in", p("t.arrow"), "--out", p("codes.arrow"), "--quiet"},
	)
	code, out, errs := memowm(t, "model", "int8", "--model", p("b.mwb"), "--calib", p("t.arrow"), "--out", p("b8.mwb"), "--histories", "40")
	if code != 0 || !strings.Contains(out, "profile int8") || !strings.Contains(out, "40 windows") {
		t.Fatalf("model int8: %d\n%s%s", code, out, errs)
	}
	if code, out, _ := memowm(t, "inspect", p("b8.mwb")); code != 0 || !strings.Contains(out, "profile int8") || !strings.Contains(out, "format 2") || !strings.Contains(out, "int8 network") {
		t.Fatalf("inspect: %s", out)
	}
	for _, procs := range []string{"1", "2"} {
		if out, err := child(t, procs, "encode", "--model", p("b8.mwb"), "--in", p("t.arrow"), "--out", p("m"+procs+".mwm"), "--lambda", "0", "--batch", "3").CombinedOutput(); err != nil {
			t.Fatalf("encode at GOMAXPROCS %s: %v\n%s", procs, err, out)
		}
	}
	m1, _ := os.ReadFile(p("m1.mwm"))
	m2, _ := os.ReadFile(p("m2.mwm"))
	if len(m1) == 0 || !bytes.Equal(m1, m2) {
		t.Fatalf("the int8 memory files written at GOMAXPROCS 1 and 2 differ (%d and %d bytes)", len(m1), len(m2))
	}
	if code, out, _ := memowm(t, "inspect", p("m1.mwm")); code != 0 || !strings.Contains(out, "profile int8") {
		t.Fatalf("inspect memory file: %s", out)
	}
	if out, err := child(t, "2", "decode", "--model", p("b8.mwb"), "--in", p("m1.mwm"), "--out", p("dec.arrow")).CombinedOutput(); err != nil || !strings.Contains(string(out), "every checksum holds") {
		t.Fatalf("decode: %v\n%s", err, out)
	}
	want, got := readCodes(t, p("codes.arrow")), readCodes(t, p("dec.arrow"))
	if len(want) != 4 || len(got) != 4 {
		t.Fatalf("%d and %d episodes", len(want), len(got))
	}
	for i := range want {
		for k := range want[i].Codes {
			if !bytes.Equal(want[i].Codes[k], got[i].Codes[k]) {
				t.Fatalf("episode %d step %d: decoded codes differ from the quantized input", i, k)
			}
		}
	}
	// The f32 bundle is not the one the file names.
	if code, _, errs := memowm(t, "verify", "--model", p("b.mwb"), p("m1.mwm")); code == 0 || !strings.Contains(errs, "bundle") {
		t.Fatalf("verify with the f32 bundle: %d %s", code, errs)
	}
	// Refusals.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"model", "int8", "--model", p("b8.mwb"), "--calib", p("t.arrow"), "--out", p("x.mwb")}, "in the int8 profile already"},
		{[]string{"model", "int8", "--model", p("b.mwb"), "--out", p("x.mwb")}, "--calib TRAIN is required"},
		{[]string{"model", "int8", "--model", p("b.mwb"), "--calib", p("t.arrow"), "--out", p("b8.mwb")}, "exists"},
		{[]string{"model", "int8", "--model", p("b.mwb"), "--calib", p("t.arrow"), "--out", p("x.opq")}, "named .mwb"},
		{[]string{"model", "int8", "--model", p("b.mwb"), "--calib", p("t.arrow"), "--out", p("x.mwb"), "--histories", "0"}, "--histories 0"},
	} {
		if code, _, errs := memowm(t, c.args...); code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: %d %q, want %q", c.args, code, errs, c.want)
		}
	}
}
