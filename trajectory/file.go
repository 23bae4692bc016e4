package trajectory

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memowm/memowm/internal/atomicfile"
)

// Format is a trajectory file format, chosen by a file's extension.
type Format uint8

const (
	// Arrow is the Arrow IPC file format (.arrow).
	Arrow Format = iota + 1
	// Parquet is Apache Parquet (.parquet).
	Parquet
	// NumPy is a .npy array of the observations alone: an export for Python
	// users, written but not read back as a trajectory.
	NumPy
)

func (f Format) String() string {
	switch f {
	case Arrow:
		return "arrow"
	case Parquet:
		return "parquet"
	case NumPy:
		return "npy"
	}
	return fmt.Sprintf("format(%d)", uint8(f))
}

// FormatOf returns the format that path's extension names.
func FormatOf(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".arrow", ".arrows", ".ipc", ".feather":
		return Arrow, nil
	case ".parquet", ".pq":
		return Parquet, nil
	case ".npy":
		return NumPy, nil
	}
	return 0, fmt.Errorf("trajectory: %s: unknown extension %q (want .arrow, .parquet or .npy)", path, filepath.Ext(path))
}

// QuestionsPath is the JSON Lines file that holds the questions about the
// trajectories in path: path + ".questions.jsonl".
func QuestionsPath(path string) string { return path + ".questions.jsonl" }

// IndexPath is the .npy file that a NumPy export writes beside path: one
// (episode, step) int64 pair per exported observation.
func IndexPath(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".index.npy"
}

// ActionsPath is the .npy file that a NumPy export of trajectories writes
// beside path: one row of ActionColumns float64 per action (see ActionColumns).
func ActionsPath(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".actions.npy"
}

// ActionColumns is the width of an actions export row: episode, step (the
// observation the action leads to), type, has_pos, x, y, has_delta, dx, dy,
// payload length, then the payload's MaxPayload bytes (zero-padded), all as
// float64 (exact for every value they hold).
const ActionColumns = 10 + MaxPayload

// tempFile is a file written under a temporary name in the directory of its
// final name, renamed there only by commit.
type tempFile struct {
	*os.File
	final string
}

func createTemp(path string) (*tempFile, error) {
	// Registered with atomicfile: an interrupt removes it, and no rename
	// happens after one.
	f, err := atomicfile.CreateTemp(path)
	if err != nil {
		return nil, fmt.Errorf("trajectory: %w", err)
	}
	return &tempFile{File: f, final: path}, nil
}

// commit flushes, closes and renames the file to its final name.
func (t *tempFile) commit() error {
	if err := t.Sync(); err != nil {
		t.abort()
		return fmt.Errorf("trajectory: %w", err)
	}
	if err := t.Close(); err != nil {
		atomicfile.Remove(t.Name())
		return fmt.Errorf("trajectory: %w", err)
	}
	if err := atomicfile.Commit(t.Name(), t.final); err != nil {
		return fmt.Errorf("trajectory: %s: %w", t.final, err)
	}
	return nil
}

// abort closes and removes the temporary file; the final name is untouched.
func (t *tempFile) abort() {
	t.Close()
	atomicfile.Remove(t.Name())
}
