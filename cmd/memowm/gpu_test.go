package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memowm/memowm/cuda"
)

// TestDeviceFlag: --device on encode, verify and decode. The GPU path (its
// kernels run by the PTX emulator) writes the CPU's bytes and reads the
// CPU's file; cuda without a GPU fails and writes nothing; auto falls back
// to the CPU saying why once; the f32 profile stays on the CPU.
func TestDeviceFlag(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	mustRun(t,
		[]string{"sim", "--episodes", "4", "--steps", "20", "--dim", "32", "--out", p("fit.arrow"), "--quiet"},
		[]string{"fit", "--in", p("fit.arrow"), "--out", p("b.mwb"), "--preset", "tiny", "--quiet"},
		[]string{"model", "int8", "--model", p("b.mwb"), "--calib", p("fit.arrow"), "--out", p("b8.mwb"), "--histories", "8"},
		// the episodes coded: short, as the emulator is slow
		[]string{"sim", "--episodes", "2", "--steps", "5", "--dim", "32", "--seed", "2", "--out", p("t.arrow"), "--quiet"},
		[]string{"encode", "--model", p("b8.mwb"), "--in", p("t.arrow"), "--out", p("cpu.mwm"), "--lambda", "0", "--device", "cpu", "--quiet"},
	)
	code, out, errs := memowm(t, "encode", "--model", p("b8.mwb"), "--in", p("t.arrow"), "--out", p("emu.mwm"), "--lambda", "0", "--device", "emulator", "--quiet")
	if code != 0 || !strings.Contains(out, "world model on emulator") {
		t.Fatalf("encode --device emulator: %d\n%s%s", code, out, errs)
	}
	a, _ := os.ReadFile(p("cpu.mwm"))
	b, _ := os.ReadFile(p("emu.mwm"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("the files written on the CPU and through the GPU kernels differ (%d and %d bytes)", len(a), len(b))
	}
	if code, out, errs := memowm(t, "verify", "--model", p("b8.mwb"), "--device", "emulator", p("cpu.mwm")); code != 0 {
		t.Fatalf("verify --device emulator: %d\n%s%s", code, out, errs)
	}
	if code, out, errs := memowm(t, "decode", "--model", p("b8.mwb"), "--in", p("cpu.mwm"), "--out", p("dec.arrow"), "--device", "emulator"); code != 0 || !strings.Contains(out, "every checksum holds") {
		t.Fatalf("decode --device emulator: %d\n%s%s", code, out, errs)
	}

	// Training with the blocks on the emulator: a bundle, and the device named.
	code, _, errs = memowm(t, "fit", "--stage", "wm", "--in", p("fit.arrow"), "--model", p("b.mwb"), "--out", p("wm.mwb"),
		"--preset", "tiny", "--steps", "2", "--batch", "2", "--device", "emulator")
	if code != 0 || !strings.Contains(errs, "the blocks run on PTX emulator") {
		t.Fatalf("fit --stage wm --device emulator: %d\n%s", code, errs)
	}
	if _, err := os.Stat(p("wm.mwb")); err != nil {
		t.Fatal(err)
	}
	if d, err := cuda.Open(0); err == nil {
		d.Close()
		t.Log("a GPU opened: the no-GPU refusals are not checked")
	} else {
		code, _, errs := memowm(t, "fit", "--stage", "wm", "--in", p("fit.arrow"), "--model", p("b.mwb"), "--out", p("wm-gpu.mwb"),
			"--preset", "tiny", "--steps", "2", "--device", "cuda")
		if code == 0 || !strings.Contains(errs, "--device cuda: cuda: no GPU") {
			t.Errorf("fit --device cuda without a GPU: %d %q", code, errs)
		}
		for _, f := range []string{"wm-gpu.mwb", "wm-gpu.mwb.ckpt"} {
			if _, err := os.Stat(p(f)); !os.IsNotExist(err) {
				t.Errorf("fit --device cuda without a GPU left %s (%v)", f, err)
			}
		}
		code, _, errs = memowm(t, "encode", "--model", p("b8.mwb"), "--in", p("t.arrow"), "--out", p("gpu.mwm"), "--lambda", "0", "--device", "cuda")
		if code == 0 || !strings.Contains(errs, "--device cuda: cuda: no GPU") {
			t.Errorf("encode --device cuda without a GPU: %d %q", code, errs)
		}
		if _, err := os.Stat(p("gpu.mwm")); !os.IsNotExist(err) {
			t.Errorf("encode --device cuda without a GPU left %s (%v)", p("gpu.mwm"), err)
		}
		code, _, errs = memowm(t, "encode", "--model", p("b8.mwb"), "--in", p("t.arrow"), "--out", p("auto.mwm"), "--lambda", "0", "--quiet")
		if code != 0 || strings.Count(errs, "running on the CPU: no GPU: no CUDA driver") != 1 {
			t.Errorf("encode --device auto without a GPU: %d %q", code, errs)
		}
		if c, _ := os.ReadFile(p("auto.mwm")); !bytes.Equal(a, c) {
			t.Errorf("encode --device auto wrote other bytes than --device cpu")
		}
		code, out, _ = memowm(t, "gpu", "info")
		if code != 0 || !strings.HasPrefix(out, "no GPU: no CUDA driver") {
			t.Errorf("gpu info: %d %q", code, out)
		}
		code, out, _ = memowm(t, "gpu", "info", "--json")
		var info struct {
			Available bool   `json:"available"`
			Reason    string `json:"reason"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &info) != nil || info.Available || info.Reason == "" {
			t.Errorf("gpu info --json: %d %q", code, out)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"encode", "--model", p("b.mwb"), "--in", p("t.arrow"), "--out", p("x.mwm"), "--device", "cuda"}, "int8 profile only"},
		{[]string{"verify", "--model", p("b8.mwb"), "--device", "tpu", p("cpu.mwm")}, `--device "tpu"`},
		{[]string{"gpu", "check", "--presets", "huge"}, "unknown preset"},
		{[]string{"gpu", "bench", "--device", "cpu", "--batch", "0"}, "--batch"},
		{[]string{"gpu", "frob"}, "unknown sub-verb"},
		{[]string{"fit", "--stage", "wm", "--in", p("fit.arrow"), "--out", p("x.mwb"), "--device", "tpu"}, `--device "tpu"`},
	} {
		if code, _, errs := memowm(t, c.args...); code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: %d %q, want %q", c.args, code, errs, c.want)
		}
	}
}

// TestGPUVerbEmulator: 'gpu check' and 'gpu bench' on the emulator.
func TestGPUVerbEmulator(t *testing.T) {
	code, out, errs := memowm(t, "gpu", "check", "--device", "emulator", "--presets", "tiny", "--histories", "2")
	if code != 0 || !strings.Contains(out, "all equal on PTX emulator") || !strings.Contains(out, "0 steps, 0 tables, 0 modes, 0 entropies differ") {
		t.Fatalf("gpu check: %d\n%s%s", code, out, errs)
	}
	code, out, errs = memowm(t, "gpu", "bench", "--device", "emulator", "--preset", "tiny", "--batch", "1", "--time", "1ms", "--json")
	var rep struct {
		Rows []struct {
			Batch     int     `json:"batch"`
			ObsPerSec float64 `json:"predict_obs_per_s"`
		} `json:"per_batch"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Rows) != 1 || rep.Rows[0].ObsPerSec <= 0 {
		t.Fatalf("gpu bench: %d\n%s%s", code, out, errs)
	}
	code, out, errs = memowm(t, "gpu", "bench", "--device", "cpu", "--preset", "tiny", "--batch", "2,3", "--time", "1ms")
	if code != 0 || !strings.Contains(out, "obs/s") || strings.Count(out, "\n") != 4 {
		t.Fatalf("gpu bench --device cpu: %d\n%s%s", code, out, errs)
	}
}
