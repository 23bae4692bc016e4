package trajectory

import (
	"errors"
	"strings"
)

// Sentinel errors. Every error about a file names the file and starts with
// "trajectory:"; test for these with errors.Is.
var (
	// ErrFormat is wrapped by every error about a file that is not a
	// trajectory file or is damaged, ErrChecksum and ErrLimit included.
	ErrFormat = errors.New("not a valid trajectory file")

	// ErrChecksum is wrapped (with ErrFormat) when an episode's content does
	// not match the checksum the writer stored for it, or when the file holds
	// fewer or more episodes than it has checksums for.
	ErrChecksum = errors.New("checksum mismatch")

	// ErrLimit is wrapped (with ErrFormat) when a file asks the reader to
	// allocate more than its limits allow (see WithMaxAlloc, MaxQuestionLine).
	ErrLimit = errors.New("exceeds a reader limit")
)

// fileError names the file an error from a helper was about: its message is
// "trajectory: NAME: " and the helper's message without its own prefix.
type fileError struct {
	name string
	err  error
}

func inFile(name string, err error) error { return &fileError{name, err} }

func (e *fileError) Error() string {
	return "trajectory: " + e.name + ": " + strings.TrimPrefix(e.err.Error(), "trajectory: ")
}

func (e *fileError) Unwrap() error { return e.err }
