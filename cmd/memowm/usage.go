package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
)

// verbHelp is what a verb's -h prints, by flag set: the flag package calls
// fs.Usage on every parse error too, so the usage is printed only for -h
// (parseFlags), never for a mistake (which is a usage error on stderr).
var verbHelp = struct {
	sync.Mutex
	m map[*flag.FlagSet]func()
}{m: map[*flag.FlagSet]func(){}}

func setHelp(fs *flag.FlagSet, help func()) {
	verbHelp.Lock()
	defer verbHelp.Unlock()
	verbHelp.m[fs] = help
}

// takeHelp returns fs's help printer and forgets it.
func takeHelp(fs *flag.FlagSet) func() {
	verbHelp.Lock()
	defer verbHelp.Unlock()
	h := verbHelp.m[fs]
	delete(verbHelp.m, fs)
	return h
}

// printFlags prints fs's flags as the README writes them: --name, the
// value's kind, the usage, and the default when it is not the zero value.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + strings.ToUpper(name)
		}
		fmt.Fprintln(w, line)
		usage = strings.ReplaceAll(usage, "\n", "\n    \t")
		if def := f.DefValue; !isZeroDefault(def) && !strings.Contains(usage, "(default") {
			usage += fmt.Sprintf(" (default %s)", quoteIfString(f, def))
		}
		fmt.Fprintf(w, "    \t%s\n", usage)
	})
}

// isZeroDefault reports whether def is the zero value of f's type (or a
// NaN, which stands for "not given"): such defaults are not printed.
func isZeroDefault(def string) bool {
	switch def {
	case "", "0", "false", "NaN", "[]":
		return true
	}
	return false
}

func quoteIfString(f *flag.Flag, def string) string {
	if g, ok := f.Value.(flag.Getter); ok {
		if _, isString := g.Get().(string); isString {
			return fmt.Sprintf("%q", def)
		}
	}
	return def
}
