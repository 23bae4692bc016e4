package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func memowm(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestSimInspect(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{".arrow", ".parquet"} {
		a, b := filepath.Join(dir, "x"+ext), filepath.Join(dir, "y"+ext)
		for _, p := range []string{a, b} {
			code, out, errs := memowm(t, "sim", "--episodes", "4", "--steps", "20", "--seed", "1", "--dim", "64", "--out", p)
			if code != 0 || !strings.Contains(out, "4 episodes, 84 observations") {
				t.Fatalf("sim %s: status %d\n%s%s", ext, code, out, errs)
			}
		}
		ba, _ := os.ReadFile(a)
		bb, _ := os.ReadFile(b)
		if !bytes.Equal(ba, bb) {
			t.Fatalf("%s: the same seed gave different files", ext)
		}
		code, out, errs := memowm(t, "inspect", a)
		if code != 0 || !strings.Contains(out, "episodes      4\n") || !strings.Contains(out, "observations  84 (80 transitions; 21..21 per episode)") {
			t.Fatalf("inspect %s: %d\n%s%s", ext, code, out, errs)
		}
		code, out, _ = memowm(t, "inspect", a, "--json")
		var sum struct {
			Episodes     int   `json:"episodes"`
			Observations int64 `json:"observations"`
			Questions    int   `json:"questions"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &sum) != nil || sum.Episodes != 4 || sum.Observations != 84 || sum.Questions <= 0 {
			t.Fatalf("inspect --json %s: %d %s", ext, code, out)
		}
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "g.arrow")
	if code, _, errs := memowm(t, "sim", "--episodes", "2", "--steps", "3", "--dim", "8", "--out", good, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	data, _ := os.ReadFile(good)
	trunc := filepath.Join(dir, "t.arrow")
	os.WriteFile(trunc, data[:len(data)/2], 0o644)
	garbage := filepath.Join(dir, "garbage.parquet")
	os.WriteFile(garbage, bytes.Repeat([]byte("garbage!"), 100), 0o644)

	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"inspect", trunc}, 1, "not a valid trajectory file"},
		{[]string{"inspect", garbage}, 1, "not a valid trajectory file"},
		{[]string{"inspect", filepath.Join(dir, "missing.arrow")}, 1, "no such file"},
		{[]string{"inspect"}, 2, "want exactly one FILE"},
		{[]string{"inspect", "a.txt"}, 1, "unknown extension"},
		{[]string{"sim", "--out", filepath.Join(dir, "s.arrow"), "--steps", "0"}, 2, "steps 0"},
		{[]string{"sim"}, 2, "--out FILE is required"},
		{[]string{"sim", "--out", "x.csv"}, 2, "unknown extension"},
		{[]string{"sim", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"frobnicate"}, 2, "unknown verb"},
		{[]string{}, 2, "Usage"},
	}
	for _, c := range cases {
		code, _, errs := memowm(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
		if strings.Contains(errs, "goroutine") || strings.Count(strings.TrimSpace(errs), "\n") > 0 && c.code != 2 {
			t.Errorf("%v: stderr is not one line: %q", c.args, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "s.arrow")); !os.IsNotExist(err) {
		t.Error("a failed sim left a file behind")
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"sim", "-h"}, {"inspect", "-h"}, {"demo", "-h"}, {"help", "sim"}} {
		code, out, _ := memowm(t, args...)
		if code != 0 || strings.Count(out, "Usage") != 1 {
			t.Errorf("%v: status %d, output %q", args, code, out)
		}
	}
}

func TestDemo(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := memowm(t, "demo", "--dir", dir, "--dim", "32", "--episodes", "3", "--wm-steps", "20")
	if code != 0 || !strings.Contains(out, "the two formats hold the same episodes: yes") ||
		!strings.Contains(out, "fit an OPQ quantizer on 15 training episodes (315 states, 64 codewords per codebook)") || !strings.Contains(out, "quality  R^2 ") ||
		!strings.Contains(out, "decode it and compare with the quantized codes: identical") ||
		!strings.Contains(out, "wm-all-send") {
		t.Fatalf("demo: %d\n%s%s", code, out, errs)
	}
}
