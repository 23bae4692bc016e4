package worldmodel

import (
	"sync"

	"github.com/memowm/memowm/internal/fgemm"
)

// The backward pass of each layer of forward.go, written beside it in the
// manner of llm.c: one function per layer, gradients first, shapes in the
// comment (shape letters in params.go). Training only: these functions are
// deterministic for a fixed thread count and in fact for any thread count
// (parallel work splits outputs; every sum runs in one fixed order), but they
// are not part of the f32 inference profile and use the standard library's
// float64 functions where convenient.

// parallelN runs fn(i) for i in [0, n) on up to threads goroutines; each i
// must write its own outputs.
func parallelN(threads, n int, fn func(i int)) {
	t := min(threads, n)
	if t <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < t; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += t {
				fn(i)
			}
		}(w)
	}
	wg.Wait()
}

// parallelRows runs fn over row ranges of rowChunk rows.
func parallelRows(threads, rows int, fn func(lo, hi int)) {
	chunks := (rows + rowChunk - 1) / rowChunk
	parallelN(threads, chunks, func(i int) {
		lo := i * rowChunk
		fn(lo, min(lo+rowChunk, rows))
	})
}

// colChunk is the number of columns one parallel reduction task covers.
const colChunk = 64

// colSumAdd: dst (k) += sum over rows of x (rows, k). Each chunk of rowChunk
// rows is summed top to bottom into its row of part (grown to
// chunks x k), then the chunks are added in order: the same bits for any
// thread count, and every row read once.
func colSumAdd(dst, x []float32, rows, k, threads int, part *[]float32) {
	chunks := (rows + rowChunk - 1) / rowChunk
	*part = grow(*part, chunks*k)
	pt := *part
	parallelRows(threads, rows, func(lo, hi int) {
		fgemm.ColSum(pt[lo/rowChunk*k:][:k], x[lo*k:hi*k], hi-lo, k)
	})
	addParts(dst, pt, k, chunks, k, threads)
}

// addParts: dst (k) += sum over c < chunks of part[c*stride : c*stride+k],
// chunks in order; goroutines split the columns.
func addParts(dst, part []float32, stride, chunks, k, threads int) {
	parallelN(threads, (k+colChunk-1)/colChunk, func(ci int) {
		lo, hi := ci*colChunk, min(ci*colChunk+colChunk, k)
		var acc [colChunk]float32
		a := acc[:hi-lo]
		for c := 0; c < chunks; c++ {
			for i, v := range part[c*stride+lo : c*stride+hi] {
				a[i] += v
			}
		}
		for i, v := range a {
			dst[lo+i] += v
		}
	})
}

// linearBackward is the backward of y (rows, out) = x (rows, in) w (in, out) + b,
// with fgemm's products (the transposes are read in place):
//
//	dx (rows, in) = dy w^T          (nil dx: skipped)
//	dw (in, out)  = x^T dy          (overwritten: one contribution per step)
//	db (out)     += column sums of dy  (nil db: skipped)
//
// part is colSumAdd's scratch.
func linearBackward(dx, dw, db, dy, x, w []float32, rows, in, out int, ws *fgemm.Workspace, part *[]float32) {
	if rows == 0 {
		return
	}
	ws.MulTo(dw, out, x, in, dy, out, in, rows, out, fgemm.TransA)
	if db != nil {
		colSumAdd(db, dy, rows, out, ws.Threads(), part)
	}
	if dx != nil {
		ws.MulTo(dx, in, dy, out, w, out, rows, out, in, fgemm.TransB)
	}
}

// layerNormBackward is the backward of layerNormTo: given x (rows, W), the
// gain g and dy (rows, W), it sets dx (rows, W) (overwriting), and adds the
// gain and bias gradients to dg and db. xhat (rows, W) is scratch; part is
// per-chunk partial sums of dg and db (as colSumAdd), grown here.
//
//	xhat = (x - mean) * rstd; y = xhat * g + b
//	dxhat = dy * g
//	dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
func layerNormBackward(dx, dg, db, dy, x, g, xhat []float32, rows, W, threads int, part *[]float32) {
	chunks := (rows + rowChunk - 1) / rowChunk
	*part = grow(*part, chunks*2*W)
	pt := *part
	parallelRows(threads, rows, func(lo, hi int) {
		pg := pt[lo/rowChunk*2*W:][:2*W]
		pb := pg[W:]
		pg = pg[:W]
		clear(pg)
		clear(pb)
		fgemm.LayerNormBackward(dx[lo*W:hi*W], xhat[lo*W:hi*W], pg, pb, x[lo*W:hi*W], dy[lo*W:hi*W], g, hi-lo, W, lnEps)
	})
	addParts(dg, pt, 2*W, chunks, W, threads)
	addParts(db, pt[W:], 2*W, chunks, W, threads)
}

// geluBackward: du (rows*k) = dy * gelu'(u) where u = pre + b per row
// (pre (rows, k), b (k)) and act = gelu(u) (the forward's output), for the
// tanh form of geluf (fgemm.GeluBackward, rows split across goroutines).
func geluBackward(du, dy, pre, act, b []float32, rows, k, threads int) {
	parallelRows(threads, rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			o := r * k
			fgemm.GeluBackward(du[o:o+k], dy[o:o+k], pre[o:o+k], act[o:o+k], b[:k])
		}
	})
}

// attnBackScratch is one goroutine's scratch for the training attention,
// forward and backward.
type attnBackScratch struct {
	p, dp []float32 // (K, S) a query block's probabilities, transposed (keys x slots); their gradient
	qt    []float32 // (hd, T) the head's queries, transposed
	dot   []float32 // (hd, Tq) the head's output gradient, transposed
	w     *fgemm.Workspace
}

// attentionHeadBackward is the backward of attentionHeadTrain for one
// history of n blocks and head h: given qkv (T, 3W) of the forward and dout,
// the gradient of the head's output columns for query blocks [from, n) (rows
// as attentionHead writes them, stride W), it writes the head's q columns of
// dqkv for those query blocks and adds into its k and v columns for all
// blocks (dqkv (T, 3W), zero where nothing flows). Per query block i, with
// K = (i+1) S keys, the probabilities are recomputed as the forward does and
// every product is one fgemm call on the transposed (keys x slots) blocks,
// reading its operands in place (queries and dO transposed once):
//
//	dP^T = V dO_i^T;  dS^T = P^T * (dP^T - colsum(dP^T * P^T)) * scale
//	dQ_i = dS K;  dK += dS^T Q_i;  dV += P^T dO_i
func (c *Config) attentionHeadBackward(dqkv, dout, qkv []float32, n, h, from int, s *attnBackScratch) {
	S, W, hd := c.Slots, c.Width(), c.HeadDim()
	W3 := 3 * W
	T, Tq := n*S, (n-from)*S
	s.p, s.dp = grow(s.p, T*S), grow(s.dp, T*S)
	s.qt, s.dot = grow(s.qt, hd*T), grow(s.dot, hd*Tq)
	qo, ko, vo := h*hd, W+h*hd, 2*W+h*hd
	transposeCols(s.qt, qkv[qo:], W3, T, hd)
	transposeCols(s.dot, dout[qo:], W, Tq, hd)
	scale := 1 / sqrtf(float32(hd))
	for i := from; i < n; i++ {
		K := (i + 1) * S
		pt, dpt := s.p[:K*S], s.dp[:K*S]
		q := qkv[i*S*W3+qo:]
		s.w.MulTo(pt, S, qkv[ko:], W3, s.qt[i*S:], T, K, hd, S, 0)
		fgemm.SoftmaxCols(pt, K, S, scale)
		do := dout[(i-from)*S*W+qo:]
		s.w.MulTo(dpt, S, qkv[vo:], W3, s.dot[(i-from)*S:], Tq, K, hd, S, 0)
		fgemm.SoftmaxColsBackward(dpt, pt, K, S, scale)
		s.w.MulTo(dqkv[i*S*W3+qo:], W3, dpt, S, qkv[ko:], W3, S, K, hd, fgemm.TransA)
		s.w.MulTo(dqkv[ko:], W3, dpt, S, q, W3, K, S, hd, fgemm.Acc)
		s.w.MulTo(dqkv[vo:], W3, pt, S, do, W, K, S, hd, fgemm.Acc)
	}
}
