package tty

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Sink receives a recording: Observe for every observation, Act for every
// action between two observations, Timing once per step after its
// observation. In memowm it is a recording folder's writer.
type Sink interface {
	Observe(s Screen, facts map[string]any) error
	Act(a Action) error
	Timing(t map[string]any) error
}

// Config is one recording. The zero value of a field means its default.
type Config struct {
	Program string   // the program, a name on PATH (or in /usr/games) or a path
	Args    []string // its arguments
	Profile string   // generic, nethack, vim or bsdgames; default ProfileFor(Program)
	Steps   int      // actions to record (Steps+1 observations unless the program exits)
	Seed    uint64   // the policy's seed (and NetHack's player name)

	Width, Height int // terminal size; default 80 x 24

	Settle    time.Duration // the screen is settled when unchanged this long; default 50ms
	SettleMax time.Duration // at most this long per step; default 1.5s
	Poll      time.Duration // capture interval while settling; default 10ms
	Startup   time.Duration // at most this long for the program's first screen; default 10s

	Tmux string // the tmux binary; default "tmux" on PATH
	Name string // the tmux session's name; default "memowm-SEED-PID"

	// Progress, if not nil, is called after every step.
	Progress func(step, steps int)
}

func (c *Config) setDefaults() {
	if c.Width == 0 {
		c.Width = 80
	}
	if c.Height == 0 {
		c.Height = 24
	}
	if c.Settle == 0 {
		c.Settle = 50 * time.Millisecond
	}
	if c.SettleMax == 0 {
		c.SettleMax = 1500 * time.Millisecond
	}
	if c.Poll == 0 {
		c.Poll = 10 * time.Millisecond
	}
	if c.Startup == 0 {
		c.Startup = 10 * time.Second
	}
	if c.Tmux == "" {
		c.Tmux = "tmux"
	}
}

// Validate reports a mistake in c.
func (c Config) Validate() error {
	c.setDefaults()
	switch {
	case c.Program == "":
		return errors.New("record tty: no program to run")
	case c.Steps < 1:
		return fmt.Errorf("record tty: steps must be at least 1, got %d", c.Steps)
	case c.Width < 10 || c.Height < 3 || c.Width > 1000 || c.Height > 1000:
		return fmt.Errorf("record tty: size %dx%d is outside 10x3..1000x1000", c.Width, c.Height)
	case strings.ContainsAny(c.Name, ".:"):
		return fmt.Errorf("record tty: session name %q may not hold '.' or ':'", c.Name)
	case c.Settle < 0 || c.SettleMax < c.Settle || c.Poll <= 0 || c.Startup < 0:
		return fmt.Errorf("record tty: bad settle times (settle %v, max %v, poll %v)", c.Settle, c.SettleMax, c.Poll)
	}
	if c.Profile != "" {
		if _, err := lookupProfile(c.Profile); err != nil {
			return err
		}
	}
	return nil
}

// StepTiming is what one step took and changed.
type StepTiming struct {
	Send    time.Duration // tmux send-keys
	Settle  time.Duration // from the keys' arrival to the settled screen, the last capture excluded
	Capture time.Duration // the last capture (screen, cursor, program state)
	Total   time.Duration // the whole step, policy included
	Polls   int           // captures while settling
	Settled bool          // false when SettleMax ran out

	ChangedCells int  // cells that differ from the previous observation
	ChangedRows  int  // rows that differ
	CursorMoved  bool // the cursor moved
}

// Result describes a finished recording.
type Result struct {
	Profile    string
	Command    []string      // the program and the arguments it ran with
	Player     string        // NetHack's player name, "" for other profiles
	Steps      int           // actions recorded
	Exited     bool          // the program exited (the episode ended there)
	ExitStatus int           // its exit status when Exited; -1 when killed by a signal or when tmux never reported it
	ExitSignal int           // the signal that killed it, 0 for none
	Startup    time.Duration // until the first screen settled
	Timings    []StepTiming  // one per step
	Last       Screen        // the last observation
}

// Record runs cfg.Program in tmux and records an episode into sink. It
// returns an error when tmux or the program cannot be found or started,
// when the sink fails, or when ctx is cancelled (the error wraps ctx.Err()
// and says how many steps were recorded). A program that exits is not an
// error: the episode ends there and Result.Exited says so. The tmux server
// is killed and the profile's cleanup has run when Record returns.
func Record(ctx context.Context, cfg Config, sink Sink) (res *Result, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	if cfg.Profile == "" {
		cfg.Profile = ProfileFor(cfg.Program)
	}
	prof, err := lookupProfile(cfg.Profile)
	if err != nil {
		return nil, err
	}
	tmuxPath, err := exec.LookPath(cfg.Tmux)
	if err != nil {
		return nil, errors.New("record tty: tmux not found: apt-get install tmux")
	}
	path, err := FindProgram(cfg.Program)
	if err != nil {
		if prof.install != "" && ProfileFor(cfg.Program) == prof.name {
			return nil, fmt.Errorf("%v: %s", err, prof.install)
		}
		return nil, err
	}
	work, err := os.MkdirTemp("", "memowm-tty-work-")
	if err != nil {
		return nil, fmt.Errorf("record tty: %w", err)
	}
	defer os.RemoveAll(work)

	l := launch{path: path, args: append([]string(nil), cfg.Args...)}
	cleanup, err := prof.prepare(&l, cfg.Seed, work)
	if err != nil {
		return nil, err
	}
	res = &Result{Profile: prof.name, Command: append([]string{path}, l.args...)}
	if prof.name == "nethack" {
		for i, a := range l.args {
			if a == "-u" && i+1 < len(l.args) {
				res.Player = l.args[i+1]
			} else if p, ok := strings.CutPrefix(a, "-u"); ok && p != "" {
				res.Player = p
			}
		}
	}
	policy := prof.newPolicy(cfg.Seed, filepath.Base(path))

	name := cfg.Name
	if name == "" {
		name = fmt.Sprintf("memowm-%d-%d", cfg.Seed, os.Getpid())
	}
	sess, err := startSession(ctx, tmuxPath, name, cfg.Width, cfg.Height, prof.blocks, l)
	if err != nil {
		if cleanup != nil {
			cleanup(0)
		}
		return nil, err
	}
	defer func() {
		cerr := sess.close()
		if cleanup != nil {
			cerr = errors.Join(cerr, cleanup(sess.pid))
		}
		if err == nil && cerr != nil {
			err = cerr
		}
	}()

	// Observation 0: the program's first settled screen.
	t0 := time.Now()
	quietStart := max(cfg.Settle, 200*time.Millisecond)
	// A program that shows nothing at all (cat) is taken as started after
	// blankStartup.
	blankStartup := min(2*time.Second, cfg.Startup)
	first, err := sess.settle(ctx, Screen{Rows: make([]string, cfg.Height)}, quietStart, blankStartup, cfg.Poll, cfg.Startup)
	if err != nil {
		return nil, interrupted(err, 0)
	}
	res.Startup = time.Since(t0)
	if err := sink.Observe(first.Screen, prof.facts(first.Screen)); err != nil {
		return nil, err
	}
	res.Last = first.Screen
	if first.dead {
		res.Exited, res.ExitStatus, res.ExitSignal = true, first.status, first.signal
		return res, nil
	}

	prev := first.Screen
	for step := 0; step < cfg.Steps; step++ {
		if err := ctx.Err(); err != nil {
			return res, interrupted(err, step)
		}
		ts := time.Now()
		a := policy.Next(prev)
		if err := a.Check(); err != nil {
			return res, fmt.Errorf("record tty: policy %s at step %d: %w", prof.name, step, err)
		}
		tChosen := time.Now()
		if err := sess.send(ctx, a); err != nil {
			return res, interrupted(err, step)
		}
		tSent := time.Now()
		st, err := sess.settle(ctx, prev, cfg.Settle, 3*cfg.Settle, cfg.Poll, cfg.SettleMax)
		if err != nil {
			return res, interrupted(err, step)
		}
		tDone := time.Now()
		cells, rows := Changes(prev, st.Screen, cfg.Width)
		tm := StepTiming{
			Send:         tSent.Sub(tChosen),
			Capture:      st.captureTime,
			Settle:       tDone.Sub(tSent) - st.captureTime,
			Polls:        st.polls,
			Settled:      st.settled,
			ChangedCells: cells,
			ChangedRows:  rows,
			CursorMoved:  prev.CursorX != st.CursorX || prev.CursorY != st.CursorY,
		}
		if err := sink.Act(a); err != nil {
			return res, err
		}
		if err := sink.Observe(st.Screen, prof.facts(st.Screen)); err != nil {
			return res, err
		}
		tm.Total = time.Since(ts)
		res.Timings = append(res.Timings, tm)
		res.Steps++
		res.Last = st.Screen
		if err := sink.Timing(timingRecord(step, a, tm)); err != nil {
			return res, err
		}
		if cfg.Progress != nil {
			cfg.Progress(step+1, cfg.Steps)
		}
		if st.dead {
			res.Exited, res.ExitStatus, res.ExitSignal = true, st.status, st.signal
			return res, nil
		}
		prev = st.Screen
	}
	return res, nil
}

// ExitString says how the program ended: "exited (status 0)", "exited
// (status unknown)" or "was killed by signal 9"; "" when it did not.
func (r *Result) ExitString() string {
	switch {
	case !r.Exited:
		return ""
	case r.ExitSignal != 0:
		return fmt.Sprintf("was killed by signal %d", r.ExitSignal)
	case r.ExitStatus < 0:
		// tmux marked the pane dead but never reported a status (seen
		// on a loaded machine with a program that exits at once).
		return "exited (status unknown)"
	}
	return fmt.Sprintf("exited (status %d)", r.ExitStatus)
}

// interrupted words a cancellation; other errors pass through.
func interrupted(err error, steps int) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("record tty: interrupted after %d steps: %w", steps, err)
	}
	return err
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func timingRecord(step int, a Action, t StepTiming) map[string]any {
	return map[string]any{
		"step":          step,
		"action":        a.String(),
		"send_ms":       ms(t.Send),
		"settle_ms":     ms(t.Settle),
		"capture_ms":    ms(t.Capture),
		"total_ms":      ms(t.Total),
		"polls":         t.Polls,
		"settled":       t.Settled,
		"changed_cells": t.ChangedCells,
		"changed_rows":  t.ChangedRows,
		"cursor_moved":  t.CursorMoved,
	}
}

// FindProgram resolves a program name like exec.LookPath, and also looks in
// /usr/games and /usr/local/games, where Debian installs games, when those
// are not on PATH.
func FindProgram(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err == nil {
		return p, nil
	}
	if !strings.Contains(name, "/") {
		for _, dir := range []string{"/usr/games", "/usr/local/games"} {
			if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("record tty: program %q not found", name)
}
