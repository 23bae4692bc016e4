package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/memowm/memowm/record/tty"
	"github.com/memowm/memowm/recording"
	"github.com/memowm/memowm/screen"
)

func runRecordTTY(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("record tty", "--steps N --seed S --out FILE [--dir RECDIR] [flags] -- PROGRAM ARGS...",
		"Runs a terminal program in a private tmux server (80x24, no status line), lets a\n"+
			"seeded exploration policy press keys for N steps, and captures the screen, the\n"+
			"cursor and facts read off the screen after each key, once the screen has settled.\n"+
			"The recording folder (docs/recording-format.md) goes to RECDIR, the trajectory\n"+
			"built from it by the same code as 'memowm import' to FILE. The policy's profile\n"+
			"follows the program's name: nethack (walks, searches, looks, picks up, takes\n"+
			"stairs; NetHack runs with its own player name, fixed options and no bones; its\n"+
			"save and lock files are removed afterwards), vim (edits and :w a scratch file,\n"+
			"clean configuration), bsdgames (worm, snake, robots, tetris-bsd: movement keys)\n"+
			"or generic (arrows, letters, Enter, Escape, Space, short phrases). A program that\n"+
			"exits ends the episode there. Ctrl-C kills the session and writes nothing.", stdout)
	steps := fs.Int("steps", 300, "actions to record (N+1 screens unless the program exits)")
	seed := fs.Uint64("seed", 1, "seed of the policy (and NetHack's player name mwSEED) and of the questions")
	out := fs.String("out", "", "output trajectory file, .arrow, .parquet or .npy (required)")
	force := fs.Bool("force", false, forceHelp)
	dir := fs.String("dir", "", "recording folder (default FILE.rec; a previous recording there is replaced)")
	name := fs.String("name", "", "tmux session name (default memowm-SEED-PID)")
	profile := fs.String("profile", "", "policy profile: "+strings.Join(tty.Profiles(), ", ")+" (default: from the program's name)")
	settle := fs.Duration("settle", 50*time.Millisecond, "a screen has settled when unchanged this long")
	settleMax := fs.Duration("settle-max", 1500*time.Millisecond, "wait at most this long per step for the screen to settle")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	encoder := fs.String("encoder", "hash", "text screen encoder of FILE: hash or cells (see 'memowm import -h'); the folder is the same")
	// The program and its arguments follow "--" and are not memowm's flags
	// (the flag package would take "-c" in "-- sh -c ..." for one).
	flagArgs, prog := args, []string(nil)
	if i := slices.Index(args, "--"); i >= 0 {
		flagArgs, prog = args[:i], args[i+1:]
	}
	pos, err := parse(fs, flagArgs)
	if err != nil {
		return err
	}
	pos = append(pos, prog...)
	switch {
	case len(pos) == 0:
		return usagef("no program to record: give it after --, e.g. -- nethack")
	case *out == "":
		return usagef("--out FILE is required")
	case *steps < 1:
		return usagef("--steps must be at least 1")
	}
	if err := checkEncoder(*encoder); err != nil {
		return err
	}
	if err := checkOutput(*out, outTrajectory, *force); err != nil {
		return err
	}
	cfg := tty.Config{
		Program: pos[0], Args: pos[1:], Profile: *profile, Steps: *steps, Seed: *seed,
		Settle: *settle, SettleMax: *settleMax, Name: *name,
	}
	if err := cfg.Validate(); err != nil {
		return usagef("%v", err)
	}
	if *dir == "" {
		*dir = *out + ".rec"
	}
	if err := checkRecDir("record tty", *dir); err != nil {
		return err
	}
	if !*quiet {
		every := max(cfg.Steps/10, 1)
		cfg.Progress = func(step, total int) {
			if step%every == 0 || step == total {
				fmt.Fprintf(stderr, "record tty: step %d/%d\n", step, total)
			}
		}
	}

	// The folder is written under a temporary name and renamed when done.
	tmp := recTempDir(*dir)
	w, err := recording.NewWriter(tmp, recording.Meta{
		Kind: "tty", Screen: recording.ScreenText, Width: 80, Height: 24,
		Command: "memowm record tty " + strings.Join(args, " "), Seed: *seed,
	})
	if err != nil {
		return err
	}
	watchOutputs(stderr, "record tty", trajectoryOutputs(*out)...)
	ctx, stop := interruptContext()
	defer stop()
	res, err := tty.Record(ctx, cfg, writerSink{w})
	if err == nil && res.Steps == 0 {
		err = fmt.Errorf("record tty: %s %s at startup, before the first step; its screen ends with %q",
			pos[0], res.ExitString(), lastLines(res.Last, 3))
	}
	if err == nil {
		err = w.Close()
	}
	if err == nil {
		err = replaceRecDir("record tty", tmp, *dir)
	}
	if err != nil {
		w.Abort()
		os.RemoveAll(tmp)
		if res != nil && res.Steps > 0 {
			return fmt.Errorf("%w (nothing written)", err)
		}
		return err
	}
	stop()

	st := tty.Summarize(res.Timings)
	how := "all steps"
	if res.Exited {
		how = fmt.Sprintf("the program %s after %d of %d steps; the episode ends there", res.ExitString(), res.Steps, cfg.Steps)
		if !*quiet {
			fmt.Fprintf(stderr, "record tty: %s\n", how)
		}
	}
	player := ""
	if res.Player != "" {
		player = ", player " + res.Player
	}
	fmt.Fprintf(stdout, "recorded %s: %d steps (%s), profile %s%s, startup %.0f ms\n",
		*dir, res.Steps, how, res.Profile, player, float64(res.Startup.Microseconds())/1000)
	for _, l := range st.Lines() {
		fmt.Fprintln(stdout, l)
	}

	sum, err := importRecording(*dir, *out, *seed, *encoder, *quiet, stderr)
	if err != nil {
		return err
	}
	return printRecorded(stdout, *out, sum)
}

// writerSink writes the recorder's observations, actions and timings into a
// recording folder.
type writerSink struct{ w *recording.Writer }

func (s writerSink) Observe(sc tty.Screen, facts map[string]any) error {
	return s.w.AddText(screen.Text{Rows: sc.Rows, CursorX: sc.CursorX, CursorY: sc.CursorY, HasCursor: true}, facts)
}

func (s writerSink) Act(a tty.Action) error {
	return s.w.AddAction(recording.Action{Type: a.Kind, Key: a.Key, Text: a.Text})
}

func (s writerSink) Timing(t map[string]any) error { return s.w.AddTiming(t) }

// lastLines returns the last n rows of s that are not blank, joined by " | ".
func lastLines(s tty.Screen, n int) string {
	var out []string
	for y := len(s.Rows) - 1; y >= 0 && len(out) < n; y-- {
		if t := strings.TrimSpace(s.Rows[y]); t != "" {
			out = append([]string{t}, out...)
		}
	}
	return strings.Join(out, " | ")
}
