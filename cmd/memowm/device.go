package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/memowm/memowm/cuda"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/worldmodel"
)

const deviceHelp = "where the world model runs: cpu; cuda (the first GPU, through the CUDA driver;\n" +
	"int8 bundles only, as only the int8 profile is bit-exact across devices; an\n" +
	"error without one); auto (cuda for an int8 bundle when a GPU opens, else the\n" +
	"CPU, saying once why); emulator (cuda's kernels run by the PTX emulator on the\n" +
	"CPU: slow, for checking the GPU path without a GPU)"

// deviceFlag adds --device to fs.
func deviceFlag(fs *flag.FlagSet) *string { return fs.String("device", "auto", deviceHelp) }

// fallbackSaid records the writers the CPU fallback's reason went to: said
// once per process (its stderr), and once per in-process run in tests.
var fallbackSaid struct {
	sync.Mutex
	to map[io.Writer]bool
}

func sayFallback(stderr io.Writer, verb string, err error) {
	fallbackSaid.Lock()
	defer fallbackSaid.Unlock()
	if fallbackSaid.to[stderr] {
		return
	}
	if fallbackSaid.to == nil {
		fallbackSaid.to = map[io.Writer]bool{}
	}
	fallbackSaid.to[stderr] = true
	why := err.Error()
	if errors.Is(err, cuda.ErrUnavailable) {
		why = "no GPU: " + strings.TrimPrefix(err.Error(), cuda.ErrUnavailable.Error()+": ")
	}
	line := fmt.Sprintf("%s: running on the CPU: %s", verb, why)
	if len(line) > 80 {
		line = fmt.Sprintf("%s: running on the CPU:\n%s  %s", verb, strings.Repeat(" ", len(verb)), why)
	}
	fmt.Fprintln(stderr, line)
}

// predictorOn returns b's predictor on device, the device's description
// and a function that releases it.
func predictorOn(b *model.Bundle, device, verb string, stderr io.Writer) (worldmodel.Predictor, string, func(), error) {
	cpu := func() (worldmodel.Predictor, string, func(), error) {
		p, err := b.Predictor()
		return p, "cpu", func() {}, err
	}
	int8 := b.Profile == worldmodel.ProfileInt8 && b.Int8 != nil
	var (
		d   cuda.Device
		err error
	)
	switch device {
	case "cpu":
		return cpu()
	case "auto":
		if !int8 {
			return cpu()
		}
		if d, err = cuda.Open(0); err != nil {
			sayFallback(stderr, verb, err)
			return cpu()
		}
	case "cuda", "emulator":
		if !int8 {
			return nil, "", nil, usagef("--device %s runs the int8 profile only (the f32 profile is exact on the CPU alone); make an int8 bundle with 'memowm model int8'", device)
		}
		if d, err = openDevice(device); err != nil {
			return nil, "", nil, err
		}
	default:
		return nil, "", nil, usagef("--device %q: want cpu, cuda, auto or emulator", device)
	}
	p, err := cuda.NewInt8(d, b.Int8, worldmodel.WithPrecision(b.Precision))
	if err != nil {
		d.Close()
		if device == "auto" { // e.g. too little device memory for the model
			sayFallback(stderr, verb, fmt.Errorf("the GPU cannot hold the model: %w", err))
			return cpu()
		}
		return nil, "", nil, err
	}
	desc := "cuda: " + d.Info().String()
	if d.Info().Emulated {
		desc = "emulator: " + d.Info().String()
	}
	release := func() { p.Close(); d.Close() }
	if device == "auto" {
		fp := &fallbackPredictor{gpu: p, verb: verb, stderr: stderr, release: release,
			cpu: func() (worldmodel.Predictor, error) { return b.Predictor() }}
		return fp, desc, func() {
			if fp.release != nil {
				fp.release()
			}
		}, nil
	}
	return p, desc, release, nil
}

// loadBundleOn loads a bundle and its predictor on device.
func loadBundleOn(path, device, verb string, stderr io.Writer) (*model.Bundle, worldmodel.Predictor, string, func(), error) {
	if path == "" {
		return nil, nil, "", nil, usagef("--model BUNDLE is required")
	}
	b, err := model.Load(path)
	if err != nil {
		return nil, nil, "", nil, err
	}
	p, desc, release, err := predictorOn(b, device, verb, stderr)
	if err != nil {
		if errors.Is(err, cuda.ErrUnavailable) {
			return nil, nil, "", nil, fmt.Errorf("--device %s: %w", device, err)
		}
		return nil, nil, "", nil, err
	}
	return b, p, desc, release, nil
}

// blockEngineOn returns the training engine for --device (nil: the CPU's
// own blocks), where it runs, and a function that releases it.
func blockEngineOn(device string, tf32 bool, cfg worldmodel.Config, verb string, stderr io.Writer) (worldmodel.BlockEngine, string, func(), error) {
	none := func() {}
	var (
		d   cuda.Device
		err error
	)
	switch device {
	case "cpu":
		return nil, "the CPU", none, nil
	case "auto":
		if d, err = cuda.Open(0); err != nil {
			sayFallback(stderr, verb, err)
			return nil, "the CPU", none, nil
		}
	case "cuda", "emulator":
		if d, err = openDevice(device); err != nil {
			return nil, "", none, fmt.Errorf("--device %s: %w", device, err)
		}
	default:
		return nil, "", none, usagef("--device %q: want cpu, cuda, auto or emulator", device)
	}
	b, err := cuda.NewBlocks(d, cfg)
	if err != nil {
		d.Close()
		if device == "auto" {
			sayFallback(stderr, verb, fmt.Errorf("the GPU cannot hold the blocks: %w", err))
			return nil, "the CPU", none, nil
		}
		return nil, "", none, err
	}
	if !tf32 {
		b.SetTF32(false)
	}
	prec := "f32 products"
	if b.TF32() {
		prec = "TF32 products on tensor cores"
	}
	return b, d.Info().String() + ", " + prec, func() { b.Close(); d.Close() }, nil
}

const batchHelp = "episodes per predictor batch (default 8 on the CPU, 256 on a GPU: the GPU predicts\nthem all in one call; the file is the same whatever the batch)"

// gpuBatch raises --batch to 256 on a GPU when it was not given.
func gpuBatch(fs *flag.FlagSet, batch *int, device string) {
	if device != "cpu" && !flagSet(fs, "batch") {
		*batch = 256
	}
}
