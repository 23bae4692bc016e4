package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"

	"github.com/memowm/memowm/internal/atomicfile"
)

// Interrupts. runMain installs one handler for SIGINT, SIGTERM and SIGHUP.
// A signal deletes every temporary file in flight (internal/atomicfile: the
// registered ones, and those of the outputs a verb watches with
// watchOutputs), says on stderr what it removed and what was already
// written, and ends the process with status 128 + the signal's number (130
// for Ctrl-C). A verb that stops cleanly by itself (record) opens a section
// with interruptContext: the first signal cancels its context instead (the
// verb cleans up and fails; its status is then 128 + the signal's number
// too), and the next one is handled as above.
//
// fit --stage wm and all, and sweep install their own SIGINT handling
// (they save what they trained): runMain leaves them without this handler.

var interrupts struct {
	mu     sync.Mutex
	active bool               // the handler is installed
	cancel context.CancelFunc // non-nil while a verb handles the next signal itself
	caught os.Signal          // the signal that cancelled a section
	dirs   []string           // scratch folders to remove (removeOnInterrupt)
	note   string             // said after what was removed (say, what a verb leaves that is complete)
}

// signals are the signals the handler takes.
var signals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// runMain is main without the exit: run under the interrupt handler.
func runMain(args []string, stdout, stderr io.Writer) int {
	stop := handleInterrupts(verbOf(args), stderr)
	defer stop()
	if path := os.Getenv("MEMOWM_CPUPROFILE"); path != "" {
		// A CPU profile of the whole run, for 'go tool pprof' (docs/CONTRIBUTING.md).
		if f, err := os.Create(path); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer func() { pprof.StopCPUProfile(); f.Close() }()
			}
		} else {
			fmt.Fprintf(stderr, "memowm: MEMOWM_CPUPROFILE: %v\n", err)
		}
	}
	status := run(args, stdout, stderr)
	interrupts.mu.Lock()
	defer interrupts.mu.Unlock()
	if status != 0 && interrupts.caught != nil {
		status = 128 + signalNumber(interrupts.caught) // a verb that stopped cleanly on the signal
	}
	return status
}

// verbOf is the verb's name for messages ("fit opq", "record tty").
func verbOf(args []string) string {
	if len(args) == 0 {
		return ""
	}
	if len(args) > 1 && (args[0] == "fit" && args[1] == "opq" || args[0] == "record" || args[0] == "model") && !strings.HasPrefix(args[1], "-") {
		return args[0] + " " + args[1]
	}
	return args[0]
}

// handleInterrupts installs the handler; stop uninstalls it.
func handleInterrupts(verb string, stderr io.Writer) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, signals...)
	done := make(chan struct{})
	interrupts.mu.Lock()
	interrupts.active = true
	interrupts.mu.Unlock()
	go func() {
		for {
			select {
			case <-done:
				return
			case sig := <-ch:
				interrupts.mu.Lock()
				if interrupts.cancel != nil {
					interrupts.cancel()
					interrupts.cancel, interrupts.caught = nil, sig
					interrupts.mu.Unlock()
					continue
				}
				note, dirs := interrupts.note, interrupts.dirs
				interrupts.mu.Unlock()
				rep := atomicfile.Interrupt()
				for _, d := range dirs {
					if _, err := os.Lstat(d); err == nil && os.RemoveAll(d) == nil {
						rep.Removed = append(rep.Removed, d)
					}
				}
				fmt.Fprintf(stderr, "memowm %s: %s\n", verb, interruptMessage(sig, rep, note))
				os.Exit(128 + signalNumber(sig))
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
		interrupts.mu.Lock()
		interrupts.active = false
		interrupts.mu.Unlock()
	}
}

// interruptMessage says what an interrupt removed and what was written.
func interruptMessage(sig os.Signal, rep atomicfile.Report, note string) string {
	var b strings.Builder
	b.WriteString("interrupted")
	if sig != os.Interrupt {
		fmt.Fprintf(&b, " (%v)", sig)
	}
	if len(rep.Removed) > 0 {
		b.WriteString("; removed " + andJoin(rep.Removed))
	}
	if len(rep.Written) == 0 {
		b.WriteString(", nothing written")
	} else {
		b.WriteString("; written before the interrupt: " + andJoin(rep.Written))
	}
	if note != "" {
		b.WriteString("; " + note)
	}
	return b.String()
}

// andJoin joins names as "a, b and c".
func andJoin(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func signalNumber(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return int(s)
	}
	return 2
}

// interruptContext opens a section in which the next SIGINT, SIGTERM or
// SIGHUP cancels ctx instead of ending the process; stop closes it. Without
// the handler (run called directly) it is signal.NotifyContext.
func interruptContext() (ctx context.Context, stop func()) {
	interrupts.mu.Lock()
	defer interrupts.mu.Unlock()
	if !interrupts.active {
		return signal.NotifyContext(context.Background(), signals...)
	}
	ctx, cancel := context.WithCancel(context.Background())
	interrupts.cancel = cancel
	return ctx, func() {
		interrupts.mu.Lock()
		defer interrupts.mu.Unlock()
		interrupts.cancel = nil
		cancel()
	}
}

// removeOnInterrupt has the interrupt handler remove the scratch folder dir,
// if it is still there (the verb removes or renames it itself when it ends).
func removeOnInterrupt(dir string) {
	interrupts.mu.Lock()
	interrupts.dirs = append(interrupts.dirs, dir)
	interrupts.mu.Unlock()
}

// setInterruptNote sets what the interrupt message adds after what it
// removed ("" for nothing).
func setInterruptNote(note string) {
	interrupts.mu.Lock()
	interrupts.note = note
	interrupts.mu.Unlock()
}

// watchOutputs lets the interrupt handler remove the temporary files of
// writers that make their own (trajectory, codec), and warns on stderr of
// temporary files an earlier, killed run left for these outputs.
func watchOutputs(stderr io.Writer, verb string, paths ...string) {
	for _, p := range paths {
		for _, l := range atomicfile.Leftovers(p) {
			fmt.Fprintf(stderr, "memowm %s: note: %s (%s, last written %s) is a temporary file of %s left by a run that was killed, or another run's still writing it; memowm never reads it: remove it when no other run writes %s\n",
				verb, l.Path, humanBytes(l.Size), l.ModTime.Format("2006-01-02 15:04:05"), filepath.Base(p), filepath.Base(p))
		}
		atomicfile.Watch(p)
	}
}
