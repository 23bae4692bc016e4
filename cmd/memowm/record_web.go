package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/memowm/memowm/record/web"
	"github.com/memowm/memowm/recording"
)

func runRecordWeb(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("record web", "--site DIR|URL --steps N --seed S --out FILE [--dir RECDIR] [flags]",
		"Serves a folder of HTML on 127.0.0.1 (or uses pages at an http(s) URL), explores\n"+
			"it in headless Chromium (Debian's chromium; nothing is installed at run time)\n"+
			"with a seeded policy: clicks visible links and inputs at their positions on\n"+
			"screen, turns the mouse wheel, types words of the page into inputs, presses\n"+
			"Enter, goes back, loads known pages. After every action it saves the viewport\n"+
			"screenshot (PNG), the action (positions as fractions of the viewport) and facts\n"+
			"(url, title, focused element, typed text, headings, scroll position). The\n"+
			"recording folder (docs/recording-format.md) goes to RECDIR, the trajectory built\n"+
			"from it by the same code as 'memowm import' to FILE. An action that fails or\n"+
			"hangs past --timeout is replaced by a return to the start page. Ctrl-C or an\n"+
			"error closes the browser, removes its profile and writes nothing.", stdout)
	site := fs.String("site", "", "folder of HTML files (served on 127.0.0.1), or an http(s) URL (required)")
	steps := fs.Int("steps", 250, "actions to record (N+1 screenshots)")
	seed := fs.Uint64("seed", 1, "seed of the policy and of the questions")
	out := fs.String("out", "", "output trajectory file, .arrow, .parquet or .npy (required)")
	force := fs.Bool("force", false, forceHelp)
	dir := fs.String("dir", "", "recording folder (default FILE.rec; a previous recording there is replaced)")
	width := fs.Int("width", web.DefaultWidth, "viewport width in pixels")
	height := fs.Int("height", web.DefaultHeight, "viewport height in pixels")
	timeout := fs.Duration("timeout", web.DefaultTimeout, "the longest one action, page load, screenshot or page read may take")
	chromium := fs.String("chromium", "", "Chromium's path (default: chromium on $PATH, then /usr/bin/chromium)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usagef("unexpected argument %q", pos[0])
	case *site == "":
		return usagef("--site DIR|URL is required")
	case *out == "":
		return usagef("--out FILE is required")
	}
	if err := checkOutput(*out, outTrajectory, *force); err != nil {
		return err
	}
	cfg := web.Config{
		Site: *site, Steps: *steps, Seed: *seed, Width: *width, Height: *height,
		Timeout: *timeout, Chromium: *chromium,
	}
	if err := cfg.Validate(); err != nil {
		return usagef("%v", err)
	}
	// Errors in what the user typed (the site, the folder) come before the
	// search for the browser, so a machine without Chromium still says what
	// is wrong with the command.
	opened, err := web.OpenSite(cfg.Site)
	if err != nil {
		return err
	}
	opened.Close()
	if *dir == "" {
		*dir = *out + ".rec"
	}
	if err := checkRecDir("record web", *dir); err != nil {
		return err
	}
	if _, err := web.FindChromium(*chromium); err != nil {
		return err
	}
	if !*quiet {
		every := max(cfg.Steps/10, 1)
		started := time.Now()
		cfg.Progress = func(done, total int) {
			if done > 0 && (done%every == 0 || done == total) {
				fmt.Fprintf(stderr, "record web: step %d/%d (%.1f s)\n", done, total, time.Since(started).Seconds())
			}
		}
		cfg.Log = func(format string, args ...any) {
			fmt.Fprintf(stderr, "record web: "+format+"\n", args...)
		}
	}

	// The folder is written under a temporary name and renamed when done.
	tmp := recTempDir(*dir)
	w, err := recording.NewWriter(tmp, recording.Meta{
		Kind: "web", Screen: recording.ScreenImage, Width: cfg.Width, Height: cfg.Height,
		Command: "memowm record web " + strings.Join(args, " "), Seed: *seed,
	})
	if err != nil {
		return err
	}
	watchOutputs(stderr, "record web", trajectoryOutputs(*out)...)
	ctx, stop := interruptContext()
	defer stop()
	start := time.Now()
	res, err := web.Record(ctx, cfg, w)
	elapsed := time.Since(start)
	if err == nil {
		err = w.Close()
	}
	if err == nil {
		err = replaceRecDir("record web", tmp, *dir)
	}
	if err != nil {
		w.Abort()
		os.RemoveAll(tmp)
		if ctx.Err() != nil {
			err = fmt.Errorf("record web: interrupted: %w", err)
		}
		return fmt.Errorf("%w (nothing written)", err)
	}
	stop()

	printWebResult(stdout, *dir, cfg, res, elapsed)

	sum, err := importRecording(*dir, *out, *seed, "", *quiet, stderr)
	if err != nil {
		return fmt.Errorf("%w (the recording folder %s is complete; 'memowm import' can retry)", err, *dir)
	}
	return printRecorded(stdout, *out, sum)
}

// printWebResult prints what the recording was like: actions, per-step
// times and screen changes.
func printWebResult(w io.Writer, dir string, cfg web.Config, res *web.Result, elapsed time.Duration) {
	kinds := make([]string, 0, len(res.Kinds))
	for k := range res.Kinds {
		kinds = append(kinds, string(k))
	}
	slices.Sort(kinds)
	for i, k := range kinds {
		kinds[i] = fmt.Sprintf("%s %d", k, res.Kinds[web.Kind(k)])
	}
	fmt.Fprintf(w, "recorded %s: %d steps in %.1f s, %dx%d, start %s, %d distinct pages, %d recoveries\n",
		dir, res.Steps, elapsed.Seconds(), cfg.Width, cfg.Height, res.Start, res.Pages, res.Recoveries)
	fmt.Fprintf(w, "actions: %s\n", strings.Join(kinds, ", "))
	col := func(f func(web.Timing) time.Duration) web.Summary {
		ds := make([]time.Duration, len(res.Timings))
		for i, t := range res.Timings {
			ds[i] = f(t)
		}
		return web.Summarize(ds)
	}
	fmt.Fprintf(w, "per-step time: %s\n", col(web.Timing.Total))
	for _, c := range []struct {
		name string
		f    func(web.Timing) time.Duration
	}{
		{"act", func(t web.Timing) time.Duration { return t.Act }},
		{"settle", func(t web.Timing) time.Duration { return t.Settle }},
		{"screenshot", func(t web.Timing) time.Duration { return t.Screenshot }},
		{"facts", func(t web.Timing) time.Duration { return t.Facts }},
	} {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, col(c.f))
	}
	ch := res.Change
	fmt.Fprintf(w, "screen changes: %.1f%% of steps changed the screenshot; per step %.1f%% of pixels, %.1f%% of 8x8 blocks changed (mean)\n",
		100*ch.ChangedShare(), 100*ch.MeanPixels(), 100*ch.MeanBlocks())
}
