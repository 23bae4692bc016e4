package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/memowm/memowm/sim"
	"github.com/memowm/memowm/trajectory"
)

func runDemo(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", "[--dir DIR]",
		"Runs memowm on the embedded default, a small seeded sim world: generates\n"+
			"trajectories in Arrow and Parquet and checks them, fits an OPQ quantizer, trains a\n"+
			"tiny world model, encodes a lossless memory file, decodes it in a fresh decoder\n"+
			"and checks every code, and prints the bench table on held-out episodes.", stdout)
	dir := fs.String("dir", "", "keep the files in DIR (default: a temporary directory, removed after)")
	wmSteps := fs.Int("wm-steps", 300, "training steps of the demo's world model")
	cfg := sim.DefaultConfig()
	simFlags(fs, &cfg)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if err := cfg.Validate(); err != nil {
		return usagef("%v", err)
	}
	out := *dir
	if out == "" {
		tmp, err := os.MkdirTemp("", "memowm-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		removeOnInterrupt(tmp)
		out = tmp
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, name := range []string{"demo.arrow", "demo.parquet", "demo-train.arrow", "demo-heldout.arrow"} {
		watchOutputs(stderr, "demo", trajectoryOutputs(filepath.Join(out, name))...)
	}

	fmt.Fprintf(stdout, "== 1. simulate %d episodes of %d steps (seed %d)\n", cfg.Episodes, cfg.Steps, cfg.Seed)
	var first sim.Result
	for _, name := range []string{"demo.arrow", "demo.parquet"} {
		path := filepath.Join(out, name)
		res, err := sim.WriteFile(path, cfg, nil)
		if err != nil {
			return err
		}
		first = res
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s (%s), %d questions\n", path, humanBytes(st.Size()), res.Questions)
	}
	printStats(stdout, first.Stats)

	fmt.Fprintf(stdout, "\n== 2. read back and inspect\n")
	for _, name := range []string{"demo.arrow", "demo.parquet"} {
		sum, err := trajectory.Summarize(filepath.Join(out, name))
		if err != nil {
			return err
		}
		printSummary(stdout, sum)
		fmt.Fprintln(stdout)
	}

	fmt.Fprintf(stdout, "== 3. the two formats hold the same episodes: ")
	same, err := sameEpisodes(filepath.Join(out, "demo.arrow"), filepath.Join(out, "demo.parquet"))
	if err != nil {
		return err
	}
	if !same {
		return fmt.Errorf("demo: the Arrow and Parquet files differ")
	}
	fmt.Fprintf(stdout, "yes (every value compared)\n")

	// 4. OPQ: fit on a larger training set of the same world, measure on
	// held-out episodes.
	train, held := cfg, cfg
	train.Episodes, train.Seed = 5*cfg.Episodes, cfg.Seed+2000
	held.Episodes, held.Seed = cfg.Episodes, cfg.Seed+1000
	trainPath, evalPath := filepath.Join(out, "demo-train.arrow"), filepath.Join(out, "demo-heldout.arrow")
	for _, f := range []struct {
		path string
		cfg  sim.Config
	}{{trainPath, train}, {evalPath, held}} {
		if _, err := sim.WriteFile(f.path, f.cfg, nil); err != nil {
			return err
		}
	}
	states := train.Episodes * (train.Steps + 1)
	cw := 64
	for cw > 2 && cw > states {
		cw /= 2
	}
	if states < cw {
		return fmt.Errorf("demo: %d states are too few to fit a quantizer", states)
	}
	opqPath := filepath.Join(out, "demo.opq")
	fmt.Fprintf(stdout, "\n== 4. fit an OPQ quantizer on %d training episodes (%d states, %d codewords per codebook), measure it on %d held-out episodes\n",
		train.Episodes, states, cw, held.Episodes)
	if err := runFitOPQ([]string{"--in", trainPath, "--out", opqPath, "--eval", evalPath,
		"--codewords", fmt.Sprint(cw), "--quiet"}, stdout, stderr); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n== 5. quantize the episodes into codes\n")
	if err := runQuantize([]string{"--opq", opqPath, "--in", filepath.Join(out, "demo.arrow"),
		"--out", filepath.Join(out, "demo-codes.arrow"), "--quiet"}, stdout, stderr); err != nil {
		return err
	}

	// 6-8. A bundle, a memory file, and a decode checked against the codes.
	bundlePath, memPath := filepath.Join(out, "demo.mwb"), filepath.Join(out, "demo.mwm")
	fmt.Fprintf(stdout, "\n== 6. train a tiny world model on the %d training episodes (%d steps; progress on stderr)\n", train.Episodes, *wmSteps)
	if err := runFitWM([]string{"--opq", opqPath, "--in", trainPath, "--eval", evalPath, "--out", bundlePath,
		"--preset", "tiny", "--steps", fmt.Sprint(*wmSteps), "--lr", "3e-3"}, stdout, stderr); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n== 7. encode the episodes into a memory file, lossless (lambda = 0)\n")
	if err := runEncode([]string{"--model", bundlePath, "--in", filepath.Join(out, "demo.arrow"), "--out", memPath,
		"--lambda", "0", "--quiet"}, stdout, stderr); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n== 8. decode it and compare with the quantized codes: ")
	decPath := filepath.Join(out, "demo-decoded.arrow")
	if err := runDecode([]string{"--model", bundlePath, "--in", memPath, "--out", decPath, "--quiet"}, io.Discard, stderr); err != nil {
		return err
	}
	same, err = sameEpisodes(filepath.Join(out, "demo-codes.arrow"), decPath)
	if err != nil {
		return err
	}
	if !same {
		return fmt.Errorf("demo: the decoded codes differ from the quantized ones")
	}
	fmt.Fprintf(stdout, "identical (every code and action compared)\n")

	fmt.Fprintf(stdout, "\n== 9. bench on the %d held-out episodes\n", held.Episodes)
	if err := runBench([]string{"--model", bundlePath, "--in", evalPath, "--quiet"}, stdout, stderr); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nnext: 'memowm fit --stage all' adds the reader and task-aware retention; 'memowm sweep' compares capacities.\n")
	return nil
}

func sameEpisodes(a, b string) (bool, error) {
	ra, err := trajectory.Open(a)
	if err != nil {
		return false, err
	}
	defer ra.Close()
	rb, err := trajectory.Open(b)
	if err != nil {
		return false, err
	}
	defer rb.Close()
	for {
		ea, errA := ra.Next()
		eb, errB := rb.Next()
		if errA == io.EOF && errB == io.EOF {
			return true, nil
		}
		if errA != nil {
			return false, errA
		}
		if errB != nil {
			return false, errB
		}
		if !equalEpisodes(ea, eb) {
			return false, nil
		}
	}
}

func equalEpisodes(a, b *trajectory.Episode) bool {
	if a.ID != b.ID || a.Len() != b.Len() || len(a.Actions) != len(b.Actions) {
		return false
	}
	if (a.States == nil) != (b.States == nil) || (a.Codes == nil) != (b.Codes == nil) {
		return false
	}
	for t := range a.States {
		for i, v := range a.States[t] {
			if b.States[t][i] != v {
				return false
			}
		}
	}
	for t := range a.Codes {
		if string(a.Codes[t]) != string(b.Codes[t]) {
			return false
		}
	}
	if a.Facts != nil && b.Facts != nil {
		for t := range a.Facts {
			if string(a.Facts[t]) != string(b.Facts[t]) {
				return false
			}
		}
	}
	for t := range a.Actions {
		x, y := a.Actions[t], b.Actions[t]
		if x.Type != y.Type || x.HasPos != y.HasPos || x.X != y.X || x.Y != y.Y ||
			x.HasDelta != y.HasDelta || x.DX != y.DX || x.DY != y.DY || string(x.Payload) != string(y.Payload) {
			return false
		}
	}
	return true
}
