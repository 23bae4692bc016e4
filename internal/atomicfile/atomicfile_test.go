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
	if err := CheckTarget(dir); err == nil || !strings.Contains(err.Error(), "is a folder, not a regular file") {
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

// reset clears the registry between tests (Interrupt is for the end of a
// process).
func reset() {
	state.mu.Lock()
	defer state.mu.Unlock()
	state.interrupted = false
	state.temps, state.watched, state.written = nil, nil, nil
}

func TestCreateTempErrorNamesTarget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodir", "c.opq")
	_, err := CreateTemp(path)
	if err == nil || !strings.Contains(err.Error(), "cannot create "+path) || strings.Contains(err.Error(), ".tmp") {
		t.Fatalf("error %v; want one naming %s, not the temporary file", err, path)
	}
}

func TestInterrupt(t *testing.T) {
	reset()
	defer reset()
	dir := t.TempDir()
	done, mid, foreign := filepath.Join(dir, "done"), filepath.Join(dir, "mid"), filepath.Join(dir, "foreign")
	// A leftover of foreign from before: not ours, kept.
	old := filepath.Join(dir, ".foreign.tmp111")
	os.WriteFile(old, []byte("old"), 0o600)
	Watch(foreign)
	if err := Write(done, func(w io.Writer) error { _, err := w.Write([]byte("x")); return err }); err != nil {
		t.Fatal(err)
	}
	f, err := CreateTemp(mid)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("partial"))
	// A writer of its own, with the same naming.
	g, err := os.CreateTemp(dir, TempPattern(foreign))
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	if l := Leftovers(foreign); len(l) != 2 {
		t.Fatalf("leftovers of foreign: %v", l)
	}
	rep := Interrupt()
	want := []string{f.Name(), g.Name()}
	if f.Name() > g.Name() {
		want[0], want[1] = want[1], want[0]
	}
	if strings.Join(rep.Removed, " ") != strings.Join(want, " ") || len(rep.Written) != 1 || rep.Written[0] != done {
		t.Fatalf("report %+v; want removed %v, written [%s]", rep, want, done)
	}
	for _, p := range want {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there", p)
		}
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("the older leftover was removed: %v", err)
	}
	// Nothing reaches a final name after the interrupt.
	f.Close()
	if err := Commit(f.Name(), mid); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("commit after the interrupt: %v", err)
	}
	if err := Write(mid, func(io.Writer) error { return nil }); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("write after the interrupt: %v", err)
	}
	if _, err := os.Stat(mid); !os.IsNotExist(err) {
		t.Error("a file appeared under the final name after the interrupt")
	}
}

func TestLeftoversMatchOnlyTemporaries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.arrow")
	for _, n := range []string{".x.arrow.tmp123", ".x.arrow.tmp", ".x.arrow.tmpabc", ".x.arrow.questions.jsonl.tmp5", "x.arrow", ".y.arrow.tmp1"} {
		os.WriteFile(filepath.Join(dir, n), []byte("12345"), 0o644)
	}
	l := Leftovers(path)
	if len(l) != 1 || l[0].Path != filepath.Join(dir, ".x.arrow.tmp123") || l[0].Size != 5 {
		t.Fatalf("leftovers %+v", l)
	}
}

// TestNoReplace: a target marked with NoReplace that another writer made
// after the check is not overwritten; Commit fails with ErrExists and
// removes its temporary, and an unmarked target is replaced as before.
func TestNoReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.bin")
	NoReplace(path)
	if err := Write(path, func(w io.Writer) error { _, err := w.Write([]byte("first")); return err }); err != nil {
		t.Fatal(err)
	}
	err := Write(path, func(w io.Writer) error { _, err := w.Write([]byte("second")); return err })
	if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second write: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Fatalf("target replaced: %q", b)
	}
	if l := Leftovers(path); len(l) != 0 {
		t.Fatalf("temporaries left: %v", l)
	}
	other := filepath.Join(dir, "other.bin")
	for _, s := range []string{"a", "b"} {
		if err := Write(other, func(w io.Writer) error { _, err := w.Write([]byte(s)); return err }); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(other); string(b) != "b" {
		t.Fatalf("unmarked target: %q", b)
	}
}

// TestAllowReplace: AllowReplace lifts NoReplace's mark.
func TestAllowReplace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	NoReplace(path)
	os.WriteFile(path, []byte("old"), 0o644)
	AllowReplace(path)
	if err := Write(path, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Fatalf("%q", b)
	}
}
