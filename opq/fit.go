package opq

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
)

// ErrTooFewStates is wrapped by Fit's error when there are fewer training
// points per codebook than codewords: k-means++ cannot seed the codebooks.
var ErrTooFewStates = errors.New("too few training states")

// Random streams: every random choice draws from PCG(Seed, stream).
const (
	streamSample = 1
	streamFinal  = 1 << 32 // + book
	streamRound  = 2 << 32 // + round<<20 + book
)

// fitter carries Fit's state between its steps.
type fitter struct {
	cfg     Config
	q       *Quantizer
	states  [][]float32
	workers int
	mu      sync.Mutex // serialises Progress
}

// Fit learns a Quantizer from training states, each Shape.StateLen() float32
// values, slot-major. It needs at least Codewords states (Codewords/Slots
// with shared codebooks); every value must be finite. The result depends only
// on states and cfg, never on GOMAXPROCS or cfg.Workers.
func Fit(states [][]float32, cfg Config) (*Quantizer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	f := &fitter{cfg: cfg, states: states, workers: cfg.Workers}
	if f.workers == 0 {
		f.workers = runtime.GOMAXPROCS(0)
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	f.q = newQuantizer(cfg.Shape, cfg.Codewords, cfg.Shared)
	f.q.info = Info{
		Rotation: cfg.Rotation, Rounds: cfg.Rounds, Iterations: cfg.Iterations,
		RoundIterations: cfg.RoundIterations, MaxPointsPerCentroid: cfg.MaxPointsPerCentroid,
		RotationStates: cfg.RotationStates, StdFloor: cfg.StdFloor, Seed: cfg.Seed,
		TrainStates: len(states),
	}
	if cfg.Rotation == NoRotation {
		f.q.info.Rounds = 0
	}
	f.statistics()

	perm := rand.New(rand.NewPCG(cfg.Seed, streamSample)).Perm(len(states))
	if err := f.rotation(perm[:min(len(states), cfg.RotationStates)]); err != nil {
		return nil, err
	}
	f.final(perm[:f.finalStates()])
	f.q.derive()
	if len(cfg.HeldOut) > 0 {
		qu, err := f.q.Evaluate(cfg.HeldOut)
		if err != nil {
			return nil, fmt.Errorf("%w (a held-out state)", err)
		}
		f.q.info.HeldOutStates, f.q.info.HeldOutR2 = qu.States, qu.R2
	}
	return f.q, nil
}

func (f *fitter) progress(p Progress) {
	if f.cfg.Progress != nil {
		f.mu.Lock()
		f.cfg.Progress(p)
		f.mu.Unlock()
	}
}

// check validates the training states.
func (f *fitter) check() error {
	s, k := f.cfg.Shape, f.cfg.Codewords
	n := len(f.states)
	if n == 0 {
		return fmt.Errorf("opq: %w: the training set is empty", ErrTooFewStates)
	}
	points := n
	if f.cfg.Shared {
		points = n * s.Slots
	}
	if points < k {
		need := k
		if f.cfg.Shared {
			need = (k + s.Slots - 1) / s.Slots
		}
		return fmt.Errorf("opq: %w: %d states give %d points per codebook, fewer than the %d codewords: k-means cannot seed them from fewer than %d states (and a held-out reconstruction to rely on takes %d)",
			ErrTooFewStates, n, points, k, need, ReliableStates)
	}
	for i, st := range f.states {
		if len(st) != s.StateLen() {
			return fmt.Errorf("opq: training state %d has %d values, want %d (%v)", i, len(st), s.StateLen(), s)
		}
	}
	var bad atomic.Int64
	bad.Store(int64(n))
	f.parallel(n, func(_, i int) {
		for _, v := range f.states[i] {
			if v-v != 0 {
				for {
					old := bad.Load()
					if int64(i) >= old || bad.CompareAndSwap(old, int64(i)) {
						break
					}
				}
				return
			}
		}
	})
	if i := int(bad.Load()); i < n {
		for c, v := range f.states[i] {
			if v-v != 0 {
				return fmt.Errorf("opq: training state %d: value %g at slot %d channel %d is not finite", i, v, c/s.Dim, c%s.Dim)
			}
		}
	}
	return nil
}

// statistics sets mean, std (floored) and invStd of every (slot, channel),
// each a float64 sum over the states in order.
func (f *fitter) statistics() {
	f.progress(Progress{Stage: "statistics", Total: len(f.states)})
	q := f.q
	sl := q.shape.StateLen()
	const span = 512
	spans := (sl + span - 1) / span
	inv := 1 / float64(len(f.states))
	variance := make([]float64, sl)
	f.parallel(spans, func(_, b int) {
		lo, hi := b*span, min(sl, (b+1)*span)
		var sum, sq [span]float64
		for _, st := range f.states {
			for c, v := range st[lo:hi] {
				sum[c] += float64(v)
			}
		}
		for c := lo; c < hi; c++ {
			q.mean[c] = float32(sum[c-lo] * inv)
		}
		for _, st := range f.states {
			for c, v := range st[lo:hi] {
				d := float64(v) - float64(q.mean[lo+c])
				sq[c] += float64(d * d)
			}
		}
		for c := lo; c < hi; c++ {
			variance[c] = sq[c-lo] * inv
		}
	})
	var total float64
	for _, v := range variance {
		total += v
	}
	floor := 1.0
	if total > 0 {
		floor = f.cfg.StdFloor * math.Sqrt(total/float64(sl))
	}
	for c, v := range variance {
		q.std[c] = float32(max(math.Sqrt(v), floor))
		q.invStd[c] = 1 / q.std[c]
	}
	f.progress(Progress{Stage: "statistics", Done: len(f.states), Total: len(f.states)})
}

// finalStates is how many states the final k-means sample needs: every
// per-(slot, subspace) codebook sees each sampled state once; a shared
// codebook sees every slot of each sampled state.
func (f *fitter) finalStates() int {
	want := f.cfg.MaxPointsPerCentroid * f.cfg.Codewords
	if f.cfg.Shared {
		want = (want + f.cfg.Shape.Slots - 1) / f.cfg.Shape.Slots
	}
	return min(len(f.states), want)
}

// transform returns the standardised states idx, (len(idx)*Slots, Dim),
// rotated by rot unless rot is nil.
func (f *fitter) transform(idx []int, rot []float32) []float32 {
	q := f.q
	sl := q.shape.StateLen()
	out := make([]float32, len(idx)*sl)
	per := q.statesPerChunk()
	chunks := (len(idx) + per - 1) / per
	scratch := make([][]float32, f.workers)
	f.parallel(chunks, func(w, c int) {
		lo, hi := c*per, min(len(idx), (c+1)*per)
		x := out[lo*sl : hi*sl]
		if rot != nil {
			if scratch[w] == nil {
				scratch[w] = make([]float32, per*sl)
			}
			x = scratch[w][:(hi-lo)*sl]
		}
		for i := lo; i < hi; i++ {
			// Training states were checked finite.
			_ = q.standardizeTo(x[(i-lo)*sl:(i-lo+1)*sl], f.states[idx[i]], idx[i])
		}
		if rot != nil {
			q.rotateTo(out[lo*sl:hi*sl], x, rot, (hi-lo)*q.shape.Slots)
		}
	})
	return out
}

// parallel calls fn(worker, i) for i in [0, n) on f.workers goroutines.
func (f *fitter) parallel(n int, fn func(w, i int)) {
	workers := min(f.workers, n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			fn(0, i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(w, i)
			}
		}()
	}
	wg.Wait()
}
