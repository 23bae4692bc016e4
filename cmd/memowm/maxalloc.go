package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/memowm/memowm/trajectory"
)

// readLimits are the options every trajectory read of this process takes:
// the global --max-alloc (memowm --max-alloc SIZE VERB ...), which caps any
// single buffer a reader allocates for a hostile file.
var readLimits struct {
	sync.Mutex
	opts []trajectory.Option
}

// trajOpts returns the trajectory read options of this run.
func trajOpts() []trajectory.Option {
	readLimits.Lock()
	defer readLimits.Unlock()
	return slices.Clip(readLimits.opts) // callers append their own options
}

// globalFlags consumes memowm's global flags before the verb (git's
// convention: memowm --max-alloc 256MiB inspect x.arrow) and returns the
// rest of the arguments.
func globalFlags(args []string) ([]string, error) {
	var opts []trajectory.Option
	for len(args) > 0 && strings.HasPrefix(args[0], "--max-alloc") {
		v, ok := strings.CutPrefix(args[0], "--max-alloc=")
		switch {
		case ok:
			args = args[1:]
		case args[0] == "--max-alloc" && len(args) > 1:
			v, args = args[1], args[2:]
		default:
			return nil, usagef("--max-alloc SIZE: want a size such as 512MiB")
		}
		n, err := parseSize(v)
		if err != nil {
			return nil, usagef("--max-alloc %q: %v", v, err)
		}
		opts = []trajectory.Option{trajectory.WithMaxAlloc(n)}
	}
	readLimits.Lock()
	readLimits.opts = opts
	readLimits.Unlock()
	return args, nil
}

// parseSize reads a byte count: digits with an optional unit (K, M, G, KiB,
// MiB, GiB; K and KiB both mean 1024).
func parseSize(s string) (int64, error) {
	num := strings.TrimRight(s, "KMGTiBkmgtib")
	unit := strings.ToLower(s[len(num):])
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a positive number of bytes, with K, M or G (or KiB, MiB, GiB)")
	}
	shift := map[string]uint{"": 0, "b": 0, "k": 10, "kib": 10, "kb": 10, "m": 20, "mib": 20, "mb": 20, "g": 30, "gib": 30, "gb": 30}
	sh, ok := shift[unit]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q", s[len(num):])
	}
	if n > (1<<62)>>sh {
		return 0, fmt.Errorf("too large")
	}
	return n << sh, nil
}
