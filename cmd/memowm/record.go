package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memowm/memowm/recording"
	"github.com/memowm/memowm/trajectory"
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

// checkRecDir refuses a --dir that exists and is not a recording folder (it
// would be replaced). verb prefixes the errors ("record tty").
func checkRecDir(verb, dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: %s exists and is not a folder", verb, dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	if len(ents) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, recording.MetaFile)); err != nil {
		return fmt.Errorf("%s: %s exists and is not a recording folder (no %s); give another --dir", verb, dir, recording.MetaFile)
	}
	return nil
}

// recTempDir is the temporary name a recorder writes dir under (renamed by
// replaceRecDir when done), cleared of any leftover; the interrupt handler
// removes it.
func recTempDir(dir string) string {
	tmp := fmt.Sprintf("%s.tmp-%d", strings.TrimRight(dir, "/"), os.Getpid())
	os.RemoveAll(tmp)
	removeOnInterrupt(tmp)
	return tmp
}

// replaceRecDir renames tmp to dir, replacing a previous recording folder
// there.
func replaceRecDir(verb, tmp, dir string) error {
	if err := checkRecDir(verb, dir); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("%s: %w", verb, err)
	}
	return nil
}

// importRecording builds the trajectory out from a recorder's folder dir
// with recording.Import (progress on stderr every 2 s unless quiet).
// An interrupt during the import says that the folder is complete.
func importRecording(dir, out string, seed uint64, encoder string, quiet bool, stderr io.Writer) (*recording.ImportSummary, error) {
	setInterruptNote(fmt.Sprintf("the recording folder %s is complete: 'memowm import --out %s %s' builds the trajectory", dir, out, dir))
	defer setInterruptNote("")
	opt := recording.ImportOptions{Seed: seed, TextEncoder: encoder}
	if !quiet {
		last := time.Now()
		opt.Progress = func(done, total int) {
			if now := time.Now(); done < total && now.Sub(last) >= 2*time.Second {
				fmt.Fprintf(stderr, "import: %d/%d screens encoded\n", done, total)
				last = now
			}
		}
	}
	return recording.Import([]string{dir}, out, opt)
}

// printRecorded prints the line that says which trajectory a recorder
// wrote.
func printRecorded(stdout io.Writer, out string, sum *recording.ImportSummary) error {
	ts, err := trajectory.Summarize(out, trajOpts()...)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d episode, %d observations (%d transitions), %s; %d questions in %s\n",
		out, sum.Episodes, sum.Observations, sum.Observations-sum.Episodes, humanBytes(ts.SizeBytes), sum.Questions, trajectory.QuestionsPath(out))
	return nil
}
