package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memowm/memowm/trajectory"
)

const handwrittenRec = "../../recording/testdata/handwritten"

func TestImportCLI(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "shell.arrow")
	code, stdout, stderr := memowm(t, "import", "--out", out, handwrittenRec, handwrittenRec)
	if code != 0 {
		t.Fatalf("status %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"2 episodes, 12 observations (10 transitions)", "8 questions in " + trajectory.QuestionsPath(out),
		"screens: 2 text (shell); states 32x512 float32", "screens/s"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if stderr != "" {
		t.Errorf("a short import wrote to stderr: %s", stderr)
	}
	code, stdout, _ = memowm(t, "inspect", out)
	if code != 0 || !strings.Contains(stdout, "episodes      2\n") || !strings.Contains(stdout, "questions     8") ||
		!strings.Contains(stdout, "facts         12 observations") || !strings.Contains(stdout, "press-enter 4 (40.0%)") {
		t.Errorf("inspect: %d\n%s", code, stdout)
	}
	// The seed moves the questions, never the trajectory.
	other := filepath.Join(dir, "other.arrow")
	if code, _, stderr := memowm(t, "import", "--seed", "5", "--quiet", "--out", other, handwrittenRec, handwrittenRec); code != 0 {
		t.Fatal(stderr)
	}
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(other)
	if string(a) != string(b) {
		t.Error("--seed changed the trajectory")
	}
}

func TestImportCLIErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.arrow")
	bad := filepath.Join(dir, "bad")
	os.Mkdir(bad, 0o755)
	for _, name := range []string{"recording.json", "screens.jsonl", "facts.jsonl"} {
		b, _ := os.ReadFile(filepath.Join(handwrittenRec, name))
		os.WriteFile(filepath.Join(bad, name), b, 0o644)
	}
	os.WriteFile(filepath.Join(bad, "actions.jsonl"), []byte(`{"type": "type", "text": "ls"}`+"\n"+`{"type": "click", "x": 2, "y": 0}`+"\n"), 0o644)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{handwrittenRec}, 2, "--out FILE is required"},
		{[]string{"--out", out}, 2, "want at least one recording folder"},
		{[]string{"--out", filepath.Join(dir, "x.txt"), handwrittenRec}, 2, "unknown extension"},
		{[]string{"--out", out, handwrittenRec, bad}, 1, "memowm import: recording: " + filepath.Join(bad, "actions.jsonl") + " line 2: click position (2, 0) is outside [0, 1]"},
		{[]string{"--out", out, filepath.Join(dir, "nothing")}, 1, "no such file or directory"},
	}
	for _, c := range cases {
		code, _, stderr := memowm(t, append([]string{"import"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("failed imports left files: %v", ents)
	}
	code, stdout, _ := memowm(t, "import", "-h")
	if code != 0 || !strings.Contains(stdout, "Usage: memowm import --out FILE") || !strings.Contains(stdout, "docs/recording-format.md") {
		t.Errorf("help: %d\n%s", code, stdout)
	}
}

// TestImportRecordedSeed: without --seed, import draws the questions with the
// seed its recorder wrote into recording.json, so importing a recorder's
// folder gives the recorder's questions too; --seed overrides it.
func TestImportRecordedSeed(t *testing.T) {
	const rec = "../../record/tty/testdata/vim-100" // recorded with --seed 7
	dir := t.TempDir()
	def, seven, one := filepath.Join(dir, "def.arrow"), filepath.Join(dir, "seven.arrow"), filepath.Join(dir, "one.arrow")
	for _, c := range [][]string{
		{"import", "--quiet", "--out", def, rec},
		{"import", "--quiet", "--seed", "7", "--out", seven, rec},
		{"import", "--quiet", "--seed", "1", "--out", one, rec},
	} {
		if code, _, stderr := memowm(t, c...); code != 0 {
			t.Fatalf("%v: %s", c, stderr)
		}
	}
	q := func(p string) string {
		b, err := os.ReadFile(trajectory.QuestionsPath(p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if q(def) != q(seven) {
		t.Error("the default seed is not the recorded one")
	}
	if q(def) == q(one) {
		t.Error("--seed 1 gave the recorded seed's questions")
	}
}
