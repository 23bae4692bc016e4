package atomicfile

import (
	"errors"
	"io"
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

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	if err := Write(path, func(w io.Writer) error { _, err := w.Write([]byte("one")); return err }); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if b, _ := os.ReadFile(path); string(b) != "one" || st.Mode().Perm() != 0o644 {
		t.Fatalf("wrote %q with mode %v", b, st.Mode())
	}
	// A failing write leaves the old file and no temporary one.
	err := Write(path, func(w io.Writer) error { w.Write([]byte("partial")); return errors.New("boom") })
	if err == nil || err.Error() != "boom" {
		t.Fatalf("error %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Fatalf("a failed write changed the file to %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left %d entries", len(ents))
	}
}
