package main

import (
	"errors"
	"io"
)

// runRecordTTY is being built (issue 10).
func runRecordTTY(args []string, stdout, stderr io.Writer) error {
	return errors.New("record tty: not built yet")
}
