package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// versionLine is what 'memowm version' prints: the module version, the
// commit it was built from (when the build recorded it), the Go version and
// the platform.
func versionLine() string {
	ver, commit := "(unknown)", "commit unknown: built without version control information"
	if bi, ok := debug.ReadBuildInfo(); ok {
		ver = bi.Main.Version
		var rev, when string
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" {
			commit = "commit " + rev[:min(12, len(rev))]
			if when != "" {
				commit += " of " + when
			}
			if modified {
				commit += ", with uncommitted changes"
			}
		}
	}
	return fmt.Sprintf("memowm %s (%s), %s %s/%s", ver, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", "", "Prints the version, the commit it was built from, the Go version and the platform.", stdout)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	fmt.Fprintln(stdout, versionLine())
	return nil
}
