// Package atomicfile is how every memowm writer replaces a file: it writes a
// temporary file in the target's folder, named "." + the target's name +
// ".tmp" + random digits, and renames it over the target only when the file
// is complete. A failed or killed writer therefore never leaves a partial
// file under the final name.
//
// # Interrupts
//
// Every temporary file made by CreateTemp (and so by Write) is registered
// until Commit renames it or Remove deletes it. A command's signal handler
// calls Interrupt, which deletes every registered temporary file at once and
// makes every later Commit fail, so that nothing appears under a final name
// after it. Writers that still make their own temporaries with the same
// naming (os.CreateTemp with the pattern of TempPattern) are covered by
// Watch: Interrupt also deletes the temporaries of a watched target that
// appeared after Watch was called.
//
// # Leftovers
//
// A writer killed with SIGKILL, or a machine that stops, leaves its
// temporary file behind; never a partial file under the final name. Nothing
// ever reads such a file and a new writer picks a fresh random name, so a
// leftover does no harm but takes space. Nothing removes leftovers
// automatically: a temporary of the same target may belong to another
// writer still at work (on a shared folder no process id proves otherwise).
// Leftovers lists them so that a command can name them.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// ErrInterrupted is returned by Commit (and Write) after Interrupt.
var ErrInterrupted = errors.New("atomicfile: interrupted")

// ErrExists is returned by Commit for a target marked with NoReplace that
// exists by the time of the rename (another writer made it meanwhile).
var ErrExists = errors.New("atomicfile: target exists")

// CheckTarget returns an error if path exists and is not a regular file.
// Renaming a temporary file over a device, a directory or a named pipe
// (say, --out /dev/null) would replace that node, not write into it.
func CheckTarget(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return nil // missing (or unreadable: the write will say why)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s exists and is %s, not a regular file: refusing to replace it", path, nodeKind(st.Mode()))
	}
	return nil
}

// nodeKind names what a file that is not regular is, in words ("a
// folder"), not as a mode string (d---------).
func nodeKind(m os.FileMode) string {
	switch t := m.Type(); {
	case t&os.ModeDir != 0:
		return "a folder"
	case t&os.ModeSymlink != 0:
		return "a symbolic link"
	case t&os.ModeNamedPipe != 0:
		return "a named pipe"
	case t&os.ModeSocket != 0:
		return "a socket"
	case t&os.ModeCharDevice != 0:
		return "a character device"
	case t&os.ModeDevice != 0:
		return "a device"
	default:
		return "of another kind (" + t.String() + ")"
	}
}

// TempPattern is the os.CreateTemp pattern of path's temporary files (to be
// created in path's folder): "." + base name + ".tmp*".
func TempPattern(path string) string { return "." + filepath.Base(path) + ".tmp*" }

// isTempOf reports whether name (a base name) is one of path's temporary
// file names: TempPattern with the star replaced by digits.
func isTempOf(name, path string) bool {
	prefix := "." + filepath.Base(path) + ".tmp"
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" {
		return false
	}
	for _, c := range rest {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// state is the process's registry of temporary files in flight.
var state struct {
	mu          sync.Mutex
	interrupted bool
	temps       map[string]string   // temporary file -> target
	watched     map[string]snapshot // target -> what was there when watched
	written     []string            // targets committed, in order
	noReplace   map[string]bool     // targets Commit must not replace (NoReplace), by key
}

// snapshot is a watched target's folder as Watch found it.
type snapshot struct {
	temps map[string]bool // its temporaries then (base names)
	final os.FileInfo     // the target then, nil if missing
}

// CreateTemp checks path with CheckTarget and creates a registered
// temporary file for it in its folder (mode 0600; Commit makes it 0644).
// An error names path, not the temporary file.
func CreateTemp(path string) (*os.File, error) {
	if err := CheckTarget(path); err != nil {
		return nil, err
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.interrupted {
		return nil, ErrInterrupted
	}
	f, err := os.CreateTemp(filepath.Dir(path), TempPattern(path))
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("cannot create %s: %w", path, err)
	}
	if state.temps == nil {
		state.temps = map[string]string{}
	}
	state.temps[f.Name()] = path
	return f, nil
}

// NoReplace marks path so that Commit never replaces it: a command that
// checked that its output did not exist calls it, and a second writer that
// made the same file in the meantime is then not overwritten (Commit fails
// with ErrExists instead). The mark holds for the rest of the process.
func NoReplace(path string) {
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.noReplace == nil {
		state.noReplace = map[string]bool{}
	}
	state.noReplace[key(path)] = true
}

// AllowReplace lifts NoReplace's mark from path: Commit renames over it
// again (a command given --force).
func AllowReplace(path string) {
	state.mu.Lock()
	defer state.mu.Unlock()
	delete(state.noReplace, key(path))
}

// key is how NoReplace remembers a path: absolute and clean.
func key(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}

// Commit makes the closed temporary file tmp (from CreateTemp) mode 0644
// and renames it over path. A path marked with NoReplace is linked into
// place instead, which fails, with ErrExists, if path exists by then. It
// fails with ErrInterrupted, removing tmp, once Interrupt has run; on any
// error tmp is removed.
func Commit(tmp, path string) error {
	state.mu.Lock()
	defer state.mu.Unlock()
	delete(state.temps, tmp)
	err := ErrInterrupted
	if !state.interrupted {
		if err = os.Chmod(tmp, 0o644); err == nil {
			if state.noReplace[key(path)] {
				err = place(tmp, path)
			} else {
				err = os.Rename(tmp, path)
			}
		}
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	state.written = append(state.written, path)
	return nil
}

// place puts tmp at path only if nothing is there: a hard link, which
// fails atomically on an existing name, then tmp's removal. Where the file
// system has no hard links, it checks and renames (a narrow race remains).
func place(tmp, path string) error {
	if os.Link(tmp, path) == nil {
		os.Remove(tmp)
		return nil
	}
	// The link failed: path exists, or the file system has no hard links.
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s was created by another writer while this one worked; not replaced (give --force to replace it): %w", path, ErrExists)
	}
	return os.Rename(tmp, path)
}

// Remove deletes the temporary file tmp (from CreateTemp) and forgets it.
func Remove(tmp string) {
	state.mu.Lock()
	defer state.mu.Unlock()
	delete(state.temps, tmp)
	os.Remove(tmp)
}

// Write writes the file at path through a registered temporary file
// (CreateTemp): it calls write, syncs, closes and commits the file. On any
// error the temporary file is removed and path is untouched.
func Write(path string, write func(w io.Writer) error) (err error) {
	f, err := CreateTemp(path)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return Commit(f.Name(), path)
}

// Watch covers a writer that makes its own temporary files for path (named
// by TempPattern, in path's folder) and renames them itself: Interrupt
// deletes those that appear after this call, and reports path as written if
// it changed. Watching a path twice keeps the first snapshot.
func Watch(path string) {
	snap := snapshot{temps: map[string]bool{}}
	for _, l := range Leftovers(path) {
		snap.temps[filepath.Base(l.Path)] = true
	}
	snap.final, _ = os.Stat(path)
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.watched == nil {
		state.watched = map[string]snapshot{}
	}
	if _, ok := state.watched[path]; !ok {
		state.watched[path] = snap
	}
}

// Report is what Interrupt did.
type Report struct {
	Removed []string // temporary files deleted, sorted
	Written []string // targets replaced before the interrupt, in order
}

// Interrupt deletes every registered temporary file and every temporary
// file of a watched target that appeared since Watch, makes every later
// CreateTemp and Commit fail with ErrInterrupted, and reports what it
// removed and which targets were already written. It is meant for a signal
// handler that ends the process right after: a watched writer's own rename
// already under way may still complete.
func Interrupt() Report {
	state.mu.Lock()
	defer state.mu.Unlock()
	state.interrupted = true
	var rep Report
	for tmp := range state.temps {
		if os.Remove(tmp) == nil {
			rep.Removed = append(rep.Removed, tmp)
		}
	}
	clear(state.temps)
	rep.Written = append(rep.Written, state.written...)
	for path, snap := range state.watched {
		for _, l := range Leftovers(path) {
			if !snap.temps[filepath.Base(l.Path)] && os.Remove(l.Path) == nil {
				rep.Removed = append(rep.Removed, l.Path)
			}
		}
		if now, err := os.Stat(path); err == nil && !slices.Contains(rep.Written, path) &&
			(snap.final == nil || !os.SameFile(now, snap.final) || !now.ModTime().Equal(snap.final.ModTime()) || now.Size() != snap.final.Size()) {
			rep.Written = append(rep.Written, path)
		}
	}
	slices.Sort(rep.Removed)
	return rep
}

// Leftover is a temporary file of a target found in its folder.
type Leftover struct {
	Path    string // folder of the target joined with the temporary's name
	Size    int64
	ModTime time.Time
}

// Leftovers lists the temporary files of path (named by TempPattern) in its
// folder, sorted by name: those a killed writer left behind, and those of
// writers still at work, this process's included.
func Leftovers(path string) []Leftover {
	dir := filepath.Dir(path)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Leftover
	for _, e := range ents {
		if !e.Type().IsRegular() || !isTempOf(e.Name(), path) {
			continue
		}
		l := Leftover{Path: filepath.Join(dir, e.Name())}
		if fi, err := e.Info(); err == nil {
			l.Size, l.ModTime = fi.Size(), fi.ModTime()
		}
		out = append(out, l)
	}
	return out
}
