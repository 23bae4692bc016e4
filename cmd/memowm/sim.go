package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/sim"
	"github.com/memowm/memowm/trajectory"
)

func simFlags(fs interface {
	IntVar(*int, string, int, string)
	Uint64Var(*uint64, string, uint64, string)
	Float64Var(*float64, string, float64, string)
}, cfg *sim.Config) {
	d := sim.DefaultConfig()
	fs.IntVar(&cfg.Episodes, "episodes", d.Episodes, "episodes to generate")
	fs.IntVar(&cfg.Steps, "steps", d.Steps, "actions per episode, T (each episode has T+1 observations)")
	fs.Uint64Var(&cfg.Seed, "seed", d.Seed, "seed of the agent's episodes")
	fs.Uint64Var(&cfg.WorldSeed, "world-seed", d.WorldSeed, "seed of the site and the encoder (keep it to share a world across seeds)")
	fs.IntVar(&cfg.Shape.Dim, "dim", d.Shape.Dim, "encoder channels per slot")
	fs.IntVar(&cfg.Pages, "pages", d.Pages, "pages in the site")
	fs.Float64Var(&cfg.PageLoadRate, "page-load-rate", d.PageLoadRate, "probability that a step loads a page")
	fs.Float64Var(&cfg.IdleRate, "idle-rate", d.IdleRate, "probability that a step changes nothing on the page (noop, hover)")
	fs.Float64Var(&cfg.ClockRate, "clock-rate", d.ClockRate, "probability that the clock ticks in a step")
	fs.Float64Var(&cfg.AdRate, "ad-rate", d.AdRate, "probability that the ad banner rotates in a step")
	fs.Float64Var(&cfg.Noise, "noise", d.Noise, "std of the encoder's per-observation jitter")
	fs.IntVar(&cfg.Questions, "questions", d.Questions, "questions of each kind per episode, each at its own random step (more: less noisy distortion)")
}

func runSim(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sim", "--out FILE [flags]",
		"Generates seeded synthetic web trajectories (format from FILE's extension: .arrow,\n"+
			".parquet, or .npy for a NumPy export of the states) and writes their questions\n"+
			"to FILE.questions.jsonl. The same flags give byte-identical files. With --opq or\n"+
			"--model it writes codes instead, quantized as they are generated: a training\n"+
			"corpus of 1 KiB per observation instead of 64 KiB of states. No episode is held\n"+
			"as states, so memory does not grow with --steps.", stdout)
	cfg := sim.DefaultConfig()
	simFlags(fs, &cfg)
	out := fs.String("out", "", "output file (required)")
	force := fs.Bool("force", false, forceHelp)
	opqPath := fs.String("opq", "", "quantizer: write its codes instead of the states")
	bundlePath := fs.String("model", "", "bundle whose quantizer's codes to write instead of the states")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *out == "" {
		return usagef("--out FILE is required")
	}
	if err := checkOutput(*out, outTrajectory, *force); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return usagef("%v", err)
	}
	if *opqPath != "" && *bundlePath != "" {
		return usagef("give --opq or --model, not both")
	}
	opt := sim.WriteOptions{}
	if *opqPath != "" || *bundlePath != "" {
		var q *opq.Quantizer
		if *opqPath != "" {
			if q, err = opq.Load(*opqPath); err != nil {
				return err
			}
		} else {
			b, err := model.Load(*bundlePath)
			if err != nil {
				return err
			}
			q = b.OPQ
		}
		if q.Shape() != cfg.Shape {
			return usagef("the quantizer takes %v states, but --dim %d makes %v", q.Shape(), cfg.Shape.Dim, cfg.Shape)
		}
		opt.Meta = trajectory.Meta{Shape: q.Shape(), Content: trajectory.Codes, Quantizer: q.Digest()}
		opt.Quantize = q.NewEncoder().EncodeBatch
	}
	watchOutputs(stderr, "sim", trajectoryOutputs(*out)...)
	start := time.Now()
	opt.Progress = func(done, total int) {
		if !*quiet && (done == total || done%max(total/10, 1) == 0) {
			fmt.Fprintf(stderr, "sim: %d/%d episodes (%.1f s)\n", done, total, time.Since(start).Seconds())
		}
	}
	res, err := sim.WriteFileWith(*out, cfg, opt)
	if err != nil {
		return err
	}
	// Not read back with trajectory.Summarize: that holds each episode's
	// states, and a long episode's are GBs.
	st, err := os.Stat(*out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %s, %s, %s; %d questions in %s\n",
		*out, count(res.Episodes, "episode"), count(int(res.Observations), "observation"), humanBytes(st.Size()), res.Questions, trajectory.QuestionsPath(*out))
	if format, _ := trajectory.FormatOf(*out); format == trajectory.NumPy {
		fmt.Fprintf(stdout, "(episode, step) of each row in %s\n", trajectory.IndexPath(*out))
	}
	printStats(stdout, res.Stats)
	return nil
}

func printStats(w io.Writer, st sim.Stats) {
	fmt.Fprintf(w, "slot changes per step: mean %.1f%%, unchanged steps %.1f%%; page loads %.1f%% of steps change %.1f%% of slots, other steps %.1f%%\n",
		100*st.ChangedFrac(), 100*st.UnchangedFrac(), 100*st.PageLoadFrac(), 100*st.LoadChangedFrac(), 100*st.OtherChangedFrac())
}

func humanBytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
