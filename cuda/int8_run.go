package cuda

import (
	"fmt"
	"math"

	"github.com/memowm/memowm/worldmodel"
)

// Predict implements worldmodel.Predictor: the steps of
// worldmodel.Int8CPU.forward, each a kernel of kernels/int8.cu over every
// history of the batch. A batch larger than one call's limits (chunk) is
// predicted in consecutive chunks of whole histories.
func (r *Int8) Predict(dst []worldmodel.Prediction, hs []worldmodel.History) ([]worldmodel.Prediction, error) {
	x, start, err := r.cpu.InputTokens(r.xh, hs)
	if err != nil {
		return dst, err
	}
	r.xh = x
	if cap(dst) < len(hs) {
		dst = append(dst[:cap(dst)], make([]worldmodel.Prediction, len(hs)-cap(dst))...)
	}
	dst = dst[:len(hs)]
	W := r.cfg.Width()
	maxRows, maxHist := r.chunk()
	for lo := 0; lo < len(hs); {
		hi := lo + 1
		for hi < len(hs) && start[hi+1]-start[lo] <= maxRows && hi-lo < maxHist {
			hi++
		}
		st := make([]int, hi-lo+1)
		for b := range st {
			st[b] = start[lo+b] - start[lo]
		}
		if err := r.forward(hs[lo:hi], st, x[start[lo]*W:start[hi]*W]); err != nil {
			return dst, err
		}
		if err := r.results(dst[lo:hi]); err != nil {
			return dst, err
		}
		lo = hi
	}
	return dst, nil
}

// chunk returns the most token rows and histories one call may hold: the
// kernels' int32 indices, the product's grid (65,535 tiles of 64 rows),
// and a budget of device memory (a quarter of the GPU's, 1 GiB when not
// known) for the activations and the heads' tables.
func (r *Int8) chunk() (rows, hists int) {
	c := &r.cfg
	W, M, J, C := c.Width(), c.MLP, c.Coords(), c.Codewords
	wide := max(3*W, M)
	rows = min(math.MaxInt32/wide, 65535*tileGEMM)
	budget := int64(1) << 30
	if m := r.dev.Info().Memory; m > 0 {
		budget = int64(m / 4)
	}
	perRow := int64(4*W + W + M + 4*wide + 3*W + W + 12) // x, a8, h8, acc, qkv, att, qmap
	rows = int(min(int64(rows), budget/2/perRow))
	perHist := int64(J * C * 20) // lbuf, wbuf, freq
	hists = int(max(1, min(budget/2/perHist, math.MaxInt32/int64(J*C))))
	if r.chunkRows > 0 { // tests
		rows = r.chunkRows
	}
	return max(rows, c.MaxHistory*c.Slots), hists
}

// ptrs and scalars as launch arguments
func a(p Ptr) uint64     { return uint64(p) }
func i(v int) uint64     { return uint64(int64(v)) }
func i64(v int64) uint64 { return uint64(v) }

func blocks(n, per int) uint32 { return uint32((n + per - 1) / per) }

// forward runs one chunk: histories hs with token rows from start (from
// 0) and their input tokens x.
func (r *Int8) forward(hs []worldmodel.History, start []int, x []int32) error {
	c := &r.cfg
	d := r.dev
	S, W, M, H, hd := c.Slots, c.Width(), c.MLP, c.Heads, c.HeadDim()
	B := len(hs)
	N, Nq, J, C := start[B], B*S, c.Coords(), c.Codewords
	for _, g := range []struct {
		b *buffer
		n int
	}{
		{&r.x, N * W * 4}, {&r.xq, Nq * W * 4}, {&r.a8, N * W}, {&r.h8, N * M},
		{&r.acc, N * max(3*W, M) * 4}, {&r.qkv, N * 3 * W}, {&r.att, N * W}, {&r.hf, Nq * W * 2},
		{&r.qmap, N * 3 * 4}, {&r.qlast, Nq * 3 * 4}, {&r.prev, B * J},
		{&r.lbuf, B * J * C * 8}, {&r.wbuf, B * J * C * 8}, {&r.freq, B * J * C * 4},
		{&r.modes, B * J}, {&r.ent, B * J * 4},
	} {
		if err := g.b.ensure(d, g.n); err != nil {
			return fmt.Errorf("cuda: device memory for a batch of %d: %w", B, err)
		}
	}
	// Query maps: per output row of attention, the query's row, the first
	// key's row and the number of keys (the causal blocks up to the
	// query's); the last layer's rows are the last state's.
	r.qh, r.ql, r.prevh = r.qh[:0], r.ql[:0], r.prevh[:0]
	for b, h := range hs {
		n := len(h)
		for t := 0; t < n*S; t++ {
			r.qh = append(r.qh, int32(start[b]+t), int32(start[b]), int32((t/S+1)*S))
		}
		for s := 0; s < S; s++ {
			r.ql = append(r.ql, int32(start[b]+(n-1)*S+s), int32(start[b]), int32(n*S))
		}
		r.prevh = append(r.prevh, h[n-1].Codes...)
	}
	for _, w := range []struct {
		p   Ptr
		src []byte
	}{{r.x.p, bytesOf(x[:N*W])}, {r.qmap.p, bytesOf(r.qh)}, {r.qlast.p, bytesOf(r.ql)}, {r.prev.p, r.prevh}} {
		if err := d.Write(w.p, w.src); err != nil {
			return err
		}
	}
	run := newLauncher(d)
	tr := func(op string, l int, p Ptr, n int, kind byte) { r.traced(run, op, l, p, n, kind) }
	tr("tokens", -1, r.x.p, N*W, 'w')
	for l := range r.layers {
		L := &r.layers[l]
		last := l == len(r.layers)-1
		r.ln(run, L.ln1, r.a8.p, false, r.x.p, N)
		tr("ln1", l, r.a8.p, N*W, 'b')
		r.gemm(run, r.acc.p, r.a8.p, L.qkv, N)
		tr("qkv.acc", l, r.acc.p, N*3*W, 'w')
		r.elem(run, "requant8", r.qkv.p, L.qkv, N, 0)
		tr("qkv", l, r.qkv.p, N*3*W, 'b')
		x, rows, qm := r.x.p, N, r.qmap.p
		if last {
			run.launch("gather_rows", Dim3{blocks(Nq*W, blockElem), 1, 1}, Dim3{blockElem, 1, 1}, 0,
				a(r.xq.p), a(r.x.p), a(r.qlast.p), i(3), i(Nq), i(W)) // the query rows of qlast's triples
			x, rows, qm = r.xq.p, Nq, r.qlast.p
		}
		run.launch("attention", Dim3{uint32(rows), uint32(H), 1}, Dim3{blockAttn, 1, 1}, uint32(4*c.MaxHistory*S),
			a(r.att.p), a(r.qkv.p), a(qm), i(W), i(hd), uint64(L.softM), uint64(L.softSh),
			i64(L.pvM), uint64(L.pvSh), a(r.expt))
		tr("attention", l, r.att.p, rows*W, 'b')
		r.gemm(run, r.acc.p, r.att.p, L.o, rows)
		r.elem(run, "add_resid", x, L.o, rows, 0)
		tr("o.acc", l, r.acc.p, rows*W, 'w') // add_resid reads acc, leaves it
		tr("resid1", l, x, rows*W, 'w')
		r.ln(run, L.ln2, r.a8.p, false, x, rows)
		tr("ln2", l, r.a8.p, rows*W, 'b')
		r.gemm(run, r.acc.p, r.a8.p, L.w1, rows)
		tr("w1.acc", l, r.acc.p, rows*M, 'w')
		r.elem(run, "gelu8", r.h8.p, L.w1, rows, L.gelu)
		tr("gelu", l, r.h8.p, rows*M, 'b')
		r.gemm(run, r.acc.p, r.h8.p, L.w2, rows)
		r.elem(run, "add_resid", x, L.w2, rows, 0)
		tr("w2.acc", l, r.acc.p, rows*W, 'w')
		tr("resid2", l, x, rows*W, 'w')
	}
	r.ln(run, r.final, r.hf.p, true, r.xq.p, Nq)
	tr("final", -1, r.hf.p, Nq*W, 'h')
	hd2 := &r.head
	run.launch("heads", Dim3{blocks(B*J, blockHeads), 1, 1}, Dim3{blockHeads, 1, 1}, 0,
		a(r.freq.p), a(r.modes.p), a(r.ent.p), a(r.lbuf.p), a(r.wbuf.p), a(r.hf.p), a(r.prev.p),
		a(hd2.emb), a(hd2.bias), a(hd2.expM), a(hd2.expSh), a(hd2.copyW), a(hd2.copyB), a(hd2.gateM), a(hd2.gateSh),
		a(r.expt), a(r.sigt), a(r.log2t),
		i(B), i(J), i(S), i(c.Subspaces), i(C), i(c.CodeDim), i(W), uint64(r.prec))
	return run.err
}

// launcher keeps the first launch error and skips the launches after it.
type launcher struct {
	d   Device
	err error
}

func newLauncher(d Device) *launcher { return &launcher{d: d} }

func (l *launcher) launch(k string, grid, block Dim3, shared uint32, args ...uint64) {
	if l.err == nil {
		l.err = l.d.Launch(k, grid, block, shared, args...)
	}
}

// ln: qLN.to8 or to16 of rows of x into out.
func (r *Int8) ln(run *launcher, L devLN, out Ptr, out16 bool, x Ptr, rows int) {
	o16 := 0
	if out16 {
		o16 = 1
	}
	run.launch("ln_rows", Dim3{uint32(rows), 1, 1}, Dim3{blockLN, 1, 1}, 0,
		a(out), i(o16), a(x), a(L.g), a(L.b), i64(L.eps), i64(L.lim), i(r.cfg.Width()))
}

// gemm: acc (rows, N) = in (rows, K) W.
func (r *Int8) gemm(run *launcher, acc, in Ptr, L devLinear, rows int) {
	run.launch(r.gemmK, Dim3{blocks(L.N, tileGEMM), blocks(rows, tileGEMM), 1}, Dim3{gemmBlock[r.gemmK], 1, 1}, 0,
		a(acc), a(in), i(L.K), a(L.w), i(rows), i(L.K), i(L.N))
}

// elem: the requantisation kernels after a product: requant8 and gelu8
// write out, add_resid adds into it (the residual rows).
func (r *Int8) elem(run *launcher, k string, out Ptr, L devLinear, rows int, gelu Ptr) {
	total := rows * L.N
	g, b := Dim3{blocks(total, blockElem), 1, 1}, Dim3{blockElem, 1, 1}
	switch k {
	case "requant8":
		run.launch(k, g, b, 0, a(out), a(r.acc.p), a(L.bias), a(L.m), a(L.sh), i(total), i(L.N))
	case "add_resid":
		run.launch(k, g, b, 0, a(out), a(r.acc.p), a(L.bias), a(L.m), a(L.sh), i(total), i(L.N), i64(worldmodel.Int8ResidLimit))
	case "gelu8":
		run.launch(k, g, b, 0, a(out), a(r.acc.p), a(L.bias), a(L.m), a(L.sh), a(gelu), i(worldmodel.Int8GELUHalf), i(total), i(L.N))
	}
}

// results copies the tables, modes and entropies of the last chunk's
// histories into dst (one per history).
func (r *Int8) results(dst []worldmodel.Prediction) error {
	J, C, B := r.cfg.Coords(), r.cfg.Codewords, len(dst)
	r.freqh, r.modeh, r.enth = resize(r.freqh, B*J*C), resize(r.modeh, B*J), resize(r.enth, B*J)
	freq, ent := r.freqh, r.enth
	for _, rd := range []struct {
		dst []byte
		src Ptr
	}{{bytesOf(freq), r.freq.p}, {r.modeh, r.modes.p}, {bytesOf(ent), r.ent.p}} {
		if err := r.dev.Read(rd.dst, rd.src); err != nil {
			return err
		}
	}
	for b := range dst {
		p := &dst[b]
		p.Freq = append(p.Freq[:0], freq[b*J*C:(b+1)*J*C]...)
		p.Mode = append(p.Mode[:0], r.modeh[b*J:(b+1)*J]...)
		p.Entropy = append(p.Entropy[:0], ent[b*J:(b+1)*J]...)
	}
	return nil
}

// SetTrace makes every Predict call f after each step with the step's
// output read back from the device, as worldmodel.Int8CPU.SetTrace (nil:
// off; slow: every step waits for the device).
func (r *Int8) SetTrace(f worldmodel.TraceFunc) { r.trace = f }

// traced reads n values of kind (b: int8, h: int16, w: int32) at p and
// hands them to the trace function.
func (r *Int8) traced(run *launcher, op string, layer int, p Ptr, n int, kind byte) {
	if r.trace == nil || run.err != nil {
		return
	}
	var data any
	var buf []byte
	switch kind {
	case 'b':
		v := make([]int8, n)
		data, buf = v, bytesOf(v)
	case 'h':
		v := make([]int16, n)
		data, buf = v, bytesOf(v)
	default:
		v := make([]int32, n)
		data, buf = v, bytesOf(v)
	}
	if run.err = r.dev.Read(buf, p); run.err == nil {
		r.trace(op, layer, data)
	}
}
