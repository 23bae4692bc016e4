package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/memowm/memowm/cuda"
	"github.com/memowm/memowm/worldmodel"
)

var gpuSubVerbs = []string{"info", "check", "bench"}

// runGPU is 'memowm gpu info|check|bench'.
func runGPU(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("want a sub-verb: info, check or bench")
	}
	switch args[0] {
	case "info":
		return runGPUInfo(args[1:], stdout)
	case "check":
		return runGPUCheck(args[1:], stdout, stderr)
	case "bench":
		return runGPUBench(args[1:], stdout, stderr)
	case "-h", "--help", "-help":
		fmt.Fprint(stdout, `Usage: memowm gpu info [--json]
       memowm gpu check [--device cuda|emulator] [--presets tiny,small] [--histories N] [--json]
       memowm gpu bench [--device cuda|emulator|cpu] [--preset P] [--batch 1,8,64] [--json]

info says whether a GPU opens through the CUDA driver, and if not, why.
check runs the parity harness: random int8 models of the presets predict the
same random histories on the CPU and on the device; every step's output and
every table, mode and entropy must be equal, bit for bit.
bench times int8 predictions (observations per second) per batch size.
`)
		return nil
	}
	return usagef("unknown sub-verb %q (want info, check or bench)", args[0])
}

func runGPUInfo(args []string, stdout io.Writer) error {
	fs := newFlags("gpu info", "[--json]", "Says whether GPU 0 opens through the CUDA driver (libcuda.so.1, bound at run\ntime without cgo) and what it is, or why not.", stdout)
	asJSON := fs.Bool("json", false, "print as JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	info, perr := cuda.Probe()
	if *asJSON {
		out := map[string]any{"available": perr == nil}
		if perr == nil {
			out["gpu"] = info
		} else {
			out["reason"] = perr.Error()
		}
		return writeJSON(stdout, out)
	}
	if perr != nil {
		fmt.Fprintf(stdout, "no GPU: %s\nmemowm runs on the CPU.\n", strings.TrimPrefix(perr.Error(), cuda.ErrUnavailable.Error()+": "))
		return nil
	}
	fmt.Fprintf(stdout, "GPU 0: %s\n", info)
	return nil
}

// openDevice opens --device's value for the gpu sub-verbs.
func openDevice(name string) (cuda.Device, error) {
	switch name {
	case "cuda":
		return cuda.Open(0)
	case "emulator":
		return cuda.OpenEmulator()
	}
	return nil, usagef("--device %q: want cuda or emulator", name)
}

func runGPUCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gpu check", "[--device cuda|emulator] [--presets P,...] [--json]",
		"Runs the parity harness: a random int8 model of each preset predicts the same\n"+
			"random histories (lengths 1 to the window) on the CPU and on the device, and\n"+
			"every step's output (tokens, LayerNorms, products, attention, residuals, the\n"+
			"final LayerNorm) and every table, mode and entropy are compared bit for bit.\n"+
			"Fails if anything differs.", stdout)
	device := fs.String("device", "cuda", "cuda or emulator (the PTX emulator on the CPU: slow; tiny preset)")
	presets := fs.String("presets", "tiny,small,base,paper", "presets to check, comma-separated")
	n := fs.Int("histories", 8, "histories per batch")
	seed := fs.Uint64("seed", 1, "seed of the models and histories")
	ops := fs.Bool("ops", true, "compare every step's output, not only the tables")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *n < 1 {
		return usagef("--histories %d must be at least 1", *n)
	}
	names := strings.Split(*presets, ",")
	for i, p := range names {
		names[i] = strings.TrimSpace(p)
		if _, err := worldmodel.Preset(names[i]); err != nil {
			return usagef("--presets: %v", err)
		}
	}
	d, err := openDevice(*device)
	if err != nil {
		return err
	}
	defer d.Close()
	var all []*cuda.Parity
	bad := 0
	for _, p := range names {
		q, err := cuda.RandomInt8(p, *seed)
		if err != nil {
			return err
		}
		for _, gemm := range []string{"dp4a", "mma"} {
			if !d.Has(cuda.GEMMs[gemm]) {
				continue
			}
			res, err := cuda.CompareInt8(d, q, cuda.RandomHistories(q.Config(), *n, *seed), cuda.CompareOptions{Ops: *ops, GEMM: gemm})
			if err != nil {
				return err
			}
			all = append(all, res)
			if !res.OK() {
				bad++
			}
			if !*asJSON {
				fmt.Fprintf(stdout, "%s (CPU %.2f s, device %.2f s)\n", res, res.CPUSeconds, res.DeviceSeconds)
				for _, o := range res.Ops {
					if o.Mismatches > 0 {
						fmt.Fprintf(stdout, "  %s (layer %d): %d of %d values differ, first at %d\n", o.Op, o.Layer, o.Mismatches, o.Values, o.First)
					}
				}
			}
		}
	}
	if *asJSON {
		if err := writeJSON(stdout, map[string]any{"device": d.Info().String(), "per_preset": all, "ok": bad == 0}); err != nil {
			return err
		}
	}
	if bad > 0 {
		return fmt.Errorf("gpu check: %d of %d comparisons differ between the CPU and %s", bad, len(all), d.Info())
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "all equal on %s\n", d.Info())
	}
	return nil
}

// benchRow is one batch size's prediction speed.
type benchRow struct {
	Batch      int     `json:"batch"`
	Calls      int     `json:"calls"`
	Seconds    float64 `json:"seconds"`
	ObsPerSec  float64 `json:"predict_obs_per_s"`
	MsPerBatch float64 `json:"ms_per_call"`
}

func runGPUBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gpu bench", "[--device cuda|emulator|cpu] [--preset P] [--batch 1,8,64] [--json]",
		"Times int8 predictions of a random model of the preset: each call predicts one\n"+
			"observation per history of a full window, for each batch size. The rate is\n"+
			"observations predicted per second (tables, modes and entropies back on the host).", stdout)
	device := fs.String("device", "cuda", "cuda, emulator or cpu (worldmodel.Int8CPU on this machine's cores)")
	preset := fs.String("preset", "paper", "world-model preset")
	batches := fs.String("batch", "1,8,64", "batch sizes, comma-separated")
	dur := fs.Duration("time", 3*time.Second, "time to spend per batch size (at least one call)")
	gemm := fs.String("gemm", "auto", "the matrix-product kernel: auto (mma when the device has it), dp4a or mma")
	seed := fs.Uint64("seed", 1, "seed of the model and histories")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	var sizes []int
	for _, s := range strings.Split(*batches, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 1 {
			return usagef("--batch %q: want positive integers, comma-separated", *batches)
		}
		sizes = append(sizes, v)
	}
	if _, err := worldmodel.Preset(*preset); err != nil {
		return usagef("--preset: %v", err)
	}
	q, err := cuda.RandomInt8(*preset, *seed)
	if err != nil {
		return err
	}
	var p worldmodel.Predictor
	desc := "cpu"
	if *device == "cpu" {
		if p, err = worldmodel.NewInt8CPU(q); err != nil {
			return err
		}
	} else {
		d, err := openDevice(*device)
		if err != nil {
			return err
		}
		defer d.Close()
		g, err := cuda.NewInt8(d, q)
		if err != nil {
			return err
		}
		defer g.Close()
		if *gemm != "auto" {
			if err := g.SetGEMM(*gemm); err != nil {
				return err
			}
		}
		p, desc = g, d.Info().String()+", GEMM "+g.GEMM()
	}
	c := q.Config()
	var rows []benchRow
	for _, B := range sizes {
		hs := cuda.RandomHistories(c, B, *seed)
		for b := range hs { // full windows: the steady state of a long episode
			for len(hs[b]) < c.MaxHistory {
				hs[b] = append(hs[b], hs[b][len(hs[b])-1])
			}
		}
		var pr []worldmodel.Prediction
		if pr, err = p.Predict(pr, hs); err != nil { // warm-up: allocations, JIT
			return err
		}
		calls, t0 := 0, time.Now()
		for calls == 0 || time.Since(t0) < *dur {
			if pr, err = p.Predict(pr, hs); err != nil {
				return err
			}
			calls++
		}
		el := time.Since(t0).Seconds()
		row := benchRow{Batch: B, Calls: calls, Seconds: el, ObsPerSec: float64(B*calls) / el, MsPerBatch: 1000 * el / float64(calls)}
		rows = append(rows, row)
		if !*asJSON {
			fmt.Fprintf(stderr, "gpu bench: %s batch %d: %.0f obs/s\n", *preset, B, row.ObsPerSec)
		}
	}
	if *asJSON {
		return writeJSON(stdout, map[string]any{"device": desc, "preset": *preset, "params": c.NumParams(), "window": c.MaxHistory, "per_batch": rows})
	}
	fmt.Fprintf(stdout, "int8 predictions, preset %s (%d parameters), full %d-state windows, on %s\n", *preset, c.NumParams(), c.MaxHistory, desc)
	fmt.Fprintf(stdout, "%8s %8s %12s %12s\n", "batch", "calls", "ms/call", "obs/s")
	for _, r := range rows {
		fmt.Fprintf(stdout, "%8d %8d %12.2f %12.0f\n", r.Batch, r.Calls, r.MsPerBatch, r.ObsPerSec)
	}
	return nil
}
