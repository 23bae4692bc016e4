package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/memowm/memowm/bench"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/reader"
	"github.com/memowm/memowm/trajectory"
)

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", "--model BUNDLE --in TRAJ [--json] [--md]",
		"Measures bits per observation of memowm and its baselines on the same episodes\n"+
			"under one accounting: N + K observations, the same action cost for every row,\n"+
			"physical and ideal bits side by side. States are quantized through the bundle.\n"+
			"The general-purpose rows compress each episode's codes alone, packed at\n"+
			"ceil(log2 C) bits: zstd, zstd-long and xz in process (xz is the pure-Go\n"+
			"LZMA2 of ulikunitz/xz, greedy parse), then the xz and zstd commands when on\n"+
			"PATH, on the same bytes, one process per episode, one thread each:\n"+
			"xz-9e ('xz -9e -c -T1', .xz container counted), zstd-19-long ('zstd -19\n"+
			"--long=27 -T1 -c') and zstd-22-long ('zstd --ultra -22 --long=27 -T1 -c'),\n"+
			"zstd told the episode's length (--stream-size: the bytes it writes for a\n"+
			"file), each decoded back with the same command and compared. Actions are\n"+
			"charged to every row alike. A missing command is noted and its rows\n"+
			"skipped. best-general is the smallest general-purpose row of them all.", stdout)
	bundlePath := fs.String("model", "", "model bundle (required)")
	in := fs.String("in", "", "trajectories (required)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	md := fs.Bool("md", false, "print the table as Markdown")
	batch := fs.Int("batch", 8, batchHelp)
	device := deviceFlag(fs)
	readerURL := readerFlag(fs)
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	external := fs.Bool("external", true, "also run the xz and zstd commands found on PATH as general-purpose rows (--external=false: only the in-process ones)")
	cmpH := fs.Float64("compare-min-entropy", 0, "also compare fills and histories with the rule 'omit when H < BITS' (0: with the bundle's policy, if it omits anything)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *in == "" {
		return usagef("--model BUNDLE and --in TRAJ are required")
	}
	if *batch < 1 {
		return usagef("--batch %d must be at least 1", *batch)
	}
	b, p, devName, release, err := loadBundleOn(*bundlePath, *device, "bench", stderr)
	if err != nil {
		return err
	}
	defer release()
	gpuBatch(fs, batch, devName)
	warnUntrained(stderr, "bench", *bundlePath, b)
	var rd reader.Reader
	if *readerURL.url != "" {
		if rd, _, err = scorerOf(b, readerURL); err != nil {
			return err
		}
	}
	eps, err := readCodesFrom(b, *in)
	if err != nil {
		return err
	}
	var qs []*trajectory.Question
	if all, err := trajectory.ReadQuestions(trajectory.QuestionsPath(*in)); err == nil {
		for i := range all {
			qs = append(qs, &all[i])
		}
	}
	// The memory files of the rows go to a scratch folder that an
	// interrupt removes too.
	scratch, err := os.MkdirTemp("", "memowm-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	removeOnInterrupt(scratch)
	// The external commands run under a context with no deadline, cancelled
	// when bench returns; an interrupt ends them with the process (their
	// pipes close).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	rep, err := bench.Run(b, p, eps, bench.Options{Batch: *batch, Questions: qs, Dir: scratch, External: *external, Context: ctx, Reader: rd, Progress: func(name string) {
		if !*quiet {
			fmt.Fprintf(stderr, "bench: %s (%.1f s)\n", name, time.Since(start).Seconds())
		}
	}})
	if err != nil {
		return err
	}
	var cmp []bench.Comparison
	rule := ""
	switch {
	case *cmpH < 0 || *cmpH > 16:
		return usagef("--compare-min-entropy %g must be in [0, 16] bits", *cmpH)
	case *cmpH > 0:
		pol := model.Policy{Kind: model.MinEntropy, MinEntropyQ16: uint32(math.Round(*cmpH * 65536))}
		rule = pol.String()
		cmp, err = bench.Compare(b, p, eps, pol, qs, *batch)
	case !b.Policy.Lossless():
		rule = "the bundle's policy, " + b.Policy.String()
		cmp, err = bench.Compare(b, p, eps, b.Policy, qs, *batch)
	}
	if err != nil {
		return err
	}
	// The gating baselines calibrated beside lambda, on these episodes.
	var gatings []bench.Comparison
	if len(b.Baselines) > 0 && b.Policy.Kind == model.Risk && !b.Policy.Lossless() {
		if gatings, err = bench.Gatings(b, p, eps, qs, rd, *batch); err != nil {
			return err
		}
	}
	if st, err := os.Stat(*bundlePath); err == nil && rep.Observations > 0 {
		rep.BundleBytes = st.Size()
		rep.QuantizerBytes, _ = b.OPQ.WriteTo(io.Discard)
		rep.BundleBitsPerObs = float64(rep.BundleBytes*8) / float64(rep.Observations)
	}
	if *asJSON {
		e := json.NewEncoder(stdout)
		e.SetIndent("", "  ")
		return e.Encode(struct {
			*bench.Report
			CompareRule string             `json:"compare_rule,omitempty"`
			Compare     []bench.Comparison `json:"compare,omitempty"`
			Baselines   []bench.Comparison `json:"baselines,omitempty"`
			Hints       []string           `json:"hints,omitempty"`
		}{rep, rule, cmp, gatings, rep.Hints()})
	}
	layout := benchText
	if *md {
		layout = benchMarkdown
	}
	printBenchReport(stdout, rep, layout)
	if !*external {
		fmt.Fprintf(stdout, "  external commands: not run (--external=false)\n")
	}
	for _, h := range rep.Hints() {
		fmt.Fprintf(stdout, "hint: %s\n", h)
	}
	if gatings != nil {
		fmt.Fprintf(stdout, "\ngating rules calibrated at the same epsilon (fit --stage lambda --baselines), on these episodes:\n%-24s %10s %7s %9s\n", "rule (parameter)", "ideal", "kept", "dNLL bits")
		for _, c := range gatings {
			dnll := "n/a"
			if c.DeltaNLLBits != nil {
				dnll = fmt.Sprintf("%+.4f", *c.DeltaNLLBits)
			}
			fmt.Fprintf(stdout, "%-24s %10.1f %6.1f%% %9s\n", c.Name, c.IdealBitsPerObs, 100*c.KeptFraction, dnll)
		}
	}
	if cmp != nil {
		fmt.Fprintf(stdout, "\nfill and history at one rule (%s):\n%-15s %10s %7s %14s %9s\n", rule, "variant", "ideal", "kept", "exact recovery", "dNLL bits")
		for _, c := range cmp {
			dnll := "n/a"
			if c.DeltaNLLBits != nil {
				dnll = fmt.Sprintf("%+.4f", *c.DeltaNLLBits)
			}
			fmt.Fprintf(stdout, "%-15s %10.1f %6.1f%% %13.1f%% %9s\n", c.Name, c.IdealBitsPerObs, 100*c.KeptFraction, 100*c.ExactRecovery, dnll)
		}
	}
	return nil
}

// benchLayout is how printBenchReport lays out the rows.
type benchLayout int

const (
	benchText        benchLayout = iota // aligned columns, with the speeds
	benchMarkdown                       // a Markdown table, with the speeds
	benchTextNoSpeed                    // aligned columns without the speeds (the demo: its speeds say little)
)

// printBenchReport prints rep as 'memowm bench' does: the episode count, a
// row per method, the rows' notes, and the shared model's cost.
func printBenchReport(w io.Writer, rep *bench.Report, layout benchLayout) {
	fmt.Fprintf(w, "%s, %s (N+K: %s + %s); bundle %.12s\n",
		count(rep.Episodes, "episode"), count(rep.Observations, "observation"), count(rep.Transitions, "transition"), count(rep.Episodes, "initial state"), rep.Bundle)
	switch layout {
	case benchMarkdown:
		fmt.Fprintf(w, "\n| method | bits/obs | ideal bits/obs | actions | x fixed | x best | delta NLL bits | kept | encode obs/s | decode obs/s |\n")
		fmt.Fprintf(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	case benchText:
		fmt.Fprintf(w, "%-18s %10s %10s %8s %8s %7s %9s %7s %11s %11s\n", "method", "bits/obs", "ideal", "actions", "x fixed", "x best", "dNLL bits", "kept", "enc obs/s", "dec obs/s")
	case benchTextNoSpeed:
		fmt.Fprintf(w, "%-18s %10s %10s %8s %8s %7s %9s %7s\n", "method", "bits/obs", "ideal", "actions", "x fixed", "x best", "dNLL bits", "kept")
	}
	speed := func(v float64) string {
		if v == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f", v)
	}
	for _, m := range rep.Methods {
		dnll := "n/a"
		if m.DeltaNLLBits != nil {
			dnll = fmt.Sprintf("%.4f", *m.DeltaNLLBits)
		}
		switch layout {
		case benchMarkdown:
			fmt.Fprintf(w, "| %s | %.1f | %.1f | %.1f | %.3f | %.3f | %s | %.1f%% | %s | %s |\n", m.Name, m.BitsPerObs, m.IdealBitsPerObs,
				m.ActionBitsPerObs, m.RatioFixedWidth, m.RatioBestGeneral, dnll, 100*m.KeptFraction, speed(m.EncodeObsPerS), speed(m.DecodeObsPerS))
		case benchText:
			fmt.Fprintf(w, "%-18s %10.1f %10.1f %8.1f %8.3f %7.3f %9s %6.1f%% %11s %11s\n", m.Name, m.BitsPerObs, m.IdealBitsPerObs,
				m.ActionBitsPerObs, m.RatioFixedWidth, m.RatioBestGeneral, dnll, 100*m.KeptFraction, speed(m.EncodeObsPerS), speed(m.DecodeObsPerS))
		case benchTextNoSpeed:
			fmt.Fprintf(w, "%-18s %10.1f %10.1f %8.1f %8.3f %7.3f %9s %6.1f%%\n", m.Name, m.BitsPerObs, m.IdealBitsPerObs,
				m.ActionBitsPerObs, m.RatioFixedWidth, m.RatioBestGeneral, dnll, 100*m.KeptFraction)
		}
	}
	for _, m := range rep.Methods {
		if m.Note != "" {
			fmt.Fprintf(w, "  %s: %s\n", m.Name, m.Note)
		}
	}
	for _, x := range rep.External {
		if x.Found {
			fmt.Fprintf(w, "  external command %s (%s, %q): ran %s, one thread\n", x.Command, x.Path, x.Version, andJoin(x.Rows))
		} else {
			fmt.Fprintf(w, "  external command %s: %s; skipped %s\n", x.Command, x.Note, andJoin(x.Rows))
		}
	}
	if rep.BundleBytes > 0 {
		fmt.Fprintf(w, "  shared model: the bundle (%s, %s of it the quantizer) is in no row; spread over these %d observations it adds %.1f bits/obs to every wm row (S = B/N + R); the general-purpose rows need none\n",
			humanBytes(rep.BundleBytes), humanBytes(rep.QuantizerBytes), rep.Observations, rep.BundleBitsPerObs)
	}
}
