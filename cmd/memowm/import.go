package main

import (
	"errors"
	"io"
)

// runImport is being built (issue 10).
func runImport(args []string, stdout, stderr io.Writer) error {
	return errors.New("import: not built yet")
}
