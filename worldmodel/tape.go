package worldmodel

import (
	"math/rand/v2"

	"github.com/memowm/memowm/internal/f32"
)

// The training forward and backward over a batch of histories. The forward
// is forward.go's, step for step and with the same layer functions (with
// dropout 0 it gives the same bits as CPU.Forward, which a test checks), but
// it keeps every activation the backward needs:
//
//	xs[0]  = drop(embed(history))                       (N, W)
//	for each block l (R = N, or B*S last-block rows in the last block):
//	    ln1 = LN1(xs[l]); qkv = ln1 Wqkv + bqkv            (N, W), (N, 3W)
//	    att = attn(qkv)                                    (R, W)
//	    x1  = xs[l][rows] + drop(att Wo + bo)              (R, W)
//	    ln2 = LN2(x1); pre = ln2 W1; act = gelu(pre + b1)   (R, W), (R, M), (R, M)
//	    xs[l+1] = x1 + drop(act W2 + b2)                   (R, W)
//	lnf = LN_final(xs[L])                                  (B*S, W)
//	heads as forward.go
//
// Dropout (rate Config.Dropout, training only) multiplies by a mask of 0 and
// 1/(1-rate) drawn from the step's seed: on the embedded tokens and on both
// residual branches of every block.

// tapeLayer is one block's saved activations.
type tapeLayer struct {
	ln1   []float32 // (N, W)
	qkv   []float32 // (N, 3W)
	att   []float32 // (R, W)
	x1    []float32 // (R, W)
	ln2   []float32 // (R, W)
	pre   []float32 // (R, M) ln2 W1, before the bias
	act   []float32 // (R, M) gelu(pre + b1)
	drop1 []float32 // (R, W) dropout multipliers of the attention branch, nil without dropout
	drop2 []float32 // (R, W) of the MLP branch
}

// tape runs a model's training forward and backward; it owns the
// activations. One tape serves one goroutine.
type tape struct {
	m       *Model
	threads int
	cpu     CPU // for embed and heads (its buffers only)

	hs    []History
	start []int // first token row of each history
	N, Nq int

	xs      [][]float32 // L+1 residual streams, (N, W) .. (Nq, W)
	drop0   []float32   // (N, W) embedding dropout multipliers, nil without dropout
	layers  []tapeLayer
	lnf     []float32 // (Nq, W)
	outs    []Output
	tmp     []float32 // (N, 3W) scratch
	workers []attnScratch

	// backward buffers
	dx, dx2, dln []float32 // (N, W)
	dqkv         []float32 // (N, 3W)
	dmlp, dmlp2  []float32 // (R, M)
	xhat         []float32 // (N, W)
	bwork        []attnBackScratch
	lin          linScratch
	act          actionScratch
	dlog         []float32 // (B, J, C) gradient of the logits
	dgate        []float32 // (B, J)
	dvalid       []float32 // (B, S)
}

func newTape(m *Model, threads int) *tape {
	t := &tape{m: m, threads: threads}
	t.cpu = CPU{m: m, threads: threads}
	return t
}

// dropMask fills mask (n) with 0 (probability rate) or 1/(1-rate) from
// rng, four 16-bit draws per 64-bit number.
func dropMask(mask []float32, rate float64, rng *rand.Rand) {
	keep := float32(1 / (1 - rate))
	thr := uint64(rate * 65536)
	var bits uint64
	for i := range mask {
		if i%4 == 0 {
			bits = rng.Uint64()
		}
		if bits&0xffff < thr {
			mask[i] = 0
		} else {
			mask[i] = keep
		}
		bits >>= 16
	}
}

// forward runs the training forward on hs. dropSeed seeds the dropout masks
// (rate Config.Dropout when train is true; none otherwise). It leaves the
// outputs in t.outs.
func (t *tape) forward(hs []History, train bool, dropSeed uint64) {
	c, p := &t.m.cfg, t.m.p
	S, W, M, L := c.Slots, c.Width(), c.MLP, c.Layers
	B := len(hs)
	t.hs = hs
	t.start = append(t.start[:0], 0)
	for b, h := range hs {
		t.start = append(t.start, t.start[b]+len(h)*S)
	}
	N, Nq := t.start[B], B*S
	t.N, t.Nq = N, Nq
	rate := c.Dropout
	var rng *rand.Rand
	if train && rate > 0 {
		rng = rand.New(rand.NewPCG(dropSeed, 0x64726f70)) // "drop"
	} else {
		rate = 0
	}
	if len(t.xs) != L+1 {
		t.xs = make([][]float32, L+1)
		t.layers = make([]tapeLayer, L)
	}
	if len(t.workers) < t.threads {
		t.workers = make([]attnScratch, t.threads)
		t.bwork = make([]attnBackScratch, t.threads)
	}
	t.xs[0] = grow(t.xs[0], N*W)
	t.tmp = grow(t.tmp, N*3*W)

	// Embedding (forward.go's embed, into xs[0]).
	t.cpu.x = t.xs[0]
	t.cpu.embed(hs, t.start)
	t.drop0 = nil
	if rate > 0 {
		t.drop0 = grow(t.drop0[:0:cap(t.drop0)], N*W)
		dropMask(t.drop0, rate, rng)
		x := t.xs[0]
		for i := range x {
			x[i] *= t.drop0[i]
		}
	}

	for l := 0; l < L; l++ {
		Lp, T := &p.layers[l], &t.layers[l]
		last := l == L-1
		R := N
		if last {
			R = Nq
		}
		x := t.xs[l]
		T.ln1, T.qkv = grow(T.ln1, N*W), grow(T.qkv, N*3*W)
		T.att, T.x1, T.ln2 = grow(T.att, R*W), grow(T.x1, R*W), grow(T.ln2, R*W)
		T.pre, T.act = grow(T.pre, R*M), grow(T.act, R*M)
		t.xs[l+1] = grow(t.xs[l+1], R*W)
		parallelRows(t.threads, N, func(lo, hi int) {
			layerNormTo(T.ln1[lo*W:hi*W], x[lo*W:hi*W], Lp.ln1g, Lp.ln1b, hi-lo, W)
		})
		f32.MulParTo(T.qkv, 3*W, T.ln1, W, Lp.wqkv, 3*W, N, W, 3*W, t.threads)
		parallelRows(t.threads, N, func(lo, hi int) { addBias(T.qkv[lo*3*W:hi*3*W], Lp.bqkv, hi-lo, 3*W) })
		// x1 starts as the residual rows.
		if last {
			for b, h := range hs {
				copy(T.x1[b*S*W:(b+1)*S*W], x[(t.start[b]+(len(h)-1)*S)*W:])
			}
		} else {
			copy(T.x1, x[:N*W])
		}
		parallelN(t.threads, B*c.Heads, func(i int) {
			b, h := i/c.Heads, i%c.Heads
			n := len(hs[b])
			from, orow := 0, t.start[b]
			if last {
				from, orow = n-1, b*S
			}
			c.attentionHead(T.att[orow*W:], T.qkv[t.start[b]*3*W:t.start[b+1]*3*W], n, h, from, &t.workers[i%t.threads])
		})
		proj := t.tmp[:R*W]
		f32.MulParTo(proj, W, T.att, W, Lp.wo, W, R, W, W, t.threads)
		T.drop1 = t.residual(T.x1, proj, Lp.bo, T.drop1, R, W, rate, rng)
		parallelRows(t.threads, R, func(lo, hi int) {
			layerNormTo(T.ln2[lo*W:hi*W], T.x1[lo*W:hi*W], Lp.ln2g, Lp.ln2b, hi-lo, W)
		})
		f32.MulParTo(T.pre, M, T.ln2, W, Lp.w1, M, R, W, M, t.threads)
		copy(T.act, T.pre)
		parallelRows(t.threads, R, func(lo, hi int) { addBiasGELU(T.act[lo*M:hi*M], Lp.b1, hi-lo, M) })
		f32.MulParTo(proj, W, T.act, M, Lp.w2, W, R, M, W, t.threads)
		copy(t.xs[l+1], T.x1)
		T.drop2 = t.residual(t.xs[l+1], proj, Lp.b2, T.drop2, R, W, rate, rng)
	}
	t.lnf = grow(t.lnf, Nq*W)
	layerNormTo(t.lnf, t.xs[L], p.finalG, p.finalB, Nq, W)
	if cap(t.outs) < B {
		t.outs = make([]Output, B)
	}
	t.outs = t.outs[:B]
	parallelN(t.threads, B, func(b int) { t.cpu.heads(&t.outs[b], t.lnf[b*S*W:(b+1)*S*W], hs[b]) })
}

// residual sets x += drop(y + b) (rows, k) and returns the mask used (nil
// without dropout; mask's buffer is reused).
func (t *tape) residual(x, y, b, mask []float32, rows, k int, rate float64, rng *rand.Rand) []float32 {
	if rate == 0 {
		parallelRows(t.threads, rows, func(lo, hi int) { addResidual(x[lo*k:hi*k], y[lo*k:hi*k], b, hi-lo, k) })
		return nil
	}
	mask = grow(mask[:0:cap(mask)], rows*k)
	dropMask(mask, rate, rng)
	for r := 0; r < rows; r++ {
		for i := 0; i < k; i++ {
			x[r*k+i] += (y[r*k+i] + b[i]) * mask[r*k+i]
		}
	}
	return mask
}

// backward adds to g the gradients of the loss whose output gradients are
// t.dlog (B, J, C), t.dgate (B, J) and t.dvalid (B, S), for the activations
// of the last forward.
func (t *tape) backward(g *Params) {
	c, p := &t.m.cfg, t.m.p
	S, G, C, E, W, M, L := c.Slots, c.Subspaces, c.Codewords, c.CodeDim, c.Width(), c.MLP, c.Layers
	J := S * G
	B, N, Nq := len(t.hs), t.N, t.Nq
	th := t.threads
	t.dx, t.dx2, t.dln = grow(t.dx, N*W), grow(t.dx2, N*W), grow(t.dln, N*W)
	t.xhat, t.dqkv = grow(t.xhat, N*W), grow(t.dqkv, N*3*W)

	// Heads: logits[b,s,g,c] = piece . emb[s,g,c] + bias; gate = piece . copyW + copyB.
	dlnf := t.dln[:Nq*W]
	parallelN(th, J, func(j int) {
		s, gi := j/G, j%G
		emb := p.codeEmb[j*C*E : (j+1)*C*E]
		gemb := g.codeEmb[j*C*E : (j+1)*C*E]
		cw := p.copyW[j*E : j*E+E]
		for b := 0; b < B; b++ {
			piece := t.lnf[(b*S+s)*W+gi*E:][:E]
			dp := dlnf[(b*S+s)*W+gi*E:][:E]
			clear(dp)
			dl := t.dlog[(b*J+j)*C : (b*J+j)*C+C]
			for cc, d := range dl {
				if d == 0 {
					continue
				}
				g.codeBias[j*C+cc] += d
				e, ge := emb[cc*E:cc*E+E], gemb[cc*E:cc*E+E]
				for k := range dp {
					dp[k] += d * e[k]
					ge[k] += d * piece[k]
				}
			}
			dg := t.dgate[b*J+j]
			g.copyB[j] += dg
			for k := range dp {
				dp[k] += dg * cw[k]
				g.copyW[j*E+k] += dg * piece[k]
			}
		}
	})
	// Validity head on the mean of the slots' final states.
	pooled := make([]float32, W)
	dpool := make([]float32, W)
	for b := 0; b < B; b++ {
		clear(pooled)
		for s := 0; s < S; s++ {
			for i, v := range t.lnf[(b*S+s)*W : (b*S+s+1)*W] {
				pooled[i] += v
			}
		}
		for i := range pooled {
			pooled[i] /= float32(S)
		}
		dv := t.dvalid[b*S : (b+1)*S]
		for i := 0; i < W; i++ {
			var acc float32
			for s, d := range dv {
				g.validHW[i*S+s] += pooled[i] * d
				acc += p.validHW[i*S+s] * d
			}
			dpool[i] = acc / float32(S)
		}
		for s, d := range dv {
			g.validHB[s] += d
		}
		for s := 0; s < S; s++ {
			row := dlnf[(b*S+s)*W : (b*S+s+1)*W]
			for i := range row {
				row[i] += dpool[i]
			}
		}
	}
	// Final LayerNorm: dx (Nq rows) of the last block's output.
	dx := t.dx[:Nq*W]
	layerNormBackward(dx, g.finalG, g.finalB, dlnf, t.xs[L], p.finalG, t.xhat, Nq, W, th)

	for l := L - 1; l >= 0; l-- {
		Lp, Lg, T := &p.layers[l], &g.layers[l], &t.layers[l]
		last := l == L-1
		R := N
		if last {
			R = Nq
		}
		// dx holds d xs[l+1] (R, W). MLP branch: xs[l+1] = x1 + drop(act W2 + b2).
		dbranch := t.dx2[:R*W]
		maskTo(dbranch, dx[:R*W], T.drop2, th)
		t.dmlp, t.dmlp2 = grow(t.dmlp, R*M), grow(t.dmlp2, R*M)
		linearBackward(t.dmlp, Lg.w2, Lg.b2, dbranch, T.act, Lp.w2, R, M, W, th, &t.lin)
		geluBackward(t.dmlp2, t.dmlp, T.pre, T.act, Lp.b1, R, M, th)
		dln2 := t.dln[:R*W]
		linearBackward(dln2, Lg.w1, Lg.b1, t.dmlp2, T.ln2, Lp.w1, R, W, M, th, &t.lin)
		// d x1 = dx + LN2 backward.
		layerNormBackward(dbranch, Lg.ln2g, Lg.ln2b, dln2, T.x1, Lp.ln2g, t.xhat, R, W, th)
		parallelRows(th, R, func(lo, hi int) {
			for i := lo * W; i < hi*W; i++ {
				dx[i] += dbranch[i]
			}
		})
		// Attention branch: x1 = x[rows] + drop(att Wo + bo).
		maskTo(dbranch, dx[:R*W], T.drop1, th)
		datt := t.dln[:R*W]
		linearBackward(datt, Lg.wo, Lg.bo, dbranch, T.att, Lp.wo, R, W, W, th, &t.lin)
		clear(t.dqkv[:N*3*W])
		parallelN(th, B*c.Heads, func(i int) {
			b, h := i/c.Heads, i%c.Heads
			n := len(t.hs[b])
			from, orow := 0, t.start[b]
			if last {
				from, orow = n-1, b*S
			}
			c.attentionHeadBackward(t.dqkv[t.start[b]*3*W:t.start[b+1]*3*W], datt[orow*W:], T.qkv[t.start[b]*3*W:t.start[b+1]*3*W], n, h, from, &t.bwork[i%th])
		})
		dln1 := t.dln[:N*W]
		linearBackward(dln1, Lg.wqkv, Lg.bqkv, t.dqkv, T.ln1, Lp.wqkv, N, W, 3*W, th, &t.lin)
		// d xs[l] = LN1 backward + the residual rows.
		dxin := t.dx2[:N*W]
		layerNormBackward(dxin, Lg.ln1g, Lg.ln1b, dln1, t.xs[l], Lp.ln1g, t.xhat, N, W, th)
		if last {
			for b, h := range t.hs {
				o := (t.start[b] + (len(h)-1)*S) * W
				row := dxin[o : o+S*W]
				for i := range row {
					row[i] += dx[b*S*W+i]
				}
			}
		} else {
			parallelRows(th, N, func(lo, hi int) {
				for i := lo * W; i < hi*W; i++ {
					dxin[i] += dx[i]
				}
			})
		}
		t.dx, t.dx2 = t.dx2, t.dx
		dx = t.dx[:N*W]
	}
	// Embedding.
	maskTo(dx, dx, t.drop0, th)
	t.embedBackward(g, dx)
}

// maskTo: dst = src * mask elementwise (a copy when mask is nil).
func maskTo(dst, src, mask []float32, threads int) {
	if mask == nil {
		copy(dst, src)
		return
	}
	for i, v := range src {
		dst[i] = v * mask[i]
	}
}

// embedBackward adds the gradients of the token embedding (embed) given dx
// (N, W).
func (t *tape) embedBackward(g *Params, dx []float32) {
	c := &t.m.cfg
	S, G, C, E, W := c.Slots, c.Subspaces, c.Codewords, c.CodeDim, c.Width()
	sum := make([]float32, W)
	for b, h := range t.hs {
		n := len(h)
		for k := range h {
			st := &h[k]
			clear(sum)
			for s := 0; s < S; s++ {
				row := dx[(t.start[b]+k*S+s)*W:][:W]
				for gi := 0; gi < G; gi++ {
					z := int(st.Codes[s*G+gi])
					ge := g.codeEmb[((s*G+gi)*C+z)*E:][:E]
					for d := range ge {
						ge[d] += row[gi*E+d]
					}
				}
				gs := g.slotEmb[s*W : (s+1)*W]
				for i, v := range row {
					gs[i] += v
					sum[i] += v
				}
			}
			tm := g.timeEmb[(c.MaxHistory-n+k)*W:][:W]
			for i, v := range sum {
				tm[i] += v
				g.taskEmb[i] += v
				g.validB[i] += v
			}
			for s := 0; s < S; s++ {
				if st.SlotValid != nil && !st.SlotValid[s] {
					continue
				}
				gv := g.validW[s*W : (s+1)*W]
				for i, v := range sum {
					gv[i] += v
				}
			}
			t.m.actionBackward(g, sum, &st.Action, &t.act)
		}
	}
}
