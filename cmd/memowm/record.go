package main

import (
	"fmt"
	"io"
)

// runRecord dispatches 'record web' and 'record tty'.
func runRecord(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		fmt.Fprint(stdout, "Usage: memowm record web|tty [flags] --out FILE\n\n"+
			"Records a real agent session into a recording folder (docs/recording-format.md)\n"+
			"and a trajectory built from it by the same code as 'memowm import':\n"+
			"  record web   a seeded exploration of local HTML sites in headless Chromium\n"+
			"  record tty   a terminal program in tmux (80x24), keys as actions\n"+
			"'memowm record web -h' and 'memowm record tty -h' show their flags.\n")
		if len(args) == 0 {
			return usagef("record needs web or tty")
		}
		return nil
	}
	switch args[0] {
	case "web":
		return runRecordWeb(args[1:], stdout, stderr)
	case "tty":
		return runRecordTTY(args[1:], stdout, stderr)
	}
	return usagef("record %q: want web or tty", args[0])
}
