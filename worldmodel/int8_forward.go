package worldmodel

import (
	"fmt"
	"math"
	"runtime"

	"github.com/memowm/memowm/entropy"
)

// Int8CPU runs an Int8Model on the CPU: the int8 profile's reference
// backend. Like CPU it owns its buffers: one goroutine at a time.
type Int8CPU struct {
	q       *Int8Model
	f       *CPU // the f32 input embedding
	threads int
	prec    uint

	x, xq      []int32 // residual rows (N, W); the last blocks' rows (B*S, W)
	a8, h8     []int8  // matrix inputs: LayerNorm output (N, W); GELU output (N, M)
	acc        []int32 // matrix outputs (N, max(3W, M))
	qkv, att   []int8  // (N, 3W), (N, W)
	hf         []int16 // final hidden rows (B*S, W)
	attWorkers []int8Attn
	headWork   []int8Head
}

// NewInt8CPU returns the CPU backend of q. Options as for NewCPU.
func NewInt8CPU(q *Int8Model, opts ...Option) (*Int8CPU, error) {
	f := &CPU{m: q.m, threads: runtime.GOMAXPROCS(0), prec: DefaultPrecision}
	for _, o := range opts {
		if err := o(f); err != nil {
			return nil, err
		}
	}
	return &Int8CPU{q: q, f: f, threads: f.threads, prec: f.prec}, nil
}

var _ Predictor = (*Int8CPU)(nil)

// Config returns the model's configuration.
func (r *Int8CPU) Config() Config { return r.q.m.cfg }

// Profile returns ProfileInt8.
func (r *Int8CPU) Profile() string { return ProfileInt8 }

// Precision returns the table precision.
func (r *Int8CPU) Precision() uint { return r.prec }

func grow8(b []int8, n int) []int8 {
	if cap(b) < n {
		return make([]int8, n)
	}
	return b[:n]
}

func grow32(b []int32, n int) []int32 {
	if cap(b) < n {
		return make([]int32, n)
	}
	return b[:n]
}

// linear: acc (rows, N) = a (rows, K) W, then out_n = Mult[n](acc_n + Bias[n])
// handed to put(row, n, v).
func (r *Int8CPU) linear(l *qLinear, a []int8, rows int) {
	mulI8(r.acc[:rows*l.N], l.N, a, l.K, l.W, rows, l.K, l.N, r.threads)
}

// Predict implements Predictor.
func (r *Int8CPU) Predict(dst []Prediction, hs []History) ([]Prediction, error) {
	c := &r.q.m.cfg
	for b, h := range hs {
		if err := c.checkHistory(h); err != nil {
			return dst, fmt.Errorf("history %d: %w", b, err)
		}
	}
	if cap(dst) < len(hs) {
		dst = append(dst[:cap(dst)], make([]Prediction, len(hs)-cap(dst))...)
	}
	dst = dst[:len(hs)]
	if len(hs) == 0 {
		return dst, nil
	}
	J, C := c.Coords(), c.Codewords
	for b := range dst {
		pr := &dst[b]
		if cap(pr.Freq) < J*C {
			pr.Freq = make([]uint32, J*C)
		}
		if cap(pr.Mode) < J {
			pr.Mode = make([]uint8, J)
		}
		if cap(pr.Entropy) < J {
			pr.Entropy = make([]uint32, J)
		}
		pr.Freq, pr.Mode, pr.Entropy = pr.Freq[:J*C], pr.Mode[:J], pr.Entropy[:J]
	}
	r.forward(dst, hs)
	return dst, nil
}

func (r *Int8CPU) forward(dst []Prediction, hs []History) {
	q, c := r.q, &r.q.m.cfg
	S, W, M := c.Slots, c.Width(), c.MLP
	B := len(hs)
	start := make([]int, B+1)
	for b, h := range hs {
		start[b+1] = start[b] + len(h)*S
	}
	N, Nq := start[B], B*S
	r.x, r.xq = grow32(r.x, N*W), grow32(r.xq, Nq*W)
	r.a8, r.h8 = grow8(r.a8, N*W), grow8(r.h8, N*M)
	r.acc = grow32(r.acc, N*max(3*W, M))
	r.qkv, r.att = grow8(r.qkv, N*3*W), grow8(r.att, N*W)
	if cap(r.hf) < Nq*W {
		r.hf = make([]int16, Nq*W)
	}
	r.hf = r.hf[:Nq*W]
	if len(r.attWorkers) < r.threads {
		r.attWorkers = make([]int8Attn, r.threads)
	}

	// The input tokens, in f32, rounded to the residual's fixed point.
	f := r.f
	f.x = grow(f.x, N*W)
	f.embed(hs, start)
	scale := math.Ldexp(1, int(q.Frac))
	for i, v := range f.x[:N*W] {
		r.x[i] = int32(roundClamp(float64(v)*scale, int8Resid))
	}

	for l := range q.Layers {
		L := &q.Layers[l]
		last := l == len(q.Layers)-1
		f.rowsParallel(N, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				L.LN1.to8(r.a8[i*W:(i+1)*W], r.x[i*W:(i+1)*W])
			}
		})
		r.linear(&L.QKV, r.a8, N)
		f.rowsParallel(N, func(lo, hi int) { requant8(r.qkv[lo*3*W:hi*3*W], r.acc[lo*3*W:hi*3*W], &L.QKV) })
		x, rows := r.x, N
		if last {
			for b, h := range hs {
				copy(r.xq[b*S*W:(b+1)*S*W], r.x[(start[b]+(len(h)-1)*S)*W:])
			}
			x, rows = r.xq, Nq
		}
		f.parallel(B*c.Heads, func(w, t int) {
			b, h := t/c.Heads, t%c.Heads
			n := len(hs[b])
			from, orow := 0, start[b]
			if last {
				from, orow = n-1, b*S
			}
			r.attentionHead(L, r.att[orow*W:], r.qkv[start[b]*3*W:start[b+1]*3*W], n, h, from, &r.attWorkers[w])
		})
		r.linear(&L.O, r.att, rows)
		f.rowsParallel(rows, func(lo, hi int) {
			addResid(x[lo*W:hi*W], r.acc[lo*W:hi*W], &L.O)
			for i := lo; i < hi; i++ {
				L.LN2.to8(r.a8[i*W:(i+1)*W], x[i*W:(i+1)*W])
			}
		})
		r.linear(&L.W1, r.a8, rows)
		f.rowsParallel(rows, func(lo, hi int) { geluRows(r.h8[lo*M:hi*M], r.acc[lo*M:hi*M], L) })
		r.linear(&L.W2, r.h8, rows)
		f.rowsParallel(rows, func(lo, hi int) { addResid(x[lo*W:hi*W], r.acc[lo*W:hi*W], &L.W2) })
	}
	f.rowsParallel(Nq, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			q.Final.to16(r.hf[i*W:(i+1)*W], r.xq[i*W:(i+1)*W])
		}
	})
	// The heads: histories' coordinates split across threads.
	J := c.Coords()
	parts := r.threads
	if len(r.headWork) < r.threads {
		r.headWork = make([]int8Head, r.threads)
	}
	f.parallel(B*parts, func(w, t int) {
		b, part := t/parts, t%parts
		r.heads(&dst[b], r.hf[b*S*W:(b+1)*S*W], hs[b], part*J/parts, (part+1)*J/parts, &r.headWork[w])
	})
}

// requant8: out (rows of N) = clamp(Mult[n](acc + Bias[n]), +-127).
func requant8(out []int8, acc []int32, l *qLinear) {
	N := l.N
	for r := 0; r+N <= len(acc); r += N {
		a, o := acc[r:r+N], out[r:r+N]
		for n, v := range a {
			o[n] = int8(clamp64(l.Mult[n].apply(int64(v)+int64(l.Bias[n])), 127))
		}
	}
}

// addResid: x += Mult[n](acc + Bias[n]), saturating at +-int8Resid.
func addResid(x []int32, acc []int32, l *qLinear) {
	N := l.N
	for r := 0; r+N <= len(acc); r += N {
		a, xr := acc[r:r+N], x[r:r+N]
		for n, v := range a {
			xr[n] = int32(clamp64(int64(xr[n])+l.Mult[n].apply(int64(v)+int64(l.Bias[n])), int8Resid))
		}
	}
}

// geluRows: out = GELU[clamp(Mult[n](acc + Bias[n]), +-2048) + 2048].
func geluRows(out []int8, acc []int32, L *qLayer) {
	l := &L.W1
	N := l.N
	for r := 0; r+N <= len(acc); r += N {
		a, o := acc[r:r+N], out[r:r+N]
		for n, v := range a {
			u := clamp64(l.Mult[n].apply(int64(v)+int64(l.Bias[n])), geluHalf)
			o[n] = L.GELU[u+geluHalf]
		}
	}
}

// int8Attn is one goroutine's attention scratch.
type int8Attn struct {
	sc []int32
	e  []int64
	o  []int32
}

// attentionHead is the int8 profile's attention for one head of one
// history (as CPU's attentionHead): for query row q of block i and key k of
// blocks 0..i,
//
//	s_k = sum_d q_d k_d (int32); idx_k = Soft(max s - s_k)
//	e_k = expTable[idx_k] (0 past the table); Z = sum e_k
//	P_k = rshr(e_k (2^47 / Z), 32)                               (Q15)
//	out_d = clamp(PV(sum_k P_k v_kd), +-127)
func (r *Int8CPU) attentionHead(L *qLayer, out []int8, qkv []int8, n, h, from int, s *int8Attn) {
	c := &r.q.m.cfg
	S, W, hd := c.Slots, c.Width(), c.HeadDim()
	W3 := 3 * W
	T := n * S
	if cap(s.sc) < T {
		s.sc, s.e = make([]int32, c.MaxHistory*S), make([]int64, c.MaxHistory*S)
	}
	if cap(s.o) < hd {
		s.o = make([]int32, hd)
	}
	for i := from; i < n; i++ {
		K := (i + 1) * S
		sc, e, o := s.sc[:K], s.e[:K], s.o[:hd]
		for qi := 0; qi < S; qi++ {
			qrow := qkv[(i*S+qi)*W3+h*hd:][:hd]
			mx := int32(math.MinInt32)
			for k := 0; k < K; k++ {
				krow := qkv[k*W3+W+h*hd:][:hd]
				var v int32
				for d, a := range qrow {
					v += int32(a) * int32(krow[d])
				}
				sc[k] = v
				mx = max(mx, v)
			}
			var Z int64
			for k, v := range sc {
				idx := L.Soft.apply(int64(mx) - int64(v))
				var ek int64
				if idx < expLen {
					ek = expTable[idx]
				}
				e[k] = ek
				Z += ek
			}
			inv := (int64(1) << 47) / Z
			clear(o)
			for k, ek := range e {
				p := int32(rshr(ek*inv, 32))
				if p == 0 {
					continue
				}
				vrow := qkv[k*W3+2*W+h*hd:][:hd]
				for d, v := range vrow {
					o[d] += p * int32(v)
				}
			}
			orow := out[((i-from)*S+qi)*W+h*hd:][:hd]
			for d, v := range o {
				orow[d] = int8(clamp64(L.PV.apply(int64(v)), 127))
			}
		}
	}
}

// int8Head is one goroutine's head scratch.
type int8Head struct {
	l []int64
	w []uint64
}

// heads writes coordinates [lo, hi) of one history's prediction from its
// final hidden rows hf (S, W), with the rules of Int8Model's head fields:
//
//	e_c = expTable[Exp[j](max l - l_c)] (0 past the table); Z = sum e_c
//	a = sigTable[clamp(sign(g) Gate[j](|g|), +-1024) + 1024]     (Q16)
//	w_c = (2^16 - a) e_c + [c = prev] a Z; the table is quantizeWeights(w)
func (r *Int8CPU) heads(pr *Prediction, hf []int16, h History, lo, hi int, s *int8Head) {
	q, c := r.q, &r.q.m.cfg
	G, C, E, W := c.Subspaces, c.Codewords, c.CodeDim, c.Width()
	if cap(s.l) < C {
		s.l, s.w = make([]int64, C), make([]uint64, C)
	}
	l, w := s.l[:C], s.w[:C]
	prev := h[len(h)-1].Codes
	for j := lo; j < hi; j++ {
		sl, g := j/G, j%G
		piece := hf[sl*W+g*E : sl*W+g*E+E]
		emb := q.Emb[j*C*E : (j+1)*C*E]
		bias := q.Bias[j*C : (j+1)*C]
		mx := int64(math.MinInt64)
		for cw := range l {
			e := emb[cw*E : cw*E+E]
			v := bias[cw]
			for d, x := range piece {
				v += int64(int32(x) * int32(e[d]))
			}
			l[cw] = v
			mx = max(mx, v)
		}
		var Z uint64
		for cw, v := range l {
			idx := q.Exp[j].applyWide(uint64(mx - v))
			var e uint64
			if idx < expLen {
				e = uint64(expTable[idx])
			}
			w[cw] = e
			Z += e
		}
		gv := q.CopyB[j]
		for d, x := range piece {
			gv += int64(int32(x) * int32(q.Copy[j*E+d]))
		}
		gi := int64(min(q.Gate[j].applyWide(uint64(max(gv, -gv))), sigHalf))
		if gv < 0 {
			gi = -gi
		}
		a := uint64(sigTable[gi+sigHalf])
		for cw := range w {
			w[cw] *= sigOne - a
		}
		w[prev[j]] += a * Z
		f := pr.Freq[j*C : (j+1)*C]
		quantizeWeights(f, w, r.prec)
		pr.Mode[j] = uint8(entropy.Mode(f))
		pr.Entropy[j] = entropy.EntropyQ16(f)
	}
}

// mulI8: out (rows, N) = a (rows, K) w (K, N), int32 sums.
func mulI8(out []int32, ldo int, a []int8, lda int, w []int8, rows, K, N, threads int) {
	for i := 0; i < rows; i++ {
		o := out[i*ldo : i*ldo+N]
		clear(o)
		ar := a[i*lda : i*lda+K]
		for k, av := range ar {
			if av == 0 {
				continue
			}
			wr := w[k*N : k*N+N]
			x := int32(av)
			for n, wv := range wr {
				o[n] += x * int32(wv)
			}
		}
	}
}
