package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memowm/memowm/bench"
	"github.com/memowm/memowm/sim"
	"github.com/memowm/memowm/trajectory"
)

func runDemo(args []string, stdout, stderr io.Writer) (err error) {
	fs := newFlags("demo", "[--dir DIR]",
		"Runs memowm on the embedded default, a small seeded sim world: generates\n"+
			"trajectories in Arrow and Parquet and checks them, fits an OPQ quantizer, trains a\n"+
			"tiny world model, encodes a lossless memory file, decodes it in a fresh decoder\n"+
			"and checks every code, prints the bench table on held-out episodes, and ends with\n"+
			"the conclusion its numbers support. Each step says in one line what it does and\n"+
			"why. Without --dir its files go to a temporary folder that is removed at the end.", stdout)
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
	began := time.Now()
	out := *dir
	if out == "" {
		tmp, err := os.MkdirTemp("", "memowm-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		removeOnInterrupt(tmp)
		out = tmp
		fmt.Fprintf(stdout, "memowm demo: the whole pipeline on a small seeded sim world, in 9 steps.\n"+
			"Its files go to a temporary folder, %s, removed at the end: nothing is kept\n"+
			"(run 'memowm demo --dir DIR' to keep them).\n\n", tmp)
	} else {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "memowm demo: the whole pipeline on a small seeded sim world, in 9 steps.\n"+
			"Its files go to %s and are kept there.\n\n", out)
	}
	for _, name := range []string{"demo.arrow", "demo.parquet", "demo-train.arrow", "demo-heldout.arrow"} {
		watchOutputs(stderr, "demo", trajectoryOutputs(filepath.Join(out, name))...)
	}
	why := func(format string, a ...any) { fmt.Fprintf(stdout, "   "+format+"\n", a...) }

	fmt.Fprintf(stdout, "== 1. simulate %d episodes of %d steps (seed %d)\n", cfg.Episodes, cfg.Steps, cfg.Seed)
	why("what memowm stores: per step, an agent's observation (a %d x %d float32 state, as a screen encoder gives) and its action; the sim world stands in for a recorder.",
		cfg.Shape.Slots, cfg.Shape.Dim)
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
	why("'memowm inspect FILE' does this: it checks every episode's checksum and summarises the file.")
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
	why("memowm reads and writes both; pick the one your other tools read.")

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
	why("the only lossy step: each float state becomes small integer codes, one per codebook; everything after it is exact on the codes.")
	if err := runFitOPQ([]string{"--in", trainPath, "--out", opqPath, "--eval", evalPath,
		"--codewords", fmt.Sprint(cw), "--quiet", "--force"}, stdout, stderr); err != nil {
		return err
	}
	why("R^2: the share of the states' variance the codes reconstruct (1 = exact); held-out: on episodes the quantizer never saw.")

	fmt.Fprintf(stdout, "\n== 5. quantize the episodes into codes\n")
	why("these codes are what a memory file stores; step 8 checks the decoded codes against them.")
	if err := runQuantize([]string{"--opq", opqPath, "--in", filepath.Join(out, "demo.arrow"),
		"--out", filepath.Join(out, "demo-codes.arrow"), "--quiet", "--force"}, stdout, stderr); err != nil {
		return err
	}

	// 6-8. A bundle, a memory file, and a decode checked against the codes.
	bundlePath, memPath := filepath.Join(out, "demo.mwb"), filepath.Join(out, "demo.mwm")
	fmt.Fprintf(stdout, "\n== 6. train a tiny world model on the %d training episodes (%d steps; progress on stderr)\n", train.Episodes, *wmSteps)
	why("the world model predicts each step's codes from the history and the action; the better it predicts, the fewer bits a step costs. It goes into a bundle with the quantizer.")
	if err := runFitWM([]string{"--opq", opqPath, "--in", trainPath, "--eval", evalPath, "--out", bundlePath,
		"--preset", "tiny", "--steps", fmt.Sprint(*wmSteps), "--lr", "3e-3", "--force"}, stdout, stderr); err != nil {
		return err
	}
	why("bits/transition: the cost of one step's codes under the model. Teacher-forced: each step predicted from the true")
	why("earlier codes, as a lossless decoder has them. Ideal: the sum of -log2 p of the true codes, the size a perfect coder")
	why("would reach. Order-1 (adaptive counts given each code's previous value) and fixed width are the baselines to beat.")

	fmt.Fprintf(stdout, "\n== 7. encode step 1's %d episodes (demo.arrow, seed %d) into a memory file, lossless (lambda = 0)\n", cfg.Episodes, cfg.Seed)
	why("an arithmetic coder turns the predictions into bits; lambda = 0 keeps every code, so decoding gives the codes back exactly.")
	if err := runEncode([]string{"--model", bundlePath, "--in", filepath.Join(out, "demo.arrow"), "--out", memPath,
		"--lambda", "0", "--quiet", "--force"}, stdout, stderr); err != nil {
		return err
	}
	why("N+K: N transitions plus K first states (one per episode): every stored observation counts, the first ones too.")
	why("ideal bits: what the model's probabilities imply; physical: the bytes written (payload: the coded streams;")
	why("whole file: with the container and checksums). The bundle is shared by every file it encodes, so it is counted apart.")

	fmt.Fprintf(stdout, "\n== 8. decode it and compare with the quantized codes: ")
	decPath := filepath.Join(out, "demo-decoded.arrow")
	if err := runDecode([]string{"--model", bundlePath, "--in", memPath, "--out", decPath, "--quiet", "--force"}, io.Discard, stderr); err != nil {
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
	why("a fresh decoder with only the bundle and the memory file rebuilds the codes: the coding is lossless.")

	fmt.Fprintf(stdout, "\n== 9. bench on the %d held-out episodes (demo-heldout.arrow, seed %d)\n", held.Episodes, held.Seed)
	why("other episodes than step 7's (demo.arrow), so its wm-mix row is not step 7's file: the same method on another sample.")
	why("every method on the same episodes, under one accounting, to see where memowm wins: general-purpose compressors")
	why("(zstd, xz) on the packed codes, the order-1 context model, and memowm's memory files (wm-*; wm-mix is what encode")
	why("writes by default; the -no-* rows take one of its parts out). 'x fixed' and 'x best': bits/obs over fixed width and")
	why("over the best general-purpose row (below 1: smaller). dNLL: the extra bits per answer a reader pays on what lossy")
	why("retention leaves (0: nothing dropped). kept: the share of predicted coordinates stored.")
	var js bytes.Buffer
	if err := runBench([]string{"--model", bundlePath, "--in", evalPath, "--quiet", "--json"}, &js, stderr); err != nil {
		return err
	}
	var rep bench.Report
	if err := json.Unmarshal(js.Bytes(), &rep); err != nil {
		return fmt.Errorf("demo: reading the bench report: %v", err)
	}
	printBenchReport(stdout, &rep, benchTextNoSpeed)
	fmt.Fprintln(stdout)
	for _, line := range demoConclusion(&rep, *wmSteps, train.Episodes) {
		fmt.Fprintln(stdout, line)
	}

	fmt.Fprintf(stdout, "\nnext: 'memowm fit --stage all' adds the reader and task-aware retention; 'memowm sweep' compares capacities.\n")
	if *dir == "" {
		if err := os.RemoveAll(out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %s in %.1f s: nothing kept (--dir DIR keeps the files).\n", out, time.Since(began).Seconds())
		return nil
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	fmt.Fprintf(stdout, "kept in %s after %.1f s: %s\n", out, time.Since(began).Seconds(), strings.Join(names, ", "))
	return nil
}

// demoConclusion states what the bench report's numbers support: the
// smallest file, memowm's best row against the best general-purpose
// compressor and the order-1 context model, the world model's own share,
// and what the shared bundle changes. Every figure comes from rep.
func demoConclusion(rep *bench.Report, wmSteps, trainEpisodes int) []string {
	var best, gen, order1, wm, mixNoWM, wmAlone *bench.Row
	for i := range rep.Methods {
		m := &rep.Methods[i]
		switch {
		case m.Name == "best-general" || strings.Contains(m.Name, "-no-"):
			// a copy, or an ablation simulated from ideal bits: no file
			if m.Name == "wm-mix-no-wm" {
				mixNoWM = m
			}
			continue
		case bench.IsGeneral(m.Name):
			if gen == nil || m.BitsPerObs < gen.BitsPerObs {
				gen = m
			}
		case m.Name == "order1-context":
			order1 = m
		case strings.HasPrefix(m.Name, "wm-"):
			if m.Name == "wm-all-send" {
				wmAlone = m
			}
			if m.DeltaNLLBits != nil && *m.DeltaNLLBits == 0 && (wm == nil || m.BitsPerObs < wm.BitsPerObs) {
				wm = m
			}
		}
		lossless := m.DeltaNLLBits != nil && *m.DeltaNLLBits == 0
		if m.Name != "fixed-width" && lossless && (best == nil || m.BitsPerObs < best.BitsPerObs) {
			best = m
		}
	}
	if best == nil || gen == nil || wm == nil {
		return []string{"conclusion: the bench report lacks the rows to compare"}
	}
	pct := func(a, b float64) string { // a relative to b
		if a >= b {
			return fmt.Sprintf("%.1f%% larger than", 100*(a/b-1))
		}
		return fmt.Sprintf("%.1f%% smaller than", 100*(1-a/b))
	}
	var out []string
	line := fmt.Sprintf("conclusion: smallest lossless file here: %s, %.1f bits/obs", best.Name, best.BitsPerObs)
	if best == wm {
		line += fmt.Sprintf(": %.3fx the best general-purpose compressor (%s, %.1f)", wm.BitsPerObs/gen.BitsPerObs, gen.Name, gen.BitsPerObs)
		if order1 != nil {
			line += fmt.Sprintf(" and %.3fx the order-1 context model (%.1f)", wm.BitsPerObs/order1.BitsPerObs, order1.BitsPerObs)
		}
		out = append(out, line+".")
	} else {
		out = append(out, line+fmt.Sprintf("; memowm's smallest, %s (%.1f), is %s it.", wm.Name, wm.BitsPerObs, pct(wm.BitsPerObs, best.BitsPerObs)))
	}
	if wm.Name == "wm-mix" && mixNoWM != nil {
		out = append(out, fmt.Sprintf("  the world model's share of it: without the world model the mix would take %.1f bits/obs (wm-mix-no-wm), so it saves %.1f%%;",
			mixNoWM.BitsPerObs, 100*(1-wm.BitsPerObs/mixNoWM.BitsPerObs)))
	}
	if wmAlone != nil && order1 != nil {
		out = append(out, fmt.Sprintf("  alone, the world model (wm-all-send, %.1f) is %s the order-1 context model (%.1f), after %d training steps on %d episodes (--wm-steps).",
			wmAlone.BitsPerObs, pct(wmAlone.BitsPerObs, order1.BitsPerObs), order1.BitsPerObs, wmSteps, trainEpisodes))
	}
	if rep.BundleBytes > 0 {
		total := wm.BitsPerObs + rep.BundleBitsPerObs
		switch {
		case total <= gen.BitsPerObs:
			out = append(out, fmt.Sprintf("  even with the bundle (%s) spread over these %d observations, %s is smaller: %.1f bits/obs against %.1f.",
				humanBytes(rep.BundleBytes), rep.Observations, wm.Name, total, gen.BitsPerObs))
		case wm.BitsPerObs < gen.BitsPerObs:
			out = append(out, fmt.Sprintf("  the bundle (%s) is shared by every file it encodes: over these %d observations alone it adds %.1f bits/obs and %s wins;",
				humanBytes(rep.BundleBytes), rep.Observations, rep.BundleBitsPerObs, gen.Name))
			out = append(out, fmt.Sprintf("  at %.1f bits/obs saved it pays for itself after about %.0f observations of data like this.",
				gen.BitsPerObs-wm.BitsPerObs, float64(rep.BundleBytes*8)/(gen.BitsPerObs-wm.BitsPerObs)))
		default:
			out = append(out, fmt.Sprintf("  %s is smaller here even before the bundle (%s) is counted: memowm does not pay on data like this.",
				gen.Name, humanBytes(rep.BundleBytes)))
		}
	}
	return out
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
