package main

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/memowm/memowm/cuda"
	"github.com/memowm/memowm/worldmodel"
)

// flakyGPU stands in for a GPU predictor that fails from its failAt-th
// call on (a device error, not bad input); until then it predicts on the
// CPU.
type flakyGPU struct {
	worldmodel.Predictor
	calls, failAt int
}

func (f *flakyGPU) Predict(dst []worldmodel.Prediction, hs []worldmodel.History) ([]worldmodel.Prediction, error) {
	f.calls++
	if f.calls >= f.failAt {
		return dst, errors.New("cuda: cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED")
	}
	return f.Predictor.Predict(dst, hs)
}

// TestFallbackPredictor: --device auto's GPU predictor moves to the CPU
// when the GPU fails mid-run, redoing the failed call there (same
// integers), saying so once, releasing the GPU; bad input is an error on
// either, with no fallback.
func TestFallbackPredictor(t *testing.T) {
	q, err := cuda.RandomInt8("tiny", 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := worldmodel.NewInt8CPU(q)
	if err != nil {
		t.Fatal(err)
	}
	gpu := &flakyGPU{Predictor: ref, failAt: 3}
	var stderr bytes.Buffer
	released := 0
	fp := &fallbackPredictor{gpu: gpu, verb: "encode", stderr: &stderr, release: func() { released++ },
		cpu: func() (worldmodel.Predictor, error) { return worldmodel.NewInt8CPU(q) }}
	c := q.Config()
	bad := cuda.RandomHistories(c, 1, 1)
	bad[0][0].Codes = bad[0][0].Codes[:2]
	if _, err := fp.Predict(nil, bad); !errors.Is(err, worldmodel.ErrHistory) || fp.onCPU != nil {
		t.Fatalf("bad input: %v (on the CPU: %v)", err, fp.onCPU != nil)
	}
	for call := 0; call < 3; call++ {
		hs := cuda.RandomHistories(c, 2, uint64(10+call))
		got, err := fp.Predict(nil, hs)
		if err != nil {
			t.Fatalf("call %d: %v", call, err)
		}
		want, _ := ref.Predict(nil, hs)
		for b := range want {
			if !slices.Equal(got[b].Freq, want[b].Freq) || !slices.Equal(got[b].Mode, want[b].Mode) {
				t.Fatalf("call %d history %d: not the CPU's prediction", call, b)
			}
		}
	}
	if gpu.calls != 3 || fp.onCPU == nil || released != 1 {
		t.Errorf("the GPU was called %d times (want 3: bad input, one good call, the failure), on the CPU %v, released %d times", gpu.calls, fp.onCPU != nil, released)
	}
	if n := strings.Count(stderr.String(), "encode: running on the CPU:"); n != 1 || !strings.Contains(stderr.String(), "the GPU failed mid-run: cuda: cuLaunchKernel") {
		t.Errorf("stderr %q", stderr.String())
	}
}
