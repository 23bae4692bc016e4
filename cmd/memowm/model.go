package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"time"

	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

func runModel(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("want a sub-verb: info, init or int8")
	}
	switch args[0] {
	case "info":
		return runModelInfo(args[1:], stdout)
	case "init":
		return runModelInit(args[1:], stdout, stderr)
	case "int8":
		return runModelInt8(args[1:], stdout, stderr)
	case "-h", "--help", "-help":
		fmt.Fprint(stdout, `Usage: memowm model info [--preset P | --weights FILE] [--json] [--predict ...]
       memowm model init --preset P --out FILE [--seed S]
       memowm model int8 --model BUNDLE --calib TRAIN --out BUNDLE8

info shows a world model's architecture and parameter breakdown; --predict
times predictions of a random-weight model on random histories.
init writes a randomly initialised weights file.
int8 makes a bundle in the integer inference profile from one in f32.
Presets: `+strings.Join(worldmodel.PresetNames(), ", ")+"\n")
		return nil
	}
	return usagef("unknown sub-verb %q (want info, init or int8)", args[0])
}

type modelInfo struct {
	Config     worldmodel.Config      `json:"config"`
	Params     int                    `json:"params"`
	Breakdown  []worldmodel.Component `json:"breakdown"`
	FLOPs      int64                  `json:"flops_per_observation"`
	FLOPsSteps int                    `json:"flops_history_steps"`
	Predict    *predictTiming         `json:"predict,omitempty"`
}

type predictTiming struct {
	Profile   string  `json:"profile"`
	Steps     int     `json:"history_steps"`
	Batch     int     `json:"batch"`
	Threads   int     `json:"threads"`
	Repeats   int     `json:"repeats"`
	MsPerObs  float64 `json:"ms_per_observation"`
	GFLOPs    float64 `json:"gflop_per_s"`
	ModeCheck int     `json:"mode_of_coordinate_0"`
}

func runModelInfo(args []string, stdout io.Writer) error {
	fs := newFlags("model info", "[--preset P | --weights FILE] [--json] [--predict]",
		"Shows a world model's architecture, its parameters per component and the\n"+
			"FLOPs of one prediction; --predict times Predict on random histories with\n"+
			"random weights (seeded).", stdout)
	preset := fs.String("preset", "paper", "preset: "+strings.Join(worldmodel.PresetNames(), ", "))
	weights := fs.String("weights", "", "read the model from this weights file instead of a preset")
	asJSON := fs.Bool("json", false, "print one JSON object for machines")
	predict := fs.Bool("predict", false, "time predictions")
	steps := fs.Int("steps", 16, "history length for --predict and the FLOP count")
	batch := fs.Int("batch", 1, "histories per Predict call for --predict")
	repeats := fs.Int("repeats", 3, "timed Predict calls for --predict (after one warm-up)")
	threads := fs.Int("threads", runtime.GOMAXPROCS(0), "goroutines for --predict")
	seed := fs.Uint64("seed", 1, "seed of the random weights and histories")
	profile := fs.String("profile", worldmodel.ProfileF32, "inference profile for --predict: f32, or int8 (calibrated on the timed histories)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	var m *worldmodel.Model
	var cfg worldmodel.Config
	if *weights != "" {
		if m, err = worldmodel.Load(*weights); err != nil {
			return err
		}
		cfg = m.Config()
	} else if cfg, err = worldmodel.Preset(*preset); err != nil {
		return usagef("%v", err)
	}
	if *steps < 1 || *steps > cfg.MaxHistory {
		return usagef("--steps %d is outside [1, %d]", *steps, cfg.MaxHistory)
	}
	if *batch < 1 || *repeats < 1 {
		return usagef("--batch and --repeats must be at least 1")
	}
	if *profile != worldmodel.ProfileF32 && *profile != worldmodel.ProfileInt8 {
		return usagef("--profile %q: want f32 or int8", *profile)
	}
	info := modelInfo{Config: cfg, Params: cfg.NumParams(), Breakdown: cfg.Breakdown(), FLOPs: cfg.FLOPs(*steps), FLOPsSteps: *steps}
	if *predict {
		if m == nil {
			if m, err = worldmodel.New(cfg, *seed); err != nil {
				return err
			}
		}
		if info.Predict, err = timePredict(m, *profile, *steps, *batch, *repeats, *threads, *seed); err != nil {
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	name := cfg.Preset
	if *weights != "" {
		name = *weights
	}
	fmt.Fprintf(stdout, "world model   %s (profile %s)\n", name, cfg.Profile)
	fmt.Fprintf(stdout, "interface     %d states of %d slots x %d subspaces, %d codewords (%d coordinates)\n",
		cfg.MaxHistory, cfg.Slots, cfg.Subspaces, cfg.Codewords, cfg.Coords())
	fmt.Fprintf(stdout, "transformer   %d layers, width %d (%d x %d-dim code embeddings), %d heads, MLP %d\n",
		cfg.Layers, cfg.Width(), cfg.Subspaces, cfg.CodeDim, cfg.Heads, cfg.MLP)
	fmt.Fprintf(stdout, "actions       %d types, %d+1 bins per coordinate, features %d, payload GRU %d over %d bytes\n",
		cfg.ActionTypes, cfg.CoordBins, cfg.ActionDim, cfg.PayloadHidden, cfg.MaxPayload)
	fmt.Fprintf(stdout, "parameters    %s\n", commas(int64(info.Params)))
	for _, c := range info.Breakdown {
		fmt.Fprintf(stdout, "  %-38s %12s  %5.2f%%\n", c.Name, commas(int64(c.Params)), 100*float64(c.Params)/float64(info.Params))
	}
	fmt.Fprintf(stdout, "FLOPs         %.3f GFLOP per prediction from %d steps (matrix products)\n", float64(info.FLOPs)/1e9, *steps)
	if p := info.Predict; p != nil {
		fmt.Fprintf(stdout, "predict       %.1f ms per observation in the %s profile (%d steps, batch %d, %d threads, best of %d), %.1f GFLOP/s\n",
			p.MsPerObs, p.Profile, p.Steps, p.Batch, p.Threads, p.Repeats, p.GFLOPs)
	}
	return nil
}

// timePredict times Predict on random histories and returns the best run.
func timePredict(m *worldmodel.Model, profile string, steps, batch, repeats, threads int, seed uint64) (*predictTiming, error) {
	cfg := m.Config()
	rng := rand.New(rand.NewPCG(seed, 2))
	hs := make([]worldmodel.History, batch)
	for b := range hs {
		for k := 0; k < steps; k++ {
			codes := make([]uint8, cfg.Coords())
			for j := range codes {
				codes[j] = uint8(rng.IntN(cfg.Codewords))
			}
			a := trajectory.Action{Type: trajectory.ActionType(rng.IntN(cfg.ActionTypes)), HasPos: true, X: rng.Float32(), Y: rng.Float32(), Payload: []byte("hello")}
			hs[b] = append(hs[b], worldmodel.Step{Codes: codes, Action: a})
		}
	}
	var r worldmodel.Predictor
	var err error
	if profile == worldmodel.ProfileInt8 {
		q, err := worldmodel.CalibrateInt8(m, hs, threads)
		if err != nil {
			return nil, err
		}
		r, err = worldmodel.NewInt8CPU(q, worldmodel.WithThreads(threads))
	} else {
		r, err = worldmodel.NewCPU(m, worldmodel.WithThreads(threads))
	}
	if err != nil {
		return nil, err
	}
	preds, err := r.Predict(nil, hs) // warm-up: buffers
	if err != nil {
		return nil, err
	}
	best := time.Duration(1 << 62)
	for i := 0; i < repeats; i++ {
		t0 := time.Now()
		if preds, err = r.Predict(preds, hs); err != nil {
			return nil, err
		}
		best = min(best, time.Since(t0))
	}
	per := best.Seconds() / float64(batch)
	return &predictTiming{Profile: profile, Steps: steps, Batch: batch, Threads: threads, Repeats: repeats,
		MsPerObs: per * 1e3, GFLOPs: float64(cfg.FLOPs(steps)) / per / 1e9, ModeCheck: int(preds[0].Mode[0])}, nil
}

func runModelInit(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("model init", "--preset P --out FILE [--seed S]",
		"Writes a world-model weights file with the preset's architecture and random\n"+
			"weights drawn from the seed (the same seed gives the same file everywhere).", stdout)
	preset := fs.String("preset", "tiny", "preset: "+strings.Join(worldmodel.PresetNames(), ", "))
	out := fs.String("out", "", "output weights file")
	force := fs.Bool("force", false, forceHelp)
	seed := fs.Uint64("seed", 1, "seed of the random weights")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *out == "" {
		return usagef("--out is required")
	}
	if err := checkOutput(*out, outWeights, *force); err != nil {
		return err
	}
	watchOutputs(stderr, "model init", *out)
	cfg, err := worldmodel.Preset(*preset)
	if err != nil {
		return usagef("%v", err)
	}
	m, err := worldmodel.New(cfg, *seed)
	if err != nil {
		return err
	}
	if err := m.Save(*out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %s preset, %s parameters, seed %d\n", *out, cfg.Preset, commas(int64(cfg.NumParams())), *seed)
	return nil
}

// commas formats n with thousands separators.
func commas(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + commas(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
