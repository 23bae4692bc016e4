package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memowm/memowm/corpus"
	"github.com/memowm/memowm/cuda"
	"github.com/memowm/memowm/entropy"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/worldmodel"
)

// evalSubset is the number of held-out transitions of the evaluations
// during a run.
const evalSubset = 200

// runFitWM is 'memowm fit --stage wm': it trains a world model on a
// trajectory file and writes a bundle with the trained weights.
func runFitWM(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fit --stage wm", "--in TRAIN --out BUNDLE --preset P --steps N [flags]",
		"Trains a world model on the transitions of TRAIN (states, quantized through the\n"+
			"quantizer, or codes) with true-code histories of up to 16 states: next-state code\n"+
			"NLL in bits (copy gate included) plus the slot-validity term, AdamW with warm-up\n"+
			"and cosine decay, dropout. Writes a bundle (quantizer, trained weights, keep-all\n"+
			"policy) that 'memowm encode' uses as is. With --eval it keeps the weights of the\n"+
			"best held-out evaluation (--keep last: the last step's) and says which step.\n"+
			"Checkpoints every --checkpoint-every steps and on Ctrl-C; --resume continues a\n"+
			"run exactly. The same inputs, flags and seed give the same bundle, byte for\n"+
			"byte; the training time and host go to BUNDLE.provenance.json beside it.", stdout)
	d := worldmodel.DefaultTrainConfig(1000)
	in := fs.String("in", "", "training trajectories, states or codes (required)")
	evalPath := fs.String("eval", "", "held-out trajectories for bits/transition (optional)")
	out := fs.String("out", "", "bundle file to write (required); it may be --model's bundle when the run continues it (with --force)")
	force := fs.Bool("force", false, forceHelp)
	preset := fs.String("preset", "small", "world-model preset: "+fmt.Sprint(worldmodel.PresetNames()))
	opqPath := fs.String("opq", "", "quantizer file (else --model's, else fitted on TRAIN's states)")
	bundlePath := fs.String("model", "", "bundle whose quantizer and precision to use; its world model is the starting point unless --preset is given")
	steps := fs.Int("steps", 1000, "optimizer steps")
	batch := fs.Int("batch", d.Batch, "histories per step")
	lr := fs.Float64("lr", 0, "peak learning rate (0: the preset's: tiny 3e-3, small and base 2e-3, medium 1e-3, paper 3e-4)")
	warmup := fs.Int("warmup", 0, "warm-up steps (0: steps/20, at most 1000)")
	wd := fs.Float64("weight-decay", d.WeightDecay, "AdamW decoupled weight decay")
	clip := fs.Float64("clip", d.Clip, "global gradient-norm cap (0: none)")
	dropout := fs.Float64("dropout", -1, "dropout rate in training (-1: the preset's, 0.1)")
	window := fs.Int("window", 0, "states per training history (0: the model's window); below the model's window it is an ablation, since the codec fills the model's window (--history sets that)")
	history := fs.Int("history", 0, "the new model's window, the states of history it sees in training and in the codec (0: the preset's 16); sets up a fresh model: not with --resume, nor with --model unless --preset starts a new one")
	noActions := fs.Bool("no-actions", false, "ablation: train and evaluate without actions")
	noCopy := fs.Bool("no-copy", false, "ablation: close the copy gate")
	priors := fs.Bool("priors", false, "start the output bias at the training codes' log marginals and the copy gate at their copy rate")
	scaledInit := fs.Bool("scaled-init", false, "start each block's residual projections (attention output, MLP second layer) at 1/sqrt(2 x layers) of their initial weights (GPT-2's initialisation)")
	seed := fs.Uint64("seed", 0, "seed of the initial weights, the data order and dropout")
	resume := fs.String("resume", "", "checkpoint to continue from (same TRAIN)")
	keepCkpt := fs.Bool("keep-checkpoint", false, "keep the checkpoint after a finished run (it is removed then; an interrupted run always keeps it)")
	ckpt := fs.String("checkpoint", "", "checkpoint file (default BUNDLE.ckpt)")
	ckptEvery := fs.Int("checkpoint-every", 0, "write the checkpoint every N steps (0: steps/10)")
	evalEvery := fs.Int("eval-every", 0, "evaluate on --eval every M steps (0: steps/10); on all of --eval with --keep best or --patience, else on its first 200 transitions")
	keep := fs.String("keep", "best", "with --eval, the weights the bundle gets: best (the lowest held-out evaluation's, from all of --eval) or last (the last step's)")
	patience := fs.Int("patience", 0, "early stopping: stop when this many evaluations on --eval in a row bring no gain, keeping the best evaluation's weights (0: off)")
	minDelta := fs.Float64("min-delta", 0.001, "with --patience, the relative gain in held-out bits/transition that counts")
	threads := fs.Int("threads", 0, "goroutines (0: all cores); the result does not depend on it (on the CPU)")
	device := fs.String("device", "auto", "where the Transformer blocks of each step run: cpu; cuda (the first GPU; an error\nwithout one); auto (the GPU when one opens, else the CPU, saying once why);\nemulator (the GPU's kernels on the CPU: slow, for checks). The embeddings,\nheads, loss, optimizer and evaluations run on the CPU; a GPU's sums are in\nanother order, so its weights differ from the CPU's in the last bits")
	tf32 := fs.Bool("tf32", true, "on a GPU of compute capability 8.0 or later, the blocks' products in TF32 on\ntensor cores (10-bit mantissas in, f32 sums); --tf32=false keeps them in f32")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch *device {
	case "cpu", "cuda", "auto", "emulator":
	default:
		return usagef("--device %q: want cpu, cuda, auto or emulator", *device)
	}
	if *device == "cuda" { // before any work: the data, the quantizer
		if _, err := cuda.Probe(); err != nil {
			return fmt.Errorf("--device cuda: %w", err)
		}
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *in == "" || *out == "" {
		return usagef("--in TRAIN and --out BUNDLE are required")
	}
	if *opqPath != "" && *bundlePath != "" {
		return usagef("give --opq or --model, not both")
	}
	if *patience < 0 || (*patience > 0 && *evalPath == "") {
		return usagef("--patience %d needs --eval HELD (and must not be negative)", *patience)
	}
	switch {
	case *keep != "best" && *keep != "last":
		return usagef("--keep %q: want best or last", *keep)
	case flagSet(fs, "keep") && *evalPath == "":
		return usagef("--keep %s chooses among the weights evaluated on --eval HELD: give --eval", *keep)
	case *keep == "last" && *patience > 0:
		return usagef("--patience keeps the best evaluation's weights: not with --keep last")
	}
	keepBest := *evalPath != "" && *keep == "best"
	if !(*minDelta >= 0 && *minDelta < 1) {
		return usagef("--min-delta %g: want a relative gain in [0, 1)", *minDelta)
	}
	if !(*lr >= 0 && *lr < 1) {
		return usagef("--lr %g: want a learning rate in (0, 1), or 0 for the preset's", *lr)
	}
	presetSet := false
	fs.Visit(func(f *flag.Flag) { presetSet = presetSet || f.Name == "preset" })
	// notFresh: the run's model comes from a checkpoint or a bundle, not
	// from a preset's fresh weights.
	notFresh := *resume != "" || *bundlePath != "" && !presetSet
	if *history != 0 && notFresh {
		return usagef("--history sets up a fresh model: not with --resume, nor with --model unless --preset starts a new one")
	}
	if *history < 0 {
		return usagef("--history %d: want a number of states >= 1, or 0 for the preset's", *history)
	}
	if *scaledInit && notFresh {
		return usagef("--scaled-init sets up a fresh model's weights: not with --resume, nor with --model unless --preset starts a new one")
	}
	// Nothing the run reads is replaced by what it writes. A run that
	// continues --model's world model may write the continued bundle over
	// it (as sweep does: the bundle is read whole before training).
	inputs := []input{{"--in", *in}, {"--eval", *evalPath}, {"--opq", *opqPath}, {"--resume", *resume}}
	continues := *bundlePath != "" && !presetSet
	if !continues {
		inputs = append(inputs, input{"--model", *bundlePath})
	}
	if err := checkOutput(*out, outStage, *force, inputs...); err != nil {
		return err
	}
	if *ckpt == "" {
		*ckpt = *out + ".ckpt"
	}
	// The checkpoint may be --resume's: a resumed run writes on where it
	// left off.
	if err := checkCheckpoint(*ckpt, []input{{"--in", *in}, {"--eval", *evalPath}, {"--opq", *opqPath}, {"--model", *bundlePath}, {"--out", *out}}); err != nil {
		return err
	}
	watchOutputs(stderr, "fit wm", *out, model.ProvenancePath(*out), *ckpt)
	logf := func(format string, args ...any) {
		if !*quiet {
			fmt.Fprintf(stderr, format, args...)
		}
	}

	// The quantizer, the precision and the starting model.
	var q *opq.Quantizer
	prec := uint(worldmodel.DefaultPrecision)
	var start *worldmodel.Model
	priorSteps := 0
	initName := "" // the starting weights' initialisation, for the record
	priorSeconds := 0.0
	switch {
	case *opqPath != "":
		if q, err = opq.Load(*opqPath); err != nil {
			return err
		}
	case *bundlePath != "":
		b, err := model.Load(*bundlePath)
		if err != nil {
			return err
		}
		q, prec = b.OPQ, b.Precision
		if !presetSet {
			start = b.Model
			// The run continues the bundle's training: its record says so.
			priorSteps = b.Training.TotalSteps()
			priorSeconds, _ = b.Training.TotalSeconds()
			if b.Training != nil {
				initName = b.Training.Init
			}
		}
	default:
		states, meta, err := readStates(*in, logf)
		if err != nil {
			return fmt.Errorf("%w (give --opq FILE or --model BUNDLE for a file of codes)", err)
		}
		ocfg := opq.DefaultConfig()
		ocfg.Shape, ocfg.Seed = meta.Shape, *seed
		ocfg.Progress = fitProgress(logf, time.Now())
		if q, err = opq.Fit(states, ocfg); err != nil {
			return err
		}
		printOPQWarnings(stderr, "fit wm", q)
	}
	t0 := time.Now()
	// The training data go to a file next to the bundle and are read a
	// window at a time: memory does not grow with the corpus.
	train, err := readCorpus(*in, q, filepath.Dir(*out), logf)
	if err != nil {
		return err
	}
	defer train.Close()
	// The held-out episodes too are read from a corpus file, never held.
	var held *corpus.File
	if *evalPath != "" {
		if held, err = readCorpus(*evalPath, q, filepath.Dir(*out), logf); err != nil {
			return err
		}
		defer held.Close()
	}
	logf("fit wm: %d training sequences, %d transitions (%s on disk)\n%s", train.Sequences(), train.Transitions(),
		humanBytes(train.Size()), heldNote(held))
	logf("fit wm: read in %.1f s\n", time.Since(t0).Seconds())

	var tr *worldmodel.Trainer
	if *resume != "" {
		ck, err := worldmodel.LoadCheckpoint(*resume)
		if err != nil {
			return err
		}
		stepsSet := false
		fs.Visit(func(f *flag.Flag) { stepsSet = stepsSet || f.Name == "steps" })
		n := 0
		if stepsSet {
			n = *steps
		}
		if tr, err = ck.ResumeOn(train, n, *threads); err != nil {
			return err
		}
		logf("fit wm: resumed %s at step %d of %d\n", *resume, ck.Step, tr.Config().Steps)
		if _, best, ev := tr.EarlyStop(); best >= 0 {
			logf("fit wm: so far: best held-out %.1f bits/transition at step %d\n", ev.BitsPerTransition, best)
		}
	} else {
		if start == nil {
			cfg, err := worldmodel.Preset(*preset)
			if err != nil {
				return usagef("%v", err)
			}
			cfg.Slots, cfg.Subspaces, cfg.Codewords = q.Shape().Slots, q.Subspaces(), q.Codewords()
			if *dropout >= 0 {
				cfg.Dropout = *dropout
			}
			if *history > 0 {
				cfg.MaxHistory = *history
			}
			if start, err = worldmodel.New(cfg, *seed); err != nil {
				return err
			}
			if *scaledInit {
				logf("fit wm: residual projections initialised at %.3f of the fan-in scale\n", worldmodel.ScaleResidualInit(start))
				initName = worldmodel.InitScaledResidual
			}
			if *priors {
				rate, err := worldmodel.InitOutputPriorsOn(start, train)
				if err != nil {
					return err
				}
				logf("fit wm: output bias from the training codes' marginals, copy-gate bias from their copy rate %.3f\n", rate)
			}
		}
		tc := worldmodel.TrainConfig{Steps: *steps, Batch: *batch, LR: *lr, Warmup: *warmup, Clip: *clip,
			Window: *window, NoActions: *noActions, NoCopy: *noCopy, Seed: *seed, Threads: *threads, PriorSteps: priorSteps, PriorSeconds: priorSeconds, Init: initName}
		tc.WeightDecay = *wd
		if *wd == 0 {
			tc.WeightDecay = -1
		}
		if *clip == 0 {
			tc.Clip = -1
		}
		if tr, err = worldmodel.NewTrainerOn(start, train, tc); err != nil {
			return err
		}
	}
	m := tr.Model()
	cfg := m.Config()
	tc := tr.Config()
	engine, onDevice, release, err := blockEngineOn(*device, *tf32, cfg, "fit wm", stderr)
	if err != nil {
		return err
	}
	defer release()
	if engine != nil {
		tr.SetBlockEngine(engine)
	}
	logf("fit wm: the blocks run on %s\n", onDevice)
	if cfg.Slots != q.Shape().Slots || cfg.Subspaces != q.Subspaces() || cfg.Codewords != q.Codewords() {
		return fmt.Errorf("the world model's interface (%d slots x %d subspaces, %d codewords) is not the quantizer's (%v, %d codewords)",
			cfg.Slots, cfg.Subspaces, cfg.Codewords, q.Shape(), q.Codewords())
	}
	logf("fit wm: %s, %d parameters, window %d, seed %d\n", cfg.Preset, cfg.NumParams(), tc.Window, tc.Seed)
	logf("fit wm: %d steps of batch %d, lr %.3g (warm-up %d, cosine to %.3g)\n", tc.Steps, tc.Batch, tc.LR, tc.Warmup, tc.MinLR)
	logf("fit wm: weight decay %g, gradient clip %g, dropout %g\n", tc.WeightDecay, tc.Clip, cfg.Dropout)
	if tc.PriorSteps > 0 {
		logf("fit wm: the starting weights had %d steps of earlier training;\n"+
			"        the bundle will record %d more\n", tc.PriorSteps, tc.Steps)
	}
	if tc.Window < cfg.MaxHistory {
		logf("fit wm: note: training on %d-state histories, but the model's window is %d states,\n"+
			"        which the codec fills: an ablation (--history %d gives a model whose window is %d)\n",
			tc.Window, cfg.MaxHistory, tc.Window, tc.Window)
	}

	if *ckptEvery == 0 {
		*ckptEvery = max(1, tc.Steps/10)
	}
	if *evalEvery == 0 {
		*evalEvery = max(1, tc.Steps/10)
	}
	// The first interrupt stops training (the checkpoint and the bundle
	// so far are saved below); a second one ends the process and removes
	// any temporary file in flight.
	ctx, stop := interruptContext()
	defer stop()
	var lastEval *worldmodel.EvalStats
	var last worldmodel.Progress
	lastPrint := time.Time{}
	var smooth float64
	// Evaluations during the run use the first held-out sequences, up to
	// evalSubset transitions, unless they choose the weights kept (--keep
	// best, --patience): those decide on all of them. The final figure
	// uses all.
	var sub worldmodel.Corpus
	if held != nil {
		sub = held
		for n, i := 0, 0; i < held.Sequences() && *patience == 0 && !keepBest; i++ {
			if n += held.States(i) - 1; n >= evalSubset {
				sub = worldmodel.First(held, i+1)
				break
			}
		}
		logf("%s\n", evalScope(*evalEvery, sub, held, keepBest || *patience > 0))
	}
	// evals are this process's evaluations (not a resumed run's earlier
	// ones): the last, and the lowest, for the summary.
	var evals evalLog
	runErr := tr.Run(ctx, worldmodel.RunConfig{
		Eval: sub, EvalEvery: *evalEvery, Checkpoint: *ckpt, CheckpointEvery: *ckptEvery, Patience: *patience, MinDelta: *minDelta,
		KeepBest: keepBest,
		Progress: func(p worldmodel.Progress) {
			if p.Start {
				logf("fit wm: the starting weights: held-out %.1f bits/transition;\n"+
					"        the run keeps them unless an evaluation beats them\n", p.Eval.BitsPerTransition)
				return
			}
			last = p
			if smooth == 0 {
				smooth = p.Bits
			}
			smooth = 0.9*smooth + 0.1*p.Bits
			if p.Eval != nil {
				lastEval = p.Eval
				evals.add(p.Step, *p.Eval)
				logf("%s\n", evalLine(p))
			}
			if p.Checkpoint != "" && p.Step < p.Steps && !p.Stopped {
				logf("fit wm: step %d: wrote the checkpoint %s\n", p.Step, p.Checkpoint)
			}
			if p.Stopped {
				logf("fit wm: stopped early at step %d: %d evaluations without a gain of %g;\n"+
					"        keeping the weights of step %d\n", p.Step, *patience, *minDelta, p.BestStep)
			}
			if time.Since(lastPrint) < 2*time.Second && p.Eval == nil && p.Step != p.Steps {
				return
			}
			lastPrint = time.Now()
			logf("%s\n", progressLines(p, smooth))
		},
	})
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return runErr
	}
	stop()
	// The bundle records how far training went, so that an interrupted
	// run's weights are never taken for a trained model. The time and
	// host are provenance, not identity: Save puts them beside the bundle
	// (model.ProvenancePath), so the same run gives the same bundle.
	host, _ := os.Hostname()
	training := &model.Training{Steps: tr.StepsDone(), TargetSteps: tc.Steps, Interrupted: runErr != nil, PriorSteps: tc.PriorSteps, Init: tc.Init, LR: tc.LR,
		Seconds: max(0.001, math.Round(tr.Elapsed().Seconds()*1000)/1000), PriorSeconds: tc.PriorSeconds, Host: host}
	stopped, bestStep, bestEval := tr.EarlyStop()
	if runErr == nil && bestStep >= 0 && bestStep < tr.StepsDone() || stopped {
		// The model holds the best evaluation's weights.
		training.Steps, training.StoppedEarly, training.RanSteps = bestStep, true, tr.StepsDone()
		lastEval = &bestEval
	}
	b := &model.Bundle{OPQ: q, Model: m, Profile: worldmodel.ProfileF32, Precision: prec, Policy: model.Policy{Kind: model.KeepAll},
		Training: training}
	if runErr != nil {
		// An interrupted run does not replace a finished model at --out
		// (the bundle it continues, as sweep trains a bundle on, or an
		// earlier one): that is worth more than a snapshot, which the
		// checkpoint holds.
		if old, err := model.Load(*out); err == nil && old.CheckTrained() == nil {
			return &interruptedRun{msg: fmt.Sprintf("interrupted at step %d of %d: checkpoint %s (continue with --resume %s); %s, a finished model (%s), left as it was",
				tr.StepsDone(), tc.Steps, *ckpt, *ckpt, *out, old.Training), err: runErr}
		}
	}
	if err := b.Save(*out); err != nil {
		return err
	}
	st, err := os.Stat(*out)
	if err != nil {
		return err
	}
	if runErr != nil {
		// One message, on stderr: the run did not finish (status 130),
		// and what it leaves is complete.
		return &interruptedRun{msg: fmt.Sprintf("interrupted at step %d of %d: checkpoint %s (continue with --resume %s); bundle %s (%s) holds the weights so far and records them as %s",
			tr.StepsDone(), tc.Steps, *ckpt, *ckpt, *out, humanBytes(st.Size()), b.Training), err: runErr}
	}
	sum := map[string]any{"out": *out, "file_bytes": st.Size(), "bundle_sha256": b.HashString(), "preset": cfg.Preset, "params": cfg.NumParams(),
		"steps": tc.Steps, "batch": tc.Batch, "lr": tc.LR, "transitions": tr.Examples(), "precision": b.Precision, "training": b.Training,
		"steps_per_s": last.StepsPerSec, "tokens_per_s": last.TokensPerSec, "gflops": last.GFLOPS, "seconds": last.Elapsed.Seconds(),
		"train_loss": last.Loss, "train_bits_per_transition": smooth, "provenance": model.ProvenancePath(*out)}
	var heldLine, keptLine string
	if held != nil && held.Sequences() > 0 {
		if lastEval == nil || lastEval.Transitions < worldmodel.Transitions(held) {
			ev, err := tr.EvaluateOn(held)
			if err != nil {
				return err
			}
			lastEval = &ev
		}
		o1, err := order1Bits(held, cfg.Coords(), cfg.Codewords)
		if err != nil {
			return err
		}
		sum["held_out"] = map[string]any{"bits_per_transition": lastEval.BitsPerTransition, "transitions": lastEval.Transitions,
			"order1_bits_per_transition": o1, "fixed_width_bits": cfg.Coords() * opq.CodeBits(cfg.Codewords)}
		heldLine = fmt.Sprintf("held-out  %.1f bits/transition over %d transitions (teacher-forced ideal); order-1 context model %.1f; fixed width %d\n",
			lastEval.BitsPerTransition, lastEval.Transitions, o1, cfg.Coords()*opq.CodeBits(cfg.Codewords))
		k := keptWeights{keep: *keep, bestStep: bestStep, bestEval: bestEval, evals: evals, steps: tr.StepsDone()}
		if keepBest || *patience > 0 {
			k.keep = "best"
		}
		keptLine = k.line()
		sum["kept"] = k.json()
	}
	if *asJSON {
		if err := writeJSON(stdout, sum); err != nil {
			return err
		}
	} else {
		trained := fmt.Sprintf("trained %d steps of batch %d on %d transitions", tc.Steps, tc.Batch, tr.Examples())
		if b.Training.StoppedEarly || b.Training.PriorSteps > 0 || b.Training.Init != "" {
			trained = fmt.Sprintf("batch %d on %d transitions; %s", tc.Batch, tr.Examples(), b.Training)
		}
		fmt.Fprintf(stdout, "wrote %s (%s): world model %s, %d parameters, %s; %s; precision %d\n",
			*out, humanBytes(st.Size()), cfg.Preset, cfg.NumParams(), trained, b.Policy, b.Precision)
		fmt.Fprintf(stdout, "speed     %.2f steps/s, %.0f tokens/s, %.1f GFLOP/s (matrix products, 3x forward); %s in all\n",
			last.StepsPerSec, last.TokensPerSec, last.GFLOPS, last.Elapsed.Round(100*time.Millisecond))
		fmt.Fprintf(stdout, "train     loss %.4f, %.1f bits/transition (last steps, smoothed)\n", last.Loss, smooth)
		fmt.Fprint(stdout, heldLine)
		fmt.Fprint(stdout, keptLine)
		fmt.Fprintf(stdout, "recorded  %s of training%s in %s (beside the bundle, not in it)\n",
			trainTime(training.Seconds), onHost(host), model.ProvenancePath(*out))
		fmt.Fprintf(stdout, "bundle sha256 %s\n", b.HashString())
	}
	if !*keepCkpt {
		// The run finished: its checkpoint would only resume a finished run.
		if err := os.Remove(*ckpt); err == nil {
			logf("fit wm: removed the checkpoint %s:\n        the run finished (--keep-checkpoint keeps it)\n", *ckpt)
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// interruptedRun is the error of a training stopped by a signal: msg says
// where it stopped and what it saved; it wraps the run's error (a
// cancelled context), whose own text would add nothing.
type interruptedRun struct {
	msg string
	err error
}

func (e *interruptedRun) Error() string { return e.msg }
func (e *interruptedRun) Unwrap() error { return e.err }

func heldNote(held *corpus.File) string {
	if held == nil {
		return ""
	}
	return fmt.Sprintf("fit wm: %d held-out sequences, %d transitions\n", held.Sequences(), worldmodel.Transitions(held))
}

// readCorpus copies a trajectory file's episodes, as codes of q, into a
// corpus file in dir (unnamed: nothing is left behind), one episode at a
// time, held compactly: states are quantized as each row is read. It
// reports progress every few seconds.
func readCorpus(path string, q *opq.Quantizer, dir string, logf func(string, ...any)) (*corpus.File, error) {
	r, err := openCodesWith(q, "the quantizer", path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	r.SetCompact(true)
	r.SetFacts(false)
	start, last := time.Now(), time.Now()
	f, err := corpus.Build(dir, q.Shape().Codes, r.Next, func(seqs, states int) {
		if time.Since(last) >= 5*time.Second {
			last = time.Now()
			logf("fit wm: reading %s: %d sequences, %d states (%.0f states/s)\n", path, seqs, states, float64(states)/time.Since(start).Seconds())
		}
	})
	if err != nil && strings.HasPrefix(err.Error(), "corpus: ") {
		return nil, fmt.Errorf("%s: %w", path, err) // the reader's errors name the file
	}
	return f, err
}

// order1Bits is the ideal code length per transition of the adaptive order-1
// context model (each coordinate's code conditioned on its previous code,
// counts carried over from sequence to sequence, as bench's order1-context).
func order1Bits(data worldmodel.Corpus, J, C int) (float64, error) {
	m, err := entropy.NewContextModel(J, C, C)
	if err != nil {
		return 0, err
	}
	var q16 uint64
	n := 0
	var codes []uint8
	for i := range data.Sequences() {
		// A chunk of states at a time, the last one repeated as the
		// next chunk's previous state.
		states := data.States(i)
		for lo := 0; lo+1 < states; lo += 63 {
			hi := min(states, lo+64)
			codes = slices.Grow(codes[:0], (hi-lo)*J)[:(hi-lo)*J]
			if _, err := data.Read(codes, nil, i, lo, hi); err != nil {
				return 0, err
			}
			for t := 1; t < hi-lo; t++ {
				prev, z := codes[(t-1)*J:t*J], codes[t*J:(t+1)*J]
				for j := 0; j < J; j++ {
					q16 += uint64(m.CostQ16(j, int(prev[j]), int(z[j])))
					m.Update(j, int(prev[j]), int(z[j]))
				}
				n++
			}
		}
	}
	if n == 0 {
		return 0, nil
	}
	return float64(q16) / 65536 / float64(n), nil
}

// onHost is " on host NAME", or nothing for an unknown host.
func onHost(host string) string {
	if host == "" {
		return ""
	}
	return " on host " + host
}

// checkCheckpoint refuses, as a usage error before any work, a checkpoint
// path that is one of files (the run's output and the files it reads, but
// --resume, which a resumed run writes on), or whose folder is missing.
func checkCheckpoint(path string, files []input) error {
	st, statErr := os.Stat(path)
	for _, f := range files {
		if f.path == "" {
			continue
		}
		same := filepath.Clean(f.path) == filepath.Clean(path)
		if fst, err := os.Stat(f.path); err == nil && statErr == nil {
			same = same || os.SameFile(st, fst)
		}
		if same {
			return usagef("--checkpoint %s is %s %s: writing it would replace that file; give another name", path, f.flag, f.path)
		}
	}
	dir := filepath.Dir(path)
	if dst, err := os.Stat(dir); err != nil || !dst.IsDir() {
		return usagef("--checkpoint %s: folder %s does not exist", path, dir)
	}
	return nil
}

// evalScope is the line that says how the run evaluates: every every
// steps, on sub (a part of held or all of it), and whether the evaluations
// choose the weights kept.
func evalScope(every int, sub worldmodel.Corpus, held *corpus.File, choose bool) string {
	all := worldmodel.Transitions(held)
	s := fmt.Sprintf("fit wm: held-out evaluations every %d steps on all %d transitions", every, all)
	if n := worldmodel.Transitions(sub); n < all {
		s = fmt.Sprintf("fit wm: held-out evaluations every %d steps on %d of %d transitions", every, n, all)
	}
	if choose {
		s += ";\n        the bundle gets the weights of the best one"
	}
	return s
}

// evalLine is the progress line of an evaluation: the step, its held-out
// figure and, when the run keeps the best weights and they are another
// step's, that step and figure. At most 80 columns for runs of under
// 100,000 steps and figures under 10,000 bits.
func evalLine(p worldmodel.Progress) string {
	s := fmt.Sprintf("fit wm: step %d: held-out %.1f bits/transition", p.Step, p.Eval.BitsPerTransition)
	if p.Best != nil && p.BestStep != p.Step {
		s += fmt.Sprintf(", best %.1f (step %d)", p.Best.BitsPerTransition, p.BestStep)
	}
	return s
}

// progressLines are the two lines of a step's progress report: where the
// run is and its training loss, then its rate and speed; each fits 80
// columns (runs of under 100,000 steps, figures under 10,000 bits).
func progressLines(p worldmodel.Progress, smooth float64) string {
	return fmt.Sprintf("fit wm: step %d/%d  loss %.4f  train %.1f bits/transition  |g| %.3f\n"+
		"  lr %.2e  %.2f steps/s  %.0f tokens/s  %.1f GFLOP/s  ETA %s",
		p.Step, p.Steps, p.Loss, smooth, p.GradNorm, p.LR, p.StepsPerSec, p.TokensPerSec, p.GFLOPS, p.ETA.Round(time.Second))
}

// evalLog remembers a run's last and lowest evaluations.
type evalLog struct {
	n                  int
	lastStep, bestStep int
	last, best         worldmodel.EvalStats
}

func (l *evalLog) add(step int, ev worldmodel.EvalStats) {
	if l.n == 0 || ev.BitsPerTransition < l.best.BitsPerTransition {
		l.bestStep, l.best = step, ev
	}
	l.n++
	l.lastStep, l.last = step, ev
}

// keptWeights says which weights a run with held-out data wrote: the best
// evaluation's (keep "best": bestStep, -1 when none was finite) or the last
// step's, against the evaluations of this process.
type keptWeights struct {
	keep     string
	bestStep int
	bestEval worldmodel.EvalStats
	evals    evalLog
	steps    int
}

// line is the summary's line on the weights kept.
func (k keptWeights) line() string {
	l := k.evals
	switch {
	case k.keep == "best" && k.bestStep < 0:
		return "kept      the last weights: no held-out evaluation was finite\n"
	case k.keep == "best" && k.bestStep == k.steps:
		return fmt.Sprintf("kept      the last weights (step %d), the best held-out evaluation: %.1f bits/transition\n", k.steps, k.bestEval.BitsPerTransition)
	case k.keep == "best":
		what := fmt.Sprintf("the weights of step %d", k.bestStep)
		if k.bestStep == 0 {
			what = "the starting weights (step 0)"
		}
		s := fmt.Sprintf("kept      %s, the best held-out evaluation: %.1f bits/transition", what, k.bestEval.BitsPerTransition)
		if l.n > 0 && l.lastStep > k.bestStep {
			s += fmt.Sprintf(";\n          the last, at step %d, gave %.1f (%+.2f%%); --keep last keeps the last weights",
				l.lastStep, l.last.BitsPerTransition, 100*(l.last.BitsPerTransition/k.bestEval.BitsPerTransition-1))
		}
		return s + "\n"
	case l.n > 0 && l.bestStep != l.lastStep:
		return fmt.Sprintf("kept      the last weights (--keep last); the best held-out evaluation was step %d's:\n"+
			"          %.1f bits/transition on %d transitions, against %.1f at step %d (%+.2f%%)\n",
			l.bestStep, l.best.BitsPerTransition, l.best.Transitions, l.last.BitsPerTransition, l.lastStep,
			100*(l.last.BitsPerTransition/l.best.BitsPerTransition-1))
	}
	return "kept      the last weights\n"
}

// json is the summary's "kept" object.
func (k keptWeights) json() map[string]any {
	j := map[string]any{"weights": k.keep, "steps_run": k.steps}
	if k.keep == "best" && k.bestStep >= 0 {
		j["step"], j["bits_per_transition"] = k.bestStep, k.bestEval.BitsPerTransition
	} else {
		j["step"] = k.steps
	}
	if k.evals.n > 0 {
		j["last_eval_step"], j["last_eval_bits_per_transition"] = k.evals.lastStep, k.evals.last.BitsPerTransition
		j["lowest_eval_step"], j["lowest_eval_bits_per_transition"] = k.evals.bestStep, k.evals.best.BitsPerTransition
	}
	return j
}
