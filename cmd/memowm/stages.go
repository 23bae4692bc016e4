package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memowm/memowm/calib"
	"github.com/memowm/memowm/codec"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/reader"
	"github.com/memowm/memowm/risk"
	"github.com/memowm/memowm/screen"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// stageArg finds --stage NAME (or --stage=NAME) in args and returns the
// stage and the other arguments.
func stageArg(args []string) (string, []string) {
	for i, a := range args {
		switch {
		case (a == "--stage" || a == "-stage") && i+1 < len(args):
			return args[i+1], append(append([]string(nil), args[:i]...), args[i+2:]...)
		case strings.HasPrefix(a, "--stage=") || strings.HasPrefix(a, "-stage="):
			return a[strings.Index(a, "=")+1:], append(append([]string(nil), args[:i]...), args[i+1:]...)
		}
	}
	return "", args
}

// calibData is what the reader, risk and lambda stages read: episodes as
// codes, their questions, and the complete decoded state of every question.
type calibData struct {
	eps    []*trajectory.Episode
	qs     []*trajectory.Question
	states [][]float32 // states[i]: the decoded complete state of qs[i]
}

// loadCalib reads a trajectory file and its questions through the bundle's
// quantizer.
func loadCalib(b *model.Bundle, path string) (*calibData, error) {
	all, err := trajectory.ReadQuestions(trajectory.QuestionsPath(path))
	if err != nil {
		return nil, fmt.Errorf("%s needs its questions file: %w", path, err)
	}
	byStep := map[risk.StepKey][]*trajectory.Question{}
	for i := range all {
		q := &all[i]
		k := risk.StepKey{Episode: q.Episode, Step: q.Step}
		byStep[k] = append(byStep[k], q)
	}
	eps, err := readCodesFrom(b, path)
	if err != nil {
		return nil, err
	}
	d := &calibData{eps: eps}
	for _, ep := range eps {
		for t := range ep.Codes {
			qs := byStep[risk.StepKey{Episode: ep.ID, Step: t}]
			if len(qs) == 0 {
				continue
			}
			// One decode per step: its questions share the state (readers
			// only read it, and the text reader decodes a shared one once).
			x, err := b.OPQ.Decode(ep.Codes[t])
			if err != nil {
				return nil, err
			}
			for _, q := range qs {
				d.qs, d.states = append(d.qs, q), append(d.states, x)
			}
		}
	}
	if len(d.qs) == 0 {
		return nil, fmt.Errorf("%s: no question names one of its observations", path)
	}
	return d, nil
}

// stageFlags are the flags every later stage shares.
type stageFlags struct {
	bundle, in, out    *string
	quiet, json, force *bool
}

func newStage(name, summary string, stdout io.Writer) (*flag.FlagSet, *stageFlags) {
	fs := newFlags("fit --stage "+name, "--model BUNDLE --in TRAJ --out BUNDLE [flags]", summary, stdout)
	return fs, &stageFlags{
		bundle: fs.String("model", "", "bundle to extend (required)"),
		in:     fs.String("in", "", "trajectories with questions (required)"),
		out:    fs.String("out", "", "bundle to write (required; may equal --model, which updates it in place)"),
		force:  fs.Bool("force", false, "replace --out if it exists and is not --model (without it an existing file is refused)"),
		quiet:  fs.Bool("quiet", false, "no progress on stderr"),
		json:   fs.Bool("json", false, "print the summary as JSON (progress stays on stderr)"),
	}
}

// text is where a stage prints its summary as text: stdout, or nowhere
// under --json (the JSON summary then goes to stdout).
func (sf *stageFlags) text(stdout io.Writer) io.Writer {
	if *sf.json {
		return io.Discard
	}
	return stdout
}

// finish prints a stage's JSON summary under --json, adding the bundle
// written and its hash.
func (sf *stageFlags) finish(stdout io.Writer, b *model.Bundle, sum map[string]any) error {
	if !*sf.json {
		fmt.Fprintf(stdout, "wrote %s, bundle sha256 %s\n", *sf.out, b.HashString())
		return nil
	}
	sum["out"], sum["bundle_sha256"] = *sf.out, b.HashString()
	return writeJSON(stdout, sum)
}

// evaluationJSON is a reader evaluation in the JSON style of every --json;
// accuracy is null for a reader that does not predict a choice.
func evaluationJSON(ev reader.Evaluation) map[string]any {
	kind := func(k reader.KindStats) map[string]any {
		m := map[string]any{"questions": k.N, "mean_bits": k.MeanBits, "chance_accuracy": k.ChanceAccuracy, "chance_bits": k.ChanceBits, "accuracy": nil}
		if k.Correct >= 0 && !math.IsNaN(k.Accuracy) {
			m["accuracy"], m["correct"] = k.Accuracy, k.Correct
		}
		if k.Kind != "" {
			m["kind"] = k.Kind
		}
		return m
	}
	kinds := []map[string]any{}
	for _, k := range ev.Kinds {
		kinds = append(kinds, kind(k))
	}
	m := kind(ev.All)
	m["kinds"] = kinds
	return m
}

func (sf *stageFlags) check(fs *flag.FlagSet, args []string) error {
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *sf.bundle == "" || *sf.in == "" || *sf.out == "" {
		return usagef("--model BUNDLE, --in TRAJ and --out BUNDLE are required")
	}
	// --out may be --model (the stage updates the bundle in place, which
	// needs no --force), never the trajectories.
	force := *sf.force
	if ost, err := os.Stat(*sf.out); err == nil {
		if bst, err := os.Stat(*sf.bundle); err == nil && os.SameFile(ost, bst) {
			force = true
		}
	}
	return checkOutput(*sf.out, outStage, force, input{"--in", *sf.in})
}

func runFitReader(args []string, stdout, stderr io.Writer) error {
	fs, sf := newStage("reader", "Trains a built-in reader on the complete quantised states of TRAJ and its\n"+
		"questions, freezes it and stores it in the bundle: the probe, or with --text the\n"+
		"text reader. It defines answer loss.", stdout)
	d := reader.DefaultProbeConfig()
	epochs := fs.Int("epochs", d.Epochs, fmt.Sprintf("at most this many passes over the questions (default %d for the probe, %d for --text)", d.Epochs, reader.DefaultTextConfig().Epochs))
	seed := fs.Uint64("seed", d.Seed, "seed of the split, initialisation and shuffles")
	probePath := fs.String("probe", "", "take this trained reader (a reader file, probe or text, or a bundle's reader) instead of\ntraining one; --in TRAJ is then the evaluation set (a file of codes, such as decoded\nmemory, is read as it is)")
	textReader := fs.Bool("text", false, "train the text reader instead of the probe: it reads states of the cells text encoder\n(import --encoder cells) back into screens and scores each answer by where it stands\non the screen, so values never seen in training can be read (docs/retention.md)")
	screenSize := fs.String("screen", "80x24", "with --text: the size of the screens, columns x rows")
	evalPath := fs.String("eval", "", "also evaluate the trained reader on this held-out trajectory file's questions (through\nthe bundle's quantizer: complete quantised states, what lossless memory decodes to)")
	readerURL := readerFlag(fs)
	if err := sf.check(fs, args); err != nil {
		return err
	}
	if *textReader && (*readerURL.url != "" || *probePath != "") {
		return usagef("--text trains the text reader: give it without --reader and --probe")
	}
	if *readerURL.url != "" && *probePath != "" {
		return usagef("--reader and --probe are two readers: give one")
	}
	if *evalPath != "" && (*readerURL.url != "" || *probePath != "") {
		return usagef("--eval evaluates a reader this stage trains; with --reader or --probe, --in TRAJ is the evaluation set")
	}
	if err := checkOutput(*sf.out, outStage, true, input{"--eval", *evalPath}); err != nil {
		return err
	}
	var layout screen.CellLayout
	if *textReader {
		var err error
		if layout, err = parseScreen(*screenSize); err != nil {
			return err
		}
	} else if flagSet(fs, "screen") {
		return usagef("--screen is the text reader's: give it with --text")
	}
	b, _, err := loadBundle(*sf.bundle)
	if err != nil {
		return err
	}
	if *textReader {
		if err := cellsQuantizer(b.OPQ, *sf.bundle); err != nil {
			return err
		}
	}
	warnUntrained(stderr, "fit", *sf.bundle, b)
	data, err := loadCalib(b, *sf.in)
	if err != nil {
		return err
	}
	// The held-out set is read before training, so that a bad --eval
	// never throws a finished training away.
	var evalData *calibData
	if *evalPath != "" {
		if evalData, err = loadCalib(b, *evalPath); err != nil {
			return err
		}
	}
	if *readerURL.url != "" {
		// An external reader: evaluated on TRAJ; the bundle is written as
		// it is (the later stages take --reader too, and the risk stage
		// records it in the policy).
		rd, name, err := scorerOf(b, readerURL)
		if err != nil {
			return err
		}
		ev, err := reader.Evaluate(rd, data.states, data.qs)
		if err != nil {
			return err
		}
		if err := b.Save(*sf.out); err != nil {
			return err
		}
		text := sf.text(stdout)
		fmt.Fprintf(text, "reader: %s (external)\n", *readerURL.url)
		printEvaluation(text, fmt.Sprintf("%s (%d questions)", *sf.in, len(data.qs)), ev)
		return sf.finish(stdout, b, map[string]any{"stage": "reader", "reader": name, "questions": len(data.qs), "evaluation": evaluationJSON(ev)})
	}
	if *probePath != "" {
		probe, err := loadReaderFile(*probePath)
		if err != nil {
			return err
		}
		b.Reader = probe
		if err := b.Check(); err != nil {
			return err
		}
		ev, err := reader.Evaluate(probe, data.states, data.qs)
		if err != nil {
			return err
		}
		if err := b.Save(*sf.out); err != nil {
			return err
		}
		text := sf.text(stdout)
		fmt.Fprintf(text, "reader: %s (%d parameters) from %s\n", probe.Name(), probe.NumParams(), *probePath)
		printEvaluation(text, fmt.Sprintf("%s (%d questions)", *sf.in, len(data.qs)), ev)
		return sf.finish(stdout, b, map[string]any{"stage": "reader", "reader": probe.Name(), "params": probe.NumParams(),
			"probe": *probePath, "questions": len(data.qs), "evaluation": evaluationJSON(ev)})
	}
	progress := func(p reader.TrainProgress) {
		if !*sf.quiet {
			fmt.Fprintf(stderr, "fit reader: epoch %d/%d: train %.3f bits, validation %.3f bits, accuracy %.1f%% (%.1f s)\n",
				p.Epoch, p.Epochs, p.TrainBits, p.ValBits, 100*p.ValAccuracy, p.Elapsed.Seconds())
		}
	}
	var rd reader.Builtin
	var rep reader.Report
	var what string           // how the summary names the reader
	extra := map[string]any{} // the text reader's own summary keys
	if *textReader {
		cfg := reader.DefaultTextConfig()
		cfg.Layout, cfg.Seed = layout, *seed
		if flagSet(fs, "epochs") {
			cfg.Epochs = *epochs
		}
		tr, r, err := reader.TrainText(data.states, data.qs, cfg, progress)
		if err != nil {
			return err
		}
		rd, rep = tr, r
		what = fmt.Sprintf("text reader %s for %dx%d screens (%d weights)", tr.Name(), layout.Width, layout.Height, rep.Params)
		extra["kind"], extra["screen"] = "text", fmt.Sprintf("%dx%d", layout.Width, layout.Height)
	} else {
		cfg := d
		cfg.Epochs, cfg.Seed = *epochs, *seed
		cfg.Slots, cfg.Dim = b.OPQ.Shape().Slots, b.OPQ.Shape().Dim
		probe, r, err := reader.TrainProbe(data.states, data.qs, cfg, progress)
		if err != nil {
			return err
		}
		rd, rep = probe, r
		what = fmt.Sprintf("%d parameters", rep.Params)
	}
	b.Reader = rd
	held, err := heldOutEval(rd, *evalPath, evalData)
	if err != nil {
		return err
	}
	if err := b.Save(*sf.out); err != nil {
		return err
	}
	text := sf.text(stdout)
	fmt.Fprintf(text, "reader: %s, trained on %d questions (%d episodes) in %.1f s, best epoch %d of %d\n",
		what, rep.TrainQuestions, rep.TrainEpisodes, rep.Duration.Seconds(), rep.BestEpoch, rep.Epochs)
	printEvaluation(text, fmt.Sprintf("validation (%d questions, %d episodes)", rep.ValQuestions, rep.ValEpisodes), rep.Val)
	sum := map[string]any{"stage": "reader", "reader": rd.Name(), "params": rep.Params,
		"train_questions": rep.TrainQuestions, "train_episodes": rep.TrainEpisodes, "seconds": rep.Duration.Seconds(),
		"best_epoch": rep.BestEpoch, "epochs": rep.Epochs, "validation_questions": rep.ValQuestions,
		"validation_episodes": rep.ValEpisodes, "validation": evaluationJSON(rep.Val)}
	maps.Copy(sum, extra)
	held.print(text, sum)
	return sf.finish(stdout, b, sum)
}

func printEvaluation(w io.Writer, title string, ev reader.Evaluation) {
	// A reader that names no choice (an external one) has no accuracy.
	acc := func(a float64) string {
		if math.IsNaN(a) {
			return "  n/a"
		}
		return fmt.Sprintf("%5.1f%%", 100*a)
	}
	fmt.Fprintf(w, "%s: accuracy %s (chance %.1f%%), %.3f bits per answer (chance %.3f)\n",
		title, strings.TrimSpace(acc(ev.All.Accuracy)), 100*ev.All.ChanceAccuracy, ev.All.MeanBits, ev.All.ChanceBits)
	for _, k := range ev.Kinds {
		fmt.Fprintf(w, "  %-10s %4d questions: accuracy %s (chance %5.1f%%), %.3f bits (chance %.3f)\n",
			k.Kind, k.N, acc(k.Accuracy), 100*k.ChanceAccuracy, k.MeanBits, k.ChanceBits)
	}
}

func runFitRisk(args []string, stdout, stderr io.Writer) error {
	fs, sf := newStage("risk", "Measures the error lookup g(H) (entropy bins of 0.25 bit, under the\n"+
		"full-history reference policy) and the task impact V_j (by default from\n"+
		"closed-loop omission of each slot, read by the bundle's reader; --impact mean\n"+
		"for the paper's single-coordinate counterfactuals) on calibration trajectories,\n"+
		"and stores them in the bundle's risk policy with lambda 0 (lossless until the\n"+
		"lambda stage). --prior says which distribution the rule will read: the mixing\n"+
		"prior's (mix, what 'encode' writes by default) or the world model's table (wm).", stdout)
	priorFlag := fs.String("prior", "mix", "the distribution g(H) is measured on: mix (the mixing prior's, for 'encode --prior mix') or wm (the world model's table, for 'encode --prior wm')")
	minCount := fs.Uint64("min-count", 200, "predictions a bin needs to use its own error rate")
	prior := fs.Float64("impact-prior", 1, "pseudo-errors at the mean impact added to every coordinate's V_j (0: the plain mean over errors)")
	signMode := fs.String("impact", "loop", "V_j from closed-loop slot omission (loop): each slot's coordinates omitted at every step of the\nfirst --loop-episodes episodes, the mean |change| in answer bits spread over the slot's expected wrong modes;\nor from single-coordinate counterfactuals: their mean change (mean, the paper's) or mean magnitude (abs)")
	loopEps := fs.Int("loop-episodes", 0, "episodes of --in for --impact loop (0: all)")
	floor := fs.Float64("impact-floor", 0, "raise every V_j to at least this fraction of the mean V_j: a fact that never changed in the\ncalibration episodes leaves its coordinates at V_j = 0, which the rule then never keeps, however\ncheap (0: off)")
	check := fs.String("check", "", "held-out trajectories: compare the damage of the lowest-V_j coordinates with random sets of the same size")
	batch := fs.Int("batch", 8, "episodes per predictor batch")
	readerURL := readerFlag(fs)
	if err := sf.check(fs, args); err != nil {
		return err
	}
	if *prior < 0 {
		return usagef("--impact-prior %g must not be negative", *prior)
	}
	if !(*floor >= 0 && *floor <= 1) {
		return usagef("--impact-floor %g: want a fraction of the mean V_j in [0, 1]", *floor)
	}
	if *signMode != "loop" && *signMode != "mean" && *signMode != "abs" {
		return usagef("--impact %q: want loop, mean or abs", *signMode)
	}
	if *loopEps < 0 {
		return usagef("--loop-episodes %d must not be negative", *loopEps)
	}
	if *priorFlag != model.PriorMix && *priorFlag != model.PriorWM {
		return usagef("--prior %q: want mix or wm", *priorFlag)
	}
	b, p, err := loadBundle(*sf.bundle)
	if err != nil {
		return err
	}
	warnUntrained(stderr, "fit", *sf.bundle, b)
	sc, scName, err := scorerOf(b, readerURL)
	if err != nil {
		return fmt.Errorf("%s: %w", *sf.bundle, err)
	}
	data, err := loadCalib(b, *sf.in)
	if err != nil {
		return err
	}
	nb, err := mixNeighbours(b, *priorFlag == model.PriorMix)
	if err != nil {
		return err
	}
	start := time.Now()
	cal, items, err := collectItems(p, nb, data, *batch)
	if err != nil {
		return err
	}
	var v, damage []float64
	var what string
	text := sf.text(stdout)
	switch *signMode {
	case "loop":
		if v, damage, err = loopImpacts(b, sc, p, nb, cal, data, *loopEps, *batch, *sf.quiet, text, stderr); err != nil {
			return err
		}
		what = fmt.Sprintf("%d questions, %d closed-loop slot omissions", len(data.qs), len(v)/b.OPQ.Subspaces())
	case "mean", "abs":
		last := time.Now()
		im, err := risk.Impact(b.OPQ, sc, items, func(done, total int) {
			if !*sf.quiet && (done == total || time.Since(last) > 5*time.Second) {
				last = time.Now()
				fmt.Fprintf(stderr, "fit risk: counterfactuals of %d/%d questions (%.1f s)\n", done, total, time.Since(start).Seconds())
			}
		})
		if err != nil {
			return err
		}
		if *signMode == "abs" {
			im = im.Abs()
		}
		v = im.Shrunk(*prior)
		what = fmt.Sprintf("%d questions with %d counterfactual states", len(items), sum(im.NErr))
	}
	raised, level := risk.Floor(v, *floor)
	b.Policy = risk.Policy(cal, *minCount, v)
	b.Policy.Prior = *priorFlag
	b.Policy.Reader = scName
	if err := b.Save(*sf.out); err != nil {
		return err
	}
	sum := map[string]any{"stage": "risk", "episodes": len(data.eps), "questions": len(data.qs), "impact_mode": *signMode,
		"seconds": time.Since(start).Seconds(), "prior": *priorFlag, "reference_error_rate": cal.ErrorRate()}
	for k, x := range policyJSON(b.Policy, cal) {
		sum[k] = x
	}
	if damage != nil {
		sum["slot_damage"] = damage
	}
	if *floor > 0 {
		sum["impact_floor"], sum["impacts_raised"] = *floor, raised
	}
	fmt.Fprintf(text, "risk: %d episodes, %s, in %.1f s; on the %s; reference error rate %.4f\n",
		len(data.eps), what, time.Since(start).Seconds(), priorDistribution(*priorFlag), cal.ErrorRate())
	if *floor > 0 {
		fmt.Fprintf(text, "impact floor: %d of %d V_j raised to %.4g bits (%g of the mean V_j)\n", raised, len(v), level, *floor)
	}
	printRiskPolicy(text, b.Policy, cal)
	if *check != "" {
		rows, err := checkImpact(text, b, sc, p, nb, *check, v, *batch)
		if err != nil {
			return err
		}
		sum["check"] = map[string]any{"in": *check, "rows": rows}
	}
	return sf.finish(stdout, b, sum)
}

// mixNeighbours is the bundle's neighbour order when mix is set (the mixing
// prior needs it), else nil.
func mixNeighbours(b *model.Bundle, mix bool) (*codec.Neighbours, error) {
	if !mix {
		return nil, nil
	}
	return codec.NeighboursOf(b.OPQ)
}

// priorDistribution names the distribution a retention rule reads under
// prior (model.PriorMix or model.PriorWM).
func priorDistribution(prior string) string {
	if prior == model.PriorMix {
		return "mixing prior's distribution"
	}
	return "world model's tables"
}

// collectItems runs the reference pass over data's episodes (risk.Collect,
// or risk.CollectMix on the mixing prior when nb is set, keeping the modes
// at the steps questions ask about) and returns, for every question after
// step 0 (the initial state is stored in full), its true codes and the
// reference modes: the counterfactual items.
func collectItems(p worldmodel.Predictor, nb *codec.Neighbours, data *calibData, batch int) (*risk.Calibration, []risk.Item, error) {
	keep := map[risk.StepKey]bool{}
	for _, q := range data.qs {
		keep[risk.StepKey{Episode: q.Episode, Step: q.Step}] = true
	}
	var cal *risk.Calibration
	var err error
	if nb != nil {
		cal, err = risk.CollectMix(p, nb, data.eps, risk.DefaultBinQ16, keep, batch)
	} else {
		cal, err = risk.Collect(p, data.eps, risk.DefaultBinQ16, keep, batch)
	}
	if err != nil {
		return nil, nil, err
	}
	byID := map[int64]*trajectory.Episode{}
	for _, ep := range data.eps {
		byID[ep.ID] = ep
	}
	var items []risk.Item
	for _, q := range data.qs {
		if q.Step > 0 {
			k := risk.StepKey{Episode: q.Episode, Step: q.Step}
			items = append(items, risk.Item{Codes: byID[q.Episode].Codes[q.Step], Modes: cal.Modes[k], Q: q})
		}
	}
	return cal, items, nil
}

// loopImpacts measures each slot's closed-loop damage on the first n
// calibration episodes (every coordinate of the slot omitted at every step)
// and spreads it over the slot's coordinates by their error rates
// (risk.GroupImpacts).
func loopImpacts(b *model.Bundle, sc reader.Reader, p worldmodel.Predictor, nb *codec.Neighbours, cal *risk.Calibration, data *calibData, n, batch int, quiet bool, stdout, stderr io.Writer) (impact, damage []float64, err error) {
	eps := data.eps
	if n > 0 && n < len(eps) {
		eps = eps[:n]
	}
	groups, err := risk.SlotGroups(len(cal.CoordN), b.OPQ.Subspaces())
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	setup := &calib.Setup{P: p, Q: b.OPQ, Scorer: sc, Episodes: eps, Questions: data.qs, Batch: batch, Mix: nb,
		Progress: func(pt calib.Point) {
			if !quiet {
				fmt.Fprintf(stderr, "fit risk: slot %2.0f omitted in closed loop: |change| %.4f bits, D %+.4f bits, rate %.1f bits/obs (%.1f s)\n",
					pt.Param, pt.AbsChange, pt.Distortion, pt.Rate, time.Since(start).Seconds())
			}
		}}
	pts, err := setup.GroupDamage(groups)
	if err != nil {
		return nil, nil, err
	}
	damage = make([]float64, len(pts))
	for g, pt := range pts {
		damage[g] = pt.AbsChange
	}
	errRate := make([]float64, len(cal.CoordN))
	for j, c := range cal.CoordN {
		if c > 0 {
			errRate[j] = float64(cal.CoordErr[j]) / float64(c)
		}
	}
	fmt.Fprintf(stdout, "closed-loop slot damage (mean |change| in answer bits, %d episodes, %.1f s):", len(eps), time.Since(start).Seconds())
	for g, d := range damage {
		if g%8 == 0 {
			fmt.Fprintf(stdout, "\n ")
		}
		fmt.Fprintf(stdout, " %2d:%.4f", g, d)
	}
	fmt.Fprintln(stdout)
	impact, err = risk.GroupImpacts(damage, groups, errRate)
	return impact, damage, err
}

// checkImpact compares, on held-out trajectories, the damage of omitting at
// once the coordinates with the lowest V_j (5%, 10%, 20%) with that of random
// sets of the same size (the mean of 5 seeded draws).
func checkImpact(w io.Writer, b *model.Bundle, sc reader.Reader, p worldmodel.Predictor, nb *codec.Neighbours, path string, v []float64, batch int) ([]map[string]any, error) {
	data, err := loadCalib(b, path)
	if err != nil {
		return nil, err
	}
	_, items, err := collectItems(p, nb, data, batch)
	if err != nil {
		return nil, err
	}
	order := make([]int, len(v))
	for j := range order {
		order[j] = j
	}
	sort.SliceStable(order, func(a, c int) bool { return v[order[a]] < v[order[c]] })
	var rows []map[string]any
	rng := rand.New(rand.NewPCG(1, 1))
	fmt.Fprintf(w, "held-out check on %s (%d questions): damage of omitting the lowest-V_j coordinates vs random sets\n", path, len(items))
	for _, frac := range []float64{0.05, 0.10, 0.20} {
		k := int(frac * float64(len(v)))
		low, err := risk.SetDamage(b.OPQ, sc, items, order[:k])
		if err != nil {
			return nil, err
		}
		var rnd float64
		for r := 0; r < 5; r++ {
			d, err := risk.SetDamage(b.OPQ, sc, items, rng.Perm(len(v))[:k])
			if err != nil {
				return nil, err
			}
			rnd += d / 5
		}
		ratio := "the bottom set does no damage"
		if low > 0 {
			ratio = fmt.Sprintf("random/bottom %.2f", rnd/low)
		}
		rows = append(rows, map[string]any{"fraction": frac, "coordinates": k, "bottom_bits": low, "random_bits": rnd})
		fmt.Fprintf(w, "  bottom %2.0f%% (%4d coordinates): %+.5f bits; random sets: %+.5f bits; %s\n", 100*frac, k, low, rnd, ratio)
	}
	return rows, nil
}

func sum(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}

// printRiskPolicy prints the error lookup and the V_j distribution.
func printRiskPolicy(w io.Writer, p model.Policy, cal *risk.Calibration) {
	fmt.Fprintf(w, "calibrated on the %s\n", priorDistribution(p.Prior))
	fmt.Fprintf(w, "error lookup g(H), bins of %.2f bit:\n", float64(p.BinQ16)/65536)
	for b, r := range p.BinRate {
		lo := float64(uint32(b)*p.BinQ16) / 65536
		n := ""
		if cal != nil {
			n = fmt.Sprintf(" (%d predictions)", cal.BinN[b])
		}
		if r < 0 {
			if cal != nil && cal.BinN[b] > 0 {
				fmt.Fprintf(w, "  H in [%.2f, %.2f): too few, marginal fallback%s\n", lo, lo+float64(p.BinQ16)/65536, n)
			}
			continue
		}
		fmt.Fprintf(w, "  H in [%.2f, %.2f): error rate %.4f%s\n", lo, lo+float64(p.BinQ16)/65536, float64(r)/65536, n)
	}
	empty := 0
	for _, r := range p.BinRate {
		if r < 0 {
			empty++
		}
	}
	fmt.Fprintf(w, "  (%d of %d bins fall back to each coordinate's marginal error rate)\n", empty, len(p.BinRate))
	v := make([]float64, len(p.Impact))
	zero := 0
	for j, x := range p.Impact {
		v[j] = float64(x) / (1 << 32)
		if x == 0 {
			zero++
		}
	}
	sort.Float64s(v)
	q := func(f float64) float64 { return v[min(len(v)-1, int(f*float64(len(v))))] }
	fmt.Fprintf(w, "task impact V_j (bits): min %.4g, 25%% %.4g, median %.4g, 75%% %.4g, max %.4g; %d of %d are 0\n",
		v[0], q(0.25), q(0.5), q(0.75), v[len(v)-1], zero, len(v))
	fmt.Fprintf(w, "lambda %.6g\n", float64(p.LambdaQ32)/(1<<32))
}

// policyJSON is what printRiskPolicy prints, for --json: the error lookup
// (one entry per bin; error_rate null where the bin falls back to the
// marginal rates), V_j's quantiles and lambda.
func policyJSON(p model.Policy, cal *risk.Calibration) map[string]any {
	bins := []map[string]any{}
	for b, r := range p.BinRate {
		lo := float64(uint32(b)*p.BinQ16) / 65536
		e := map[string]any{"entropy_lo": lo, "entropy_hi": lo + float64(p.BinQ16)/65536, "error_rate": nil}
		if r >= 0 {
			e["error_rate"] = float64(r) / 65536
		}
		if cal != nil {
			e["predictions"] = cal.BinN[b]
		}
		bins = append(bins, e)
	}
	v := make([]float64, len(p.Impact))
	zero := 0
	for j, x := range p.Impact {
		v[j] = float64(x) / (1 << 32)
		if x == 0 {
			zero++
		}
	}
	sort.Float64s(v)
	imp := map[string]any{"coordinates": len(v), "zero": zero}
	if len(v) > 0 {
		q := func(f float64) float64 { return v[min(len(v)-1, int(f*float64(len(v))))] }
		imp["min"], imp["q25"], imp["median"], imp["q75"], imp["max"] = v[0], q(0.25), q(0.5), q(0.75), v[len(v)-1]
	}
	return map[string]any{"bins": bins, "impact": imp, "lambda": float64(p.LambdaQ32) / (1 << 32)}
}

func runFitLambda(args []string, stdout, stderr io.Writer) error {
	fs, sf := newStage("lambda", "Chooses lambda by full closed-loop reconstruction of calibration trajectories:\n"+
		"the smallest rate whose distortion |D| (mean extra answer bits of the bundle's\n"+
		"reader) is at most --epsilon. --baselines also tunes the gating baselines\n"+
		"(static-e, uniform-v, uncertainty, random) to the same distortion.", stdout)
	epsilon := fs.Float64("epsilon", 0.05, "largest |D| allowed, in bits per answer")
	batch := fs.Int("batch", 8, "episodes per predictor batch")
	baselines := fs.Bool("baselines", false, "also tune the gating baselines at the same epsilon and print the table")
	refine := fs.Int("refine", 6, "bisections of the parameter where the distortion crosses epsilon")
	readerURL := readerFlag(fs)
	if err := sf.check(fs, args); err != nil {
		return err
	}
	if !(*epsilon >= 0) {
		return usagef("--epsilon %g must be at least 0", *epsilon)
	}
	b, p, err := loadBundle(*sf.bundle)
	if err != nil {
		return err
	}
	warnUntrained(stderr, "fit", *sf.bundle, b)
	if b.Policy.Kind != model.Risk {
		return fmt.Errorf("%s needs a risk policy: run the reader and risk stages first", *sf.bundle)
	}
	if b.Policy.Reader != "" && *readerURL.url == "" {
		return usagef("%s's impacts were measured with %s: lambda must be calibrated with the same reader (--reader URL)", *sf.bundle, b.Policy.Reader)
	}
	sc, scName, err := scorerOf(b, readerURL)
	if err != nil {
		return fmt.Errorf("%s: %w", *sf.bundle, err)
	}
	if scName != b.Policy.Reader {
		was := "the bundle's probe"
		if b.Policy.Reader != "" {
			was = b.Policy.Reader
		}
		return usagef("%s's impacts were measured with %s: lambda must be calibrated with the same reader (--reader)", *sf.bundle, was)
	}
	data, err := loadCalib(b, *sf.in)
	if err != nil {
		return err
	}
	nb, err := mixNeighbours(b, b.Policy.CalibratedOnMix())
	if err != nil {
		return err
	}
	if len(data.qs) < minCalibQuestions {
		fmt.Fprintf(stderr, "fit lambda: warning: %d questions; one flipped answer moves D by several bits / %d, so lambda may not hold on other data (measured: D +0.047 here, +0.25 held out with 355); use more episodes or 'sim --questions N'\n",
			len(data.qs), len(data.qs))
	}
	start := time.Now()
	setup := &calib.Setup{P: p, Q: b.OPQ, Scorer: sc, Episodes: data.eps, Questions: data.qs, Batch: *batch, Mix: nb,
		Progress: func(pt calib.Point) {
			if !*sf.quiet {
				fmt.Fprintf(stderr, "fit lambda: %-11s %-10.4g rate %8.1f bits/obs, D %+.4f bits, kept %5.1f%% (%.1f s)\n",
					pt.Family, pt.Param, pt.Rate, pt.Distortion, 100*pt.Kept, time.Since(start).Seconds())
			}
		}}
	// The error rate for static-e: the bins' pooled rate.
	errRate := pooledRate(b.Policy)
	families := []string{"memowm"}
	if *baselines {
		families = calib.Families
	}
	type result struct {
		family string
		best   calib.Point
		ok     bool
	}
	var results []result
	var chosen calib.Point
	for _, fam := range families {
		pts, err := setup.Sweep(fam, b.Policy, errRate, 1, *epsilon, *refine)
		if err != nil {
			return err
		}
		best, ok := calib.Select(pts, *epsilon)
		results = append(results, result{fam, best, ok})
		if fam == "memowm" {
			if !ok {
				return fmt.Errorf("no lambda reaches |D| <= %g (lambda 0 is lossless; is the reader deterministic?)", *epsilon)
			}
			chosen = best
		}
	}
	b.Policy = b.Policy.WithLambda(calib.Q32(chosen.Param))
	// The baselines at the same epsilon go in the bundle for bench (a
	// calibration without --baselines drops earlier ones: they belonged to
	// other tables).
	b.Baselines = nil
	for _, r := range results {
		if r.family == "memowm" || !r.ok {
			continue
		}
		bl := model.Baseline{Family: r.family, Param: r.best.Param}
		if r.family == "static-e" {
			bl.ErrorRate = errRate
		}
		b.Baselines = append(b.Baselines, bl)
	}
	if err := b.Save(*sf.out); err != nil {
		return err
	}
	point := func(pt calib.Point) map[string]any {
		return map[string]any{"param": pt.Param, "rate_bits_per_obs": pt.Rate, "distortion_bits": pt.Distortion, "kept": pt.Kept}
	}
	sum := map[string]any{"stage": "lambda", "lambda": chosen.Param, "rate_bits_per_obs": chosen.Rate, "distortion_bits": chosen.Distortion,
		"kept": chosen.Kept, "epsilon": *epsilon, "episodes": len(data.eps), "questions": len(data.qs), "prior": b.Policy.Prior,
		"seconds": time.Since(start).Seconds()}
	if sum["prior"] == "" {
		sum["prior"] = model.PriorWM
	}
	if *baselines {
		rows := []map[string]any{}
		for _, r := range results {
			row := map[string]any{"gating": r.family, "within_epsilon": r.ok}
			if r.ok {
				for k, x := range point(r.best) {
					row[k] = x
				}
			}
			rows = append(rows, row)
		}
		sum["baselines"] = rows
	}
	stdout, summary := sf.text(stdout), stdout
	fmt.Fprintf(stdout, "lambda %.6g: rate %.1f bits/obs, D %+.4f bits per answer, kept %.1f%% (epsilon %g, %d episodes, %d questions, the %s, %.1f s)\n",
		chosen.Param, chosen.Rate, chosen.Distortion, 100*chosen.Kept, *epsilon, len(data.eps), len(data.qs), priorDistribution(b.Policy.Prior), time.Since(start).Seconds())
	if *baselines {
		fmt.Fprintf(stdout, "\nrate at matched distortion (|D| <= %g):\n%-12s %12s %10s %8s %10s\n", *epsilon, "gating", "bits/obs", "D bits", "kept", "param")
		for _, r := range results {
			if !r.ok {
				fmt.Fprintf(stdout, "%-12s %12s\n", r.family, "none within epsilon")
				continue
			}
			fmt.Fprintf(stdout, "%-12s %12.1f %+10.4f %7.1f%% %10.4g\n", r.family, r.best.Rate, r.best.Distortion, 100*r.best.Kept, r.best.Param)
		}
	}
	return sf.finish(summary, b, sum)
}

// minCalibQuestions is the number of calibration questions below which the
// lambda stage warns that its distortion estimate is noisy.
const minCalibQuestions = 800

// pooledRate is the mean of the coordinates' marginal error rates: the
// reference error rate (every coordinate is predicted equally often).
func pooledRate(p model.Policy) float64 {
	var s float64
	for _, m := range p.Marginal {
		s += float64(m) / 65536
	}
	if len(p.Marginal) == 0 {
		return 0
	}
	return s / float64(len(p.Marginal))
}

// runFitAll is 'fit --stage all': the world model, the reader, the risk
// tables and lambda in a row, each stage's bundle the next one's input.
func runFitAll(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fit --stage all", "--in TRAIN --calib CALIB --out BUNDLE [flags]",
		"Runs every stage: trains the world model on TRAIN (fitting the quantizer\n"+
			"first unless --opq), trains the reader on TRAIN's questions (or --probe),\n"+
			"measures the risk tables and calibrates lambda on CALIB. Intermediate bundles\n"+
			"are kept beside BUNDLE as BUNDLE.wm, .reader and .risk.", stdout)
	in := fs.String("in", "", "training trajectories with states and questions (required)")
	calibPath := fs.String("calib", "", "calibration trajectories with questions (required)")
	out := fs.String("out", "", "bundle to write (required)")
	preset := fs.String("preset", "small", "world-model preset")
	steps := fs.Int("steps", 1000, "world-model optimizer steps")
	device := fs.String("device", "auto", "where the world model's training blocks run: cpu, cuda, auto or emulator (see 'fit --stage wm -h')")
	opqPath := fs.String("opq", "", "quantizer file (default: fit one on TRAIN)")
	probe := fs.String("probe", "", "trained reader probe (default: train one on TRAIN)")
	textReader := fs.Bool("text", false, "train the text reader instead of the probe (states of import --encoder cells;\nsee 'fit --stage reader -h')")
	screenSize := fs.String("screen", "80x24", "with --text: the size of the screens, columns x rows")
	readerURL := readerFlag(fs)
	impact := fs.String("impact", "loop", "the risk stage's V_j: loop (closed-loop slot omission), mean or abs (single-coordinate counterfactuals); see 'fit --stage risk -h'")
	riskCalib := fs.String("risk-calib", "", "measure the risk tables on these trajectories and calibrate lambda on --calib alone\n(default: both on --calib, which lets lambda fit the same questions the impacts came from)")
	epsilon := fs.Float64("epsilon", 0.05, "largest |D| allowed, in bits per answer")
	baselines := fs.Bool("baselines", false, "also tune the gating baselines")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	asJSON := fs.Bool("json", false, "print the stages' summaries as one JSON object (progress stays on stderr)")
	force := fs.Bool("force", false, "replace BUNDLE and its intermediates if they exist (without it an existing one is refused)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *in == "" || *calibPath == "" || *out == "" {
		return usagef("--in TRAIN, --calib CALIB and --out BUNDLE are required")
	}
	q := []string{}
	if *quiet {
		q = []string{"--quiet"}
	}
	if *impact != "loop" && *impact != "mean" && *impact != "abs" {
		return usagef("--impact %q: want loop, mean or abs", *impact)
	}
	riskIn := *calibPath
	if *riskCalib != "" {
		riskIn = *riskCalib
	}
	wm, rd, rk := *out+".wm", *out+".reader", *out+".risk"
	var textArgs []string
	if *textReader {
		if *probe != "" || *readerURL.url != "" {
			return usagef("--text trains the text reader: give it without --reader and --probe")
		}
		if _, err := parseScreen(*screenSize); err != nil {
			return err
		}
		textArgs = []string{"--text", "--screen", *screenSize}
	}
	for _, p := range []string{*out, wm, rd, rk} {
		if err := checkOutput(p, outStage, *force, input{"--in", *in}, input{"--calib", *calibPath}, input{"--risk-calib", *riskCalib}, input{"--opq", *opqPath}, input{"--probe", *probe}); err != nil {
			return err
		}
	}
	// Every output was checked above; each stage checks its own again, and
	// replaces one only with --force, so a file another run makes meanwhile
	// is not replaced either.
	qf := slices.Clip(q)
	if *force {
		qf = append(qf, "--force")
	}
	stages := []struct {
		name string
		run  func([]string, io.Writer, io.Writer) error
		args []string
	}{
		{"wm", runFitWM, append([]string{"--in", *in, "--out", wm, "--preset", *preset, "--steps", fmt.Sprint(*steps), "--opq", *opqPath, "--device", *device}, qf...)},
		{"reader", runFitReader, append(append([]string{"--model", wm, "--in", *in, "--out", rd, "--probe", *probe}, textArgs...), append(readerURL.args(), qf...)...)},
		{"risk", runFitRisk, append([]string{"--model", rd, "--in", riskIn, "--out", rk, "--impact", *impact}, append(readerURL.args(), qf...)...)},
		{"lambda", runFitLambda, append([]string{"--model", rk, "--in", *calibPath, "--out", *out, "--epsilon", fmt.Sprint(*epsilon), fmt.Sprintf("--baselines=%v", *baselines)}, append(readerURL.args(), qf...)...)},
	}
	if !*asJSON {
		for _, s := range stages {
			fmt.Fprintf(stdout, "== stage %s\n", s.name)
			if err := s.run(s.args, stdout, stderr); err != nil {
				return fmt.Errorf("stage %s: %w", s.name, err)
			}
		}
		return nil
	}
	// Under --json each stage prints its own summary as JSON; they are
	// gathered into one object, by stage.
	sums := map[string]any{}
	for _, s := range stages {
		var buf bytes.Buffer
		if err := s.run(append(s.args, "--json"), &buf, stderr); err != nil {
			return fmt.Errorf("stage %s: %w", s.name, err)
		}
		var sum map[string]any
		if err := json.Unmarshal(buf.Bytes(), &sum); err != nil {
			return fmt.Errorf("stage %s: its JSON summary: %w", s.name, err)
		}
		sums[s.name] = sum
	}
	return writeJSON(stdout, map[string]any{"out": *out, "intermediate": []string{wm, rd, rk}, "stages": sums})
}
