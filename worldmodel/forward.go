package worldmodel

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/memowm/memowm/internal/f32"
	"github.com/memowm/memowm/trajectory"
)

// This file is the reference forward pass, on the CPU, in float32. It reads
// like the architecture:
//
//	x = embed(history)                     (N, W)  N = sum over histories of n*S
//	for each block l:
//	    x += attn(LN1(x)) Wo + bo          block-causal over time, full over slots
//	    x += gelu(LN2(x) W1 + b1) W2 + b2
//	h = LN_final(x of each history's last block)      (B*S, W)
//	logits[s,g,c] = <h[s, g*E:(g+1)*E], codeEmb[s,g,c]> + codeBias[s,g,c]
//	gate[s,g]     = <h[s, g*E:(g+1)*E], copyW[s,g]> + copyB[s,g]
//	valid         = mean_s(h[s]) validHW + validHB
//
// The histories of a batch are stacked as rows: per-token layers (LayerNorm,
// matmuls, GELU) run over all rows at once, attention per (history, head). A
// history of n < MaxHistory states is left-padded: its blocks take the time
// embeddings of positions MaxHistory-n .. MaxHistory-1, and the padding blocks
// are not computed at all (the reference zeroes them and masks them out of
// attention, which is the same function). In the last layer only the last
// block's queries matter, so attention, the MLP and the heads run on those S
// rows per history.
//
// Determinism: every output element is computed by one goroutine in the
// order documented at each step, whatever the number of goroutines; matmuls
// are internal/f32's MulTo (left-to-right sums of separately rounded
// products).

// Output is the model's float output for one history: the training and test
// path. Downstream coding uses Prediction (integers) instead.
type Output struct {
	Logits []float32 // (J, C) code logits l before the copy gate; j = s*G + g
	Gate   []float32 // (J) copy-gate logits; a_j = sigmoid(Gate[j])
	Valid  []float32 // (S) validity-head logits for the predicted state
	Prev   []uint8   // (J) the last history state's codes, which the gate copies
}

// ProbsTo writes coordinate j's predictive distribution into dst (resliced to
// C, reallocated if short) and returns it:
//
//	a = sigmoid(Gate[j]); m = max_c l_c; e_c = exp(l_c - m); Z = sum_c e_c
//	p_c = (1 - a) * (e_c / Z)  +  a * [c == Prev[j]]
//
// with the package's own exp and sums left to right. The result sums to 1
// within rounding; the integer tables of Prediction are built from it.
func (o *Output) ProbsTo(dst []float32, j int) []float32 {
	C := len(o.Logits) / len(o.Gate)
	if cap(dst) < C {
		dst = make([]float32, C)
	}
	dst = dst[:C]
	l := o.Logits[j*C : j*C+C]
	mx := l[0]
	for _, v := range l {
		if v > mx {
			mx = v
		}
	}
	copy(dst, l)
	expShift(dst, mx)
	var z float32
	for _, e := range dst {
		z += e
	}
	a := sigmoidf(o.Gate[j])
	b := 1 - a
	for c, e := range dst {
		dst[c] = float32(b * (e / z))
	}
	dst[o.Prev[j]] += a
	return dst
}

// CPU runs a Model on the CPU with the f32 profile. It owns the activation
// buffers, which it reuses from call to call, and a packed copy of the
// Transformer's weight matrices: one CPU must not be used by two goroutines
// at once (make one per goroutine; they can share the Model). Changing the
// Model's weights after NewCPU is not seen by the CPU's packed copy: make a
// new CPU.
type CPU struct {
	m       *Model
	threads int
	prec    uint

	// activations, grown on demand
	x, ln, qkv, att, tmp, mlp []float32
	xq                        []float32 // (B*S, W) last-block rows in the last layer
	feat, gru, act, valid     []float32
	workers                   []attnScratch
	probs                     []float32

	// packed are the layers' weight matrices packed for internal/f32's
	// blocked kernel, built once by NewCPU (as much memory again as the
	// Transformer's weights).
	packed []packedLayer

	// keepAll (tests) runs the last layer on every row, leaving each
	// block's final hidden state in x.
	keepAll bool

	// actCache holds the action embeddings computed so far, by the
	// action's bits (actionKey): a window slides one step per call, so
	// most of its actions were embedded by the call before. At most
	// actCacheMax entries; then it starts again. Only a CPU made by NewCPU
	// (or NewInt8CPU) caches, as its weights are fixed (see CPU); the
	// training tape's CPUs, whose weights change, do not.
	cacheActs bool
	actCache  map[string][]float32
	keyBuf    []byte

	// stats, when set (int8 calibration), records the largest magnitude
	// of every activation the int8 profile quantizes (int8_calib.go).
	stats *actStats
}

// Option configures NewCPU.
type Option func(*CPU) error

// WithThreads sets the number of goroutines a forward pass uses (default
// runtime.GOMAXPROCS(0)). Results do not depend on it.
func WithThreads(n int) Option {
	return func(c *CPU) error {
		if n < 1 || n > 1024 {
			return fmt.Errorf("%w: threads = %d is outside [1, 1024]", ErrConfig, n)
		}
		c.threads = n
		return nil
	}
}

// WithPrecision sets the precision (log2 of the total) of the frequency
// tables Predict returns (default 24), in [8, 28].
func WithPrecision(prec uint) Option {
	return func(c *CPU) error {
		if prec < 8 || prec > 28 {
			return fmt.Errorf("%w: table precision %d is outside [8, 28]", ErrConfig, prec)
		}
		c.prec = prec
		return nil
	}
}

// DefaultPrecision is the default table precision of Predict: 24 bits.
const DefaultPrecision = 24

// NewCPU returns a CPU backend for m.
func NewCPU(m *Model, opts ...Option) (*CPU, error) {
	c := &CPU{m: m, threads: runtime.GOMAXPROCS(0), prec: DefaultPrecision, cacheActs: true}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	c.packed = make([]packedLayer, len(m.p.layers))
	W, M := m.cfg.Width(), m.cfg.MLP
	for l := range m.p.layers {
		L := &m.p.layers[l]
		c.packed[l] = packedLayer{
			qkv: f32.Pack(L.wqkv, 3*W, W, 3*W), o: f32.Pack(L.wo, W, W, W),
			w1: f32.Pack(L.w1, M, W, M), w2: f32.Pack(L.w2, W, M, W),
		}
	}
	return c, nil
}

type packedLayer struct{ qkv, o, w1, w2 *f32.Packed }

// Model returns the model the backend runs.
func (r *CPU) Model() *Model { return r.m }

func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// parallel runs fn(i) for i in [0, n) on up to r.threads goroutines. Each i
// must write its own outputs.
func (r *CPU) parallel(n int, fn func(worker, i int)) {
	t := min(r.threads, n)
	if t <= 1 {
		for i := 0; i < n; i++ {
			fn(0, i)
		}
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < t; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += t {
				fn(w, i)
			}
		}(w)
	}
	wg.Wait()
}

// rowChunk is the number of rows one parallel elementwise task covers.
const rowChunk = 32

// matmul: out (rows, k) = in (rows, inner) w (inner, k), w packed:
// internal/f32's blocked kernel, goroutines splitting the output columns.
func (r *CPU) matmul(out, in []float32, w *f32.Packed, rows, inner, k int) {
	f32.MulPackedTo(out, k, in, inner, w, rows, r.threads)
}

// rowsParallel runs fn over row ranges split across goroutines.
func (r *CPU) rowsParallel(rows int, fn func(lo, hi int)) {
	chunks := (rows + rowChunk - 1) / rowChunk
	r.parallel(chunks, func(_, i int) {
		lo := i * rowChunk
		fn(lo, min(lo+rowChunk, rows))
	})
}

// Forward runs the model on a batch of histories and writes one Output per
// history into dst (resliced and reused; reallocated if short). It checks
// every history first; the error wraps ErrHistory, ErrCode or ErrAction and
// names the history.
func (r *CPU) Forward(dst []Output, hs []History) ([]Output, error) {
	c := &r.m.cfg
	if err := c.checkHistories(hs); err != nil {
		return dst, err
	}
	if cap(dst) < len(hs) {
		dst = append(dst[:cap(dst)], make([]Output, len(hs)-cap(dst))...)
	}
	dst = dst[:len(hs)]
	if len(hs) == 0 {
		return dst, nil
	}
	r.forward(dst, hs)
	return dst, nil
}

func (r *CPU) forward(dst []Output, hs []History) {
	c, p := &r.m.cfg, r.m.p
	S, W, M := c.Slots, c.Width(), c.MLP
	B := len(hs)
	start := make([]int, B+1) // first token row of each history
	for b, h := range hs {
		start[b+1] = start[b] + len(h)*S
	}
	N, Nq := start[B], B*S
	r.x, r.ln = grow(r.x, N*W), grow(r.ln, N*W)
	r.qkv, r.att, r.tmp = grow(r.qkv, N*3*W), grow(r.att, N*W), grow(r.tmp, N*W)
	r.mlp, r.xq = grow(r.mlp, N*M), grow(r.xq, Nq*W)
	if len(r.workers) < r.threads {
		r.workers = make([]attnScratch, r.threads)
	}

	r.embed(hs, start)
	st := r.stats
	st.seeResid(r.x[:N*W])

	for l := range p.layers {
		L, PL := &p.layers[l], &r.packed[l]
		last := l == len(p.layers)-1 && !r.keepAll
		// Attention sub-block: all rows feed keys and values.
		r.rowsParallel(N, func(lo, hi int) {
			layerNormTo(r.ln[lo*W:hi*W], r.x[lo*W:hi*W], L.ln1g, L.ln1b, hi-lo, W)
		})
		st.seeLayer(l, siteLN1, r.ln[:N*W], 1)
		r.matmul(r.qkv, r.ln, PL.qkv, N, W, 3*W)
		r.rowsParallel(N, func(lo, hi int) { addBias(r.qkv[lo*3*W:hi*3*W], L.bqkv, hi-lo, 3*W) })
		st.seeQKV(l, r.qkv[:N*3*W], W)
		x, rows := r.x, N
		if last {
			// From here on only each history's last block: gather its rows.
			for b, h := range hs {
				copy(r.xq[b*S*W:(b+1)*S*W], r.x[(start[b]+(len(h)-1)*S)*W:])
			}
			x, rows = r.xq, Nq
		}
		r.parallel(B*c.Heads, func(w, t int) {
			b, h := t/c.Heads, t%c.Heads
			n := len(hs[b])
			from, orow := 0, start[b]
			if last {
				from, orow = n-1, b*S
			}
			c.attentionHead(r.att[orow*W:], r.qkv[start[b]*3*W:start[b+1]*3*W], n, h, from, &r.workers[w])
		})
		st.seeLayer(l, siteAtt, r.att[:rows*W], 1)
		r.matmul(r.tmp, r.att, PL.o, rows, W, W)
		r.rowsParallel(rows, func(lo, hi int) {
			addResidual(x[lo*W:hi*W], r.tmp[lo*W:hi*W], L.bo, hi-lo, W)
			layerNormTo(r.ln[lo*W:hi*W], x[lo*W:hi*W], L.ln2g, L.ln2b, hi-lo, W)
		})
		st.seeResid(x[:rows*W])
		st.seeLayer(l, siteLN2, r.ln[:rows*W], 1)
		// MLP sub-block.
		r.matmul(r.mlp, r.ln, PL.w1, rows, W, M)
		st.seePre(l, r.mlp[:rows*M], L.b1)
		r.rowsParallel(rows, func(lo, hi int) { addBiasGELU(r.mlp[lo*M:hi*M], L.b1, hi-lo, M) })
		st.seeLayer(l, siteGELU, r.mlp[:rows*M], 1)
		r.matmul(r.tmp, r.mlp, PL.w2, rows, M, W)
		r.rowsParallel(rows, func(lo, hi int) { addResidual(x[lo*W:hi*W], r.tmp[lo*W:hi*W], L.b2, hi-lo, W) })
		st.seeResid(x[:rows*W])
	}
	if r.keepAll {
		for b, h := range hs {
			copy(r.xq[b*S*W:(b+1)*S*W], r.x[(start[b]+(len(h)-1)*S)*W:])
		}
	}
	layerNormTo(r.ln[:Nq*W], r.xq, p.finalG, p.finalB, Nq, W)
	st.seeFinal(r.ln[:Nq*W])
	r.parallel(B, func(_, b int) { r.heads(&dst[b], r.ln[b*S*W:(b+1)*S*W], hs[b], nil) })
}

// embed writes the input tokens:
//
//	x[k,s] = (((((concat_g codeEmb[s,g,z[k,s,g]]) + valid[k]) + act[k]) + task[0]) + time[pos k]) + slot[s]
//
// valid[k] = slotValid[k] validW + validB (slotValid all ones by default),
// act[k] = the action embedding of step k, pos k = MaxHistory - n + k.
func (r *CPU) embed(hs []History, start []int) {
	c, p := &r.m.cfg, r.m.p
	S, G, C, E, W := c.Slots, c.Subspaces, c.Codewords, c.CodeDim, c.Width()
	r.feat, r.gru = grow(r.feat, c.ActionWidth()), grow(r.gru, c.gruScratch())
	r.act, r.valid = grow(r.act, W), grow(r.valid, W+S)
	vflags := r.valid[W:]
	for b, h := range hs {
		n := len(h)
		for k := range h {
			st := &h[k]
			r.actionEmbed(&st.Action)
			for s := range vflags {
				vflags[s] = 1
				if st.SlotValid != nil && !st.SlotValid[s] {
					vflags[s] = 0
				}
			}
			f32.MulTo(r.valid[:W], W, vflags, S, p.validW, W, 1, S, W)
			time := p.timeEmb[(c.MaxHistory-n+k)*W:][:W]
			for s := 0; s < S; s++ {
				row := r.x[(start[b]+k*S+s)*W:][:W]
				for g := 0; g < G; g++ {
					z := int(st.Codes[s*G+g])
					copy(row[g*E:(g+1)*E], p.codeEmb[((s*G+g)*C+z)*E:][:E])
				}
				slot := p.slotEmb[s*W:][:W]
				for i := range row {
					v := row[i] + (r.valid[i] + p.validB[i])
					row[i] = (((v + r.act[i]) + p.taskEmb[i]) + time[i]) + slot[i]
				}
			}
		}
	}
}

const actCacheMax = 1 << 14

// actionEmbed sets r.act to a's embedding (actionEmbedTo), from the cache
// when a was embedded before: the same bits either way.
func (r *CPU) actionEmbed(a *trajectory.Action) {
	if !r.cacheActs {
		r.m.actionEmbedTo(r.act, r.feat, r.gru, a)
		return
	}
	r.keyBuf = actionKey(r.keyBuf[:0], a)
	if e, ok := r.actCache[string(r.keyBuf)]; ok {
		copy(r.act, e)
		return
	}
	r.m.actionEmbedTo(r.act, r.feat, r.gru, a)
	if r.actCache == nil || len(r.actCache) >= actCacheMax {
		r.actCache = make(map[string][]float32)
	}
	r.actCache[string(r.keyBuf)] = append([]float32(nil), r.act...)
}

// actionKey appends every bit of a that its embedding reads.
func actionKey(dst []byte, a *trajectory.Action) []byte {
	flags := byte(0)
	if a.HasPos {
		flags |= 1
	}
	if a.HasDelta {
		flags |= 2
	}
	dst = append(dst, byte(a.Type), flags)
	for _, v := range [4]float32{a.X, a.Y, a.DX, a.DY} {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
	}
	return append(dst, a.Payload...)
}

// heads computes one history's outputs from its final hidden rows hf (S, W).
//
// embT, when not nil, is the code embedding transposed per coordinate (J, E,
// C; the training tape's transposeEmb): each coordinate's logits are then
// one internal/f32 product of its piece and that (E, C) block, which sums in
// the same order as the loop and so gives the same bits.
func (r *CPU) heads(o *Output, hf []float32, h History, embT []float32) {
	c, p := &r.m.cfg, r.m.p
	S, G, C, E, W := c.Slots, c.Subspaces, c.Codewords, c.CodeDim, c.Width()
	J := S * G
	o.Logits = grow(o.Logits, J*C)
	o.Gate = grow(o.Gate, J)
	o.Valid = grow(o.Valid, S)
	if cap(o.Prev) < J {
		o.Prev = make([]uint8, J)
	}
	o.Prev = o.Prev[:J]
	copy(o.Prev, h[len(h)-1].Codes)
	for s := 0; s < S; s++ {
		for g := 0; g < G; g++ {
			j := s*G + g
			piece := hf[s*W+g*E : s*W+g*E+E]
			emb := p.codeEmb[j*C*E : (j+1)*C*E]
			lg := o.Logits[j*C : j*C+C]
			if embT != nil {
				f32.MulTo(lg, C, piece, E, embT[j*E*C:(j+1)*E*C], C, 1, E, C)
				for cw, b := range p.codeBias[j*C : j*C+C] {
					lg[cw] += b
				}
			} else {
				for cw := 0; cw < C; cw++ {
					e := emb[cw*E : cw*E+E]
					var sum float32
					for d, v := range piece {
						sum += float32(v * e[d])
					}
					lg[cw] = sum + p.codeBias[j*C+cw]
				}
			}
			cw := p.copyW[j*E : j*E+E]
			var sum float32
			for d, v := range piece {
				sum += float32(v * cw[d])
			}
			o.Gate[j] = sum + p.copyB[j]
		}
	}
	// Validity head: mean over slots (left to right, then / S).
	pooled := make([]float32, W)
	for s := 0; s < S; s++ {
		for i, v := range hf[s*W : s*W+W] {
			pooled[i] += v
		}
	}
	invS := float32(S)
	for i := range pooled {
		pooled[i] = pooled[i] / invS
	}
	f32.MulTo(o.Valid, S, pooled, W, p.validHW, S, 1, W, S)
	for s := range o.Valid {
		o.Valid[s] += p.validHB[s]
	}
}
