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

	"github.com/memowm/memowm/calib"
	"github.com/memowm/memowm/codec"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// runFitBundle is 'memowm fit --in TRAIN --out BUNDLE --preset P'.
func runFitBundle(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("fit", "--in TRAIN --out BUNDLE --preset P [flags]",
		"Fits a model bundle: an OPQ quantizer on TRAIN's states (or --opq FILE), a\n"+
			"randomly initialised world model of the preset, and the keep-all retention\n"+
			"policy (lambda = 0, lossless). The stages that train and calibrate it:\n"+
			"  fit opq | --stage opq      the quantizer alone\n"+
			"  fit --stage wm             train the world model\n"+
			"  fit --stage reader         train (or --probe) the reader\n"+
			"  fit --stage risk           error lookup g(H) and task impact V_j\n"+
			"  fit --stage lambda         calibrate lambda within --epsilon\n"+
			"  fit --stage all            wm, reader, risk and lambda in a row\n"+
			"'memowm fit --stage S -h' shows a stage's flags.", stdout)
	in := fs.String("in", "", "training trajectories with states (required unless --opq)")
	out := fs.String("out", "", "bundle file to write (required)")
	force := fs.Bool("force", false, forceHelp)
	preset := fs.String("preset", "small", "world-model preset: "+fmt.Sprint(worldmodel.PresetNames()))
	opqPath := fs.String("opq", "", "use this quantizer instead of fitting one")
	seed := fs.Uint64("seed", 0, "seed of the quantizer and of the world model's weights")
	prec := fs.Uint("precision", worldmodel.DefaultPrecision, "log2 of every frequency table's total (8..28)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *out == "" || (*in == "" && *opqPath == "") {
		return usagef("--out BUNDLE and one of --in TRAIN or --opq FILE are required")
	}
	if err := checkOutput(*out, outBundle, *force, input{"--in", *in}, input{"--opq", *opqPath}); err != nil {
		return err
	}
	watchOutputs(stderr, "fit", *out)
	cfg, err := worldmodel.Preset(*preset)
	if err != nil {
		return usagef("%v", err)
	}
	logf := func(format string, args ...any) {
		if !*quiet {
			fmt.Fprintf(stderr, format, args...)
		}
	}
	var q *opq.Quantizer
	if *opqPath != "" {
		if q, err = opq.Load(*opqPath); err != nil {
			return err
		}
	} else {
		states, meta, err := readStates(*in, logf)
		if err != nil {
			return err
		}
		ocfg := opq.DefaultConfig()
		ocfg.Shape, ocfg.Seed, ocfg.Codewords = meta.Shape, *seed, cfg.Codewords
		ocfg.Progress = fitProgress(logf, time.Now())
		if q, err = opq.Fit(states, ocfg); err != nil {
			return err
		}
		printOPQWarnings(stderr, "fit", q)
	}
	cfg.Slots, cfg.Subspaces, cfg.Codewords = q.Shape().Slots, q.Subspaces(), q.Codewords()
	m, err := worldmodel.New(cfg, *seed)
	if err != nil {
		return err
	}
	b := &model.Bundle{OPQ: q, Model: m, Profile: worldmodel.ProfileF32, Precision: *prec, Policy: model.Policy{Kind: model.KeepAll},
		Training: &model.Training{}}
	if err := b.Save(*out); err != nil {
		return err
	}
	st, err := os.Stat(*out)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := writeJSON(stdout, map[string]any{"out": *out, "file_bytes": st.Size(), "bundle_sha256": b.HashString(), "preset": cfg.Preset,
			"params": cfg.NumParams(), "seed": *seed, "codewords": q.Codewords(), "precision": b.Precision, "training": b.Training}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "wrote %s (%s): OPQ %v, %d codewords; world model %s, %d parameters (random init, seed %d); %s; precision %d\n",
			*out, humanBytes(st.Size()), q.Shape(), q.Codewords(), cfg.Preset, cfg.NumParams(), *seed, b.Policy, b.Precision)
		fmt.Fprintf(stdout, "bundle sha256 %s\n", b.HashString())
	}
	fmt.Fprintf(stderr, "fit: warning: the world model in %s is UNTRAINED (random initialisation): its predictions are noise and memory files coded with it are large; train one with 'memowm fit --stage wm --in TRAIN --out BUNDLE'\n", *out)
	return nil
}

// warnUntrained warns on stderr when the bundle at path records that its
// world model is not fully trained (a random initialisation, an interrupted
// run): its rates say little about memowm. A bundle without a record (from
// before bundles kept one) gets no warning; inspect says so.
func warnUntrained(stderr io.Writer, verb, path string, b *model.Bundle) {
	if err := b.CheckTrained(); errors.Is(err, model.ErrUntrained) {
		fmt.Fprintf(stderr, "%s: warning: %s: %s\n", verb, path, b.Training)
	}
}

// loadBundle loads a bundle and a CPU predictor for it.
func loadBundle(path string) (*model.Bundle, worldmodel.Predictor, error) {
	if path == "" {
		return nil, nil, usagef("--model BUNDLE is required")
	}
	b, err := model.Load(path)
	if err != nil {
		return nil, nil, err
	}
	p, err := b.Predictor()
	if err != nil {
		return nil, nil, err
	}
	return b, p, nil
}

func runEncode(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("encode", "--model BUNDLE --in TRAJ --out MEM [flags]",
		"Stores trajectories (states, quantized through the bundle's OPQ, or codes) as\n"+
			"a memory file: the world model predicts every state from the reconstructed\n"+
			"history, kept codes are range-coded under its tables, the rest take its mode.", stdout)
	bundlePath := fs.String("model", "", "model bundle (required)")
	in := fs.String("in", "", "trajectories (required)")
	out := fs.String("out", "", "memory file to write (required)")
	force := fs.Bool("force", false, forceHelp)
	lambda := fs.Float64("lambda", math.NaN(), "retention lambda; 0 keeps every coordinate (lossless codes: the quantized states come back exactly, not the states). Default: the bundle's policy")
	minH := fs.Float64("min-entropy", 0, "omit coordinates whose predictive entropy is below this many bits (the Uncertainty baseline; 0: off)")
	slotRepeat := fs.Bool("slot-repeat", false, "code one repeat flag per slot before each state: a slot equal to the previous\nreconstruction is copied without the model (pays on recorded screens)")
	prior := fs.String("prior", "auto", "the prior states are coded under: mix (the world model mixed with adaptive\ncontext models and long-range copy; with --min-entropy the rule reads the\nmixed distribution), wm (the world model's table alone), or auto (mix when the\npolicy is lossless or a risk policy calibrated on the mix, and --slot-repeat\nis not given; else wm)")
	batch := fs.Int("batch", 8, batchHelp)
	device := deviceFlag(fs)
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	asJSON := fs.Bool("json", false, "print the accounting as JSON")
	measure := fs.Bool("measure", true, "measure the states the file gives back against the input (R^2, MSE);\na lossy file's input is read a second time for it")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *in == "" || *out == "" {
		return usagef("--model BUNDLE, --in TRAJ and --out MEM are required")
	}
	if err := checkOutput(*out, outMemory, *force, input{"--in", *in}, input{"--model", *bundlePath}); err != nil {
		return err
	}
	switch *prior {
	case "auto", "wm":
	case "mix":
		if *slotRepeat {
			return usagef("--prior mix has its own slot repeat decisions: drop --slot-repeat")
		}
	default:
		return usagef("--prior %q: want auto, mix or wm", *prior)
	}
	if *batch < 1 {
		return usagef("--batch %d must be at least 1", *batch)
	}
	b, p, devName, release, err := loadBundleOn(*bundlePath, *device, "encode", stderr)
	if err != nil {
		return err
	}
	defer release()
	gpuBatch(fs, batch, devName)
	warnUntrained(stderr, "encode", *bundlePath, b)
	warnQuantizer(stderr, "encode", *bundlePath, b.OPQ)
	watchOutputs(stderr, "encode", *out)
	policy := b.Policy
	switch {
	case *minH < 0 || *minH > 16:
		return usagef("--min-entropy %g must be in [0, 16] bits", *minH)
	case *minH > 0 && !math.IsNaN(*lambda):
		return usagef("--lambda and --min-entropy are two policies: give one")
	case *minH > 0:
		policy = model.Policy{Kind: model.MinEntropy, MinEntropyQ16: uint32(math.Round(*minH * 65536))}
	case *lambda == 0:
		policy = model.Policy{Kind: model.KeepAll}
	case !math.IsNaN(*lambda) && (*lambda < 0 || *lambda > 1<<20):
		return usagef("--lambda %g must be in [0, 1048576]", *lambda)
	case !math.IsNaN(*lambda) && b.Policy.Kind != model.Risk:
		return usagef("--lambda %g needs a bundle with a risk policy: run 'memowm fit --stage risk' first (--lambda 0 and --min-entropy work with any bundle)", *lambda)
	case !math.IsNaN(*lambda):
		policy = b.Policy.WithLambda(calib.Q32(*lambda))
	}
	// States are quantized as they are read, and an episode is held as
	// compact codes (trajectory.CodeRows): memory holds neither states nor
	// a code vector per observation, whatever the episodes' lengths.
	// Lossless codes give back the quantized states: measured as they are
	// read. A lossy file's reconstructions are spilled as they are written
	// and measured against a second read of the input at the end.
	lossy := !policy.Lossless()
	var meter *opq.QualityMeter
	if *measure && !lossy {
		meter = opq.NewQualityMeter(b.OPQ.Shape().StateLen())
	}
	r, err := openCodesMeter(b.OPQ, "the bundle's quantizer", *in, meter)
	if err != nil {
		return err
	}
	defer r.Close()
	warnInput(stderr, "encode", *in, r, b)
	total, _ := r.EpisodeCount() // 0: unknown

	var spill *reconSpill
	if *measure && lossy {
		if spill, err = newReconSpill(filepath.Dir(*out), b.OPQ.Shape().Codes); err != nil {
			return err
		}
		defer spill.close()
	}
	r.SetCompact(true)
	r.SetFacts(false) // a memory file stores codes and actions, not facts
	mix := *prior == "mix" || *prior == "auto" && (policy.Lossless() || policy.CalibratedOnMix()) && !*slotRepeat
	if riskLossy := policy.Kind == model.Risk && !policy.Lossless(); riskLossy && mix != policy.CalibratedOnMix() {
		if mix {
			return usagef("--prior mix with %s's risk policy: its g(H) was calibrated on the world model's tables, not the mixed distribution; run 'memowm fit --stage risk --prior mix' (and the lambda stage), or give --prior wm, --lambda 0 or --min-entropy", *bundlePath)
		}
		return usagef("%s's risk policy was calibrated on the mixing prior's distribution, which --prior wm or --slot-repeat leave out; drop them, run 'memowm fit --stage risk --prior wm' (and the lambda stage), or give --lambda 0 or --min-entropy", *bundlePath)
	}
	w, err := codec.CreateWith(*out, b, p, policy, codec.Options{SlotRepeat: *slotRepeat, Mix: mix})
	if err != nil {
		return err
	}
	defer w.Abort()
	w.KeepRecon = spill != nil
	enc := b.OPQ.NewEncoder()
	var all []codec.EpisodeStats
	start := time.Now()
	obs := 0
	var pending []*trajectory.Episode
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		st, err := w.Write(pending)
		if err != nil {
			return err
		}
		if spill != nil {
			if err := spill.add(st); err != nil {
				return err
			}
			for i := range st {
				st[i].Recon = nil
			}
		}
		all = append(all, st...)
		for _, ep := range pending {
			obs += ep.Len()
		}
		pending = pending[:0]
		if !*quiet {
			fmt.Fprintf(stderr, "encode: %s\n", progressLine(len(all), total, obs, time.Since(start)))
		}
		return nil
	}
	for {
		ep, err := r.Next()
		if err == io.EOF { // the bare sentinel: a damaged file's error may wrap io.EOF
			break
		}
		if err != nil {
			return err
		}
		if ep.States != nil {
			if ep, err = quantizeEpisode(enc, b.OPQ, ep); err != nil {
				return err
			}
		}
		ep.Facts = nil // a memory file stores codes and actions, not facts
		pending = append(pending, ep)
		if len(pending) == *batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	el := time.Since(start)
	st, err := os.Stat(*out)
	if err != nil {
		return err
	}
	acc := accountStats(all, st.Size())
	acc.Policy = policy.String()
	acc.Prior = priorName(mix)
	acc.FixedWidthBits = b.OPQ.Bits()
	acc.EncodeObsPerSec = float64(obs) / el.Seconds()
	acc.Device = devName
	if r2, _, ok := b.OPQ.HeldOut(); ok {
		acc.QuantizerR2 = &r2
	}
	switch {
	case spill != nil:
		sq, err := spill.measure(b.OPQ, *in)
		if err != nil {
			return fmt.Errorf("%s is written, but %w", *out, err)
		}
		acc.setStates(sq)
	case meter != nil:
		acc.setStates(stateQuality{Quality: meter.Quality(), Against: "input states"})
	}
	if bst, err := os.Stat(*bundlePath); err == nil && acc.Observations > 0 {
		acc.BundleBytes = bst.Size()
		acc.QuantizerBytes, _ = b.OPQ.WriteTo(io.Discard)
		acc.BundleBits = float64(acc.BundleBytes*8) / float64(acc.Observations)
		acc.AmortisedBits = acc.FileBitsPerObs + acc.BundleBits
	}
	if *asJSON {
		e := json.NewEncoder(stdout)
		e.SetIndent("", "  ")
		return e.Encode(acc)
	}
	on := ""
	if devName != "cpu" {
		on = "; world model on " + devName
	}
	fmt.Fprintf(stdout, "wrote %s (%s) in %.1f s (%.1f obs/s); policy %s, prior %s%s\n", *out, humanBytes(st.Size()), el.Seconds(), acc.EncodeObsPerSec, acc.Policy, acc.Prior, on)
	printAccounting(stdout, acc)
	return nil
}

// lowR2 is the held-out R^2 below which a quantizer's states are flagged:
// under it the quantizer loses more than half the states' variance.
const lowR2 = 0.5

// warnQuantizer flags a bundle's quantizer whose recorded held-out R^2 is
// low: the states any of its memory files give back are then poor, however
// the codes are kept.
func warnQuantizer(stderr io.Writer, verb, path string, q *opq.Quantizer) {
	r2, n, ok := q.HeldOut()
	if !ok || r2 >= lowR2 {
		return
	}
	fmt.Fprintf(stderr, "memowm %s: warning: %s's quantizer reconstructed held-out states with R^2 %.3f when it was fitted (%s): the states its files give back keep less than half their variance, lossless codes or not; refit it ('memowm fit opq') on at least %d states of this kind of data\n",
		verb, path, r2, count(n, "held-out state"), opq.ReliableStates)
}

// progressLine is a long run's progress: episodes done (of total, when
// known: then with an estimate of the time left, from the time per episode
// so far), observations and speed.
func progressLine(done, total, obs int, el time.Duration) string {
	rate := float64(obs) / el.Seconds()
	if total <= 0 || done > total {
		return fmt.Sprintf("%s, %s (%.1f obs/s)", count(done, "episode"), count(obs, "observation"), rate)
	}
	left := time.Duration(float64(el) / float64(done) * float64(total-done)).Round(time.Second)
	return fmt.Sprintf("%d/%d episodes (%.0f%%), %s (%.1f obs/s), about %s left", done, total, 100*float64(done)/float64(total), count(obs, "observation"), rate, left)
}

// warnInput says on stderr what a reader of in cannot check: a codes file
// that does not name the quantizer that made it (taken as codes of b's),
// and a file without episode checksums (damage to it goes unseen).
func warnInput(stderr io.Writer, verb, in string, r *trajectory.Reader, b *model.Bundle) {
	if m := r.Meta(); m.Content == trajectory.Codes && m.Quantizer == "" {
		fmt.Fprintf(stderr, "memowm %s: warning: %s holds codes that do not name the quantizer that made them; they are taken as codes of the bundle's quantizer (%.12s): codes of another quantizer would decode to wrong states\n", verb, in, b.OPQ.Digest())
	}
	if !r.Checksummed() {
		fmt.Fprintf(stderr, "memowm %s: note: %s carries no episode checksums (written by another tool or an older memowm): damage to it cannot be detected while it is read\n", verb, in)
	}
}

// quantizeEpisode returns ep with its states replaced by their codes.
func quantizeEpisode(enc *opq.Encoder, q *opq.Quantizer, ep *trajectory.Episode) (*trajectory.Episode, error) {
	sl, nc := q.Shape().StateLen(), q.Shape().Codes
	src := make([]float32, 0, len(ep.States)*sl)
	for _, s := range ep.States {
		src = append(src, s...)
	}
	codes := make([]uint8, len(ep.States)*nc)
	if err := enc.EncodeBatch(codes, src); err != nil {
		return nil, fmt.Errorf("episode %d: %w", ep.ID, err)
	}
	out := &trajectory.Episode{ID: ep.ID, Actions: ep.Actions, Facts: ep.Facts, Codes: make([][]uint8, len(ep.States))}
	for i := range out.Codes {
		out.Codes[i] = codes[i*nc : (i+1)*nc : (i+1)*nc]
	}
	return out, nil
}

// accounting is Eq. 7's bookkeeping over a memory file.
type accounting struct {
	Policy          string  `json:"policy,omitempty"`
	Prior           string  `json:"prior,omitempty"` // mix or wm
	Episodes        int     `json:"episodes"`
	Observations    int     `json:"observations"` // N + K
	Transitions     int     `json:"transitions"`  // N
	KeptFraction    float64 `json:"kept_fraction"`
	IdealBitsPerObs float64 `json:"ideal_bits_per_obs"`
	StateBitsPerObs float64 `json:"state_bits_per_obs"`
	ActionBitsObs   float64 `json:"action_bits_per_obs"`
	PayloadBitsObs  float64 `json:"payload_bits_per_obs"` // physical: packed z_0 + coder streams
	FileBitsPerObs  float64 `json:"file_bits_per_obs"`    // physical: the whole file
	FileBytes       int64   `json:"file_bytes"`
	EncodeObsPerSec float64 `json:"encode_obs_per_s,omitempty"`
	Device          string  `json:"device,omitempty"` // where the world model ran
	FixedWidthBits  int     `json:"fixed_width_bits_per_obs"`
	// The shared model (the paper's S = B_shared/N + R): the bundle's bytes,
	// of them the quantizer's, the bundle spread over these observations
	// (B/N), and the whole file plus it (S). Set by encode, which knows the
	// bundle.
	BundleBytes    int64   `json:"bundle_bytes,omitempty"`
	QuantizerBytes int64   `json:"quantizer_bytes,omitempty"`
	BundleBits     float64 `json:"bundle_bits_per_obs,omitempty"`
	AmortisedBits  float64 `json:"with_bundle_bits_per_obs,omitempty"`
	// QuantizerR2 is the held-out R^2 the bundle's quantizer recorded when
	// it was fitted (fit opq --eval); nil when it recorded none. Lossless
	// codes give back the states only as well as that.
	QuantizerR2 *float64 `json:"quantizer_held_out_r2,omitempty"`
	// The states this file gives back, measured on this input (encode
	// --measure): R^2 and MSE against the states read (or, for a codes
	// input, the states its codes decode to), over StatesMeasured states.
	// A lossy file's fill is included. nil when not measured.
	StatesR2       *float64 `json:"states_r2,omitempty"`
	StatesMSE      *float64 `json:"states_mse,omitempty"`
	StatesMeasured int      `json:"states_measured,omitempty"`
	StatesAgainst  string   `json:"states_against,omitempty"`
}

// setStates records the measured quality of the decoded states.
func (a *accounting) setStates(sq stateQuality) {
	if sq.States == 0 {
		return
	}
	r2, mse := sq.R2, sq.MSE
	a.StatesR2, a.StatesMSE, a.StatesMeasured, a.StatesAgainst = &r2, &mse, sq.States, sq.Against
}

func accountStats(st []codec.EpisodeStats, fileBytes int64) accounting {
	var a accounting
	var kept, coords uint64
	var state, action float64
	var payload int64
	for _, s := range st {
		a.Episodes++
		a.Observations += s.Observations
		a.Transitions += s.Observations - 1
		kept += s.Kept
		coords += s.Coords
		state += s.StateBits
		action += s.ActionBits
		payload += s.Payload
	}
	return finishAccounting(a, kept, coords, state, action, payload, fileBytes)
}

func finishAccounting(a accounting, kept, coords uint64, state, action float64, payload, fileBytes int64) accounting {
	n := float64(max(a.Observations, 1))
	if coords > 0 {
		a.KeptFraction = float64(kept) / float64(coords)
	}
	a.StateBitsPerObs = state / n
	a.ActionBitsObs = action / n
	a.IdealBitsPerObs = (state + action) / n
	a.PayloadBitsObs = float64(payload*8) / n
	a.FileBitsPerObs = float64(fileBytes*8) / n
	a.FileBytes = fileBytes
	return a
}

func printAccounting(w io.Writer, a accounting) {
	fmt.Fprintf(w, "%s, %s (N+K: %s + %s), kept %.2f%% of predicted coordinates\n",
		count(a.Episodes, "episode"), count(a.Observations, "observation"), count(a.Transitions, "transition"), count(a.Episodes, "initial state"), 100*a.KeptFraction)
	fmt.Fprintf(w, "bits/obs  ideal %.1f (states %.1f + actions %.1f), physical %.1f payload / %.1f whole file\n",
		a.IdealBitsPerObs, a.StateBitsPerObs, a.ActionBitsObs, a.PayloadBitsObs, a.FileBitsPerObs)
	if a.IdealBitsPerObs > 0 && a.FixedWidthBits > 0 {
		fmt.Fprintf(w, "vs fixed width %d bits/obs plus the same actions: %.3fx\n", a.FixedWidthBits, a.FileBitsPerObs/(float64(a.FixedWidthBits)+a.ActionBitsObs))
	}
	fitted := ""
	if a.QuantizerR2 != nil {
		fitted = fmt.Sprintf("; the quantizer's held-out R^2 when it was fitted: %.4f", *a.QuantizerR2)
	}
	switch {
	case a.StatesR2 != nil && a.KeptFraction < 1 && a.Transitions > 0:
		fmt.Fprintf(w, "decoded states (%.2f%% of coordinates kept, the rest filled) vs the %s: R^2 %.4f, MSE %.4g over %d states%s\n",
			100*a.KeptFraction, a.StatesAgainst, *a.StatesR2, *a.StatesMSE, a.StatesMeasured, fitted)
	case a.StatesR2 != nil:
		fmt.Fprintf(w, "lossless codes: decoded states vs the %s: R^2 %.4f, MSE %.4g over %d states (the quantizer's loss alone)%s\n",
			a.StatesAgainst, *a.StatesR2, *a.StatesMSE, a.StatesMeasured, fitted)
	case a.QuantizerR2 != nil && a.KeptFraction >= 1:
		fmt.Fprintf(w, "lossless codes: states come back as well as the quantizer reconstructs them: held-out R^2 %.4f when it was fitted (not measured on this input)\n", *a.QuantizerR2)
	case a.QuantizerR2 != nil:
		fmt.Fprintf(w, "decoded states not measured (--measure=false); lossy: below the quantizer's own held-out R^2 %.4f\n", *a.QuantizerR2)
	}
	if a.BundleBytes > 0 {
		fmt.Fprintf(w, "with the bundle (%s, %s of it the quantizer) spread over these %d observations: %.1f bits/obs (S = B/N + R); the bundle pays for itself only over many files\n",
			humanBytes(a.BundleBytes), humanBytes(a.QuantizerBytes), a.Observations, a.AmortisedBits)
	}
}

func runDecode(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("decode", "--model BUNDLE --in MEM --out FILE [--what codes|states] [--episode ID]",
		"Decodes a memory file with the bundle it was written with, checks every\n"+
			"episode's checksum, and writes the reconstructed codes, or states through the\n"+
			"OPQ decoder, as a trajectory file (.arrow, .parquet or .npy).", stdout)
	bundlePath := fs.String("model", "", "model bundle (required)")
	in := fs.String("in", "", "memory file (required)")
	out := fs.String("out", "", "trajectory file to write (required)")
	force := fs.Bool("force", false, forceHelp)
	what := fs.String("what", "codes", "codes or states")
	episode := fs.Int64("episode", 0, "decode only this episode ID, negative IDs too (default: all)")
	batch := fs.Int("batch", 8, batchHelp)
	device := deviceFlag(fs)
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *in == "" || *out == "" {
		return usagef("--model BUNDLE, --in MEM and --out FILE are required")
	}
	if *what != "codes" && *what != "states" {
		return usagef("--what %q: want codes or states", *what)
	}
	if err := checkOutput(*out, outTrajectory, *force, input{"--in", *in}, input{"--model", *bundlePath}); err != nil {
		return err
	}
	if *batch < 1 {
		return usagef("--batch %d must be at least 1", *batch)
	}
	b, p, devName, release, err := loadBundleOn(*bundlePath, *device, "decode", stderr)
	if err != nil {
		return err
	}
	defer release()
	gpuBatch(fs, batch, devName)
	watchOutputs(stderr, "decode", trajectoryOutputs(*out)...)
	r, err := codec.Open(*in)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.CheckBundle(b); err != nil {
		return err
	}
	r.Compact = true // episodes come back as compact codes
	var which []int
	if flagSet(fs, "episode") {
		i := r.Find(*episode)
		if i < 0 {
			return fmt.Errorf("%s has no episode %d", *in, *episode)
		}
		which = []int{i}
	} else {
		for i := range r.Episodes() {
			which = append(which, i)
		}
	}
	content := trajectory.Codes
	if *what == "states" {
		content = trajectory.States
	}
	meta := trajectory.Meta{Shape: b.OPQ.Shape(), Content: content}
	if content == trajectory.Codes {
		meta.Quantizer = b.OPQ.Digest()
	}
	w, err := trajectory.Create(*out, meta)
	if err != nil {
		return err
	}
	defer w.Abort()
	// States are made from the decoded codes row by row as they are
	// written: an episode is held as compact codes, never as states.
	dec := b.OPQ.NewEncoder()
	w.SetStatesFrom(dec.DecodeBatch)
	start := time.Now()
	obs := 0
	for lo := 0; lo < len(which); lo += *batch {
		eps, err := r.Decode(p, which[lo:min(len(which), lo+*batch)])
		if err != nil {
			return nameFile(*in, err)
		}
		for _, ep := range eps {
			obs += ep.Len()
			if err := w.Write(ep); err != nil {
				return err
			}
		}
		if !*quiet {
			fmt.Fprintf(stderr, "decode: %d of %d episodes (%.1f obs/s)\n", min(len(which), lo+*batch), len(which), float64(obs)/time.Since(start).Seconds())
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	el := time.Since(start).Seconds()
	if *asJSON {
		return writeJSON(stdout, map[string]any{"in": *in, "out": *out, "what": *what, "episodes": len(which),
			"observations": obs, "seconds": el, "decode_obs_per_s": float64(obs) / el, "checksums_hold": true})
	}
	fmt.Fprintf(stdout, "decoded %s, %s from %s into %s (%s) in %.1f s (%.1f obs/s); every checksum holds\n",
		count(len(which), "episode"), count(obs, "observation"), *in, *out, *what, el, float64(obs)/el)
	return nil
}

// writeJSON prints v as indented JSON, the style of every --json.
func writeJSON(w io.Writer, v any) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(v)
}

func runVerify(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("verify", "--model BUNDLE MEM",
		"Decodes every episode of a memory file and checks its checksum; exits 0 only\n"+
			"if every episode is intact.", stdout)
	bundlePath := fs.String("model", "", "model bundle (required)")
	batch := fs.Int("batch", 8, batchHelp)
	device := deviceFlag(fs)
	asJSON := fs.Bool("json", false, "print the result as JSON (damaged episodes listed; the exit status still says)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one memory file, got %d arguments", len(pos))
	}
	if *batch < 1 {
		return usagef("--batch %d must be at least 1", *batch)
	}
	b, p, devName, release, err := loadBundleOn(*bundlePath, *device, "verify", stderr)
	if err != nil {
		return err
	}
	defer release()
	gpuBatch(fs, batch, devName)
	r, err := codec.Open(pos[0])
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.CheckBundle(b); err != nil {
		return err
	}
	n := len(r.Episodes())
	obs := 0
	start := time.Now()
	var damaged []string
	type damage struct {
		ID    int64  `json:"id"`
		Error string `json:"error"`
	}
	damages := []damage{} // a list in JSON even when empty
	for lo := 0; lo < n; lo += *batch {
		which := make([]int, 0, *batch)
		for i := lo; i < min(n, lo+*batch); i++ {
			which = append(which, i)
		}
		eps, err := r.Decode(p, which)
		if err != nil {
			// Episodes decode alone: find every damaged one of the batch.
			eps = eps[:0]
			for _, i := range which {
				ep, err := r.Decode(p, []int{i})
				if err != nil {
					fmt.Fprintf(stderr, "verify: %v\n", err)
					damaged = append(damaged, fmt.Sprint(r.Episodes()[i].ID))
					damages = append(damages, damage{r.Episodes()[i].ID, err.Error()})
					continue
				}
				eps = append(eps, ep...)
			}
		}
		for _, ep := range eps {
			obs += ep.Len()
		}
	}
	el := time.Since(start).Seconds()
	if *asJSON {
		if err := writeJSON(stdout, map[string]any{"in": pos[0], "episodes": n, "intact_episodes": n - len(damaged),
			"intact_observations": obs, "damaged": damages, "seconds": el, "decode_obs_per_s": float64(obs) / el}); err != nil {
			return err
		}
	}
	if len(damaged) > 0 {
		return fmt.Errorf("%s: %d of %d episodes damaged (ids %s); the other %d (%d observations) are intact",
			pos[0], len(damaged), n, strings.Join(damaged, ", "), n-len(damaged), obs)
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "%s: %s, %s intact (decoded in %.1f s, %.1f obs/s)\n",
			pos[0], count(n, "episode"), count(obs, "observation"), el, float64(obs)/el)
	}
	return nil
}

// inspectMemory prints a memory file's header and accounting.
func inspectMemory(path string, asJSON bool, stdout io.Writer) error {
	r, err := codec.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	h := r.Header()
	a := accounting{Policy: h.Policy.String()}
	var kept, coords uint64
	var state, action float64
	var payload int64
	J := h.Coords()
	eps := r.Episodes()
	for _, e := range eps {
		a.Episodes++
		a.Observations += e.Observations
		a.Transitions += e.Observations - 1
		kept += e.Kept
		coords += uint64((e.Observations - 1) * J)
		state += e.StateBits
		action += e.ActionBits
		payload += e.Payload
	}
	a = finishAccounting(a, kept, coords, state, action, payload, r.Size())
	a.FixedWidthBits = J * opq.CodeBits(h.Codewords)
	// The header and index checksums were checked by Open; every section's
	// bytes are checked here. Decoding (verify) is what checks the codes.
	if bad, first := r.CheckSections(); first != nil {
		ids := make([]string, len(bad))
		for k, i := range bad {
			ids[k] = fmt.Sprint(eps[i].ID)
		}
		return fmt.Errorf("%s is damaged: the section checksum fails in %d of its %s (ids %s); first: %w ('memowm verify' decodes the file and names what is intact)",
			path, len(bad), count(len(eps), "episode"), strings.Join(ids, ", "), first)
	}
	if asJSON {
		e := json.NewEncoder(stdout)
		e.SetIndent("", "  ")
		return e.Encode(map[string]any{
			"in": path, "kind": "memory", "version": codec.Version, "bundle_sha256": fmt.Sprintf("%x", h.Bundle), "file_bytes": r.Size(),
			"profile": h.Profile, "precision": h.Precision, "slots": h.Slots, "subspaces": h.Subspaces, "codewords": h.Codewords,
			"slot_repeat": h.SlotRepeat, "prior": priorName(h.Mix),
			"accounting": a, "episodes": len(eps), "per_episode": eps,
		})
	}
	fmt.Fprintf(stdout, "file          %s (memory file, format %d, %s)\n", path, codec.Version, humanBytes(r.Size()))
	fmt.Fprintf(stdout, "bundle        sha256 %x\n", h.Bundle)
	rep := ", prior " + priorName(h.Mix)
	if h.SlotRepeat {
		rep += ", slot repeat flags"
	}
	fmt.Fprintf(stdout, "coding        profile %s, precision %d, %d coordinates of %d codewords, policy %s%s\n",
		h.Profile, h.Precision, J, h.Codewords, a.Policy, rep)
	printAccounting(stdout, a)
	fmt.Fprintf(stdout, "checked       header, index and every episode's section checksum (not decoded: 'memowm verify' also checks the decoded codes)\n")
	return nil
}

// inspectBundle prints what a model bundle holds.
func inspectBundle(path string, asJSON bool, stdout io.Writer) error {
	b, err := model.Load(path)
	if err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	cfg := b.Model.Config()
	if asJSON {
		e := json.NewEncoder(stdout)
		e.SetIndent("", "  ")
		obj := map[string]any{
			"in": path, "kind": "bundle", "version": b.FormatVersion(), "file_bytes": st.Size(), "bundle_sha256": b.HashString(),
			"profile": b.Profile, "precision": b.Precision, "policy": b.Policy, "reader": b.Reader != nil,
			"training": b.Training, "trained": b.Training.Complete(),
			"opq":         map[string]any{"shape": b.OPQ.Shape(), "codewords": b.OPQ.Codewords(), "books": b.OPQ.Books(), "info": b.OPQ.Info()},
			"world_model": map[string]any{"config": cfg, "params": cfg.NumParams()},
		}
		if b.Int8 != nil {
			obj["int8"] = b.Int8.Info()
		}
		return e.Encode(obj)
	}
	fmt.Fprintf(stdout, "file          %s (model bundle, format %d, %s)\n", path, b.FormatVersion(), humanBytes(st.Size()))
	fmt.Fprintf(stdout, "sha256        %s\n", b.HashString())
	fmt.Fprintf(stdout, "quantizer     %v states -> %d codes of %d codewords, %d codebooks, %s rotation\n",
		b.OPQ.Shape(), b.OPQ.Shape().Codes, b.OPQ.Codewords(), b.OPQ.Books(), b.OPQ.Info().Rotation)
	fmt.Fprintf(stdout, "world model   %s: %d layers, width %d, %d heads, MLP %d, window %d; %d parameters\n",
		cfg.Preset, cfg.Layers, cfg.Width(), cfg.Heads, cfg.MLP, cfg.MaxHistory, cfg.NumParams())
	fmt.Fprintf(stdout, "coding        profile %s, precision %d, policy %s\n", b.Profile, b.Precision, b.Policy)
	if b.Int8 != nil {
		in := b.Int8.Info()
		fmt.Fprintf(stdout, "int8 network  %s of int8/int16 weights, residual stream with %d fractional bits; the f32 weights it was made from are kept\n",
			humanBytes(int64(in.WeightBytes)), in.ResidualFracBits)
	}
	fmt.Fprintf(stdout, "training      %s", b.Training)
	if sec, ok := b.Training.TotalSeconds(); ok {
		fmt.Fprintf(stdout, "; %s of training in all", trainTime(sec))
	}
	fmt.Fprintln(stdout)
	if b.Reader != nil {
		slots, dim := b.Reader.Shape()
		fmt.Fprintf(stdout, "reader        %s, %d parameters, reads %dx%d states\n", b.Reader.Name(), b.Reader.NumParams(), slots, dim)
	} else {
		fmt.Fprintf(stdout, "reader        none (run 'memowm fit --stage reader')\n")
	}
	if b.Policy.Kind == model.Risk {
		printRiskPolicy(stdout, b.Policy, nil)
	}
	return nil
}

// priorName names the prior states are coded under: mix (Header.Mix) or
// wm.
func priorName(mix bool) string {
	if mix {
		return "mix"
	}
	return "wm"
}
