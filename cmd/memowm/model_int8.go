package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/worldmodel"
)

// runModelInt8 is 'memowm model int8': a bundle in the int8 profile made
// from one in the f32 profile, with activation scales calibrated on
// histories of --calib.
func runModelInt8(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("model int8", "--model BUNDLE --calib TRAIN --out BUNDLE8 [flags]",
		"Makes a bundle in the int8 inference profile from one in the f32 profile: int8\n"+
			"weights with a scale per output channel, activation scales calibrated on\n"+
			"--histories windows of CALIB (training data: states or codes, quantized through\n"+
			"the bundle's quantizer), integer LayerNorm, softmax, GELU and copy gate. Memory\n"+
			"files written with it decode to the same bits on every machine and backend.\n"+
			"The new bundle keeps the f32 model, quantizer, policy and reader; its hash is new.", stdout)
	bundlePath := fs.String("model", "", "bundle in the f32 profile (required)")
	calib := fs.String("calib", "", "training trajectories to calibrate on (required)")
	out := fs.String("out", "", "bundle to write, .mwb (required)")
	force := fs.Bool("force", false, forceHelp)
	n := fs.Int("histories", 512, "calibration windows, spread evenly over CALIB's transitions")
	threads := fs.Int("threads", runtime.GOMAXPROCS(0), "goroutines")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	switch {
	case *bundlePath == "":
		return usagef("--model BUNDLE is required")
	case *calib == "":
		return usagef("--calib TRAIN is required")
	case *out == "":
		return usagef("--out BUNDLE8 is required")
	case *n < 1:
		return usagef("--histories %d: want at least 1", *n)
	case *threads < 1 || *threads > 1024:
		return usagef("--threads %d is outside [1, 1024]", *threads)
	}
	if err := checkOutput(*out, outBundle, *force, input{"--model", *bundlePath}, input{"--calib", *calib}); err != nil {
		return err
	}
	b, err := model.Load(*bundlePath)
	if err != nil {
		return err
	}
	if b.Profile != worldmodel.ProfileF32 {
		return fmt.Errorf("%s is in the %s profile already: give the f32 bundle it was made from", *bundlePath, b.Profile)
	}
	logf := func(format string, a ...any) {
		if !*quiet {
			fmt.Fprintf(stderr, format, a...)
		}
	}
	start := time.Now()
	data, err := readCorpus(*calib, b.OPQ, filepath.Dir(*out), logf)
	if err != nil {
		return err
	}
	defer data.Close()
	cfg := b.Model.Config()
	hs, err := cfg.CalibrationHistories(data, *n)
	if err != nil {
		return nameFile(*calib, err)
	}
	logf("model int8: calibrating on %s of %s\n", count(len(hs), "window"), *calib)
	nb, err := b.ToInt8(hs, *threads)
	if err != nil {
		return err
	}
	watchOutputs(stderr, "model int8", *out)
	if err := nb.Save(*out); err != nil {
		return err
	}
	st, err := os.Stat(*out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: profile int8, %s, bundle %s, calibrated on %s of %s (%.1f s)\n",
		*out, humanBytes(st.Size()), nb.HashString()[:12], count(len(hs), "window"), *calib, time.Since(start).Seconds())
	return nil
}
