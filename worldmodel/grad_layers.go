package worldmodel

import (
	"sync"

	"github.com/memowm/memowm/internal/f32"
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

// colChunk is the number of columns one parallel column-sum task covers.
const colChunk = 64

// transposeTo: dst (k, n) = src (n, k)^T, src with row stride lds.
func transposeTo(dst, src []float32, lds, n, k, threads int) {
	parallelRows(threads, n, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := src[i*lds : i*lds+k]
			for j, v := range row {
				dst[j*n+i] = v
			}
		}
	})
}

// colSumAdd: dst (k) += sum over rows of x (rows, k), each column summed
// top to bottom; goroutines split the columns.
func colSumAdd(dst, x []float32, rows, k, threads int) {
	parallelN(threads, (k+colChunk-1)/colChunk, func(ci int) {
		lo, hi := ci*colChunk, min(ci*colChunk+colChunk, k)
		var acc [colChunk]float32
		for r := 0; r < rows; r++ {
			xr := x[r*k+lo : r*k+hi]
			for i, v := range xr {
				acc[i] += v
			}
		}
		for i := lo; i < hi; i++ {
			dst[i] += acc[i-lo]
		}
	})
}

// linScratch holds the transposes a linear layer's backward needs.
type linScratch struct {
	wt, xt []float32
}

// linearBackward is the backward of y (rows, out) = x (rows, in) w (in, out) + b:
//
//	dx (rows, in) = dy w^T          (nil dx: skipped)
//	dw (in, out)  = x^T dy          (overwritten: one contribution per step)
//	db (out)     += column sums of dy  (nil db: skipped)
func linearBackward(dx, dw, db, dy, x, w []float32, rows, in, out, threads int, s *linScratch) {
	if rows == 0 {
		return
	}
	s.xt = grow(s.xt, in*rows)
	transposeTo(s.xt, x, in, rows, in, threads)
	f32.MulParTo(dw, out, s.xt, rows, dy, out, in, rows, out, threads)
	if db != nil {
		colSumAdd(db, dy, rows, out, threads)
	}
	if dx != nil {
		s.wt = grow(s.wt, out*in)
		transposeTo(s.wt, w, out, in, out, threads)
		f32.MulParTo(dx, in, dy, out, s.wt, in, rows, out, in, threads)
	}
}

// layerNormBackward is the backward of layerNormTo: given x (rows, W), the
// gain g and dy (rows, W), it sets dx (rows, W) (overwriting), and adds the
// gain and bias gradients to dg and db. xhat (rows, W) is scratch.
//
//	xhat = (x - mean) * rstd; y = xhat * g + b
//	dxhat = dy * g
//	dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
func layerNormBackward(dx, dg, db, dy, x, g, xhat []float32, rows, W, threads int) {
	invW := 1 / float32(W)
	parallelRows(threads, rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr, dyr := x[r*W:r*W+W], dy[r*W:r*W+W]
			xh, dxr := xhat[r*W:r*W+W], dx[r*W:r*W+W]
			var s float32
			for _, v := range xr {
				s += v
			}
			mean := s * invW
			var q float32
			for _, v := range xr {
				d := v - mean
				q += d * d
			}
			rstd := 1 / sqrtf(q*invW+lnEps)
			var m1, m2 float32
			for i, v := range xr {
				h := (v - mean) * rstd
				xh[i] = h
				d := dyr[i] * g[i]
				m1 += d
				m2 += d * h
			}
			m1 *= invW
			m2 *= invW
			for i := range dxr {
				dxr[i] = rstd * (dyr[i]*g[i] - m1 - xh[i]*m2)
			}
		}
	})
	// dg += sum_r dy * xhat, db += sum_r dy: columns split, rows in order.
	parallelN(threads, (W+colChunk-1)/colChunk, func(ci int) {
		lo, hi := ci*colChunk, min(ci*colChunk+colChunk, W)
		for r := 0; r < rows; r++ {
			for i := lo; i < hi; i++ {
				d := dy[r*W+i]
				dg[i] += d * xhat[r*W+i]
				db[i] += d
			}
		}
	})
}

// geluBackward: du (rows*k) = dy * gelu'(u) where u = pre + b per row
// (pre (rows, k), b (k)) and act = gelu(u) (the forward's output), for the
// tanh form of geluf:
//
//	gelu(u) = 0.5 u (1 + t), t = tanh(c (u + 0.044715 u^3)), c = sqrt(2/pi)
//	gelu'(u) = 0.5 (1 + t) + 0.5 u (1 - t^2) c (1 + 3 * 0.044715 u^2)
//
// t is read back from the output, t = 2 act / u - 1, except near u = 0.
func geluBackward(du, dy, pre, act, b []float32, rows, k, threads int) {
	const c = 0.7978845608028654
	parallelRows(threads, rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			for i := 0; i < k; i++ {
				u := pre[r*k+i] + b[i]
				var t float32
				if u > 1e-2 || u < -1e-2 {
					t = 2*act[r*k+i]/u - 1
				} else {
					t = tanhf(float32(c * (u + 0.044715*u*u*u)))
				}
				d := 0.5*(1+t) + 0.5*u*(1-t*t)*c*(1+3*0.044715*u*u)
				du[r*k+i] = dy[r*k+i] * d
			}
		}
	})
}

// attnBackScratch is one goroutine's attention-backward scratch.
type attnBackScratch struct {
	kt, vt []float32 // (hd, T) keys and values, transposed
	p, dp  []float32 // (S, T) probabilities, their gradient, then the scores' gradient
	st     []float32 // (T, S) a transposed (S, K) block
	tmp    []float32 // (T, hd)
}

// attentionHeadBackward is the backward of attentionHead for one history of
// n blocks and head h: given qkv (T, 3W) of the forward and dout, the
// gradient of the head's output columns for query blocks [from, n) (rows as
// attentionHead writes them, stride W), it writes the head's q columns of
// dqkv for those query blocks and adds into its k and v columns for all
// blocks (dqkv (T, 3W), zero where nothing flows). The probabilities are
// recomputed as the forward does:
//
//	dP = dO V^T; dS = P * (dP - rowsum(dP * P)); dQ = scale dS K;
//	dK += scale dS^T Q; dV += P^T dO
func (c *Config) attentionHeadBackward(dqkv, dout, qkv []float32, n, h, from int, s *attnBackScratch) {
	S, W, hd := c.Slots, c.Width(), c.HeadDim()
	T := n * S
	W3 := 3 * W
	s.kt, s.vt = grow(s.kt, hd*T), grow(s.vt, hd*T)
	s.p, s.dp = grow(s.p, S*T), grow(s.dp, S*T)
	s.st, s.tmp = grow(s.st, T*S), grow(s.tmp, T*hd)
	kt, vt, p, dp := s.kt, s.vt, s.p, s.dp
	ko, vo, qo := W+h*hd, 2*W+h*hd, h*hd
	for t := 0; t < T; t++ {
		for d := 0; d < hd; d++ {
			kt[d*T+t] = qkv[t*W3+ko+d]
			vt[d*T+t] = qkv[t*W3+vo+d]
		}
	}
	scale := 1 / sqrtf(float32(hd))
	for i := from; i < n; i++ {
		K := (i + 1) * S
		// Recompute the probabilities (as attentionHead).
		f32.MulTo(p, T, qkv[i*S*W3+qo:], W3, kt, T, S, hd, K)
		for q := 0; q < S; q++ {
			row := p[q*T : q*T+K]
			mx := float32(row[0] * scale)
			for k, v := range row {
				v = float32(v * scale)
				row[k] = v
				if v > mx {
					mx = v
				}
			}
			expShift(row, mx)
			var sum float32
			for _, e := range row {
				sum += e
			}
			inv := 1 / sum
			for k, v := range row {
				row[k] = float32(v * inv)
			}
		}
		do := dout[(i-from)*S*W+qo:]
		// dP = dO V^T (S, K).
		f32.MulTo(dp, T, do, W, vt, T, S, hd, K)
		// dS = P * (dP - rowsum(dP * P)), times scale.
		for q := 0; q < S; q++ {
			pr, dr := p[q*T:q*T+K], dp[q*T:q*T+K]
			var dot float32
			for k, v := range pr {
				dot += v * dr[k]
			}
			for k, v := range pr {
				dr[k] = v * (dr[k] - dot) * scale
			}
		}
		// dQ = dS K (S, hd), written into the q columns.
		f32.MulTo(dqkv[i*S*W3+qo:], W3, dp, T, qkv[ko:], W3, S, K, hd)
		// dK += dS^T Q (K, hd).
		for q := 0; q < S; q++ {
			for k := 0; k < K; k++ {
				s.st[k*S+q] = dp[q*T+k]
			}
		}
		f32.MulTo(s.tmp, hd, s.st, S, qkv[i*S*W3+qo:], W3, K, S, hd)
		for k := 0; k < K; k++ {
			dk := dqkv[k*W3+ko : k*W3+ko+hd]
			for d := range dk {
				dk[d] += s.tmp[k*hd+d]
			}
		}
		// dV += P^T dO (K, hd).
		for q := 0; q < S; q++ {
			for k := 0; k < K; k++ {
				s.st[k*S+q] = p[q*T+k]
			}
		}
		f32.MulTo(s.tmp, hd, s.st, S, do, W, K, S, hd)
		for k := 0; k < K; k++ {
			dv := dqkv[k*W3+vo : k*W3+vo+hd]
			for d := range dv {
				dv[d] += s.tmp[k*hd+d]
			}
		}
	}
}
