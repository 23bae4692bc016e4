package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectChecksums: inspect says whether a trajectory file's episodes
// were checked against their writer's checksums (memowm writes them; an
// export without them is read and said to carry none).
func TestInspectChecksums(t *testing.T) {
	dir := t.TempDir()
	traj, npy := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "t.npy")
	if code, _, errs := memowm(t, "sim", "--episodes", "2", "--steps", "3", "--dim", "32", "--out", traj, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	if code, out, errs := memowm(t, "inspect", traj); code != 0 || !strings.Contains(out, "checksums     every episode matches") {
		t.Fatalf("inspect %s: %d\n%s%s", traj, code, out, errs)
	}
	if code, _, errs := memowm(t, "sim", "--episodes", "2", "--steps", "3", "--dim", "32", "--out", npy, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	if code, out, errs := memowm(t, "inspect", npy); code != 0 || !strings.Contains(out, "checksums     none") {
		t.Fatalf("inspect %s: %d\n%s%s", npy, code, out, errs)
	}
}
