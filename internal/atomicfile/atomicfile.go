// Package atomicfile holds the check that every writer in memowm makes
// before it replaces a file by renaming a temporary one over it.
package atomicfile

import (
	"fmt"
	"os"
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
