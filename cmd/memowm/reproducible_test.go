package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/memowm/memowm/model"
)

// TestFitReproducible: the same 'fit --stage wm' (inputs, flags, seed; the
// quantizer fitted in the run, held-out data choosing the weights kept)
// gives the same bundle byte for byte, run after run and on 1 or 2
// GOMAXPROCS or 3 training threads. The bundle's bytes hold no training
// time: that is in the provenance sidecar, which Load reads back.
func TestFitReproducible(t *testing.T) {
	dir := t.TempDir()
	traj, held := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "h.arrow")
	mustRun(t,
		[]string{"sim", "--episodes", "4", "--steps", "20", "--dim", "32", "--out", traj, "--quiet"},
		[]string{"sim", "--episodes", "2", "--steps", "20", "--dim", "32", "--seed", "5", "--out", held, "--quiet"},
	)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first []byte
	for i, run := range []struct {
		procs int
		extra []string
	}{{2, nil}, {2, nil}, {1, nil}, {2, []string{"--threads", "3"}}} {
		runtime.GOMAXPROCS(run.procs)
		out := filepath.Join(dir, fmt.Sprintf("b%d.mwb", i))
		args := append([]string{"fit", "--stage", "wm", "--in", traj, "--eval", held, "--preset", "tiny", "--steps", "4", "--batch", "4",
			"--eval-every", "2", "--checkpoint-every", "1", "--seed", "3", "--out", out, "--quiet"}, run.extra...)
		if code, o, errs := memowm(t, args...); code != 0 {
			t.Fatalf("%v: %d\n%s%s", args, code, o, errs)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = data
			r, err := model.Read(bytes.NewReader(data))
			if err != nil || r.Training == nil || r.Training.Seconds != 0 || r.Training.PriorSeconds != 0 {
				t.Fatalf("the bundle's bytes record a training time: %+v %v", r.Training, err)
			}
			b, err := model.Load(out)
			if err != nil || !(b.Training.Seconds > 0) {
				t.Fatalf("the provenance sidecar gives no training time: %+v %v", b.Training, err)
			}
			continue
		}
		if !bytes.Equal(data, first) {
			t.Fatalf("run %d (GOMAXPROCS %d, %v) wrote another bundle than run 0", i, run.procs, run.extra)
		}
	}
}
