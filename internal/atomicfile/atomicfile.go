// Package atomicfile holds the check that every writer in memowm makes
// before it replaces a file by renaming a temporary one over it.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// CheckTarget returns an error if path exists and is not a regular file.
// Renaming a temporary file over a device, a directory or a named pipe
// (say, --out /dev/null) would replace that node, not write into it.
func CheckTarget(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return nil // missing (or unreadable: the write will say why)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s exists and is not a regular file (%v): refusing to replace it", path, st.Mode().Type())
	}
	return nil
}

// Write writes the file at path through a temporary file in the same
// directory: it refuses a target that is not a regular file (CheckTarget),
// calls write, makes the file mode 0644, syncs, closes and renames it over
// path. On any error the temporary file is removed and path is untouched.
func Write(path string, write func(w io.Writer) error) (err error) {
	if err := CheckTarget(path); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
