package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memowm/memowm/internal/atomicfile"
	"github.com/memowm/memowm/trajectory"
)

// outKind is what a verb writes, for the extension check.
type outKind int

const (
	outTrajectory outKind = iota // .arrow, .parquet or .npy (trajectory.FormatOf)
	outMemory                    // .mwm
	outBundle                    // .mwb
	outOPQ                       // .opq
	outWeights                   // a world model's weights: any extension the others do not take
	outStage                     // a fit stage's bundle: .mwb or, as fit --stage all's intermediates, any extension the others do not take
)

// kindExt is each kind's extension and name.
var kindExt = map[outKind]struct{ ext, name string }{
	outMemory: {".mwm", "a memory file"},
	outBundle: {".mwb", "a model bundle"},
	outOPQ:    {".opq", "a quantizer file"},
}

// input is a file a verb reads, named by its flag ("--in").
type input struct{ flag, path string }

// forceHelp is the text of every writing verb's --force flag.
const forceHelp = "replace --out if it exists (without it an existing file is refused, as zstd and cp -n do)"

// checkOutput refuses, as usage errors and before any work, an output path
// (given by --out) whose extension does not name what the verb writes, that
// is one of the inputs (the same file, also through links: os.SameFile), that
// exists and is not a regular file, that exists at all unless force (the
// verb's --force), or whose folder is missing or not writable. Without force
// it also marks path so that the final rename never replaces a file that
// another run made meanwhile (atomicfile.NoReplace).
func checkOutput(path string, kind outKind, force bool, inputs ...input) error {
	if path == "-" {
		return usagef("--out -: memowm writes files under a temporary name and renames them when complete, never to stdout; give a file name")
	}
	ext := strings.ToLower(filepath.Ext(path))
	switch kind {
	case outTrajectory:
		if _, err := trajectory.FormatOf(path); err != nil {
			return usagef("--out %s: unknown extension %q: a trajectory file is named .arrow, .parquet or .npy", path, filepath.Ext(path))
		}
	case outWeights, outStage:
		what, own := "a weights file", outKind(-1)
		if kind == outStage {
			what, own = "a model bundle", outBundle
		}
		for k, e := range kindExt {
			if ext == e.ext && k != own {
				return usagef("--out %s: %s is the extension of %s, not of %s", path, e.ext, e.name, what)
			}
		}
		if _, err := trajectory.FormatOf(path); err == nil {
			return usagef("--out %s: %s is the extension of a trajectory file, not of %s", path, filepath.Ext(path), what)
		}
	default:
		if e := kindExt[kind]; ext != e.ext {
			return usagef("--out %s: this writes %s, named %s", path, e.name, e.ext)
		}
	}
	if st, err := os.Stat(path); err == nil {
		for _, in := range inputs {
			if in.path == "" {
				continue
			}
			if ist, err := os.Stat(in.path); err == nil && os.SameFile(st, ist) {
				how := "the same file"
				if filepath.Clean(in.path) != filepath.Clean(path) {
					how = "the same file, through a link"
				}
				return usagef("--out %s is %s %s (%s): writing it would replace the input; give another name", path, in.flag, in.path, how)
			}
		}
	}
	if err := atomicfile.CheckTarget(path); err != nil {
		return usagef("--out %v", err)
	}
	if !force {
		if _, err := os.Lstat(path); err == nil {
			return usagef("--out %s exists: memowm does not replace files; give --force to replace it, or another name", path)
		}
		atomicfile.NoReplace(path)
	} else {
		atomicfile.AllowReplace(path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return usagef("--out %s: folder %s does not exist", path, dir)
	case err != nil:
		return usagef("--out %s: %v", path, err)
	case !st.IsDir():
		return usagef("--out %s: %s is not a folder", path, dir)
	}
	probe, err := os.CreateTemp(dir, ".memowm-probe*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return usagef("--out %s: cannot write in folder %s: %v", path, dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// trajectoryOutputs are the files a trajectory writer makes for path: the
// file, its questions and, for .npy, its index.
func trajectoryOutputs(path string) []string {
	out := []string{path, trajectory.QuestionsPath(path)}
	if f, err := trajectory.FormatOf(path); err == nil && f == trajectory.NumPy {
		out = append(out, trajectory.IndexPath(path))
	}
	return out
}

// checkFloats refuses a float flag set to NaN or an infinity: no flag takes
// one, and NaN passes every range check.
func checkFloats(fs *flag.FlagSet) error {
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok {
			return
		}
		if v, ok := g.Get().(float64); ok && (math.IsNaN(v) || math.IsInf(v, 0)) {
			bad = append(bad, fmt.Sprintf("--%s %v", f.Name, v))
		}
	})
	if len(bad) > 0 {
		slices.Sort(bad)
		return usagef("%s: want a finite number", strings.Join(bad, ", "))
	}
	return nil
}

// nameFile returns err prefixed with path unless its message names path
// already: every error about a file a verb reads names that file.
func nameFile(path string, err error) error {
	if err == nil || strings.Contains(err.Error(), path) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// count is n and the noun, plural unless n is 1: "1 episode", "2 episodes".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
