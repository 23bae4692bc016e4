package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/memowm/memowm/worldmodel"
)

// fallbackPredictor is --device auto's predictor on a GPU: when the GPU
// fails during a call (not for bad input), the call is made again on the
// CPU, and every later one goes there, saying once why. The int8 profile
// gives the same integers on both, so a file written partly on each is the
// file either would write.
type fallbackPredictor struct {
	gpu     worldmodel.Predictor
	cpu     func() (worldmodel.Predictor, error)
	onCPU   worldmodel.Predictor
	verb    string
	stderr  io.Writer
	release func() // frees the GPU side once it is given up
}

var _ worldmodel.Predictor = (*fallbackPredictor)(nil)

func (f *fallbackPredictor) Config() worldmodel.Config { return f.gpu.Config() }
func (f *fallbackPredictor) Profile() string           { return f.gpu.Profile() }
func (f *fallbackPredictor) Precision() uint           { return f.gpu.Precision() }

// inputError reports an error about the histories themselves: the CPU
// would refuse them too.
func inputError(err error) bool {
	return errors.Is(err, worldmodel.ErrHistory) || errors.Is(err, worldmodel.ErrCode) || errors.Is(err, worldmodel.ErrAction)
}

func (f *fallbackPredictor) Predict(dst []worldmodel.Prediction, hs []worldmodel.History) ([]worldmodel.Prediction, error) {
	if f.onCPU == nil {
		out, err := f.gpu.Predict(dst, hs)
		if err == nil || inputError(err) {
			return out, err
		}
		cpu, cerr := f.cpu()
		if cerr != nil {
			return out, fmt.Errorf("%w (and the CPU fallback: %v)", err, cerr)
		}
		sayFallback(f.stderr, f.verb, fmt.Errorf("the GPU failed mid-run: %w", err))
		f.onCPU = cpu
		if f.release != nil {
			f.release()
			f.release = nil
		}
	}
	return f.onCPU.Predict(dst, hs)
}
