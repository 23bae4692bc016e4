package worldmodel

import (
	"math/rand/v2"

	"github.com/memowm/memowm/internal/f32"
	"github.com/memowm/memowm/internal/fgemm"
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
//
// The training forward (train true) and the whole backward compute their
// matrix products with internal/fgemm (fused multiply-adds, blocked sums: fast,
// not bit-exact), their LayerNorms, biases, residual sums and column sums
// with fgemm's row kernels (16 lanes at a time), and attention with
// attentionHeadTrain. A forward with train
// false (evaluation, tests) uses the inference's exact kernels and so gives
// CPU.Forward's bits. Either way the results do not depend on the thread
// count: fgemm's and every parallel loop's split is over outputs.

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

	mask1, mask2 []float32 // the buffers of drop1 and drop2, kept while they are nil
}

// tape runs a model's training forward and backward; it owns the
// activations. One tape serves one goroutine.
type tape struct {
	m       *Model
	threads int
	cpu     CPU   // for the heads (its buffers only)
	cpus    []CPU // one per goroutine, for embed's scratch

	hs    []History
	start []int // first token row of each history
	N, Nq int
	capN  int // rows the buffers are sized for: the batch size times the longest history

	xs      [][]float32 // L+1 residual streams, (N, W) .. (Nq, W)
	drop0   []float32   // (N, W) embedding dropout multipliers, nil without dropout
	mask0   []float32   // drop0's buffer
	layers  []tapeLayer
	lnf     []float32 // (Nq, W)
	outs    []Output
	tmp     []float32 // (N, 3W) scratch
	workers []attnScratch
	ws      *fgemm.Workspace // the products, on threads goroutines
	fast    bool             // the last forward used fgemm (train true)

	// backward buffers
	dx, dx2, dln []float32 // (N, W)
	dqkv         []float32 // (N, 3W)
	dmlp, dmlp2  []float32 // (R, M)
	xhat         []float32 // (N, W)
	part         []float32 // per-chunk partial column sums
	pooled       []float32 // (B, W) mean final state per history
	esum         []float32 // (B*H, W) per history step, the sum of its slots' embedding gradients
	bwork        []attnBackScratch
	acts         []actionScratch // one per goroutine
	agrad        *actionGrads
	dlog         []float32 // (B, J, C) gradient of the logits
	lmx, lsum    []float32 // (B, J) each logit row's maximum and sum of exponentials (lossGrad)
	embT, gembT  []float32 // (J, E, C) the code embedding transposed per coordinate, and its gradient
	dgate        []float32 // (B, J)
	dvalid       []float32 // (B, S)

	engine    BlockEngine // runs the blocks instead of the loops below (SetBlockEngine)
	engineErr error       // the engine's first error of this step
}

func newTape(m *Model, threads int) *tape {
	t := &tape{m: m, threads: threads}
	t.cpu = CPU{m: m, threads: threads}
	t.cpus = make([]CPU, threads)
	for i := range t.cpus {
		t.cpus[i] = CPU{m: m, threads: 1}
	}
	t.ws = fgemm.NewWorkspace(threads)
	return t
}

// dropMask fills mask (one chunk of rows of a mask) with 0 (probability
// rate) or 1/(1-rate), four 16-bit draws per 64-bit number of the chunk's
// own generator: PCG seeded with the step's seed and (stream, chunk), so that
// a mask does not depend on how chunks are shared among goroutines. Stream 0
// is the embedding's mask, 1+2l and 2+2l block l's branches.
func dropMask(mask []float32, rate float64, seed uint64, stream, chunk int) {
	var rng rand.PCG
	rng.Seed(seed, 0x64726f70<<32|uint64(stream)<<20|uint64(chunk)) // "drop"
	// vals[0] is a dropped unit's multiplier, vals[1] a kept one's.
	vals := [2]float32{0, float32(1 / (1 - rate))}
	thr := uint64(rate * 65536)
	i := 0
	for ; i+4 <= len(mask); i += 4 {
		bits := rng.Uint64()
		m := mask[i : i+4 : i+4]
		// 1 - ((x - thr) >> 63) is 1 when x >= thr (kept), without a branch.
		m[0] = vals[1-((bits&0xffff-thr)>>63)]
		m[1] = vals[1-((bits>>16&0xffff-thr)>>63)]
		m[2] = vals[1-((bits>>32&0xffff-thr)>>63)]
		m[3] = vals[1-((bits>>48-thr)>>63)]
	}
	if i < len(mask) {
		bits := rng.Uint64()
		for ; i < len(mask); i++ {
			mask[i] = vals[1-((bits&0xffff-thr)>>63)]
			bits >>= 16
		}
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
	if !train {
		rate = 0
	}
	if len(t.xs) != L+1 {
		t.xs = make([][]float32, L+1)
		t.layers = make([]tapeLayer, L)
	}
	if len(t.workers) < t.threads {
		t.workers = make([]attnScratch, t.threads)
		t.bwork = make([]attnBackScratch, t.threads)
		for i := range t.bwork {
			t.bwork[i].w = fgemm.NewWorkspace(1)
		}
	}
	t.fast = train
	// Buffers are sized for the longest batch of this size at once, so that
	// steps of varying lengths do not reallocate.
	t.capN = max(t.capN, B*c.MaxHistory*S)
	t.xs[0] = t.grow(t.xs[0], N, W)
	t.tmp = t.grow(t.tmp, N, 3*W)

	// Embedding (forward.go's embed, into xs[0]).
	parallelN(t.threads, B, func(b int) {
		r := &t.cpus[b%t.threads]
		r.x = t.xs[0]
		r.embed(hs[b:b+1], t.start[b:b+2])
	})
	t.drop0 = nil
	if rate > 0 {
		t.mask0 = t.grow(t.mask0, N, W)
		t.drop0 = t.mask0
		x, mask := t.xs[0], t.drop0
		parallelRows(t.threads, N, func(lo, hi int) {
			dropMask(mask[lo*W:hi*W], rate, dropSeed, 0, lo/rowChunk)
			for i := lo * W; i < hi*W; i++ {
				x[i] *= mask[i]
			}
		})
	}

	t.engineErr = nil
	if t.engine != nil && train {
		t.engineForward(rate, dropSeed)
		L = 0 // the blocks are done
	}
	for l := 0; l < L; l++ {
		Lp, T := &p.layers[l], &t.layers[l]
		last := l == L-1
		R := N
		if last {
			R = Nq
		}
		x := t.xs[l]
		T.ln1, T.qkv = t.grow(T.ln1, N, W), t.grow(T.qkv, N, 3*W)
		T.att, T.x1, T.ln2 = t.grow(T.att, R, W), t.grow(T.x1, R, W), t.grow(T.ln2, R, W)
		T.pre, T.act = t.grow(T.pre, R, M), t.grow(T.act, R, M)
		t.xs[l+1] = t.grow(t.xs[l+1], R, W)
		t.layerNorm(T.ln1, x, Lp.ln1g, Lp.ln1b, N, W)
		t.mul(T.qkv, T.ln1, Lp.wqkv, N, W, 3*W)
		parallelRows(t.threads, N, func(lo, hi int) {
			if t.fast {
				fgemm.AddBias(T.qkv[lo*3*W:hi*3*W], Lp.bqkv, hi-lo, 3*W)
			} else {
				addBias(T.qkv[lo*3*W:hi*3*W], Lp.bqkv, hi-lo, 3*W)
			}
		})
		// x1 starts as the residual rows.
		if last {
			for b, h := range hs {
				copy(T.x1[b*S*W:(b+1)*S*W], x[(t.start[b]+(len(h)-1)*S)*W:])
			}
		}
		parallelN(t.threads, B*c.Heads, func(i int) {
			b, h := i/c.Heads, i%c.Heads
			n := len(hs[b])
			from, orow := 0, t.start[b]
			if last {
				from, orow = n-1, b*S
			}
			qkv := T.qkv[t.start[b]*3*W : t.start[b+1]*3*W]
			if t.fast {
				c.attentionHeadTrain(T.att[orow*W:], qkv, n, h, from, &t.bwork[i%t.threads])
			} else {
				c.attentionHead(T.att[orow*W:], qkv, n, h, from, &t.workers[i%t.threads])
			}
		})
		proj := t.tmp[:R*W]
		t.mul(proj, T.att, Lp.wo, R, W, W)
		src := x
		if last {
			src = T.x1 // the gathered rows
		}
		T.drop1 = t.residualTo(T.x1, src, proj, Lp.bo, &T.mask1, R, W, rate, dropSeed, 1+2*l)
		t.layerNorm(T.ln2, T.x1, Lp.ln2g, Lp.ln2b, R, W)
		t.mul(T.pre, T.ln2, Lp.w1, R, W, M)
		parallelRows(t.threads, R, func(lo, hi int) {
			addBiasGELUTo(T.act[lo*M:hi*M], T.pre[lo*M:hi*M], Lp.b1, hi-lo, M)
		})
		t.mul(proj, T.act, Lp.w2, R, M, W)
		T.drop2 = t.residualTo(t.xs[l+1], T.x1, proj, Lp.b2, &T.mask2, R, W, rate, dropSeed, 2+2*l)
	}
	t.lnf = grow(t.lnf, Nq*W)
	t.layerNorm(t.lnf, t.xs[c.Layers], p.finalG, p.finalB, Nq, W)
	if cap(t.outs) < B {
		t.outs = make([]Output, B)
	}
	t.outs = t.outs[:B]
	t.transposeEmb()
	parallelN(t.threads, B, func(b int) { t.cpu.heads(&t.outs[b], t.lnf[b*S*W:(b+1)*S*W], hs[b], t.embT) })
}

// grow returns b resliced to rows x width floats; when short it allocates
// for the tape's most rows (capN) at once, or for the last layer's rows
// when rows is no more than the batch's query rows.
func (t *tape) grow(b []float32, rows, width int) []float32 {
	n := rows * width
	if cap(b) >= n {
		return b[:n]
	}
	capRows := t.capN
	if rows <= t.Nq {
		capRows = t.Nq
	}
	return make([]float32, n, max(n, capRows*width))
}

// transposeEmb sets t.embT to the code embedding (J, C, E) transposed per
// coordinate (J, E, C), coordinates split across goroutines: the heads'
// products read it (with the same bits as the loop over codes), and the
// backward's run along codes.
func (t *tape) transposeEmb() {
	c := &t.m.cfg
	J, C, E := c.Coords(), c.Codewords, c.CodeDim
	t.embT = grow(t.embT, J*E*C)
	emb := t.m.p.codeEmb
	parallelRows(t.threads, J, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			transposeCols(t.embT[j*E*C:(j+1)*E*C], emb[j*C*E:(j+1)*C*E], E, C, E)
		}
	})
}

// layerNorm sets out (rows, W) to the LayerNorm of x's rows, rows split
// across goroutines: fgemm's kernel in a training forward, forward.go's exact
// layerNormTo otherwise.
func (t *tape) layerNorm(out, x, g, b []float32, rows, W int) {
	parallelRows(t.threads, rows, func(lo, hi int) {
		if t.fast {
			fgemm.LayerNorm(out[lo*W:hi*W], x[lo*W:hi*W], g, b, hi-lo, W, lnEps)
		} else {
			layerNormTo(out[lo*W:hi*W], x[lo*W:hi*W], g, b, hi-lo, W)
		}
	})
}

// mul sets c (n, k) = a (n, inner) b (inner, k): fgemm in a training
// forward, internal/f32's exact kernel otherwise.
func (t *tape) mul(c, a, b []float32, n, inner, k int) {
	if t.fast {
		t.ws.MulTo(c, k, a, inner, b, k, n, inner, k, 0)
		return
	}
	f32.MulParTo(c, k, a, inner, b, k, n, inner, k, t.threads)
}

// residualTo sets dst = src + drop(y + b) (rows, k; dst may be src), rows
// split across goroutines, and returns the dropout mask used (nil without
// dropout; the mask lives in *buf). The mask is drawn chunk by chunk
// (dropMask, stream stream). A training forward sums with fgemm.Residual;
// otherwise (evaluation: rate is 0 there) with addResidual, the inference's
// bits.
func (t *tape) residualTo(dst, src, y, b []float32, buf *[]float32, rows, k int, rate float64, seed uint64, stream int) []float32 {
	var mask []float32
	if rate > 0 {
		*buf = t.grow(*buf, rows, k)
		mask = *buf
	}
	parallelRows(t.threads, rows, func(lo, hi int) {
		if mask != nil {
			dropMask(mask[lo*k:hi*k], rate, seed, stream, lo/rowChunk)
		}
		if !t.fast {
			// Evaluation (no dropout, so no mask): the inference's sum.
			copy(dst[lo*k:hi*k], src[lo*k:hi*k])
			addResidual(dst[lo*k:hi*k], y[lo*k:hi*k], b, hi-lo, k)
			return
		}
		var m []float32
		if mask != nil {
			m = mask[lo*k : hi*k]
		}
		fgemm.Residual(dst[lo*k:hi*k], src[lo*k:hi*k], y[lo*k:hi*k], b, m, hi-lo, k)
	})
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
	t.dx, t.dx2, t.dln = t.grow(t.dx, N, W), t.grow(t.dx2, N, W), t.grow(t.dln, N, W)
	t.xhat, t.dqkv = t.grow(t.xhat, N, W), t.grow(t.dqkv, N, 3*W)

	// Heads: logits[b,s,g,c] = piece . emb[s,g,c] + bias; gate = piece . copyW + copyB.
	// Per coordinate and code dimension k, along the codes (the transposed
	// embedding of the forward): d piece[k] = embT[k] . dl and
	// gembT[k] += piece[k] dl, one fgemm.AxpyDot; gembT is added into the
	// gradient (J, C, E) at the end.
	dlnf := t.dln[:Nq*W]
	t.gembT = grow(t.gembT, J*E*C)
	parallelN(th, J, func(j int) {
		s, gi := j/G, j%G
		embT, gembT := t.embT[j*E*C:(j+1)*E*C], t.gembT[j*E*C:(j+1)*E*C]
		clear(gembT)
		gbias := g.codeBias[j*C : (j+1)*C]
		cw := p.copyW[j*E : j*E+E]
		for b := 0; b < B; b++ {
			piece := t.lnf[(b*S+s)*W+gi*E:][:E]
			dp := dlnf[(b*S+s)*W+gi*E:][:E]
			dl := t.dlog[(b*J+j)*C : (b*J+j)*C+C]
			fgemm.Add(gbias, dl)
			for k := range dp {
				dp[k] = fgemm.AxpyDot(gembT[k*C:(k+1)*C], embT[k*C:(k+1)*C], dl, piece[k])
			}
			dg := t.dgate[b*J+j]
			g.copyB[j] += dg
			for k := range dp {
				dp[k] += dg * cw[k]
				g.copyW[j*E+k] += dg * piece[k]
			}
		}
		gemb := g.codeEmb[j*C*E : (j+1)*C*E]
		for cc := 0; cc < C; cc++ {
			for k := 0; k < E; k++ {
				gemb[cc*E+k] += gembT[k*C+cc]
			}
		}
	})
	// Validity head on the mean of the slots' final states: pooled (B, W),
	// then validHW's rows split across goroutines (histories in order), then
	// each history's pooled gradient added to its slots' rows.
	t.pooled = grow(t.pooled, B*W)
	pooled := t.pooled
	parallelN(th, B, func(b int) {
		pb := pooled[b*W : (b+1)*W]
		clear(pb)
		for s := 0; s < S; s++ {
			for i, v := range t.lnf[(b*S+s)*W : (b*S+s+1)*W] {
				pb[i] += v
			}
		}
		for i := range pb {
			pb[i] /= float32(S)
		}
	})
	parallelRows(th, W, func(lo, hi int) {
		for b := 0; b < B; b++ {
			dv := t.dvalid[b*S : (b+1)*S]
			for i := lo; i < hi; i++ {
				gw := g.validHW[i*S : (i+1)*S]
				for s, d := range dv {
					gw[s] += pooled[b*W+i] * d
				}
			}
		}
	})
	for b := 0; b < B; b++ {
		for s, d := range t.dvalid[b*S : (b+1)*S] {
			g.validHB[s] += d
		}
	}
	parallelN(th, B, func(b int) {
		dv := t.dvalid[b*S : (b+1)*S]
		dpool := pooled[b*W : (b+1)*W] // pooled is no longer needed
		for i := 0; i < W; i++ {
			var acc float32
			for s, d := range dv {
				acc += p.validHW[i*S+s] * d
			}
			dpool[i] = acc / float32(S)
		}
		for s := 0; s < S; s++ {
			row := dlnf[(b*S+s)*W : (b*S+s+1)*W]
			for i := range row {
				row[i] += dpool[i]
			}
		}
	})
	// Final LayerNorm: dx (Nq rows) of the last block's output.
	dx := t.dx[:Nq*W]
	layerNormBackward(dx, g.finalG, g.finalB, dlnf, t.xs[L], p.finalG, t.xhat, Nq, W, th, &t.part)
	if t.engine != nil && t.fast {
		dx = t.engineBackward(g, dx)
		L = 0 // the blocks are done
	}

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
		t.dmlp, t.dmlp2 = t.grow(t.dmlp, R, M), t.grow(t.dmlp2, R, M)
		linearBackward(t.dmlp, Lg.w2, Lg.b2, dbranch, T.act, Lp.w2, R, M, W, t.ws, &t.part)
		geluBackward(t.dmlp2, t.dmlp, T.pre, T.act, Lp.b1, R, M, th)
		dln2 := t.dln[:R*W]
		linearBackward(dln2, Lg.w1, Lg.b1, t.dmlp2, T.ln2, Lp.w1, R, W, M, t.ws, &t.part)
		// d x1 = dx + LN2 backward.
		layerNormBackward(dbranch, Lg.ln2g, Lg.ln2b, dln2, T.x1, Lp.ln2g, t.xhat, R, W, th, &t.part)
		parallelRows(th, R, func(lo, hi int) { fgemm.Add(dx[lo*W:hi*W], dbranch[lo*W:hi*W]) })
		// Attention branch: x1 = x[rows] + drop(att Wo + bo).
		maskTo(dbranch, dx[:R*W], T.drop1, th)
		datt := t.dln[:R*W]
		linearBackward(datt, Lg.wo, Lg.bo, dbranch, T.att, Lp.wo, R, W, W, t.ws, &t.part)
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
		linearBackward(dln1, Lg.wqkv, Lg.bqkv, t.dqkv, T.ln1, Lp.wqkv, N, W, 3*W, t.ws, &t.part)
		// d xs[l] = LN1 backward + the residual rows.
		dxin := t.dx2[:N*W]
		layerNormBackward(dxin, Lg.ln1g, Lg.ln1b, dln1, t.xs[l], Lp.ln1g, t.xhat, N, W, th, &t.part)
		if last {
			for b, h := range t.hs {
				o := (t.start[b] + (len(h)-1)*S) * W
				row := dxin[o : o+S*W]
				for i := range row {
					row[i] += dx[b*S*W+i]
				}
			}
		} else {
			parallelRows(th, N, func(lo, hi int) { fgemm.Add(dxin[lo*W:hi*W], dx[lo*W:hi*W]) })
		}
		t.dx, t.dx2 = t.dx2, t.dx
		dx = t.dx[:N*W]
	}
	// Embedding.
	maskTo(dx, dx, t.drop0, th)
	t.embedBackward(g, dx)
}

// maskTo: dst = src * mask elementwise (a copy when mask is nil), in
// parallel chunks.
func maskTo(dst, src, mask []float32, threads int) {
	const chunk = 1 << 14
	parallelN(threads, (len(src)+chunk-1)/chunk, func(ci int) {
		lo, hi := ci*chunk, min((ci+1)*chunk, len(src))
		if mask == nil {
			copy(dst[lo:hi], src[lo:hi])
			return
		}
		m, d := mask[lo:hi], dst[lo:hi]
		for i, v := range src[lo:hi] {
			d[i] = v * m[i]
		}
	})
}

// embedBackward adds the gradients of the token embedding (embed) given dx
// (N, W). The code and slot embeddings' gradients are split by slot across
// goroutines; each history step's sum over its slots is formed in parallel
// and then added into the time, task and validity embeddings (columns split
// across goroutines) and through the action encoder (in order: its
// gradients are shared by all steps). Every gradient element is summed in
// one fixed order, whatever the thread count.
func (t *tape) embedBackward(g *Params, dx []float32) {
	c := &t.m.cfg
	S, G, C, E, W := c.Slots, c.Subspaces, c.Codewords, c.CodeDim, c.Width()
	th := t.threads
	steps := t.N / S // history steps of the batch, in order
	parallelN(th, S, func(s int) {
		gs := g.slotEmb[s*W : (s+1)*W]
		for b, h := range t.hs {
			for k := range h {
				row := dx[(t.start[b]+k*S+s)*W:][:W]
				for gi := 0; gi < G; gi++ {
					z := int(h[k].Codes[s*G+gi])
					ge := g.codeEmb[((s*G+gi)*C+z)*E:][:E]
					for d := range ge {
						ge[d] += row[gi*E+d]
					}
				}
				for i, v := range row {
					gs[i] += v
				}
			}
		}
	})
	t.esum = grow(t.esum, steps*W)
	sums := t.esum
	parallelN(th, steps, func(st int) {
		sum := sums[st*W : (st+1)*W]
		copy(sum, dx[st*S*W:st*S*W+W])
		for s := 1; s < S; s++ {
			for i, v := range dx[(st*S+s)*W : (st*S+s+1)*W] {
				sum[i] += v
			}
		}
	})
	parallelRows(th, W, func(lo, hi int) {
		for b, h := range t.hs {
			n := len(h)
			for k := range h {
				st := &h[k]
				sum := sums[(t.start[b]/S+k)*W:][:W]
				tm := g.timeEmb[(c.MaxHistory-n+k)*W:][:W]
				for i := lo; i < hi; i++ {
					v := sum[i]
					tm[i] += v
					g.taskEmb[i] += v
					g.validB[i] += v
				}
				for s := 0; s < S; s++ {
					if st.SlotValid != nil && !st.SlotValid[s] {
						continue
					}
					gv := g.validW[s*W : (s+1)*W]
					for i := lo; i < hi; i++ {
						gv[i] += sum[i]
					}
				}
			}
		}
	})
	t.actionsBackward(g, sums)
}

// actionGroups is the number of fixed groups of histories whose action
// gradients are summed separately (in parallel) and then added in order.
const actionGroups = 16

// actionsBackward runs the action encoder's backward for every history
// step (sums (steps, W): the gradients of the action embeddings). The
// histories are cut into actionGroups fixed groups, each summed in order into
// its own copy of the action encoder's gradients (in parallel), and the
// copies are added into g in group order: the same bits for any thread count.
func (t *tape) actionsBackward(g *Params, sums []float32) {
	S, W := t.m.cfg.Slots, t.m.cfg.Width()
	if t.agrad == nil {
		t.agrad = newActionGrads(g, actionGroups)
		t.acts = make([]actionScratch, t.threads)
	}
	ag := t.agrad
	B := len(t.hs)
	groups := min(actionGroups, B)
	parallelN(t.threads, groups, func(j int) {
		part := &ag.parts[j]
		clear(part.data)
		for b := j * B / groups; b < (j+1)*B/groups; b++ {
			for k, st := range t.hs[b] {
				t.m.actionBackward(&part.p, sums[(t.start[b]/S+k)*W:][:W], &st.Action, &t.acts[j%t.threads])
			}
		}
	})
	dst := g.Data[ag.lo:ag.hi]
	const chunk = 4096
	parallelN(t.threads, (len(dst)+chunk-1)/chunk, func(ci int) {
		lo, hi := ci*chunk, min((ci+1)*chunk, len(dst))
		for j := 0; j < groups; j++ {
			for i, v := range ag.parts[j].data[lo:hi] {
				dst[lo+i] += v
			}
		}
	})
}

// actionGrads are per-group copies of the action encoder's gradients: the
// tensors from action/type_embedding to action/pad, which are contiguous in
// Params.Data ([lo, hi)).
type actionGrads struct {
	lo, hi int
	parts  []actionPart
}

// actionPart is one copy: data and a Params whose action fields view it
// (its other fields are nil; actionBackward touches only these).
type actionPart struct {
	data []float32
	p    Params
}

func newActionGrads(g *Params, n int) *actionGrads {
	off := map[string]Tensor{}
	for _, tn := range g.Tensors {
		off[tn.Name] = tn
	}
	ag := &actionGrads{lo: off["action/type_embedding"].Off}
	last := off["action/pad"]
	ag.hi = last.Off + last.Size()
	ag.parts = make([]actionPart, n)
	for i := range ag.parts {
		pt := &ag.parts[i]
		pt.data = make([]float32, ag.hi-ag.lo)
		for _, f := range []struct {
			name string
			dst  *[]float32
		}{
			{"action/type_embedding", &pt.p.typeEmb}, {"action/byte_embedding", &pt.p.byteEmb},
			{"action/gru_wx", &pt.p.gruWx}, {"action/gru_wh", &pt.p.gruWh}, {"action/gru_b", &pt.p.gruB},
			{"action/x_embedding", &pt.p.xEmb}, {"action/y_embedding", &pt.p.yEmb},
			{"action/delta_w", &pt.p.deltaW}, {"action/delta_b", &pt.p.deltaB},
			{"action/proj_w", &pt.p.actW}, {"action/proj_b", &pt.p.actB},
		} {
			tn := off[f.name]
			*f.dst = pt.data[tn.Off-ag.lo : tn.Off-ag.lo+tn.Size()]
		}
	}
	return ag
}
