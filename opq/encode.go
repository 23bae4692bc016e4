package opq

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// chunkRows is how many slot rows an Encoder transforms at a time: a few
// states, whose rows and a 64-column tile of the rotation stay in L2.
const chunkRows = 128

// Encoder encodes and decodes batches of states with reusable scratch. It is
// not safe for concurrent use; make one per goroutine. Batches are split
// between up to Workers goroutines; the result does not depend on how.
type Encoder struct {
	q       *Quantizer
	workers int
	work    []*encWork
}

// encWork is one worker's scratch.
type encWork struct {
	x, y []float32 // (chunk states * Slots, Dim)
	dots []float32 // (chunk states, Codewords)

	err      error // the first failure of this worker, at chunk errChunk
	errChunk int
}

// NewEncoder returns an Encoder for q that uses up to GOMAXPROCS goroutines.
func (q *Quantizer) NewEncoder() *Encoder {
	return q.NewEncoderWorkers(runtime.GOMAXPROCS(0))
}

// NewEncoderWorkers returns an Encoder for q that uses up to workers
// goroutines (at least one).
func (q *Quantizer) NewEncoderWorkers(workers int) *Encoder {
	return &Encoder{q: q, workers: max(workers, 1)}
}

// statesPerChunk is the number of states one chunk holds.
func (q *Quantizer) statesPerChunk() int { return max(1, chunkRows/q.shape.Slots) }

func (e *Encoder) scratch(w int) *encWork {
	for len(e.work) <= w {
		q := e.q
		per := q.statesPerChunk()
		rows := per * q.shape.Slots
		e.work = append(e.work, &encWork{
			x:    make([]float32, rows*q.shape.Dim),
			y:    make([]float32, rows*q.shape.Dim),
			dots: make([]float32, per*q.codewords),
		})
	}
	return e.work[w]
}

// forChunks calls f(work, first, count) for every chunk of n states, on up
// to e.workers goroutines, and returns the error of the lowest failing chunk.
func (e *Encoder) forChunks(n int, f func(w *encWork, first, count int) error) error {
	per := e.q.statesPerChunk()
	chunks := (n + per - 1) / per
	workers := min(e.workers, chunks)
	if workers <= 1 {
		w := e.scratch(0)
		for c := 0; c < chunks; c++ {
			if err := f(w, c*per, min(per, n-c*per)); err != nil {
				return err
			}
		}
		return nil
	}
	var next atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		work := e.scratch(w)
		work.err, work.errChunk = nil, chunks
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				if err := f(work, c*per, min(per, n-c*per)); err != nil {
					// Chunks are taken in increasing order, so every chunk
					// below c is taken already and will finish.
					work.err, work.errChunk = err, c
					stop.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	var err error
	low := chunks
	for _, w := range e.work[:workers] {
		if w.err != nil && w.errChunk < low {
			err, low = w.err, w.errChunk
		}
	}
	return err
}

// EncodeBatch encodes the n states in src (n*StateLen values, each slot-major)
// into dst (n*Codes codes). A non-finite value is an error naming the state,
// slot and channel; dst is then partly written. It panics if the lengths do
// not match the shape.
func (e *Encoder) EncodeBatch(dst []uint8, src []float32) error {
	q := e.q
	sl, nc := q.shape.StateLen(), q.shape.Codes
	if len(src)%sl != 0 || len(dst) != len(src)/sl*nc {
		panic(fmt.Sprintf("opq: EncodeBatch of %d values and %d codes does not match %d-value states with %d codes", len(src), len(dst), sl, nc))
	}
	return e.forChunks(len(src)/sl, func(w *encWork, first, count int) error {
		return q.encodeChunk(w, dst[first*nc:(first+count)*nc], src[first*sl:(first+count)*sl], first)
	})
}

// DecodeBatch reconstructs the n states whose codes are in codes (n*Codes)
// into dst (n*StateLen). A code outside the codebook is an error naming the
// observation and coordinate. It panics if the lengths do not match.
func (e *Encoder) DecodeBatch(dst []float32, codes []uint8) error {
	q := e.q
	sl, nc := q.shape.StateLen(), q.shape.Codes
	if len(codes)%nc != 0 || len(dst) != len(codes)/nc*sl {
		panic(fmt.Sprintf("opq: DecodeBatch of %d codes into %d values does not match %d-code states of %d values", len(codes), len(dst), nc, sl))
	}
	return e.forChunks(len(codes)/nc, func(w *encWork, first, count int) error {
		return q.decodeChunk(w, dst[first*sl:(first+count)*sl], codes[first*nc:(first+count)*nc], first)
	})
}

// Encode returns the codes of one state (StateLen values, slot-major).
func (q *Quantizer) Encode(state []float32) ([]uint8, error) {
	if len(state) != q.shape.StateLen() {
		return nil, fmt.Errorf("opq: state has %d values, want %d (%v)", len(state), q.shape.StateLen(), q.shape)
	}
	dst := make([]uint8, q.shape.Codes)
	return dst, q.NewEncoderWorkers(1).EncodeBatch(dst, state)
}

// Decode returns the reconstructed state of one code vector.
func (q *Quantizer) Decode(codes []uint8) ([]float32, error) {
	if len(codes) != q.shape.Codes {
		return nil, fmt.Errorf("opq: code vector has %d codes, want %d", len(codes), q.shape.Codes)
	}
	dst := make([]float32, q.shape.StateLen())
	return dst, q.NewEncoderWorkers(1).DecodeBatch(dst, codes)
}

// standardizeTo writes the standardised states of src into x and checks that
// every value is finite; first is the index of src's first state.
func (q *Quantizer) standardizeTo(x, src []float32, first int) error {
	sl := q.shape.StateLen()
	for i := 0; i < len(src); i += sl {
		for c, v := range src[i : i+sl] {
			if v-v != 0 {
				return fmt.Errorf("opq: state %d: value %g at slot %d channel %d is not finite", first+i/sl, v, c/q.shape.Dim, c%q.shape.Dim)
			}
			x[i+c] = float32((v - q.mean[c]) * q.invStd[c])
		}
	}
	return nil
}

// rotateTo sets y = x m for rows of Dim values and a Dim x Dim matrix m,
// in column tiles of 64 that stay in L2 across the rows. When m is the
// Quantizer's own rotation (or its transpose) and that is the identity, it
// copies.
func (q *Quantizer) rotateTo(y, x, m []float32, rows int) {
	d := q.shape.Dim
	if q.ident && (&m[0] == &q.rot[0] || &m[0] == &q.rotT[0]) {
		copy(y[:rows*d], x[:rows*d])
		return
	}
	for j := 0; j < d; j += 64 {
		mulTo(y[j:], d, x, d, m[j:], d, rows, d, min(64, d-j))
	}
}

func (q *Quantizer) encodeChunk(w *encWork, dst []uint8, src []float32, first int) error {
	s, d, nc, sd, k := q.shape.Slots, q.shape.Dim, q.shape.Codes, q.subDim, q.codewords
	n := len(src) / q.shape.StateLen()
	rows := n * s
	if err := q.standardizeTo(w.x, src, first); err != nil {
		return err
	}
	q.rotateTo(w.y, w.x, q.rot, rows)
	for j := 0; j < nc; j++ {
		slot, m := j/q.subspaces, j%q.subspaces
		b := q.book(j)
		nearest(dst[j:], nc, nil, w.y[slot*d+m*sd:], s*d, n, sd,
			q.booksT[b*k*sd:(b+1)*k*sd], q.norms[b*k:(b+1)*k], w.dots)
	}
	return nil
}

func (q *Quantizer) decodeChunk(w *encWork, dst []float32, codes []uint8, first int) error {
	d, nc, sd, k := q.shape.Dim, q.shape.Codes, q.subDim, q.codewords
	n := len(codes) / nc
	for i := 0; i < n; i++ {
		for j, c := range codes[i*nc : (i+1)*nc] {
			if int(c) >= k {
				return fmt.Errorf("opq: observation %d coordinate %d: code %d is outside the %d codewords", first+i, j, c, k)
			}
			slot, m := j/q.subspaces, j%q.subspaces
			off := (q.book(j)*k + int(c)) * sd
			copy(w.y[(i*q.shape.Slots+slot)*d+m*sd:][:sd], q.books[off:off+sd])
		}
	}
	q.rotateTo(w.x, w.y, q.rotT, n*q.shape.Slots)
	for i := 0; i < len(dst); i += q.shape.StateLen() {
		for c := range q.shape.StateLen() {
			dst[i+c] = float32(w.x[i+c]*q.std[c]) + q.mean[c]
		}
	}
	return nil
}
