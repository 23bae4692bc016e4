// Command memowm turns recorded agent trajectories into compact episodic
// memory. This file is flag parsing and wiring only; the work is in the
// packages.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"
)

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

type verb struct {
	name, args, summary string
	run                 func(args []string, stdout, stderr io.Writer) error
}

var verbs []verb

func init() {
	verbs = []verb{
		{"demo", "[--dir DIR]", "run the pipeline on the embedded sim world", runDemo},
		{"sim", "--out FILE [--episodes N --steps T --seed S ...]", "generate synthetic trajectories with questions", runSim},
		{"fit", "[opq] --in TRAIN --out FILE [flags]", "fit a model bundle, or its OPQ quantizer alone, from training trajectories", runFit},
		{"quantize", "--opq OPQFILE|--model BUNDLE --in TRAJ --out CODES", "encode states into OPQ codes", runQuantize},
		{"encode", "--model BUNDLE --in TRAJ --out MEM", "store trajectories as a memory file", runEncode},
		{"decode", "--model BUNDLE --in MEM --out FILE", "decode a memory file into codes or states", runDecode},
		{"verify", "--model BUNDLE MEM", "decode every episode and check its checksum", runVerify},
		{"bench", "--model BUNDLE --in TRAJ [--json]", "bits per observation of memowm and baselines, one accounting", runBench},
		{"sweep", "--train TRAIN --eval EVAL --presets a,b --out DIR", "capacity vs horizon: train presets, S = B/N + the memory file's rate, break-even", runSweep},
		{"record", "web|tty [flags] --out FILE", "record a real agent session (headless browser or terminal program) as a trajectory", runRecord},
		{"import", "--out FILE DIR...", "turn recording folders (screens + actions) into a trajectory", runImport},
		{"inspect", "FILE [--json]", "show what a trajectory, quantizer, bundle or memory file holds", runInspect},
		{"model", "info|init [flags]", "show a world-model preset's parameters and speed; write random weights", runModel},
		{"gpu", "info|check|bench [flags]", "the CUDA backend: is a GPU usable, CPU/GPU parity, int8 prediction speed", runGPU},
		{"weights", "export|import [flags]", "export or import a bundle's world-model weights as safetensors (PyTorch, JAX, NumPy)", runWeights},
		{"completion", "bash|zsh", "print a shell completion script for memowm's verbs and flags", runCompletion},
		{"version", "", "print the version and the commit it was built from", runVersion},
		{"help", "[VERB]", "show help for memowm or a verb", runHelp},
	}
}

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the exit, for tests.
func run(args []string, stdout, stderr io.Writer) (status int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "memowm: internal error: %v (please report this)\n", p)
			if os.Getenv("MEMOWM_TRACE") != "" {
				stderr.Write(debug.Stack())
			}
			status = 1
		}
	}()
	args, err := globalFlags(args)
	if err != nil {
		fmt.Fprintf(stderr, "memowm: %v (see 'memowm help')\n", err)
		return 2
	}
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "--help", "-help":
		printUsage(stdout)
		return 0
	case "-V", "--version", "-version":
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	for _, v := range verbs {
		if v.name == name {
			err := v.run(args[1:], stdout, stderr)
			var ue *usageError
			switch {
			case err == nil:
				return 0
			case errors.Is(err, flag.ErrHelp):
				return 0
			case errors.As(err, &ue):
				help := name // a sub-verb's own help: 'memowm record web -h'
				if len(args) > 1 && slices.Contains(subVerbs[name], args[1]) {
					help += " " + args[1]
				}
				fmt.Fprintf(stderr, "memowm %s: %v (see 'memowm %s -h')\n", name, err, help)
				return 2
			default:
				fmt.Fprintf(stderr, "memowm %s: %v\n", name, oneLine(err))
				return 1
			}
		}
	}
	fmt.Fprintf(stderr, "memowm: unknown verb %q (see 'memowm help')\n", name)
	return 2
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }

func printUsage(w io.Writer) {
	fmt.Fprint(w, `memowm stores agent trajectories as compact episodic memory, with a world
model as the shared predictive prior (MemoWM).

Usage: memowm [--max-alloc SIZE] VERB [flags]

Verbs:
`)
	for _, v := range verbs {
		fmt.Fprintf(w, "  %-10s %s\n", v.name, v.summary)
	}
	fmt.Fprint(w, `
'memowm VERB -h' or 'memowm help VERB' shows a verb's flags, 'memowm --version'
the version. Exit status: 0 success, 1 failure, 2 bad usage, 130 interrupted
(Ctrl-C; 143 SIGTERM). An existing --out is never replaced unless --force is
given (as zstd and cp -n do); a stage that updates its --model in place needs
none. Files are written under a temporary name (.NAME.tmpDIGITS) and renamed
when complete; an interrupt removes the temporary file and says so. One left by
a killed run (kill -9) is never read: a run that writes NAME names it, and you
remove it. Inputs are files, never standard input ('-'): they are read by
random access. --max-alloc SIZE (e.g. 256MiB) caps any single buffer a
trajectory reader allocates for a damaged or hostile file (default 64 MiB plus
64 times the file's size). Every --json uses one vocabulary: docs/json.md.
`)
}

func runHelp(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printUsage(stdout)
		return nil
	}
	switch args[0] {
	case "-h", "--help", "-help":
		fmt.Fprintf(stdout, "Usage: memowm help [VERB]\n\nShows memowm's verbs, or a verb's flags (the same as 'memowm VERB -h').\n")
		return nil
	}
	for _, v := range verbs {
		if v.name == args[0] && v.name != "help" {
			return v.run([]string{"-h"}, stdout, stderr)
		}
	}
	if args[0] == "help" {
		printUsage(stdout)
		return nil
	}
	return usagef("unknown verb %q", args[0])
}

// newFlags makes a verb's flag set; -h prints its usage to stdout.
func newFlags(name, args, summary string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // a parse error is reported as a usage error, without the usage
	setHelp(fs, func() {
		fmt.Fprintf(stdout, "Usage: memowm %s %s\n\n%s\n\nFlags:\n", name, args, summary)
		printFlags(stdout, fs)
	})
	return fs
}

// parse parses flags that may stand before, between or after positional
// arguments, and returns the positionals. A float flag set to NaN or an
// infinity is a usage error (checkFloats).
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	pos, err := parseFlags(fs, args)
	if err == nil {
		err = checkFloats(fs)
	}
	if err == nil {
		err = checkNoStdin(fs, pos)
	}
	return pos, err
}

// inputFlags are the flags that name a file a verb reads.
var inputFlags = []string{"in", "model", "opq", "eval", "train", "valid", "calib", "probe", "curve"}

// checkNoStdin refuses "-" as an input file, naming the alternative: every
// file memowm reads is read by random access (an Arrow IPC or Parquet file,
// a memory file and a bundle keep their index at the end), so a stream
// would have to be saved first anyway.
func checkNoStdin(fs *flag.FlagSet, pos []string) error {
	for _, name := range inputFlags {
		if f := fs.Lookup(name); f != nil && f.Value.String() == "-" {
			return usagef("--%s -: memowm does not read standard input: its files are read by random access (Arrow IPC, Parquet, memory files and bundles keep their index at the end); save the stream to a file first (for example 'cat > in.arrow') and give its name", name)
		}
	}
	for _, p := range pos {
		if p == "-" {
			return usagef("-: memowm does not read standard input: its files are read by random access (their index is at the end); save the stream to a file first and give its name")
		}
	}
	return nil
}

func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	help := takeHelp(fs)
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				if help != nil {
					help()
				}
				if helpSeen != nil {
					helpSeen(fs)
				}
				return nil, err
			}
			return nil, usagef("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
