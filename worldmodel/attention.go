package worldmodel

import (
	"github.com/memowm/memowm/internal/f32"
	"github.com/memowm/memowm/internal/fgemm"
)

// attnScratch is one goroutine's attention scratch.
type attnScratch struct {
	kt []float32 // (hd, T) one head's keys, transposed
	sc []float32 // (S, T) one query block's scores, then probabilities
}

// attentionHead computes one head of block-causal attention for one history
// of n blocks (T = n*S token rows starting at qkv row 0) and writes the head's
// output columns [h*hd, (h+1)*hd) of out for query blocks [from, n). Query
// block i writes out rows (i-from)*S .. (i-from+1)*S (stride W).
//
// Query block i attends to the keys of blocks 0..i (all slots of its own
// block, none of a later one):
//
//	s[q][k] = (Q[q] . K[k]) * scale         scale = 1/sqrt(hd), dot left to right
//	p[q][k] = e^(s[q][k] - max_k s[q][k]) / sum_k (...)   (sum left to right)
//	out[q]  = sum_k p[q][k] V[k]            (k left to right)
//
// qkv is (T, 3W): q | k | v columns. Padding blocks are never part of the
// input, so no mask value enters the sums.
func (c *Config) attentionHead(out []float32, qkv []float32, n, h, from int, s *attnScratch) {
	S, W, hd := c.Slots, c.Width(), c.HeadDim()
	T := n * S
	W3 := 3 * W
	if cap(s.kt) < hd*T {
		s.kt = make([]float32, hd*c.MaxHistory*S)
	}
	if cap(s.sc) < S*T {
		s.sc = make([]float32, S*c.MaxHistory*S)
	}
	kt, sc := s.kt[:hd*T], s.sc[:S*T]
	ko := W + h*hd
	for t := 0; t < T; t++ {
		kr := qkv[t*W3+ko : t*W3+ko+hd]
		for d, v := range kr {
			kt[d*T+t] = v
		}
	}
	scale := 1 / sqrtf(float32(hd))
	for i := from; i < n; i++ {
		K := (i + 1) * S
		f32.MulTo(sc, T, qkv[i*S*W3+h*hd:], W3, kt, T, S, hd, K)
		for q := 0; q < S; q++ {
			row := sc[q*T : q*T+K]
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
		f32.MulTo(out[(i-from)*S*W+h*hd:], W, sc, T, qkv[2*W+h*hd:], W3, S, K, hd)
	}
}

// attentionHeadTrain is attentionHead for the training forward: the same
// attention, with fgemm's products (fused multiply-adds, any order: not the
// inference's bits). Query block i's scores are held transposed, keys by
// slots (K = (i+1) S keys), so that every product reads its operands in
// place (the head's queries once transposed into s.qt) and the softmax runs
// down the columns:
//
//	P^T (K, S) = K_{0:K} Q_i^T;  P^T = column softmax of scale P^T;  O_i (S, hd) = (P^T)^T V_{0:K}
func (c *Config) attentionHeadTrain(out []float32, qkv []float32, n, h, from int, s *attnBackScratch) {
	S, W, hd := c.Slots, c.Width(), c.HeadDim()
	W3 := 3 * W
	T := n * S
	s.p, s.qt = grow(s.p, T*S), grow(s.qt, hd*T)
	qo, ko, vo := h*hd, W+h*hd, 2*W+h*hd
	transposeCols(s.qt, qkv[qo:], W3, T, hd)
	scale := 1 / sqrtf(float32(hd))
	for i := from; i < n; i++ {
		K := (i + 1) * S
		pt := s.p[:K*S]
		s.w.MulTo(pt, S, qkv[ko:], W3, s.qt[i*S:], T, K, hd, S, 0)
		fgemm.SoftmaxCols(pt, K, S, scale)
		s.w.MulTo(out[(i-from)*S*W+qo:], W, pt, S, qkv[vo:], W3, S, K, hd, fgemm.TransA)
	}
}

// transposeCols sets dst (cols, rows) to the transpose of the rows x cols
// block at src (row stride lds).
func transposeCols(dst, src []float32, lds, rows, cols int) {
	// Eight source rows at a time, so that each column's eight values land
	// in one contiguous run of dst instead of eight cache lines.
	r := 0
	for ; r+8 <= rows; r += 8 {
		s0 := src[r*lds:][:cols]
		s1 := src[(r+1)*lds:][:cols]
		s2 := src[(r+2)*lds:][:cols]
		s3 := src[(r+3)*lds:][:cols]
		s4 := src[(r+4)*lds:][:cols]
		s5 := src[(r+5)*lds:][:cols]
		s6 := src[(r+6)*lds:][:cols]
		s7 := src[(r+7)*lds:][:cols]
		for j := range s0 {
			d := dst[j*rows+r:][:8]
			d[0], d[1], d[2], d[3] = s0[j], s1[j], s2[j], s3[j]
			d[4], d[5], d[6], d[7] = s4[j], s5[j], s6[j], s7[j]
		}
	}
	for ; r < rows; r++ {
		for j, v := range src[r*lds : r*lds+cols] {
			dst[j*rows+r] = v
		}
	}
}
