package worldmodel

import (
	"math"
	"runtime"

	"github.com/memowm/memowm/entropy"
	"github.com/memowm/memowm/internal/igemm"
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
	packed     [][4]*igemm.Packed // per layer: QKV, O, W1, W2
	rq         [][4]*rqLinear     // per layer: QKV, O, W1, W2
	gelu32     [][]int32          // per layer: GELU as int32
	trace      TraceFunc
}

// NewInt8CPU returns the CPU backend of q. Options as for NewCPU.
func NewInt8CPU(q *Int8Model, opts ...Option) (*Int8CPU, error) {
	f := &CPU{m: q.m, threads: runtime.GOMAXPROCS(0), prec: DefaultPrecision, cacheActs: true}
	for _, o := range opts {
		if err := o(f); err != nil {
			return nil, err
		}
	}
	r := &Int8CPU{q: q, f: f, threads: f.threads, prec: f.prec}
	for l := range q.Layers {
		L := &q.Layers[l]
		var pk [4]*igemm.Packed
		for i, ql := range []*qLinear{&L.QKV, &L.O, &L.W1, &L.W2} {
			pk[i] = igemm.Pack(ql.W, ql.K, ql.N)
		}
		r.packed = append(r.packed, pk)
		r.rq = append(r.rq, [4]*rqLinear{newRQ(&L.QKV), newRQ(&L.O), newRQ(&L.W1), newRQ(&L.W2)})
		g := make([]int32, len(L.GELU))
		for i, v := range L.GELU {
			g[i] = int32(v)
		}
		r.gelu32 = append(r.gelu32, g)
	}
	return r, nil
}

var _ Predictor = (*Int8CPU)(nil)

// Config returns the model's configuration.
func (r *Int8CPU) Config() Config { return r.q.m.cfg }

// Profile returns ProfileInt8.
func (r *Int8CPU) Profile() string { return ProfileInt8 }

// Precision returns the table precision.
func (r *Int8CPU) Precision() uint { return r.prec }

// linear: acc (rows, N) = a (rows, K) W for layer l's matrix i (QKV, O,
// W1, W2), internal/igemm's exact int32 sums.
func (r *Int8CPU) linear(l, i int, a []int8, rows int) {
	p := r.packed[l][i]
	igemm.MulPackedTo(r.acc[:rows*p.N()], p.N(), a, p.K(), p, rows, r.threads)
}

// Predict implements Predictor.
func (r *Int8CPU) Predict(dst []Prediction, hs []History) ([]Prediction, error) {
	c := &r.q.m.cfg
	if err := c.checkHistories(hs); err != nil {
		return dst, err
	}
	if len(hs) == 0 {
		return dst[:0], nil
	}
	dst = sizePredictions(dst, len(hs), c.Coords(), c.Codewords)
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
	r.x, r.xq = grow(r.x, N*W), grow(r.xq, Nq*W)
	r.a8, r.h8 = grow(r.a8, N*W), grow(r.h8, N*M)
	r.acc = grow(r.acc, N*max(3*W, M))
	r.qkv, r.att = grow(r.qkv, N*3*W), grow(r.att, N*W)
	if cap(r.hf) < Nq*W {
		r.hf = make([]int16, Nq*W)
	}
	r.hf = r.hf[:Nq*W]
	if len(r.attWorkers) < r.threads {
		r.attWorkers = make([]int8Attn, r.threads)
	}

	r.tokens(r.x, hs, start)
	r.traced("tokens", -1, r.x[:N*W])
	f := r.f

	for l := range q.Layers {
		L, RQ := &q.Layers[l], r.rq[l]
		last := l == len(q.Layers)-1
		f.rowsParallel(N, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				L.LN1.to8(r.a8[i*W:(i+1)*W], r.x[i*W:(i+1)*W])
			}
		})
		r.traced("ln1", l, r.a8[:N*W])
		r.linear(l, 0, r.a8, N)
		r.traced("qkv.acc", l, r.acc[:N*3*W])
		f.rowsParallel(N, func(lo, hi int) { requant8(r.qkv[lo*3*W:hi*3*W], r.acc[lo*3*W:hi*3*W], RQ[0]) })
		r.traced("qkv", l, r.qkv[:N*3*W])
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
		r.traced("attention", l, r.att[:rows*W])
		r.linear(l, 1, r.att, rows)
		r.traced("o.acc", l, r.acc[:rows*W])
		f.rowsParallel(rows, func(lo, hi int) {
			addResid(x[lo*W:hi*W], r.acc[lo*W:hi*W], RQ[1])
			for i := lo; i < hi; i++ {
				L.LN2.to8(r.a8[i*W:(i+1)*W], x[i*W:(i+1)*W])
			}
		})
		r.traced("resid1", l, x[:rows*W])
		r.traced("ln2", l, r.a8[:rows*W])
		r.linear(l, 2, r.a8, rows)
		r.traced("w1.acc", l, r.acc[:rows*M])
		f.rowsParallel(rows, func(lo, hi int) { geluRows(r.h8[lo*M:hi*M], r.acc[lo*M:hi*M], RQ[2], L.GELU, r.gelu32[l]) })
		r.traced("gelu", l, r.h8[:rows*M])
		r.linear(l, 3, r.h8, rows)
		r.traced("w2.acc", l, r.acc[:rows*W])
		f.rowsParallel(rows, func(lo, hi int) { addResid(x[lo*W:hi*W], r.acc[lo*W:hi*W], RQ[3]) })
		r.traced("resid2", l, x[:rows*W])
	}
	f.rowsParallel(Nq, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			q.Final.to16(r.hf[i*W:(i+1)*W], r.xq[i*W:(i+1)*W])
		}
	})
	r.traced("final", -1, r.hf[:Nq*W])
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

// rqLinear is a qLinear's requantisation laid out for the AVX-512
// kernels: per column M, the rounding term 2^(Sh-1) (0 when Sh is 0) and
// Sh, each as int64.
type rqLinear struct {
	*qLinear
	m, rnd, sh []int64
}

func newRQ(l *qLinear) *rqLinear {
	r := &rqLinear{qLinear: l, m: make([]int64, l.N), rnd: make([]int64, l.N), sh: make([]int64, l.N)}
	for n, m := range l.Mult {
		r.m[n], r.sh[n] = m.M, int64(m.Sh)
		if m.Sh > 0 {
			r.rnd[n] = 1 << (m.Sh - 1)
		}
	}
	return r
}

// requant8: out (rows of N) = clamp(Mult[n](acc + Bias[n]), +-127).
func requant8(out []int8, acc []int32, l *rqLinear) {
	N := l.N
	rows := len(acc) / N
	from := l.rowsAVX512(0, out, nil, acc, rows, nil)
	for r := 0; r < rows; r++ {
		a, o := acc[r*N:(r+1)*N], out[r*N:(r+1)*N]
		for n := from; n < N; n++ {
			o[n] = int8(clamp64(l.out(n, a[n]), 127))
		}
	}
}

// addResid: x += Mult[n](acc + Bias[n]), saturating at +-int8Resid.
func addResid(x []int32, acc []int32, l *rqLinear) {
	N := l.N
	rows := len(acc) / N
	from := l.rowsAVX512(1, nil, x, acc, rows, nil)
	for r := 0; r < rows; r++ {
		a, xr := acc[r*N:(r+1)*N], x[r*N:(r+1)*N]
		for n := from; n < N; n++ {
			xr[n] = int32(clamp64(int64(xr[n])+l.out(n, a[n]), int8Resid))
		}
	}
}

// geluRows: out = GELU[clamp(Mult[n](acc + Bias[n]), +-2048) + 2048]; gelu32
// is GELU as int32 (the AVX-512 kernel gathers from it).
func geluRows(out []int8, acc []int32, l *rqLinear, gelu []int8, gelu32 []int32) {
	N := l.N
	rows := len(acc) / N
	from := l.rowsAVX512(2, out, nil, acc, rows, gelu32)
	for r := 0; r < rows; r++ {
		a, o := acc[r*N:(r+1)*N], out[r*N:(r+1)*N]
		for n := from; n < N; n++ {
			u := clamp64(l.out(n, a[n]), geluHalf)
			o[n] = gelu[u+geluHalf]
		}
	}
}

// int8Attn is one goroutine's attention scratch.
type int8Attn struct {
	sc   []int32       // (R, T) scores of the R query rows
	p    []int16       // one row's probabilities (Q14), padded to even
	vp   []int16       // the head's values as packPairs lays them out
	o    []int32       // (hd) one row's value sums
	e    []uint32      // softmax scratch
	pk   *igemm.Packed // the keys, packed
	view *igemm.Packed // a view of pk's first columns
}

// attentionHead is the int8 profile's attention for one head of one
// history (as CPU's attentionHead): for query row q of block i and key k of
// blocks 0..i,
//
//	s_k = sum_d q_d k_d (int32); P = softmaxP(s) (Q14)
//	out_d = clamp(PV(sum_k P_k v_kd), +-127)
//
// The scores are internal/igemm products, a query block against its own
// keys; the value sums run over the row's own keys (pvRow: VPDPWSSD on
// int16 pairs, or Go).
func (r *Int8CPU) attentionHead(L *qLayer, out []int8, qkv []int8, n, h, from int, s *int8Attn) {
	c := &r.q.m.cfg
	S, W, hd := c.Slots, c.Width(), c.HeadDim()
	W3 := 3 * W
	T := n * S
	R := (n - from) * S
	s.sc = grow(s.sc, R*T)
	s.o = grow(s.o, hd)
	if cap(s.e) < T {
		s.e = make([]uint32, c.MaxHistory*S)
	}
	if cap(s.p) < T+1 {
		s.p = make([]int16, c.MaxHistory*S+1)
	}
	// K^T (hd, T) packed in place from the QKV rows; V in int16 pairs.
	s.pk = igemm.PackStridedTo(s.pk, qkv[W+h*hd:], W3, hd, T, true)
	// Each query block's scores against its own keys only (a view of the
	// first (i+1)S columns).
	for i := from; i < n; i++ {
		s.view = s.pk.ColsTo(s.view, (i+1)*S)
		igemm.MulPackedTo(s.sc[(i-from)*S*T:], T, qkv[i*S*W3+h*hd:], W3, s.view, S, 1)
	}
	s.vp = packPairs(s.vp, qkv[2*W+h*hd:], W3, T, hd)
	for row := 0; row < R; row++ {
		K := (from + row/S + 1) * S
		p := s.p[:K+1]
		softmaxP(p, s.sc[row*T:row*T+K], s.e, L.Soft)
		p[K] = 0
		pvRow(s.o, p, s.vp, K, hd)
		orow := out[row*W+h*hd:][:hd]
		for d, v := range s.o[:hd] {
			orow[d] = int8(clamp64(L.PV.apply(int64(v)), 127))
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
		if E == 1 { // tiny: one product per logit
			x := int32(piece[0])
			for cw, e := range emb[:C] {
				v := bias[cw] + int64(x*int32(e))
				l[cw] = v
				mx = max(mx, v)
			}
		} else {
			for cw := range l {
				e := emb[cw*E : cw*E+E]
				v := bias[cw]
				for d, x := range piece {
					v += int64(int32(x) * int32(e[d]))
				}
				l[cw] = v
				mx = max(mx, v)
			}
		}
		var Z uint64
		m := q.Exp[j]
		for cw, v := range l {
			d := uint64(mx - v)
			var idx uint64
			if d < 1<<32 {
				idx = uint64(m.apply(int64(d)))
			} else {
				idx = m.applyWide(d)
			}
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
		f := pr.Freq[j*C : (j+1)*C]
		pr.Mode[j] = uint8(gateTable(f, w, Z, a, int(prev[j]), r.prec))
		pr.Entropy[j] = entropy.EntropyQ16(f)
	}
}
