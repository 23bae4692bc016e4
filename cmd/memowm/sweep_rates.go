package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memowm/memowm/bench"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/trajectory"
)

// The sweep's two rates per preset, measured on the evaluation episodes:
// the memory file's (the file 'memowm encode --lambda 0' writes, which S
// and the break-even horizons count) and the world model's own; and the
// table that reports them.

// measureRates measures pt's rates on eval with the bundle b, read from
// path: the world model's lossless ideal rate (idealRate) and the memory
// file's, eval encoded as 'memowm encode --lambda 0' writes it by default
// into a temporary file in dir, removed after. Both count the same
// observations.
func measureRates(pt *bench.CurvePoint, b *model.Bundle, path, eval, dir string, stderr io.Writer, quiet bool) error {
	pred, err := b.Predictor()
	if err != nil {
		return err
	}
	bits, obs, err := idealRate(b, pred, eval)
	if err != nil {
		return err
	}
	if obs == 0 {
		return fmt.Errorf("%s holds no observations: no rate to measure", eval)
	}
	pt.Rate = bits / float64(obs)
	start := time.Now()
	acc, err := encodeRate(path, eval, dir)
	if err != nil {
		return err
	}
	if acc.Observations != obs {
		return fmt.Errorf("encode counted %d observations of %s, the world model's rate %d", acc.Observations, eval, obs)
	}
	pt.FileRate, pt.FilePrior = acc.FileBitsPerObs, acc.Prior
	if !quiet {
		fmt.Fprintf(stderr, "sweep: %s: encoded %s (%s, %d observations) in %.1f s: %.1f bits/obs, the whole file\n", pt.Name, eval, humanBytes(acc.FileBytes), acc.Observations, time.Since(start).Seconds(), acc.FileBitsPerObs)
	}
	return nil
}

// encodeRate runs 'memowm encode --lambda 0' (its default prior, state
// quality not measured: the file is the same) of eval with the bundle at
// path into a temporary memory file in dir, removed after, and returns
// encode's accounting of the file.
func encodeRate(path, eval, dir string) (accounting, error) {
	f, err := os.CreateTemp(dir, strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))+".eval-*.mwm")
	if err != nil {
		return accounting{}, err
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp)
	var out bytes.Buffer
	if err := runEncode([]string{"--model", path, "--in", eval, "--out", tmp, "--force", "--lambda", "0", "--measure=false", "--quiet", "--json"}, &out, io.Discard); err != nil {
		return accounting{}, fmt.Errorf("encoding %s with %s: %s", eval, path, err.Error())
	}
	var acc accounting
	if err := json.Unmarshal(out.Bytes(), &acc); err != nil {
		return accounting{}, fmt.Errorf("encode's accounting: %w", err)
	}
	return acc, nil
}

// readEarlierCurve reads the curve an earlier sweep left at path, by point
// name; none when there is none, or it cannot be read (said on stderr).
func readEarlierCurve(path string, quiet bool, stderr io.Writer) map[string]bench.CurvePoint {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	pts, err := bench.ReadCurve(f)
	if err != nil {
		if !quiet {
			fmt.Fprintf(stderr, "sweep: %v: measuring every preset's rates again\n", err)
		}
		return nil
	}
	m := map[string]bench.CurvePoint{}
	for _, p := range pts {
		m[p.Name] = p
	}
	return m
}

// trajectorySHA256 is the SHA-256 of a trajectory file's episodes: the
// file's bytes, and a .npy export's index and actions files beside it
// (each length-prefixed), which hold its episodes' bounds and actions.
func trajectorySHA256(path string) (string, error) {
	files := []string{path}
	if f, err := trajectory.FormatOf(path); err == nil && f == trajectory.NumPy {
		files = append(files, trajectory.IndexPath(path), trajectory.ActionsPath(path))
	}
	h := sha256.New()
	for i, name := range files {
		sum, _, err := fileSHA256(name)
		if i > 0 && errors.Is(err, os.ErrNotExist) {
			sum = "absent"
		} else if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%d:%s\n", len(sum), sum)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// refuseEmpty refuses a trajectory file without episodes, on which no rate
// can be measured (0 bits over 0 observations).
func refuseEmpty(flag, path string) error {
	r, err := trajectory.Open(path, trajOpts()...)
	if err != nil {
		return err
	}
	defer r.Close()
	r.SetCompact(true)
	r.SetFacts(false)
	if _, err := r.Next(); err == io.EOF { // the bare sentinel: a damaged file's error may wrap io.EOF
		return fmt.Errorf("%s %s holds no episodes: the rates are measured on its episodes; give a file with at least one", flag, path)
	} else if err != nil {
		return err
	}
	return nil
}

// printSweep writes the sweep's table: each point's rates and shared model,
// the best capacity per horizon and the break-even horizons, saying which
// rate S counts. curve is the --curve file ("" for a measured sweep).
func printSweep(w io.Writer, curve string, pts []bench.CurvePoint, rows []bench.HorizonRow, be []bench.BreakEven) {
	fileRates := bench.RateRule(pts) == "file"
	if fileRates {
		fmt.Fprintf(w, "capacity curve, bits per observation (N+K, actions included):\n"+
			"  file = the memory file 'memowm encode --lambda 0' writes (lossless; prior %s), the whole file\n"+
			"  R    = the world model alone (its lossless ideal rate), for comparison\n"+
			"  B    = the shared model\n", filePriors(pts))
	} else {
		fmt.Fprintf(w, "capacity curve (lossless episodic rate R(P) of the world model alone, bits per observation; B(P) the shared model):\n")
	}
	for _, p := range pts {
		b := "the FP32 weights"
		if p.BundleBytes > 0 {
			b = "the bundle: quantizer, FP32 weights, policy"
		}
		trained := ""
		if p.Steps > 0 {
			trained = fmt.Sprintf(", %d steps", p.Steps)
		}
		if p.TrainSeconds > 0 {
			trained += fmt.Sprintf(", trained in %s", trainTime(p.TrainSeconds))
		}
		rates := fmt.Sprintf("R = %.1f", p.Rate)
		if fileRates {
			rates = fmt.Sprintf("file = %.1f  R = %.1f", p.FileRate, p.Rate)
		}
		fmt.Fprintf(w, "  %-8s %12.0f parameters  %s  B = %s (%s)%s\n", p.Name, p.Params, rates, humanBytes(int64(bench.SharedBits(p)/8)), b, trained)
	}
	if bench.SharedRule(pts) == "weights" {
		fmt.Fprintf(w, "  (%s gives no bundle sizes: B counts the weights alone at FP32, not the quantizer every bundle also holds)\n", curve)
	}
	if !fileRates {
		fmt.Fprintf(w, "  (%s gives no file_bits_per_obs: S and the break-even horizons below are on the world model's rate alone,\n"+
			"   not a memory file's; a file 'memowm encode' writes mixes the model with adaptive contexts and copy, and its rate can be far lower)\n", curve)
		fmt.Fprintf(w, "best capacity by horizon N (S = B/N + R, the world model's rate alone):\n")
	} else {
		fmt.Fprintf(w, "best capacity by horizon N (S = B/N + file, the memory file's rate):\n")
	}
	for _, r := range rows {
		fmt.Fprintf(w, "  N = %-12.4g best %-8s S = %.1f bits/obs\n", r.N, r.Best, minOf(r.Total))
	}
	horizon := func(n float64, why bool) string {
		switch {
		case math.IsInf(n, 1) && why:
			return "never (the larger model's rate is not lower)"
		case math.IsInf(n, 1):
			return "never"
		}
		return fmt.Sprintf("N > %.4g observations", n)
	}
	for _, b := range be {
		if fileRates {
			fmt.Fprintf(w, "break-even %s -> %s: %s on the memory files' rates (on the world models' rates alone: %s)\n", b.Smaller, b.Larger, horizon(b.N, false), horizon(b.ModelN, false))
		} else {
			fmt.Fprintf(w, "break-even %s -> %s: %s on the world models' rates alone\n", b.Smaller, b.Larger, horizon(b.N, true))
		}
	}
}

// filePriors names the priors pts' files were coded under ("mix"; "not
// recorded" when a curve gives none).
func filePriors(pts []bench.CurvePoint) string {
	var names []string
	for _, p := range pts {
		if p.FilePrior != "" && !slices.Contains(names, p.FilePrior) {
			names = append(names, p.FilePrior)
		}
	}
	if len(names) == 0 {
		return "not recorded"
	}
	return strings.Join(names, ", ")
}
