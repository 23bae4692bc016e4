package main

import (
	"errors"
	"io"
)

// runRecordWeb is being built (issue 10).
func runRecordWeb(args []string, stdout, stderr io.Writer) error {
	return errors.New("record web: not built yet")
}
