package codec

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Episodes are independent once the predictor has run: each has its own
// coder, stream, adaptive models and closed loop. The writer and the
// decoder code the episodes of a batch on several goroutines, one episode
// on one goroutine at a time, and meet again before the next step's
// predictor call. Nothing an episode's coding reads is written by another
// episode's (the neighbour order, the predictions and the retention policy
// are read only; the context-table pools are sync.Pools), so the bytes do
// not depend on the number of goroutines.

// threadsFor is the number of goroutines that code n episodes when asked
// for threads (0 or less: GOMAXPROCS).
func threadsFor(threads, n int) int {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	return max(1, min(threads, n))
}

// forEach runs f(i) for every i in [0, n) on up to threads goroutines (the
// caller's among them) and returns the error of the lowest i whose f
// failed: what a loop over i in order that stops at the first error
// returns. With threads 1 it is that loop.
func forEach(n, threads int, f func(i int) error) error {
	if threads <= 1 || n <= 1 {
		for i := range n {
			if err := f(i); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, n)
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			errs[i] = f(i)
		}
	}
	var wg sync.WaitGroup
	for range min(threads, n) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
