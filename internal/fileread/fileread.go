// Package fileread reads a whole file through a format's reader that is
// told how many bytes the file holds, so that no length read from the file
// makes it allocate more than the file can hold; and it tells a file kind by
// its magic.
//
// Invariants: the reader gets the file's size (-1 when the file is not a
// regular file, such as a pipe: then it can only grow as bytes arrive);
// bytes left after the reader's end are an error (ErrTrailing); an error of
// opening the file is an *OpenError, every other error is the reader's.
package fileread

import (
	"bufio"
	"errors"
	"io"
	"os"
)

// ErrTrailing: the file goes on after the end its format reader found.
var ErrTrailing = errors.New("fileread: data after the end")

// OpenError is a failure to open or stat the file, before any reading.
type OpenError struct{ Err error }

func (e *OpenError) Error() string { return e.Err.Error() }
func (e *OpenError) Unwrap() error { return e.Err }

// Load opens path and returns what read makes of it. read gets a buffered
// reader and the file's size (-1 when it is not a regular file).
func Load[T any](path string, read func(r io.Reader, avail int64) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, &OpenError{err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return zero, &OpenError{err}
	}
	size := int64(-1)
	if st.Mode().IsRegular() {
		size = st.Size()
	}
	br := bufio.NewReaderSize(f, 1<<16)
	v, err := read(br, size)
	if err != nil {
		return zero, err
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return zero, ErrTrailing
	}
	return v, nil
}

// Available is how many bytes r can still give when r knows it (a
// bytes.Reader, strings.Reader or bytes.Buffer: Len; an io.LimitedReader: at
// most N), else -1: the avail a format reader bounds its allocations by when
// it reads from a stream rather than a file.
func Available(r io.Reader) int64 {
	switch r := r.(type) {
	case interface{ Len() int }:
		return int64(r.Len())
	case *io.LimitedReader:
		if n := Available(r.R); n >= 0 && n < r.N {
			return n
		}
		return max(r.N, 0)
	}
	return -1
}

// HasMagic reports whether the file at path starts with magic (a file kind's
// first bytes); an unreadable or shorter file does not.
func HasMagic(path, magic string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, len(magic))
	_, err = io.ReadFull(f, b)
	return err == nil && string(b) == magic
}
