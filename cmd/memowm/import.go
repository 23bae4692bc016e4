package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memowm/memowm/recording"
	"github.com/memowm/memowm/screen"
	"github.com/memowm/memowm/trajectory"
)

func runImport(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("import", "--out FILE [--seed S] [--encoder hash|cells] [--quiet] DIR...",
		"Turns recording folders (docs/recording-format.md: recording.json, screens.jsonl\n"+
			"or frames/*.png, actions.jsonl, facts.jsonl) into one trajectory file, one\n"+
			"episode per folder (ids 0.. in the order given), format from FILE's extension\n"+
			"(.arrow, .parquet, or .npy for the states alone). Screens become 32x512 states\n"+
			"through memowm's fixed screen encoders (package screen); questions drawn from\n"+
			"the facts go to FILE.questions.jsonl. Every folder is checked before anything\n"+
			"is written; on error nothing is written. Users with their own encoder write\n"+
			"states into a trajectory file directly instead.\n\n"+
			"Text screens have two encoders (--encoder): hash, hashed character n-grams of\n"+
			"32 regions (the default), and cells, every cell's character in the code group\n"+
			"(OPQ subspace) of its run of cells, so a quantizer fitted with --rotation none\n"+
			"keeps characters, a status line's digits included, and the built-in text reader\n"+
			"(fit --stage reader --text) reads them back (docs/recording.md).", stdout)
	out := fs.String("out", "", "output trajectory file (required)")
	force := fs.Bool("force", false, forceHelp)
	seed := fs.Uint64("seed", 1, "seed of the question steps and choices (default: the seed in the first folder's\nrecording.json, as its recorder used, else 1)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	encoder := fs.String("encoder", "hash", "text screen encoder: hash (n-gram features of 32 regions) or cells (the characters\nof every cell; fit the quantizer with --rotation none)")
	dirs, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out FILE is required")
	}
	if len(dirs) == 0 {
		return usagef("want at least one recording folder DIR")
	}
	if err := checkEncoder(*encoder); err != nil {
		return err
	}
	if err := checkOutput(*out, outTrajectory, *force); err != nil {
		return err
	}
	watchOutputs(stderr, "import", trajectoryOutputs(*out)...)
	seedSet := false
	fs.Visit(func(f *flag.Flag) { seedSet = seedSet || f.Name == "seed" })
	if !seedSet {
		*seed = recordedSeed(dirs[0], *seed)
	}
	opt := recording.ImportOptions{Seed: *seed, TextEncoder: *encoder}
	if !*quiet {
		// Short imports print the summary alone; long ones a line every 2 s.
		start, last, printed := time.Now(), time.Now(), false
		opt.Progress = func(done, total int) {
			now := time.Now()
			if (done == total && printed) || (done < total && now.Sub(last) >= 2*time.Second) {
				fmt.Fprintf(stderr, "import: %d/%d screens encoded (%s)\n", done, total, importDur(now.Sub(start)))
				if done == total {
					fmt.Fprintf(stderr, "import: writing %s\n", *out)
				}
				last, printed = now, true
			}
		}
	}
	sum, err := recording.Import(dirs, *out, opt)
	if err != nil {
		return err
	}
	ts, err := trajectory.Summarize(*out, trajOpts()...)
	if err != nil {
		return err
	}
	var screens []string
	for _, k := range []string{recording.ScreenText, recording.ScreenImage} {
		if n := sum.Screens[k]; n > 0 {
			screens = append(screens, fmt.Sprintf("%d %s", n, k))
		}
	}
	fmt.Fprintf(stdout, "wrote %s: %s, %s (%s), %s; %d questions in %s\n",
		*out, count(sum.Episodes, "episode"), count(sum.Observations, "observation"), count(sum.Observations-sum.Episodes, "transition"), humanBytes(ts.SizeBytes), sum.Questions, trajectory.QuestionsPath(*out))
	enc := ""
	if sum.Screens[recording.ScreenText] > 0 {
		enc = ", text encoder " + *encoder
	}
	fmt.Fprintf(stdout, "screens: %s (%s); states %dx%d float32%s\n",
		strings.Join(screens, ", "), strings.Join(sum.Kinds, ", "), recording.Shape.Slots, recording.Shape.Dim, enc)
	fmt.Fprintf(stdout, "encoded %d screens in %s (%.0f screens/s); import took %s\n",
		sum.Observations, importDur(sum.Encode), sum.ScreensPerSecond(), importDur(sum.Elapsed))
	return nil
}

// recordedSeed is the seed a recorder wrote into dir's recording.json, or
// def when there is none (the import then reports any problem with the
// folder itself).
func recordedSeed(dir string, def uint64) uint64 {
	m, err := recording.ReadMeta(dir)
	if err != nil || m.Seed == 0 {
		return def
	}
	return m.Seed
}

// importDur rounds d for printing: milliseconds below a second.
func importDur(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// checkEncoder refuses an --encoder that names no text screen encoder.
func checkEncoder(e string) error {
	if e != screen.EncoderHash && e != screen.EncoderCells {
		return usagef("--encoder %q: want hash or cells", e)
	}
	return nil
}
