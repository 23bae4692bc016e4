package opq

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
)

// rotation sets q.rot from the standardised states idx: the identity, or PCA
// followed by cfg.Rounds OPQ rounds.
func (f *fitter) rotation(idx []int) error {
	q, cfg := f.q, f.cfg
	d, sd := q.shape.Dim, q.subDim
	if cfg.Rotation == NoRotation {
		copy(q.rot, identity(d))
		return nil
	}
	f.progress(Progress{Stage: "pca", Total: 1})
	x := f.transform(idx, nil)
	rows := len(idx) * q.shape.Slots
	m := make([]float64, d*d)
	crossTo(m, x, x, rows, d)
	r, _, err := pcaRotation(m, d, sd)
	if err != nil {
		return err
	}
	f.progress(Progress{Stage: "pca", Done: 1, Total: 1})
	var books []float32
	y := make([]float32, len(x))
	for round := 1; round <= cfg.Rounds; round++ {
		stage := fmt.Sprintf("round %d/%d", round, cfg.Rounds)
		f.rotateRows(y, x, r, rows)
		var codes []uint8
		var mse float64
		books, codes, mse = f.fitBooks(y, len(idx), cfg.RoundIterations, books, streamRound+uint64(round)<<20, stage)
		f.reconstruct(y, codes, books, len(idx))
		crossTo(m, x, y, rows, d)
		if r, err = procrustes(m, d); err != nil {
			return err
		}
		f.progress(Progress{Stage: stage, Done: 1, Total: 1, Distortion: mse})
	}
	copy(q.rot, r)
	return nil
}

// final fits the codebooks on the states idx under the chosen rotation.
func (f *fitter) final(idx []int) {
	rot := f.q.rot
	if f.cfg.Rotation == NoRotation {
		rot = nil // the identity
	}
	y := f.transform(idx, rot)
	books, _, mse := f.fitBooks(y, len(idx), f.cfg.Iterations, nil, streamFinal, "k-means")
	copy(f.q.books, books)
	f.q.info.Distortion = mse
	f.progress(Progress{Stage: "done", Done: 1, Total: 1, Distortion: mse})
}

// rotateRows sets y = x r for rows of Dim values, in parallel chunks.
func (f *fitter) rotateRows(y, x, r []float32, rows int) {
	d := f.q.shape.Dim
	chunks := (rows + chunkRows - 1) / chunkRows
	f.parallel(chunks, func(_, c int) {
		lo, hi := c*chunkRows, min(rows, (c+1)*chunkRows)
		f.q.rotateTo(y[lo*d:hi*d], x[lo*d:hi*d], r, hi-lo)
	})
}

// bookWork is one worker's scratch for fitBooks.
type bookWork struct {
	km       kmeans
	pts, sub []float32
	idx      []int
	dots     []float32
}

// fitBooks runs k-means for every codebook on y, the rotated rows of n
// states ((n*Slots, Dim)), starting from init (or k-means++ when nil) with
// iters Lloyd iterations. It returns the codebooks, the code of every
// (state, coordinate) under them ((n, Codes)), and the mean squared error
// per value on the k-means points.
func (f *fitter) fitBooks(y []float32, n, iters int, init []float32, stream uint64, stage string) ([]float32, []uint8, float64) {
	q := f.q
	s, d, nc, sd, k := q.shape.Slots, q.shape.Dim, q.shape.Codes, q.subDim, q.codewords
	nb := q.Books()
	books := make([]float32, nb*k*sd)
	codes := make([]uint8, n*nc)
	mses := make([]float64, nb)
	work := make([]bookWork, f.workers)
	limit := f.cfg.MaxPointsPerCentroid * k
	var done atomic.Int64
	f.progress(Progress{Stage: stage, Total: nb})
	f.parallel(nb, func(w, b int) {
		bw := &work[w]
		// The pool of book b: row p of the pool is (state p/per, slot).
		per, slot0 := 1, b/q.subspaces
		if q.shared {
			per, slot0 = s, 0
		}
		m := b % q.subspaces
		pool := n * per
		bw.pts = grow(bw.pts, pool*sd)
		for p := 0; p < pool; p++ {
			row := (p/per)*s + slot0 + p%per
			copy(bw.pts[p*sd:(p+1)*sd], y[row*d+m*sd:row*d+(m+1)*sd])
		}
		rng := rand.New(rand.NewPCG(f.cfg.Seed, stream+uint64(b)))
		pts, npts := bw.pts, pool
		if pool > limit {
			bw.idx = partialShuffle(bw.idx, pool, limit, rng)
			bw.sub = grow(bw.sub, limit*sd)
			for i, p := range bw.idx[:limit] {
				copy(bw.sub[i*sd:(i+1)*sd], bw.pts[p*sd:(p+1)*sd])
			}
			pts, npts = bw.sub, limit
		}
		var start []float32
		if init != nil {
			start = init[b*k*sd : (b+1)*k*sd]
		}
		bw.km.run(pts, npts, sd, k, iters, start, rng)
		book := books[b*k*sd : (b+1)*k*sd]
		copy(book, bw.km.cent)
		mses[b] = bw.km.mse

		labels := bw.km.labels
		if npts != pool {
			bw.km.labels = grow(bw.km.labels, pool)
			bw.km.assign(bw.pts, pool, sd, k) // every pool point under the final book
			labels = bw.km.labels
		}
		for p := 0; p < pool; p++ {
			codes[(p/per)*nc+(slot0+p%per)*q.subspaces+m] = labels[p]
		}
		f.progress(Progress{Stage: stage, Done: int(done.Add(1)), Total: nb})
	})
	var mse float64
	for _, v := range mses {
		mse += v
	}
	return books, codes, mse / float64(nb)
}

// partialShuffle returns idx holding, in its first m entries, m distinct
// draws from [0, n) (the start of a Fisher-Yates shuffle).
func partialShuffle(idx []int, n, m int, rng *rand.Rand) []int {
	idx = grow(idx, n)
	for i := range idx {
		idx[i] = i
	}
	for i := 0; i < m; i++ {
		j := i + rng.IntN(n-i)
		idx[i], idx[j] = idx[j], idx[i]
	}
	return idx
}

// reconstruct sets y (n*Slots rows of Dim) to the codewords of codes.
func (f *fitter) reconstruct(y []float32, codes []uint8, books []float32, n int) {
	q := f.q
	d, nc, sd, k := q.shape.Dim, q.shape.Codes, q.subDim, q.codewords
	for i := 0; i < n; i++ {
		for j := 0; j < nc; j++ {
			off := (q.book(j)*k + int(codes[i*nc+j])) * sd
			row := i*q.shape.Slots + j/q.subspaces
			copy(y[row*d+(j%q.subspaces)*sd:][:sd], books[off:off+sd])
		}
	}
}
