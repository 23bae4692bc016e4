package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckTarget(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	if err := CheckTarget(file); err != nil {
		t.Fatal(err)
	}
	if err := CheckTarget(filepath.Join(dir, "missing")); err != nil {
		t.Fatal(err)
	}
	if err := CheckTarget(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a directory: %v", err)
	}
	if err := CheckTarget(os.DevNull); err == nil {
		t.Fatal("the null device passed")
	}
}
