package cuda

import (
	"fmt"
	"math"

	"github.com/memowm/memowm/worldmodel"
)

// lnEps is worldmodel's LayerNorm epsilon (layers.go's lnEps).
const lnEps = float32(1e-5)

// Forward implements worldmodel.BlockEngine: tape.forward's block loop on
// the device, for the histories whose token rows of x0 (N, W) start at
// start[b]. It returns the last block's output rows (B*Slots, W).
func (b *Blocks) Forward(m *worldmodel.Model, x0 []float32, start []int, dropRate float64, dropSeed uint64) ([]float32, error) {
	b.ready = false
	if err := b.setBatch(m, x0, start, dropRate, dropSeed); err != nil {
		return nil, err
	}
	if b.N == 0 {
		b.ready = true
		return b.out[:0], nil
	}
	if err := b.alloc(); err != nil {
		return nil, err
	}
	// The weights, block after block, as one upload.
	for l := 0; l < b.L; l++ {
		for k, t := range tensors(m.Params().Block(l)) {
			copy(b.wh[l*b.per+b.off[k]:][:b.size[k]], t)
		}
	}
	d := b.dev
	for _, w := range []struct {
		p   Ptr
		src []byte
	}{
		{b.wts.p, bytesOf(b.wh)}, {b.xs[0].p, bytesOf(x0[:b.N*b.W])},
		{b.qall.p, bytesOf(b.qh)}, {b.qlast.p, bytesOf(b.ql)}, {b.kall.p, bytesOf(b.kh)}, {b.klast.p, bytesOf(b.kl)},
	} {
		if err := d.Write(w.p, w.src); err != nil {
			return nil, fmt.Errorf("cuda: blocks forward: %w", err)
		}
	}
	b.flops = 0
	run := newLauncher(d)
	for l := 0; l < b.L; l++ {
		b.forwardBlock(run, l)
	}
	if run.err != nil {
		return nil, fmt.Errorf("cuda: blocks forward: %w", run.err)
	}
	b.out = grow32(b.out, b.Nq*b.W)
	if err := d.Read(bytesOf(b.out), b.xs[b.L].p); err != nil {
		return nil, fmt.Errorf("cuda: blocks forward: %w", err)
	}
	b.ready = true
	return b.out, nil
}

// forwardBlock runs block l (tape.forward's loop body).
func (b *Blocks) forwardBlock(run *launcher, l int) {
	W, M, H, N := b.W, b.M, b.H, b.N
	A := &b.act[l]
	last := l == b.L-1
	R, qm, sumK := N, b.qall.p, b.sumK
	if last {
		R, qm, sumK = b.Nq, b.qlast.p, b.sumKq
	}
	x := b.xs[l].p
	run.launch("tr_ln_fwd", Dim3{uint32(N), 1, 1}, Dim3{uint32(b.lnThreads), 1, 1}, 0,
		a(A.ln1.p), a(A.mean1.p), a(A.rstd1.p), a(x), a(b.w(l, tLN1G)), a(b.w(l, tLN1B)), f32(lnEps), i(W))
	b.gemm(run, "tr_gemm_nn", A.qkv.p, 3*W, A.ln1.p, W, b.w(l, tWQKV), 3*W, b.w(l, tBQKV), N, 3*W, W)
	scale := 1 / float32(math.Sqrt(float64(b.hd)))
	run.launch("tr_attn_fwd", Dim3{uint32(R), uint32(H), 1}, Dim3{uint32(b.atThread), 1, 1}, b.attnShared(),
		a(A.att.p), a(A.p.p), a(A.qkv.p), a(qm), i(W), i(b.hd), i(b.maxT), i(R), f32(scale))
	b.flops += 4 * sumK * int64(W)
	b.gemm(run, "tr_gemm_nn", b.tmp.p, W, A.att.p, W, b.w(l, tWO), W, 0, R, W, W)
	src := x
	if last { // x1 starts as the last state's rows
		elem(run, "tr_gather", R*W, a(A.x1.p), a(x), a(b.qlast.p), i(R), i(W))
		src = A.x1.p
	}
	elem(run, "tr_resid", R*W, append([]uint64{a(A.x1.p), a(src), a(b.tmp.p), a(b.w(l, tBO)), i(R * W), i(W)}, b.dropArgs(1+2*l)...)...)
	run.launch("tr_ln_fwd", Dim3{uint32(R), 1, 1}, Dim3{uint32(b.lnThreads), 1, 1}, 0,
		a(A.ln2.p), a(A.mean2.p), a(A.rstd2.p), a(A.x1.p), a(b.w(l, tLN2G)), a(b.w(l, tLN2B)), f32(lnEps), i(W))
	b.gemm(run, "tr_gemm_nn", A.pre.p, M, A.ln2.p, W, b.w(l, tW1), M, 0, R, M, W)
	elem(run, "tr_bias_gelu", R*M, a(A.act.p), a(A.pre.p), a(b.w(l, tB1)), i(R*M), i(M))
	b.gemm(run, "tr_gemm_nn", b.tmp.p, W, A.act.p, M, b.w(l, tW2), W, 0, R, W, M)
	elem(run, "tr_resid", R*W, append([]uint64{a(b.xs[l+1].p), a(A.x1.p), a(b.tmp.p), a(b.w(l, tB2)), i(R * W), i(W)}, b.dropArgs(2+2*l)...)...)
}

// Backward implements worldmodel.BlockEngine: tape.backward's block loop
// on the device for the last Forward, given dxL (B*Slots, W). It adds the
// blocks' gradients into g and returns the gradient of x0 (N, W).
func (b *Blocks) Backward(dxL []float32, g *worldmodel.Params) ([]float32, error) {
	if !b.ready {
		return nil, fmt.Errorf("cuda: blocks backward: no successful Forward before it")
	}
	W, N, Nq := b.W, b.N, b.Nq
	if len(dxL) != Nq*W {
		return nil, fmt.Errorf("cuda: blocks backward: %d output gradients, want %d", len(dxL), Nq*W)
	}
	if g == nil || len(g.Data) != b.nparams {
		return nil, fmt.Errorf("cuda: blocks backward: gradient Params do not fit the model")
	}
	b.dx0 = grow32(b.dx0, N*W)
	if N == 0 {
		return b.dx0, nil
	}
	d := b.dev
	if err := d.Write(b.dA.p, bytesOf(dxL)); err != nil {
		return nil, fmt.Errorf("cuda: blocks backward: %w", err)
	}
	run := newLauncher(d)
	cur, next := &b.dA, &b.dB
	for l := b.L - 1; l >= 0; l-- {
		b.backwardBlock(run, l, cur.p, next.p)
		cur, next = next, cur
	}
	if run.err != nil {
		return nil, fmt.Errorf("cuda: blocks backward: %w", run.err)
	}
	if err := d.Read(bytesOf(b.dx0), cur.p); err != nil {
		return nil, fmt.Errorf("cuda: blocks backward: %w", err)
	}
	if err := d.Read(bytesOf(b.gh), b.grads.p); err != nil {
		return nil, fmt.Errorf("cuda: blocks backward: %w", err)
	}
	for l := 0; l < b.L; l++ {
		for k, t := range tensors(g.Block(l)) {
			for j, v := range b.gh[l*b.per+b.off[k]:][:b.size[k]] {
				t[j] += v
			}
		}
	}
	return b.dx0, nil
}

// backwardBlock runs block l's backward: dx (R, W) is d xs[l+1]; dxin (N,
// W) gets d xs[l]; the block's gradients go to b.grads.
func (b *Blocks) backwardBlock(run *launcher, l int, dx, dxin Ptr) {
	W, M, H, N := b.W, b.M, b.H, b.N
	A := &b.act[l]
	last := l == b.L-1
	R, qm, km, sumK := N, b.qall.p, b.kall.p, b.sumK
	if last {
		R, qm, km, sumK = b.Nq, b.qlast.p, b.klast.p, b.sumKq
	}
	// MLP branch: xs[l+1] = x1 + drop(act W2 + b2).
	elem(run, "tr_mask", R*W, append([]uint64{a(b.dbr.p), a(dx), i(R * W)}, b.dropArgs(2+2*l)...)...)
	b.weightGrad(run, b.g(l, tW2), A.act.p, M, b.dbr.p, W, R)
	b.colsum(run, b.g(l, tB2), b.dbr.p, R, W)
	b.gemm(run, "tr_gemm_nt", b.dmlp.p, M, b.dbr.p, W, b.w(l, tW2), W, 0, R, M, W)
	elem(run, "tr_gelu_bwd", R*M, a(b.dmlp2.p), a(b.dmlp.p), a(A.pre.p), a(b.w(l, tB1)), i(R*M), i(M))
	b.weightGrad(run, b.g(l, tW1), A.ln2.p, W, b.dmlp2.p, M, R)
	b.colsum(run, b.g(l, tB1), b.dmlp2.p, R, M)
	b.gemm(run, "tr_gemm_nt", b.dln.p, W, b.dmlp2.p, M, b.w(l, tW1), M, 0, R, W, M)
	// d x1 = dx + LN2's backward.
	run.launch("tr_ln_bwd", Dim3{uint32(R), 1, 1}, Dim3{uint32(b.lnThreads), 1, 1}, 0,
		a(b.dx1.p), a(b.dln.p), a(A.x1.p), a(A.mean2.p), a(A.rstd2.p), a(b.w(l, tLN2G)), a(dx), i(W))
	b.lnGrads(run, b.g(l, tLN2G), b.g(l, tLN2B), b.dln.p, A.x1.p, A.mean2.p, A.rstd2.p, R)
	// Attention branch: x1 = x[rows] + drop(att Wo + bo).
	elem(run, "tr_mask", R*W, append([]uint64{a(b.dbr.p), a(b.dx1.p), i(R * W)}, b.dropArgs(1+2*l)...)...)
	b.weightGrad(run, b.g(l, tWO), A.att.p, W, b.dbr.p, W, R)
	b.colsum(run, b.g(l, tBO), b.dbr.p, R, W)
	datt := b.dln.p
	b.gemm(run, "tr_gemm_nt", datt, W, b.dbr.p, W, b.w(l, tWO), W, 0, R, W, W)
	if last { // the q columns of rows that are no query stay zero
		elem(run, "tr_zero", N*3*W, a(b.dqkv.p), i(N*3*W))
	}
	scale := 1 / float32(math.Sqrt(float64(b.hd)))
	run.launch("tr_attn_bwd_q", Dim3{uint32(R), uint32(H), 1}, Dim3{uint32(b.atThread), 1, 1}, b.attnShared(),
		a(b.dqkv.p), a(b.dS.p), a(datt), a(A.p.p), a(A.qkv.p), a(qm), i(W), i(b.hd), i(b.maxT), i(R), f32(scale))
	run.launch("tr_attn_bwd_kv", Dim3{uint32(N), uint32(H), 1}, Dim3{uint32(b.atThread), 1, 1}, b.attnShared(),
		a(b.dqkv.p), a(b.dS.p), a(datt), a(A.p.p), a(A.qkv.p), a(qm), a(km), i(W), i(b.hd), i(b.maxT), i(R))
	b.flops += 8 * sumK * int64(W)
	b.weightGrad(run, b.g(l, tWQKV), A.ln1.p, W, b.dqkv.p, 3*W, N)
	b.colsum(run, b.g(l, tBQKV), b.dqkv.p, N, 3*W)
	b.gemm(run, "tr_gemm_nt", b.dln.p, W, b.dqkv.p, 3*W, b.w(l, tWQKV), 3*W, 0, N, W, 3*W)
	// d xs[l] = LN1's backward + the residual rows.
	add := b.dx1.p
	if last {
		add = 0
	}
	run.launch("tr_ln_bwd", Dim3{uint32(N), 1, 1}, Dim3{uint32(b.lnThreads), 1, 1}, 0,
		a(dxin), a(b.dln.p), a(b.xs[l].p), a(A.mean1.p), a(A.rstd1.p), a(b.w(l, tLN1G)), a(add), i(W))
	if last {
		elem(run, "tr_scatter_add", R*W, a(dxin), a(b.dx1.p), a(b.qlast.p), i(R), i(W))
	}
	b.lnGrads(run, b.g(l, tLN1G), b.g(l, tLN1B), b.dln.p, b.xs[l].p, A.mean1.p, A.rstd1.p, N)
}

// setBatch checks a Forward's arguments and builds the batch's maps.
func (b *Blocks) setBatch(m *worldmodel.Model, x0 []float32, start []int, rate float64, seed uint64) error {
	if m == nil {
		return fmt.Errorf("cuda: blocks forward: no model")
	}
	c := m.Config()
	if c.Width() != b.W || c.MLP != b.M || c.Heads != b.H || c.Slots != b.S || c.Layers != b.L {
		return fmt.Errorf("cuda: blocks forward: a model of width %d, MLP %d, %d heads, %d slots, %d layers on blocks made for %d, %d, %d, %d, %d",
			c.Width(), c.MLP, c.Heads, c.Slots, c.Layers, b.W, b.M, b.H, b.S, b.L)
	}
	if !(rate >= 0 && rate < 1) {
		return fmt.Errorf("cuda: blocks forward: dropout rate %g is outside [0, 1)", rate)
	}
	if len(start) < 1 || start[0] != 0 {
		return fmt.Errorf("cuda: blocks forward: history starts %v do not begin at 0", start)
	}
	S, W := b.S, b.W
	b.nparams = len(m.Params().Data)
	B := len(start) - 1
	b.B, b.N, b.Nq, b.maxT = B, start[B], B*S, 0
	b.rate, b.seed = rate, seed
	b.qh, b.ql, b.kh, b.kl = b.qh[:0], b.ql[:0], b.kh[:0], b.kl[:0]
	b.sumK, b.sumKq = 0, 0
	for h := 0; h < B; h++ {
		T := start[h+1] - start[h]
		if T <= 0 || T%S != 0 || T > b.cfg.MaxHistory*S {
			return fmt.Errorf("cuda: blocks forward: history %d has %d token rows, want a positive multiple of %d up to %d", h, T, S, b.cfg.MaxHistory*S)
		}
		b.maxT = max(b.maxT, T)
		s0 := start[h]
		for t := 0; t < T; t++ {
			blk := t / S * S // first row of t's block, in the history
			// queries: (qkv row, first key row, keys)
			b.qh = append(b.qh, int32(s0+t), int32(s0), int32(blk+S))
			b.sumK += int64(blk + S)
			// keys: (index among the history's keys, first output row, output rows)
			b.kh = append(b.kh, int32(t), int32(s0+blk), int32(T-blk))
			b.kl = append(b.kl, int32(t), int32(h*S), int32(S))
		}
		for s := 0; s < S; s++ {
			b.ql = append(b.ql, int32(s0+T-S+s), int32(s0), int32(T))
			b.sumKq += int64(T)
		}
	}
	if len(x0) != b.N*W {
		return fmt.Errorf("cuda: blocks forward: %d input values, want %d (%d rows of %d)", len(x0), b.N*W, b.N, W)
	}
	// Offsets are int32 in the kernels, and the column sums' chunks a grid's
	// y dimension (at most 65535).
	if int64(b.N)*int64(max(3*W, b.M)) > math.MaxInt32 || int64(b.H)*int64(b.N)*int64(b.maxT) > math.MaxInt32 ||
		(b.N+trChunk-1)/trChunk > 65535 {
		return fmt.Errorf("cuda: blocks forward: a batch of %d token rows is too large for one call", b.N)
	}
	return nil
}

// alloc grows the device buffers to the batch.
func (b *Blocks) alloc() error {
	W, M, H, N, Nq, T := b.W, b.M, b.H, b.N, b.Nq, b.maxT
	chunks := (N + trChunk - 1) / trChunk
	type need struct {
		b *buffer
		n int // floats (or int32)
	}
	needs := []need{
		{&b.qall, 3 * N}, {&b.qlast, 3 * Nq}, {&b.kall, 3 * N}, {&b.klast, 3 * N},
		{&b.dA, N * W}, {&b.dB, N * W}, {&b.dx1, N * W}, {&b.dbr, N * W}, {&b.dln, N * W}, {&b.tmp, N * W},
		{&b.dmlp, N * M}, {&b.dmlp2, N * M}, {&b.dqkv, N * 3 * W}, {&b.dS, H * N * T},
		{&b.part, chunks * max(3*W, M, 2*W)},
	}
	split := 0
	for _, p := range [][2]int{{M, W}, {W, M}, {W, W}, {W, 3 * W}} {
		n, _ := b.splits(p[0], p[1], N)
		if n > 1 {
			split = max(split, n*p[0]*p[1])
		}
	}
	needs = append(needs, need{&b.split, split})
	for l := range b.xs {
		R := N
		if l == b.L {
			R = Nq
		}
		needs = append(needs, need{&b.xs[l], R * W})
	}
	for l := range b.act {
		A := &b.act[l]
		R := N
		if l == b.L-1 {
			R = Nq
		}
		needs = append(needs, need{&A.ln1, N * W}, need{&A.mean1, N}, need{&A.rstd1, N}, need{&A.qkv, N * 3 * W},
			need{&A.p, H * R * T}, need{&A.att, R * W}, need{&A.x1, R * W}, need{&A.ln2, R * W},
			need{&A.mean2, R}, need{&A.rstd2, R}, need{&A.pre, R * M}, need{&A.act, R * M})
	}
	for _, n := range needs {
		if err := n.b.ensure(b.dev, 4*n.n); err != nil {
			return fmt.Errorf("cuda: blocks: device memory for %d token rows: %w", N, err)
		}
	}
	return nil
}

// grow32 returns s resliced to n floats, reallocated when short.
func grow32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}
