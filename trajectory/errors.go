package trajectory

import (
	"errors"
	"io"
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

// notEOF keeps io.EOF out of the chain of an error about a file. Read loops
// stop on errors.Is(err, io.EOF), so an error from arrow-go, Parquet or the
// operating system that wraps io.EOF (a damaged footer's "error reading
// field 1: EOF", a record reader's "got error: EOF") would end them quietly
// as if the file had ended. notEOF returns err unchanged unless its chain
// holds io.EOF; then it returns an error with the same message whose chain
// holds io.ErrUnexpectedEOF in its place and every other error of err's
// chain (ErrFormat, ErrLimit, *ValidationError, ...).
func notEOF(err error) error {
	if err == nil || !errors.Is(err, io.EOF) {
		return err
	}
	return &eofFree{err}
}

type eofFree struct{ err error }

func (e *eofFree) Error() string { return e.err.Error() }

// Unwrap gives io.ErrUnexpectedEOF; Is and As reach the rest of the chain.
func (e *eofFree) Unwrap() error { return io.ErrUnexpectedEOF }

func (e *eofFree) Is(target error) bool { return target != io.EOF && errors.Is(e.err, target) }

func (e *eofFree) As(target any) bool { return errors.As(e.err, target) }

// unexpected turns the io.EOF that io.ReadFull and decoders return when
// nothing is left into io.ErrUnexpectedEOF: where a reader still needs
// bytes, their absence is damage, not the end of the data.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
