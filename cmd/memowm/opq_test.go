package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memowm/memowm/trajectory"
)

func TestFitQuantizeInspect(t *testing.T) {
	dir := t.TempDir()
	train, eval := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "eval.parquet")
	for _, c := range [][]string{
		{"sim", "--episodes", "4", "--steps", "20", "--seed", "1", "--dim", "64", "--out", train, "--quiet"},
		{"sim", "--episodes", "2", "--steps", "10", "--seed", "2", "--dim", "64", "--out", eval, "--quiet"},
	} {
		if code, _, errs := memowm(t, c...); code != 0 {
			t.Fatal(errs)
		}
	}
	q1, q2 := filepath.Join(dir, "a.opq"), filepath.Join(dir, "b.opq")
	code, out, errs := memowm(t, "fit", "opq", "--in", train, "--out", q1, "--eval", eval, "--rounds", "1", "--codewords", "16")
	if code != 0 || !strings.Contains(out, "1024 codebooks x 16 codewords, pca rotation, 1 OPQ rounds, seed 0") ||
		!strings.Contains(out, "held-out R^2 0.") || !strings.Contains(errs, "k-means 1024/1024") {
		t.Fatalf("fit opq: %d\n%s%s", code, out, errs)
	}
	// The same with one worker (and --quiet: only the warning about too
	// few training states on stderr), the same file.
	if code, _, errs := memowm(t, "fit", "opq", "--in", train, "--out", q2, "--eval", eval, "--rounds", "1", "--codewords", "16", "--workers", "1", "--quiet"); code != 0 ||
		strings.Count(errs, "\n") != strings.Count(errs, "fit opq: warning: ") {
		t.Fatalf("fit opq --workers 1: %d %s", code, errs)
	}
	a, _ := os.ReadFile(q1)
	b, _ := os.ReadFile(q2)
	if !bytes.Equal(a, b) {
		t.Fatal("fit opq with 1 worker and all cores wrote different files")
	}

	code, out, _ = memowm(t, "inspect", q1)
	if code != 0 || !strings.Contains(out, "32 slots x 64 float32 -> 1024 codes of 16 codewords (4096 bits)") || !strings.Contains(out, "training      84 states") {
		t.Fatalf("inspect: %d\n%s", code, out)
	}
	code, out, _ = memowm(t, "inspect", "--json", q1)
	var js struct {
		Kind  string `json:"kind"`
		Books int    `json:"books"`
		Bits  int    `json:"bits"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &js) != nil || js.Kind != "opq" || js.Books != 1024 || js.Bits != 4096 {
		t.Fatalf("inspect --json: %d %s", code, out)
	}

	for _, ext := range []string{".arrow", ".parquet", ".npy"} {
		codes := filepath.Join(dir, "codes"+ext)
		code, out, errs := memowm(t, "quantize", "--opq", q1, "--in", eval, "--out", codes)
		if code != 0 || !strings.Contains(out, "2 episodes, 22 observations x 1024 codes (4096 bits each)") || !strings.Contains(out, "quality  R^2 0.") {
			t.Fatalf("quantize %s: %d\n%s%s", ext, code, out, errs)
		}
		if ext == ".npy" {
			continue
		}
		sum, err := trajectory.Summarize(codes)
		if err != nil || sum.Content != "codes" || sum.Observations != 22 || sum.Questions < 0 {
			t.Fatalf("codes file %s: %+v %v", ext, sum, err)
		}
	}
	// The codes equal the package's encoding of the same states.
	r, err := trajectory.Open(filepath.Join(dir, "codes.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ep, err := r.Next()
	if err != nil || len(ep.Codes) != 11 || len(ep.Actions) != 10 || ep.Facts == nil {
		t.Fatalf("first episode of the codes file: %v", err)
	}
}

func TestFitQuantizeErrors(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "s.arrow")
	other := filepath.Join(dir, "o.arrow")
	for _, c := range [][]string{
		{"sim", "--episodes", "1", "--steps", "5", "--dim", "64", "--out", small, "--quiet"},
		{"sim", "--episodes", "2", "--steps", "10", "--dim", "32", "--out", other, "--quiet"},
	} {
		if code, _, errs := memowm(t, c...); code != 0 {
			t.Fatal(errs)
		}
	}
	good := filepath.Join(dir, "g.opq")
	if code, _, errs := memowm(t, "fit", "opq", "--in", other, "--out", good, "--codewords", "4", "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	codes := filepath.Join(dir, "c.arrow")
	if code, _, errs := memowm(t, "quantize", "--opq", good, "--in", other, "--out", codes, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	damaged := filepath.Join(dir, "d.opq")
	data, _ := os.ReadFile(good)
	data[len(data)/2] ^= 1
	os.WriteFile(damaged, data, 0o644)

	bad := filepath.Join(dir, "bad.opq")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"fit"}, 2, "--out BUNDLE and one of --in TRAIN or --opq FILE are required"},
		{[]string{"fit", "wm"}, 2, `unknown stage "wm"`},
		{[]string{"fit", "opq"}, 2, "--in TRAIN and --out OPQFILE are required"},
		{[]string{"fit", "opq", "--in", small, "--out", bad}, 1, "6 states give 6 points per codebook, fewer than the 64 codewords: k-means cannot seed them from fewer than 64 states (and a held-out reconstruction to rely on takes 1600)"},
		{[]string{"fit", "opq", "--in", small, "--out", bad, "--rotation", "zca"}, 2, `unknown rotation "zca"`},
		{[]string{"fit", "opq", "--in", small, "--out", bad, "--codewords", "1000"}, 2, "codewords 1000"},
		{[]string{"fit", "opq", "--in", codes, "--out", bad}, 1, "holds codes, not states"},
		{[]string{"fit", "opq", "--in", filepath.Join(dir, "none.arrow"), "--out", bad}, 1, "no such file"},
		{[]string{"quantize", "--opq", good, "--in", small, "--out", filepath.Join(dir, "x.arrow")}, 1, "holds 32x64 (1024 codes) states, but"},
		{[]string{"quantize", "--opq", damaged, "--in", other, "--out", filepath.Join(dir, "x.arrow")}, 1, "not a valid quantizer file"},
		{[]string{"quantize", "--opq", good, "--in", codes, "--out", filepath.Join(dir, "x.arrow")}, 1, "holds codes, not states"},
		{[]string{"quantize", "--opq", good, "--in", other, "--out", filepath.Join(dir, "x.csv")}, 2, "unknown extension"},
		{[]string{"quantize", "--in", other}, 2, "are required"},
		{[]string{"inspect", damaged}, 1, "checksum mismatch"},
	}
	for _, c := range cases {
		code, _, errs := memowm(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
	for _, p := range []string{bad, filepath.Join(dir, "x.arrow")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("a failed command left %s", p)
		}
	}
	for _, args := range [][]string{{"fit", "-h"}, {"fit", "opq", "-h"}, {"quantize", "-h"}, {"help", "quantize"}} {
		if code, out, _ := memowm(t, args...); code != 0 || !strings.Contains(out, "Usage") {
			t.Errorf("%v: %d %q", args, code, out)
		}
	}
}
