package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/trajectory"
)

func runFit(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "opq" {
		return runFitOPQ(args[1:], stdout, stderr)
	}
	if stage, rest := stageArg(args); stage != "" {
		switch stage {
		case "opq":
			return runFitOPQ(rest, stdout, stderr)
		case "wm":
			return runFitWM(rest, stdout, stderr)
		case "reader":
			return runFitReader(rest, stdout, stderr)
		case "risk":
			return runFitRisk(rest, stdout, stderr)
		case "lambda":
			return runFitLambda(rest, stdout, stderr)
		case "all":
			return runFitAll(rest, stdout, stderr)
		}
		return usagef("unknown stage %q (want opq, wm, reader, risk, lambda or all)", stage)
	}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return usagef("unknown stage %q (want opq, or flags for a whole bundle)", args[0])
	}
	return runFitBundle(args, stdout, stderr)
}

func runFitOPQ(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fit opq", "--in TRAIN --out OPQFILE [flags]",
		"Fits an OPQ quantizer to the states of a trajectory file (.arrow or .parquet):\n"+
			"per-(slot, channel) standardisation, a shared rotation (PCA, optionally refined\n"+
			"by OPQ rounds) and k-means codebooks. The same input and flags give a\n"+
			"byte-identical file on any number of cores.", stdout)
	d := opq.DefaultConfig()
	in := fs.String("in", "", "training trajectories with states (required)")
	out := fs.String("out", "", "quantizer file to write (required)")
	force := fs.Bool("force", false, forceHelp)
	evalPath := fs.String("eval", "", "held-out trajectories to measure reconstruction on (optional)")
	rounds := fs.Int("rounds", d.Rounds, "OPQ rounds after PCA (k-means + Procrustes each)")
	seed := fs.Uint64("seed", d.Seed, "seed of every random choice")
	rotation := fs.String("rotation", d.Rotation.String(), "starting rotation: pca or none")
	shared := fs.Bool("shared", d.Shared, "one codebook per subspace shared by all slots (default: one per slot and subspace)")
	codewords := fs.Int("codewords", d.Codewords, "codewords per codebook (2..256)")
	iters := fs.Int("iterations", d.Iterations, "Lloyd iterations of the final k-means")
	roundIters := fs.Int("round-iterations", d.RoundIterations, "Lloyd iterations inside each OPQ round")
	perCentroid := fs.Int("max-points-per-centroid", d.MaxPointsPerCentroid, "cap on k-means training points per centroid (seeded subsample)")
	rotStates := fs.Int("rotation-states", d.RotationStates, "cap on the states used for PCA and OPQ rounds (seeded subsample)")
	workers := fs.Int("workers", 0, "goroutines (0: all cores); the result does not depend on it")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *in == "" || *out == "" {
		return usagef("--in TRAIN and --out OPQFILE are required")
	}
	if err := checkOutput(*out, outOPQ, *force, input{"--in", *in}, input{"--eval", *evalPath}); err != nil {
		return err
	}
	watchOutputs(stderr, "fit opq", *out)
	cfg := d
	cfg.Rounds, cfg.Seed, cfg.Shared, cfg.Codewords = *rounds, *seed, *shared, *codewords
	cfg.Iterations, cfg.RoundIterations = *iters, *roundIters
	cfg.MaxPointsPerCentroid, cfg.RotationStates, cfg.Workers = *perCentroid, *rotStates, *workers
	if cfg.Rotation, err = opq.ParseRotation(*rotation); err != nil {
		return usagef("%v", err)
	}
	if err := cfg.Validate(); err != nil {
		return usagef("%v", err)
	}
	logf := func(format string, args ...any) {
		if !*quiet {
			fmt.Fprintf(stderr, format, args...)
		}
	}
	start := time.Now()
	states, meta, err := readStates(*in, logf)
	if err != nil {
		return err
	}
	cfg.Shape = meta.Shape
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%s holds %v states: %w", *in, meta.Shape, err)
	}
	logf("fit opq: %d states of %v from %s (%.1f s)\n", len(states), meta.Shape, *in, time.Since(start).Seconds())
	var held [][]float32
	if *evalPath != "" {
		// Read before the fit: the quantizer file records its held-out R^2.
		if held, _, err = readStates(*evalPath, func(string, ...any) {}); err != nil {
			return err
		}
		cfg.HeldOut = held
	}
	cfg.Progress = fitProgress(logf, time.Now())
	fitStart := time.Now()
	q, err := opq.Fit(states, cfg)
	if err != nil {
		return err
	}
	fitTime := time.Since(fitStart)
	printOPQWarnings(stderr, "fit opq", q)
	if len(states) < opq.ReliableStates && *evalPath == "" {
		fmt.Fprintf(stderr, "fit opq: warning: measure how it reconstructs states it was not fit on: --eval HELD (trajectories not in --in)\n")
	}
	if err := q.Save(*out); err != nil {
		return err
	}
	st, err := os.Stat(*out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (%s) in %.1f s: %d codebooks x %d codewords, %s rotation, %d OPQ rounds, seed %d\n",
		*out, humanBytes(st.Size()), fitTime.Seconds(), q.Books(), q.Codewords(), q.Info().Rotation, q.Info().Rounds, q.Info().Seed)
	fmt.Fprintf(stdout, "training distortion %.4f per standardised value (k-means sample)\n", q.Info().Distortion)
	train, err := q.Evaluate(states[:min(len(states), 2048)])
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "train    %v (the first %d training states)\n", train, train.States)
	if *evalPath != "" {
		qe, err := q.Evaluate(held)
		if err != nil {
			return fmt.Errorf("%s: %w", *evalPath, err)
		}
		fmt.Fprintf(stdout, "held-out %v (%s)\n", qe, *evalPath)
	}
	return nil
}

// fitProgress prints Fit's progress: each stage's start and end, and every
// tenth of a long stage.
func fitProgress(logf func(string, ...any), start time.Time) func(opq.Progress) {
	last := ""
	step := 0
	return func(p opq.Progress) {
		el := time.Since(start).Seconds()
		switch {
		case p.Stage == "done":
			return
		case p.Done == 0:
			if p.Stage != last {
				logf("fit opq: %s ... (%.1f s)\n", p.Stage, el)
				last, step = p.Stage, 0
			}
		case p.Done == p.Total && p.Distortion > 0:
			logf("fit opq: %s: distortion %.4f (%.1f s)\n", p.Stage, p.Distortion, el)
		case p.Total >= 20 && p.Done*10/p.Total > step:
			step = p.Done * 10 / p.Total
			logf("fit opq: %s %d/%d (%.1f s)\n", p.Stage, p.Done, p.Total, el)
		}
	}
}

// readStates reads every state of a trajectory file into memory.
func readStates(path string, logf func(string, ...any)) ([][]float32, trajectory.Meta, error) {
	r, err := trajectory.Open(path, trajOpts()...)
	if err != nil {
		return nil, trajectory.Meta{}, err
	}
	defer r.Close()
	meta := r.Meta()
	if meta.Content != trajectory.States {
		return nil, meta, fmt.Errorf("%s holds %s, not states", path, meta.Content)
	}
	var states [][]float32
	for eps := 1; ; eps++ {
		ep, err := r.Next()
		if err == io.EOF { // the bare sentinel: a damaged file's error may wrap io.EOF
			break
		}
		if err != nil {
			return nil, meta, err
		}
		states = append(states, ep.States...)
		if eps%200 == 0 {
			logf("read %d episodes, %d states\n", eps, len(states))
		}
	}
	return states, meta, nil
}

func runQuantize(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("quantize", "--opq OPQFILE --in TRAJ --out CODES",
		"Encodes the states of a trajectory file into OPQ codes and writes the same\n"+
			"episodes (actions, facts) with codes instead of states; the format follows\n"+
			"CODES's extension (.arrow, .parquet, or .npy for a NumPy export of the codes).\n"+
			"The questions file travels along. Reports reconstruction quality and speed.", stdout)
	opqPath := fs.String("opq", "", "quantizer file from 'memowm fit opq'")
	bundlePath := fs.String("model", "", "model bundle whose quantizer to use (instead of --opq)")
	in := fs.String("in", "", "trajectories with states (required)")
	out := fs.String("out", "", "file to write the codes to (required)")
	force := fs.Bool("force", false, forceHelp)
	measure := fs.Bool("measure", true, "decode every state again to measure R^2 and MSE")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if (*opqPath == "") == (*bundlePath == "") || *in == "" || *out == "" {
		return usagef("one of --opq OPQFILE or --model BUNDLE, and --in TRAJ and --out CODES are required")
	}
	if err := checkOutput(*out, outTrajectory, *force, input{"--in", *in}, input{"--opq", *opqPath}, input{"--model", *bundlePath}); err != nil {
		return err
	}
	watchOutputs(stderr, "quantize", trajectoryOutputs(*out)...)
	var q *opq.Quantizer
	if *opqPath != "" {
		q, err = opq.Load(*opqPath)
	} else {
		var b *model.Bundle
		if b, err = model.Load(*bundlePath); err == nil {
			q = b.OPQ
			*opqPath = *bundlePath
		}
	}
	if err != nil {
		return err
	}
	// The Reader quantizes each record batch's states as it reads them, so
	// an episode of any length is held as its codes only (Compact), and
	// the quality is measured on the batch before its states are gone.
	enc := q.NewEncoder()
	sl, nc := q.Shape().StateLen(), q.Shape().Codes
	meter := opq.NewQualityMeter(sl)
	var encTime time.Duration
	metered := meter
	if !*measure {
		metered = nil
	}
	quant := quantizeMetered(q, enc, metered, &encTime)
	r, err := trajectory.Open(*in, append(slices.Clip(trajOpts()), trajectory.WithQuantize(nc, quant))...)
	if err != nil {
		return err
	}
	defer r.Close()
	r.SetCompact(true)
	meta := r.Meta()
	if meta.Content != trajectory.States {
		return fmt.Errorf("%s holds %s, not states", *in, meta.Content)
	}
	if meta.Shape != q.Shape() {
		return fmt.Errorf("%s holds %v states, but %s quantizes %v", *in, meta.Shape, *opqPath, q.Shape())
	}
	w, err := trajectory.Create(*out, trajectory.Meta{Shape: q.Shape(), Content: trajectory.Codes, Quantizer: q.Digest()})
	if err != nil {
		return err
	}
	defer w.Abort()
	start := time.Now()
	eps, obs := 0, 0
	for {
		ep, err := r.Next()
		if err == io.EOF { // the bare sentinel: a damaged file's error may wrap io.EOF
			break
		}
		if err != nil {
			return err
		}
		if ep.States != nil || ep.Compact == nil {
			return fmt.Errorf("episode %d was read with its states (a bug)", ep.ID)
		}
		if err := w.Write(ep); err != nil {
			return err
		}
		eps++
		obs += ep.Len()
		if !*quiet && eps%100 == 0 {
			fmt.Fprintf(stderr, "quantize: %d episodes, %d states (%.1f s)\n", eps, obs, time.Since(start).Seconds())
		}
	}
	// The questions are renamed into place with the codes (or a stale
	// questions file beside --out is removed).
	qs := "no questions file"
	if questions, err := trajectory.ReadQuestions(trajectory.QuestionsPath(*in)); err == nil {
		if err := w.SetQuestions(questions); err != nil {
			return err
		}
		qs = fmt.Sprintf("%d questions copied to %s", len(questions), trajectory.QuestionsPath(*out))
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %s, %s x %d codes (%d bits each); %s\n",
		*out, count(eps, "episode"), count(obs, "observation"), nc, q.Bits(), qs)
	fmt.Fprintf(stdout, "encode   %.0f states/s (%.2f s)\n", float64(obs)/max(encTime.Seconds(), 1e-9), encTime.Seconds())
	if *measure {
		fmt.Fprintf(stdout, "quality  %v\n", meter.Quality())
	}
	return nil
}

// inspectOPQ prints what a quantizer file holds.
func inspectOPQ(path string, asJSON bool, stdout io.Writer) error {
	q, err := opq.Load(path)
	if err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	info := q.Info()
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{
			"in": path, "kind": "opq", "version": opq.Version, "file_bytes": st.Size(),
			"shape": q.Shape(), "subspaces": q.Subspaces(), "sub_dim": q.SubDim(), "codewords": q.Codewords(),
			"shared": q.Shared(), "books": q.Books(), "bits": q.Bits(),
			"rotation": info.Rotation.String(), "rounds": info.Rounds, "iterations": info.Iterations,
			"round_iterations": info.RoundIterations, "max_points_per_centroid": info.MaxPointsPerCentroid,
			"rotation_states": info.RotationStates, "std_floor": info.StdFloor, "seed": info.Seed,
			"train_states": info.TrainStates, "distortion": info.Distortion,
			"points_per_centroid": q.PointsPerCentroid(), "held_out": heldOutJSON(q), "warnings": q.Warnings(),
		})
	}
	books := "one per (slot, subspace)"
	if q.Shared() {
		books = "one per subspace, shared by the slots"
	}
	fmt.Fprintf(stdout, "file          %s (OPQ quantizer, format %d, %s)\n", path, opq.Version, humanBytes(st.Size()))
	fmt.Fprintf(stdout, "states        %d slots x %d float32 -> %d codes of %d codewords (%d bits)\n",
		q.Shape().Slots, q.Shape().Dim, q.Shape().Codes, q.Codewords(), q.Bits())
	fmt.Fprintf(stdout, "subspaces     %d per slot, %d dims each\n", q.Subspaces(), q.SubDim())
	fmt.Fprintf(stdout, "codebooks     %d, %s\n", q.Books(), books)
	switch {
	case info.Rotation == opq.NoRotation:
		fmt.Fprintf(stdout, "rotation      none (the identity)\n")
	case info.Rounds == 0:
		fmt.Fprintf(stdout, "rotation      pca, no OPQ rounds, from %d states at most\n", info.RotationStates)
	default:
		fmt.Fprintf(stdout, "rotation      pca + %d OPQ rounds (%d Lloyd iterations each), from %d states at most\n",
			info.Rounds, info.RoundIterations, info.RotationStates)
	}
	fmt.Fprintf(stdout, "k-means       %d iterations, at most %d points per centroid, seed %d\n", info.Iterations, info.MaxPointsPerCentroid, info.Seed)
	fmt.Fprintf(stdout, "training      %d states, distortion %.4f per standardised value, %.1f points per centroid\n", info.TrainStates, info.Distortion, q.PointsPerCentroid())
	if r2, n, ok := q.HeldOut(); ok {
		fmt.Fprintf(stdout, "held-out      R^2 %.4f over %d states (measured when it was fitted)\n", r2, n)
	} else {
		fmt.Fprintf(stdout, "held-out      not measured (fit opq --eval HELD records it)\n")
	}
	for _, w := range q.Warnings() {
		fmt.Fprintf(stdout, "warning       %s\n", w)
	}
	return nil
}

// heldOutJSON is the quantizer's recorded held-out quality, or nil.
func heldOutJSON(q *opq.Quantizer) any {
	r2, n, ok := q.HeldOut()
	if !ok {
		return nil
	}
	return map[string]any{"r2": r2, "states": n}
}

// printOPQWarnings prints what q says it cannot be trusted with (too few
// training states, a rotation from too few vectors) on stderr.
func printOPQWarnings(stderr io.Writer, verb string, q *opq.Quantizer) {
	for _, w := range q.Warnings() {
		fmt.Fprintf(stderr, "%s: warning: %s\n", verb, w)
	}
}
