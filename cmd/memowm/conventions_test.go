package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIConventions: --version and its spellings, help for help, flags
// printed as --flag without NaN defaults, a bad flag as a usage error on
// stderr without the usage on stdout, --out - refused, and a completion
// script that lists the verbs and a verb's real flags.
func TestCLIConventions(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-V"}, {"version"}} {
		code, out, errs := memowm(t, args...)
		if code != 0 || !strings.HasPrefix(out, "memowm ") || !strings.Contains(out, "go1.") || errs != "" {
			t.Fatalf("%v: %d %q %q", args, code, out, errs)
		}
	}
	if code, out, _ := memowm(t, "help", "-h"); code != 0 || !strings.Contains(out, "Usage: memowm help [VERB]") {
		t.Fatalf("help -h: %d %s", code, out)
	}
	code, out, _ := memowm(t, "encode", "-h")
	if code != 0 || !strings.Contains(out, "  --out STRING") || strings.Contains(out, "\n  -out") || strings.Contains(out, "NaN") {
		t.Fatalf("encode -h: %d\n%s", code, out)
	}
	if code, out, errs := memowm(t, "encode", "--bogus"); code != 2 || out != "" || !strings.Contains(errs, "-bogus") || strings.Contains(errs, "Usage:") {
		t.Fatalf("a bad flag: %d %q %q", code, out, errs)
	}
	if code, _, errs := memowm(t, "sim", "--out", "-"); code != 2 || !strings.Contains(errs, "never to stdout") {
		t.Fatalf("--out -: %d %s", code, errs)
	}
	code, out, _ = memowm(t, "completion", "bash")
	if code != 0 || !strings.Contains(out, "complete -o filenames -F _memowm memowm") || !strings.Contains(out, "encode) flags=\"--batch --device --force --in --json --lambda") {
		t.Fatalf("completion bash: %d\n%s", code, out)
	}
	if code, out, _ := memowm(t, "completion", "zsh"); code != 0 || !strings.HasPrefix(out, "#compdef memowm") {
		t.Fatalf("completion zsh: %d", code)
	}
	if code, _, _ := memowm(t, "completion", "fish"); code != 2 {
		t.Fatal("completion fish accepted")
	}
}

// TestMaxAlloc: the global --max-alloc caps what a trajectory reader may
// allocate (a file needing more is refused), and a bad size is a usage error.
func TestMaxAlloc(t *testing.T) {
	traj := filepath.Join(t.TempDir(), "t.arrow")
	if code, _, errs := memowm(t, "sim", "--episodes", "2", "--steps", "3", "--dim", "32", "--out", traj, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	if code, _, errs := memowm(t, "--max-alloc", "1KiB", "inspect", traj); code != 1 || !strings.Contains(errs, "cap") || !strings.Contains(errs, "--max-alloc") || strings.Contains(errs, "damaged") {
		t.Fatalf("--max-alloc 1KiB: %d %s", code, errs)
	}
	if code, out, errs := memowm(t, "--max-alloc=64MiB", "inspect", traj); code != 0 || !strings.Contains(out, "episodes      2") {
		t.Fatalf("--max-alloc=64MiB: %d %s %s", code, out, errs)
	}
	for _, bad := range [][]string{{"--max-alloc", "x", "inspect", traj}, {"--max-alloc"}, {"--max-alloc=0", "inspect", traj}} {
		if code, _, _ := memowm(t, bad...); code != 2 {
			t.Fatalf("%v: status %d", bad, code)
		}
	}
}

// TestREADMEHelpBlock: the README's `memowm help` block is what memowm help
// prints, so the README lists every verb that exists and no other.
func TestREADMEHelpBlock(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i := strings.Index(s, "## `memowm help`")
	if i < 0 {
		t.Fatal("README.md has no `memowm help` section")
	}
	j := strings.Index(s[i:], "```\n")
	k := strings.Index(s[i+j+4:], "```")
	if j < 0 || k < 0 {
		t.Fatal("the `memowm help` section has no code block")
	}
	block := s[i+j+4 : i+j+4+k]
	_, out, _ := memowm(t, "help")
	if block != out {
		t.Fatalf("README.md's help block differs from 'memowm help'; paste:\n%s", out)
	}
}
