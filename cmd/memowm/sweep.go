package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memowm/memowm/bench"
	"github.com/memowm/memowm/codec"
	"github.com/memowm/memowm/internal/atomicfile"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

func runSweep(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sweep", "(--train TRAIN --eval EVAL --presets a,b,... | --curve FILE) --out DIR",
		"The capacity-vs-horizon study (paper A.4): train each preset on TRAIN (a\n"+
			"bundle already in DIR is reused when trained the steps asked, trained on\n"+
			"from its weights at half the preset's rate when trained fewer, never\n"+
			"overwritten when trained more; an interrupted training continues from its\n"+
			"checkpoint), then measure two rates on EVAL, in bits per observation (the\n"+
			"observations N+K, actions included):\n"+
			"  file  the memory file's rate: EVAL really encoded with the bundle as\n"+
			"        'memowm encode --lambda 0' writes it by default (lossless, the world\n"+
			"        model mixed with adaptive contexts and long-range copy), the whole\n"+
			"        file's bits, the file a user stores (written to a temporary file in\n"+
			"        DIR, removed after);\n"+
			"  R     the world model's own lossless ideal rate, its tables alone, for\n"+
			"        comparison (it is not what a file costs).\n"+
			"Then S(P, N) = B(P)/N + file(P) over horizons N, where B(P) is the bundle's\n"+
			"bytes x 8 (quantizer and FP32 weights, as stored), the best capacity per N,\n"+
			"and the break-even horizon of consecutive presets on the file rates (the\n"+
			"world models' rates alone beside it). Rates that DIR/curve.csv holds for the\n"+
			"same bundle and EVAL (by SHA-256) are taken from it, not measured again.\n"+
			"--curve FILE (CSV: name, params, rate_bits_per_obs, optionally bundle_bytes\n"+
			"and file_bits_per_obs) analyses a measured curve instead: without\n"+
			"bundle_bytes B = 32P, the weights alone; without file_bits_per_obs S and\n"+
			"the break-even are on the world model's rate alone, not a file's, which the\n"+
			"output says. Writes DIR/curve.csv, DIR/sweep.csv, DIR/sweep.json and the\n"+
			"figures rate_vs_params, total_vs_params and optimal_params_vs_horizon as\n"+
			"SVG and PNG.", stdout)
	train := fs.String("train", "", "training trajectories")
	eval := fs.String("eval", "", "held-out trajectories the rates are measured on (the file rate and R(P))")
	presets := fs.String("presets", "tiny,small", "comma-separated world-model presets")
	steps := fs.String("steps", "1000", "training steps in all (earlier runs a bundle continued count): N for every preset, or per preset as tiny=20000,small=20000,base=6000")
	valid := fs.String("valid", "", "held-out trajectories that training evaluates on (fit's --eval): for --patience; never --eval, on which R(P) is measured")
	patience := fs.Int("patience", 0, "with --valid: stop a preset's training when this many evaluations in a row bring no gain, keeping its best weights")
	evalEvery := fs.Int("eval-every", 0, "with --valid: evaluate every M steps (0: a tenth of the preset's steps)")
	opqPath := fs.String("opq", "", "quantizer shared by every preset (default: fit one on TRAIN)")
	lrFlag := fs.String("lr", "", "peak learning rate of each fresh training: one RATE for every preset, or per preset as base=1e-3 (a preset not named takes its own; default: every preset its own); a bundle or checkpoint in DIR trained at another rate is not reused")
	dropFlag := fs.String("dropout", "", "training dropout of each fresh training: one RATE for every preset, or per preset as base=0 (a preset not named takes its own, 0.1); a bundle or checkpoint in DIR with another is not reused")
	history := fs.Int("history", 0, "the window of every fresh training's model, in states of history (fit's --history; 0: each preset's 16); a bundle or checkpoint in DIR with another window is not reused")
	scaledInit := fs.Bool("scaled-init", false, "start every preset's training from fit's --scaled-init (residual projections at 1/sqrt(2 x layers)); a bundle in DIR must have started the same way to be reused")
	ckptEvery := fs.Int("checkpoint-every", 0, "write each training's checkpoint every N steps (0: fit's default, a tenth of its steps)")
	curve := fs.String("curve", "", "analyse this capacity curve instead of training")
	out := fs.String("out", "", "output directory (required)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *out == "" || (*curve == "") == (*train == "" || *eval == "") {
		return usagef("--out DIR and either --curve FILE or --train TRAIN --eval EVAL are required")
	}
	if (*patience != 0 || *evalEvery != 0) && *valid == "" {
		return usagef("--patience and --eval-every need --valid FILE (held-out episodes other than --eval)")
	}
	if *patience < 0 || *evalEvery < 0 || *ckptEvery < 0 {
		return usagef("--patience, --eval-every and --checkpoint-every must not be negative")
	}
	if *curve != "" && (*scaledInit || *ckptEvery != 0 || *lrFlag != "" || *dropFlag != "" || *history != 0) {
		return usagef("--lr, --dropout, --history, --scaled-init and --checkpoint-every set up training; --curve trains nothing")
	}
	if *history < 0 {
		return usagef("--history %d: want a number of states >= 1, or 0 for each preset's", *history)
	}
	initName := ""
	if *scaledInit {
		initName = worldmodel.InitScaledResidual
	}
	names := strings.Split(*presets, ",")
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	perPreset, err := parseSweepSteps(*steps, names)
	if err != nil {
		return usagef("%v", err)
	}
	rates, err := parseSweepLR(*lrFlag, names)
	if err != nil {
		return usagef("%v", err)
	}
	drops, err := parseSweepDropout(*dropFlag, names)
	if err != nil {
		return usagef("%v", err)
	}
	if *valid != "" && *eval != "" && samePath(*valid, *eval) {
		return usagef("--valid and --eval are the same file: R(P) must be measured on episodes that did not choose the weights")
	}
	if *curve == "" {
		if err := refuseEmpty("--eval", *eval); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	var pts []bench.CurvePoint
	if *curve != "" {
		f, err := os.Open(*curve)
		if err != nil {
			return err
		}
		pts, err = bench.ReadCurve(f)
		f.Close()
		if err != nil {
			return err
		}
	} else if pts, err = measureCurve(sweepRun{train: *train, eval: *eval, valid: *valid, presets: names, steps: perPreset, patience: *patience, evalEvery: *evalEvery, ckptEvery: *ckptEvery, init: initName, lr: rates, dropout: drops, history: *history, opq: *opqPath, dir: *out}, *quiet, stderr); err != nil {
		return err
	}
	sorted, rows, be, err := bench.Analyze(pts, bench.DefaultHorizons())
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(*out, "sweep.csv"), func(w io.Writer) error { return bench.WriteSweepCSV(w, sorted, rows) }); err != nil {
		return err
	}
	fileRates := bench.RateRule(sorted) == "file"
	type beJSON struct {
		Smaller string `json:"smaller"`
		Larger  string `json:"larger"`
		N       any    `json:"n"`
		ModelN  any    `json:"n_world_model_alone"`
	}
	never := func(n float64) any {
		if math.IsInf(n, 1) {
			return "never"
		}
		return n
	}
	var bej []beJSON
	for _, b := range be {
		bej = append(bej, beJSON{b.Smaller, b.Larger, never(b.N), never(b.ModelN)})
	}
	totalsOn := "world_model"
	if fileRates {
		totalsOn = "memory_file"
	}
	if err := atomicfile.Write(filepath.Join(*out, "sweep.json"), func(w io.Writer) error {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(map[string]any{"curve": sorted, "horizons": rows, "break_even": bej, "totals_on": totalsOn})
	}); err != nil {
		return err
	}
	figs, err := bench.PlotSweep(*out, sorted, rows)
	if err != nil {
		return err
	}
	printSweep(stdout, *curve, sorted, rows, be)
	fmt.Fprintf(stdout, "wrote %s, %s and %d figures (%s, ...)\n", filepath.Join(*out, "sweep.csv"), filepath.Join(*out, "sweep.json"), len(figs), figs[0])
	return nil
}

func minOf(v []float64) float64 {
	m := math.Inf(1)
	for _, x := range v {
		m = math.Min(m, x)
	}
	return m
}

// sweepRun is what measureCurve trains and measures: each preset on train
// for its steps (with early stopping on valid when patience is set), R(P)
// on eval, every bundle in dir.
type sweepRun struct {
	train, eval, valid string
	presets            []string
	steps              map[string]int
	patience           int
	evalEvery          int
	ckptEvery          int
	init               string             // the initialisation of fresh trainings (worldmodel.InitScaledResidual or "")
	lr                 map[string]float64 // peak learning rates asked per preset (absent: the preset's)
	dropout            map[string]float64 // dropout rates asked per preset (absent: the preset's)
	history            int                // the window asked of every preset (0: the preset's)
	opq, dir           string
}

// measureCurve trains (or reuses) a bundle per preset in r.dir and measures
// on r.eval its memory file's rate and its world model's lossless ideal
// rate, or takes both from r.dir's curve.csv when it records them for the
// same bundle and episodes.
func measureCurve(r sweepRun, quiet bool, stderr io.Writer) ([]bench.CurvePoint, error) {
	q := []string{}
	if quiet {
		q = []string{"--quiet"}
	}
	opqPath, dir, train, eval := r.opq, r.dir, r.train, r.eval
	curvePath := filepath.Join(dir, "curve.csv")
	earlier := readEarlierCurve(curvePath, quiet, stderr)
	evalSum, err := trajectorySHA256(eval)
	if err != nil {
		return nil, err
	}
	if opqPath == "" {
		opqPath = filepath.Join(dir, "shared.opq")
		if _, err := os.Stat(opqPath); errors.Is(err, os.ErrNotExist) {
			if err := runFitOPQ(append([]string{"--in", train, "--out", opqPath}, q...), io.Discard, stderr); err != nil {
				return nil, err
			}
		}
	}
	var pts []bench.CurvePoint
	for _, p := range r.presets {
		steps := r.steps[p]
		path := filepath.Join(dir, p+".mwb")
		drop, ok := r.dropout[p]
		if !ok {
			drop = -1
		}
		plan, err := planPreset(path, p, steps, presetAsk{init: r.init, lr: r.lr[p], dropout: drop, history: r.history})
		if err != nil {
			return nil, err
		}
		if plan.why != "" && !quiet {
			fmt.Fprintf(stderr, "sweep: not reusing %s: %s; training it again\n", path, plan.why)
		}
		var args []string
		switch {
		case plan.reuse:
			if !quiet && plan.unchecked {
				fmt.Fprintf(stderr, "sweep: reusing %s, which does not record its peak learning rate: the sweep cannot check it against the %g asked\n", path, plan.askedLR)
			} else if !quiet {
				fmt.Fprintf(stderr, "sweep: reusing %s\n", path)
			}
		case plan.from > 0:
			// A finished run of fewer steps trains on from its weights, at
			// half its preset's peak rate (a fresh warm-up and cosine).
			if !quiet {
				fmt.Fprintf(stderr, "sweep: training %s on from its %d steps to %d (lr %.3g)\n", path, plan.from, steps, plan.lr)
			}
			args = []string{"--in", train, "--model", path, "--steps", fmt.Sprint(steps - plan.from), "--lr", fmt.Sprint(plan.lr), "--out", path, "--force"}
		default:
			args = []string{"--in", train, "--opq", opqPath, "--preset", p, "--steps", fmt.Sprint(steps - plan.ckptPrior), "--out", path}
			// An interrupted training of this sweep continues from its
			// checkpoint (fit refuses one made on other data); one that
			// continued an earlier run counts that run's steps. The
			// checkpoint carries its initialisation, rate, dropout and
			// window; a fresh training is told them.
			if plan.ckpt != "" {
				args = append(args, "--resume", plan.ckpt)
				if !quiet {
					fmt.Fprintf(stderr, "sweep: continuing %s from %s\n", p, plan.ckpt)
				}
			} else {
				if r.init == worldmodel.InitScaledResidual {
					args = append(args, "--scaled-init")
				}
				if r.lr[p] > 0 {
					args = append(args, "--lr", fmt.Sprint(r.lr[p]))
				}
				if drop >= 0 {
					args = append(args, "--dropout", fmt.Sprint(drop))
				}
				if r.history > 0 {
					args = append(args, "--history", fmt.Sprint(r.history))
				}
			}
		}
		if args != nil {
			if plan.from == 0 && fileExists(path) {
				args = append(args, "--force") // an unfinished bundle, trained again (plan.why)
			}
			start := time.Now()
			if r.valid != "" {
				args = append(args, "--eval", r.valid, "--patience", fmt.Sprint(r.patience), "--eval-every", fmt.Sprint(r.evalEvery))
			}
			if r.ckptEvery > 0 {
				args = append(args, "--checkpoint-every", fmt.Sprint(r.ckptEvery))
			}
			if err := runFitWM(append(args, q...), io.Discard, stderr); err != nil {
				return nil, fmt.Errorf("preset %s: %w", p, err)
			}
			if !quiet {
				fmt.Fprintf(stderr, "sweep: trained %s in %.1f s\n", p, time.Since(start).Seconds())
			}
		}
		b, err := model.Load(path)
		if err != nil {
			return nil, err
		}
		cfg := b.Model.Config()
		st, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		// The bundle's hash is the SHA-256 of its file's bytes.
		pt := bench.CurvePoint{Name: p, Params: float64(cfg.NumParams()), BundleBytes: st.Size(), BundleSHA256: b.HashString(), EvalSHA256: evalSum}
		if b.Training != nil {
			pt.Steps, pt.LR, pt.Init = b.Training.TotalSteps(), b.Training.LR, b.Training.Init
			pt.TrainSeconds, _ = b.Training.TotalSeconds()
		}
		pt.Dropout, pt.History = cfg.Dropout, cfg.MaxHistory
		old, had := earlier[p]
		switch {
		case had && old.FileRate > 0 && old.BundleSHA256 == pt.BundleSHA256 && old.EvalSHA256 == evalSum:
			pt.Rate, pt.FileRate, pt.FilePrior = old.Rate, old.FileRate, old.FilePrior
			if !quiet {
				fmt.Fprintf(stderr, "sweep: %s: rates from %s, which measured this bundle on these episodes (the same SHA-256s): not encoding %s again\n", p, curvePath, eval)
			}
		default:
			if had && !quiet && (old.BundleSHA256 == "" || old.EvalSHA256 == "") {
				fmt.Fprintf(stderr, "sweep: %s: %s does not record which bundle and episodes it measured (no SHA-256): measuring %s's rates again\n", p, curvePath, p)
			}
			if err := measureRates(&pt, b, path, eval, dir, stderr, quiet); err != nil {
				return nil, fmt.Errorf("preset %s: %w", p, err)
			}
		}
		pts = append(pts, pt)
		if !quiet {
			fmt.Fprintf(stderr, "sweep: %s: %.0f parameters, %s, %s, bundle %s, memory file %.1f bits/obs (world model alone R = %.1f) on %s\n", p, pt.Params, trainedSteps(b.Training), recipe(pt), humanBytes(pt.BundleBytes), pt.FileRate, pt.Rate, eval)
		}
	}
	return pts, atomicfile.Write(curvePath, func(w io.Writer) error { return bench.WriteCurve(w, pts) })
}

// idealRate is the lossless ideal code length of path's episodes under b
// (keep-all: every code and action coded), in bits, and their observation
// count; episodes are read and simulated 8 at a time, never all held.
func idealRate(b *model.Bundle, pred worldmodel.Predictor, path string) (bits float64, obs int, err error) {
	r, err := openCodes(b, path)
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	flush := func(eps []*trajectory.Episode) error {
		st, err := codec.Simulate(pred, model.Policy{Kind: model.KeepAll}, eps)
		for _, s := range st {
			bits += s.StateBits + s.ActionBits
			obs += s.Observations
		}
		return err
	}
	var eps []*trajectory.Episode
	for {
		ep, err := r.Next()
		if err == io.EOF { // the bare sentinel: a damaged file's error may wrap io.EOF
			break
		}
		if err != nil {
			return 0, 0, err
		}
		ep.Facts = nil
		if eps = append(eps, ep); len(eps) == 8 {
			if err := flush(eps); err != nil {
				return 0, 0, err
			}
			eps = eps[:0]
		}
	}
	if len(eps) > 0 {
		if err := flush(eps); err != nil {
			return 0, 0, err
		}
	}
	return bits, obs, nil
}

// readCodesFrom reads every episode of path as codes (states go through b's
// quantizer, whose shape they must have), without their facts.
func readCodesFrom(b *model.Bundle, path string) ([]*trajectory.Episode, error) {
	r, err := openCodes(b, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var eps []*trajectory.Episode
	for {
		ep, err := r.Next()
		if err == io.EOF { // the bare sentinel: a damaged file's error may wrap io.EOF
			return eps, nil
		}
		if err != nil {
			return nil, err
		}
		ep.Facts = nil
		eps = append(eps, ep)
	}
}

// openCodes opens trajectories at path for b: a states file is quantized
// through b's quantizer as it is read (an episode is never held as states),
// a codes file must have b's width and, when it names its quantizer, be
// b's quantizer's codes.
func openCodes(b *model.Bundle, path string) (*trajectory.Reader, error) {
	return openCodesWith(b.OPQ, "the bundle's quantizer", path)
}

// openCodesWith opens a trajectory file whose episodes come as codes of q:
// states quantized through q as each row is read, or codes made by q (by
// its digest, where the file records one). whose names q in errors.
func openCodesWith(q *opq.Quantizer, whose, path string) (*trajectory.Reader, error) {
	return openCodesMeter(q, whose, path, nil)
}

// openCodesMeter is openCodesWith that also adds every state it quantizes,
// with its reconstruction, to meter (when not nil).
func openCodesMeter(q *opq.Quantizer, whose, path string, meter *opq.QualityMeter) (*trajectory.Reader, error) {
	quant := quantizeMetered(q, q.NewEncoder(), meter, nil)
	r, err := trajectory.Open(path, append(trajOpts(), trajectory.WithQuantize(q.Shape().Codes, quant))...)
	if err != nil {
		return nil, err
	}
	m := r.Meta()
	switch {
	case m.Content == trajectory.States && m.Shape != q.Shape():
		err = fmt.Errorf("%s holds %v states, but %s takes %v", path, m.Shape, whose, q.Shape())
	case m.Content == trajectory.Codes && m.Shape.Codes != q.Shape().Codes:
		err = fmt.Errorf("%s holds %d codes per observation, but %s makes %d", path, m.Shape.Codes, whose, q.Shape().Codes)
	case m.Content == trajectory.Codes && m.Quantizer != "" && m.Quantizer != q.Digest():
		err = fmt.Errorf("%s holds codes of quantizer %.12s, but %s is %.12s: codes mean nothing through other codebooks (quantize the states with %s)", path, m.Quantizer, whose, q.Digest(), whose)
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// presetAsk is how the sweep asks a preset to be trained: its
// initialisation, peak learning rate (0: the preset's), dropout (< 0: the
// preset's) and window in states (0: the preset's).
type presetAsk struct {
	init        string
	lr, dropout float64
	history     int
}

// presetPlan is what a sweep does for one preset whose bundle is path.
type presetPlan struct {
	reuse     bool    // a finished run of the steps asked: measure it as it is
	from      int     // > 0: a finished run of this many steps, trained on to the steps asked
	lr        float64 // with from: the peak rate for the steps added
	ckpt      string  // train from this checkpoint (an interrupted run of this sweep)
	ckptPrior int     // with ckpt: the steps before the run the checkpoint continues
	why       string  // why a file at path is trained again ("" when none is)
	// unchecked is set when the bundle at path is a first run that does not
	// record its peak rate (written before bundles did): the sweep cannot
	// hold it to the rate asked, which it says.
	unchecked bool
	askedLR   float64 // the peak rate the sweep asks of the preset
}

// planPreset decides from the bundle at path (if any) and its checkpoint
// what the sweep does for preset trained to steps steps in all (earlier runs
// that a bundle continued included). It never discards a model trained
// longer than asked, or one of another preset or trained elsewhere: those
// are errors that say how to keep them. A checkpoint is resumed when no
// finished bundle is as far along; an older one is left for the next
// training to replace.
func planPreset(path, preset string, steps int, ask presetAsk) (presetPlan, error) {
	var plan presetPlan
	init, lr, dropout, history := ask.init, ask.lr, ask.dropout, ask.history
	if cfg, err := worldmodel.Preset(preset); err == nil {
		if lr == 0 {
			lr = cfg.DefaultLR()
		}
		if dropout < 0 {
			dropout = cfg.Dropout
		}
		if history == 0 {
			history = cfg.MaxHistory
		}
	}
	var b *model.Bundle
	if _, err := os.Stat(path); err == nil {
		if b, err = model.Load(path); err != nil {
			return plan, fmt.Errorf("%w (move it away to train %s again)", err, preset)
		}
		if got := b.Model.Config().Preset; got != preset {
			return plan, fmt.Errorf("%s holds preset %s, not %s: move it away or use another --out", path, got, preset)
		}
		if b.Training != nil && b.Training.Imported != "" {
			return plan, fmt.Errorf("%s holds weights trained elsewhere (imported): the sweep trains its own; move it away or use another --out", path)
		}
		if d := b.Model.Config().Dropout; d != dropout {
			return plan, fmt.Errorf("%s was trained with dropout %g; the sweep asks %g: move it away, use another --out, or ask --dropout %s=%g", path, d, dropout, preset, d)
		}
		if h := b.Model.Config().MaxHistory; history > 0 && h != history {
			return plan, fmt.Errorf("%s has a %d-state window; the sweep asks %d states: move it away, use another --out, or ask --history %d", path, h, history, h)
		}
		if b.Training != nil && b.Training.Init != init {
			return plan, fmt.Errorf("%s started from %s; the sweep asks %s: move it away or use another --out", path, initDesc(b.Training.Init), initDesc(init))
		}
		// A run that continued another records the continuation's rate;
		// only a first run's rate is the one the sweep asks.
		if t := b.Training; t != nil && t.PriorSteps == 0 && t.LR != 0 && t.LR != lr {
			return plan, fmt.Errorf("%s was trained at peak learning rate %g; the sweep asks %g: move it away, use another --out, or ask --lr %s=%g", path, t.LR, lr, preset, t.LR)
		}
		plan.unchecked = b.Training == nil || (b.Training.PriorSteps == 0 && b.Training.LR == 0)
		plan.askedLR = lr
	} else if !errors.Is(err, os.ErrNotExist) {
		return plan, err
	}
	var unfinished error
	if b != nil {
		unfinished = b.CheckTrained()
	}
	finished := b != nil && unfinished == nil
	if finished {
		tr := b.Training
		planned := tr.PriorSteps + tr.TargetSteps // an early stop finishes its run
		if planned == steps {
			plan.reuse = true
			return plan, nil
		}
		if planned > steps {
			return plan, fmt.Errorf("%s was trained for %d steps in all, more than the %d asked: --steps %s=%d reuses it; fewer steps need another --out",
				path, planned, steps, preset, planned)
		}
	}
	if ck := path + ".ckpt"; fileExists(ck) {
		c, err := worldmodel.LoadCheckpoint(ck)
		if err != nil {
			return plan, fmt.Errorf("%s: %w (remove it to train %s from the start)", ck, err, preset)
		}
		if c.Model.Config().Preset != preset {
			return plan, fmt.Errorf("%s is a checkpoint of preset %s, not %s: move it away", ck, c.Model.Config().Preset, preset)
		}
		if c.Train.Init != init {
			return plan, fmt.Errorf("%s is a checkpoint of a run started from %s; the sweep asks %s: move it away", ck, initDesc(c.Train.Init), initDesc(init))
		}
		if d := c.Model.Config().Dropout; d != dropout {
			return plan, fmt.Errorf("%s is a checkpoint of a run with dropout %g; the sweep asks %g: move it away", ck, d, dropout)
		}
		if h := c.Model.Config().MaxHistory; history > 0 && h != history {
			return plan, fmt.Errorf("%s is a checkpoint of a model with a %d-state window; the sweep asks %d states: move it away", ck, h, history)
		}
		if c.Train.PriorSteps == 0 && c.Train.LR != lr {
			return plan, fmt.Errorf("%s is a checkpoint of a run at peak learning rate %g; the sweep asks %g: move it away", ck, c.Train.LR, lr)
		}
		if !finished || c.Train.PriorSteps+c.Step >= b.Training.TotalSteps() {
			if c.Train.PriorSteps >= steps {
				return plan, fmt.Errorf("%s continues a run of %d steps; the sweep asks %d in all: ask more, or remove the checkpoint", ck, c.Train.PriorSteps, steps)
			}
			plan.ckpt, plan.ckptPrior = ck, c.Train.PriorSteps
			return plan, nil
		}
	}
	switch {
	case finished:
		plan.from, plan.lr = b.Training.TotalSteps(), lr/2
	case b != nil:
		plan.why = unfinished.Error()
	}
	return plan, nil
}

// samePath reports whether a and b name the same file (after following
// links; by name when either cannot be read).
func samePath(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	return filepath.Clean(a) == filepath.Clean(b)
}

// trainTime writes a training time for people: 42.5 s, 7m3s, 4h5m0s.
func trainTime(sec float64) string {
	if sec < 60 {
		return fmt.Sprintf("%.1f s", sec)
	}
	return time.Duration(sec * float64(time.Second)).Round(time.Second).String()
}

// recipe says at which peak rate (when the bundle records it), dropout and
// window a curve point was trained.
func recipe(p bench.CurvePoint) string {
	s := fmt.Sprintf("peak rate not recorded, dropout %g", p.Dropout)
	if p.LR > 0 {
		s = fmt.Sprintf("peak rate %g, dropout %g", p.LR, p.Dropout)
	}
	if p.History > 0 {
		s += fmt.Sprintf(", window %d", p.History)
	}
	if p.TrainSeconds > 0 {
		s += fmt.Sprintf(", trained in %s in all", trainTime(p.TrainSeconds))
	}
	return s
}

// trainedSteps says how far a bundle's world model was trained.
func trainedSteps(t *model.Training) string {
	switch {
	case t == nil:
		return "training not recorded"
	case t.PriorSteps > 0:
		return t.String() // it names the initialisation
	}
	var s string
	switch {
	case t.EndedEarly():
		s = fmt.Sprintf("best held-out loss at step %d (stopped early at %d of %d)", t.Steps, t.RanSteps, t.TargetSteps)
	case t.StoppedEarly:
		s = fmt.Sprintf("best held-out loss at step %d of %d (the last evaluations did worse)", t.Steps, t.TargetSteps)
	default:
		s = fmt.Sprintf("%d steps", t.Steps)
	}
	if t.Init != "" {
		s += fmt.Sprintf(" from the %s initialisation", t.Init)
	}
	return s
}

// initDesc names an initialisation for messages.
func initDesc(init string) string {
	if init == "" {
		return "the preset's initialisation"
	}
	return "the " + init + " initialisation (--scaled-init)"
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
