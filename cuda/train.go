package cuda

import (
	"errors"
	"fmt"
	"math"

	"github.com/memowm/memowm/worldmodel"
)

// Blocks runs the Transformer blocks of f32 training steps on a Device: a
// worldmodel.BlockEngine (Trainer.SetBlockEngine), with the kernels of
// kernels/train.cu. Its Forward is tape.forward's block loop and its
// Backward tape.backward's, in the same order and with the same formulas
// (LayerNorm with worldmodel's eps, block-causal attention scaled by
// 1/sqrt(head width), the last block on each history's last state only,
// tanh-form GELU, dropout on both residual branches).
//
// Invariants:
//   - The weights stay in the Model: every Forward uploads all blocks'
//     parameters afresh (the CPU optimizer changed them), and Backward adds
//     the blocks' gradients into the caller's Params; nothing else of the
//     model lives on the device.
//   - Every activation the backward needs stays on the device between
//     Forward and Backward (the attention's probabilities included); only
//     x0 and the maps of the batch go up, and only the last block's output,
//     the gradient of x0 and the blocks' gradients come down.
//   - Dropout masks are not stored: element i of stream s (1+2l and 2+2l,
//     block l's attention and MLP branches, as the tape's) is dropped when a
//     counter-based hash of (dropSeed, s, i) falls below the rate; the
//     backward recomputes it. They are not the CPU's masks. Rate 0 applies
//     no mask.
//   - Deterministic: every sum runs in a fixed order (block reductions by a
//     fixed tree, column sums in two fixed stages, no float atomics), so the
//     same inputs give the same bits on the same device. Not bit-exact with
//     the CPU (fused multiply-adds, other orders): TestBlocksGradParity
//     states the tolerance.
//   - The results of Forward and Backward alias buffers of b, valid until
//     the next call. One goroutine at a time; b does not own the Device
//     (Close frees b's memory, not the Device).
//
// Speed: the products are plain FMA tiles (64x64 per 256 threads, 4x4 per
// thread); TF32 tensor-core tiles (mma.sync) or cuBLASLt would make them
// several times faster on a GPU.
type Blocks struct {
	dev                 Device
	tf32                bool // the products on tensor cores (SetTF32)
	cfg                 worldmodel.Config
	W, M, H, hd, S, L   int
	per                 int           // floats of one block's parameters
	off                 [nTensors]int // each tensor's offset in a block
	size                [nTensors]int // and its size
	wts, grads          buffer        // every block's parameters and gradients, block after block
	wh, gh              []float32     // their host copies
	xs                  []buffer      // residual streams xs[0..L]: (N, W) .. (Nq, W)
	act                 []blockActs   // per block
	qall, qlast         buffer        // attention query maps (int32 triples)
	kall, klast         buffer        // key maps
	dA, dB, dx1, dbr    buffer        // backward: (N, W)
	dln, tmp            buffer        // (N, W)
	dmlp, dmlp2         buffer        // (N, M)
	dqkv, dS, part      buffer        // (N, 3W), (H, N, maxT), column-sum partials
	split               buffer        // split-K partial weight gradients
	splitRows           int           // the fewest rows of a split (trSplitRows; tests lower it)
	qh, ql, kh, kl      []int32       // host maps
	out, dx0            []float32     // Forward's and Backward's results
	N, Nq, B, maxT      int           // the last Forward's batch
	sumK, sumKq         int64         // keys summed over query rows (all rows, the last block's)
	rate                float64       // its dropout rate
	seed                uint64        // and seed
	ready               bool          // Forward succeeded; Backward may run
	flops               int64         // of the last Forward and Backward
	nparams             int           // the model's parameters (a gradient's length)
	lnThreads, atThread int           // block sizes
}

var _ worldmodel.BlockEngine = (*Blocks)(nil)

// blockActs are one block's saved activations (R = N, or Nq in the last).
type blockActs struct {
	ln1, mean1, rstd1, qkv buffer // (N, W), (N), (N), (N, 3W)
	p                      buffer // (H, R, maxT) attention probabilities
	att, x1, ln2           buffer // (R, W)
	mean2, rstd2           buffer // (R)
	pre, act               buffer // (R, M): ln2 W1 before the bias; gelu(pre + b1)
}

// The tensors of a block, in worldmodel.BlockTensors' order.
const (
	tLN1G = iota
	tLN1B
	tWQKV
	tBQKV
	tWO
	tBO
	tLN2G
	tLN2B
	tW1
	tB1
	tW2
	tB2
	nTensors
)

// Launch shapes of the training kernels.
const (
	trElem     = 256 // elementwise kernels
	trCols     = 128 // column-sum kernels
	trAttn     = 128 // attention
	trChunk    = 32  // rows per column-sum chunk
	trGEMMTile = 64
	trGEMM     = 256
	// Split-K weight gradients: at least trSplitRows rows per split, and
	// splits until the product has about trSplitBlocks thread blocks (two
	// per SM of an H100).
	trSplitRows   = 256
	trSplitBlocks = 264
)

// tensors returns bt's slices in BlockTensors' order.
func tensors(bt worldmodel.BlockTensors) [nTensors][]float32 {
	return [nTensors][]float32{bt.LN1G, bt.LN1B, bt.WQKV, bt.BQKV, bt.WO, bt.BO, bt.LN2G, bt.LN2B, bt.W1, bt.B1, bt.W2, bt.B2}
}

// NewBlocks returns the block engine for models of cfg on d. It allocates
// the parameters' device copies; the activations grow with the first
// batches.
func NewBlocks(d Device, cfg worldmodel.Config) (*Blocks, error) {
	if d == nil {
		return nil, errors.New("cuda: blocks: no device")
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("cuda: blocks: %w", err)
	}
	W, M := cfg.Width(), cfg.MLP
	b := &Blocks{dev: d, cfg: cfg, W: W, M: M, H: cfg.Heads, hd: cfg.HeadDim(), S: cfg.Slots, L: cfg.Layers,
		tf32: d.Has("tr_gemm_nn_tc")}
	b.size = [nTensors]int{W, W, W * 3 * W, 3 * W, W * W, W, W, W, W * M, M, M * W, W}
	for k, n := range b.size {
		b.off[k] = b.per
		b.per += n
	}
	b.lnThreads = 32
	for b.lnThreads < W && b.lnThreads < 256 {
		b.lnThreads *= 2
	}
	b.atThread = trAttn
	b.splitRows = trSplitRows
	b.xs = make([]buffer, b.L+1)
	b.act = make([]blockActs, b.L)
	b.wh = make([]float32, b.L*b.per)
	b.gh = make([]float32, b.L*b.per)
	if err := b.wts.ensure(d, 4*b.L*b.per); err != nil {
		return nil, fmt.Errorf("cuda: blocks: device memory for the weights: %w", err)
	}
	if err := b.grads.ensure(d, 4*b.L*b.per); err != nil {
		b.wts.free(d)
		return nil, fmt.Errorf("cuda: blocks: device memory for the gradients: %w", err)
	}
	return b, nil
}

// Close frees b's device memory (not the Device).
func (b *Blocks) Close() error {
	for _, p := range b.all() {
		p.free(b.dev)
	}
	b.ready = false
	return nil
}

// all lists every buffer of b.
func (b *Blocks) all() []*buffer {
	bs := []*buffer{&b.wts, &b.grads, &b.qall, &b.qlast, &b.kall, &b.klast, &b.dA, &b.dB, &b.dx1, &b.dbr,
		&b.dln, &b.tmp, &b.dmlp, &b.dmlp2, &b.dqkv, &b.dS, &b.part, &b.split}
	for i := range b.xs {
		bs = append(bs, &b.xs[i])
	}
	for i := range b.act {
		A := &b.act[i]
		bs = append(bs, &A.ln1, &A.mean1, &A.rstd1, &A.qkv, &A.p, &A.att, &A.x1, &A.ln2, &A.mean2, &A.rstd2, &A.pre, &A.act)
	}
	return bs
}

// FLOPs returns the matrix-product and attention floating-point operations
// of the last Forward and Backward (a multiply-add counts two).
func (b *Blocks) FLOPs() int64 { return b.flops }

// SetTF32 makes the products run on tensor cores in TF32 (train_tc.cu;
// GPUs of compute capability 8.0 and later), or in f32 FMA tiles (off).
// NewBlocks turns it on when the device has the kernels. TF32 rounds each
// product's inputs to 10 mantissa bits: TestBlocksTF32 states its
// tolerance.
func (b *Blocks) SetTF32(on bool) error {
	if on && !b.dev.Has("tr_gemm_nn_tc") {
		return fmt.Errorf("cuda: %s has no TF32 tensor-core kernels (compute capability 8.0 or later)", b.dev.Info())
	}
	b.tf32 = on
	return nil
}

// TF32 reports whether the products run in TF32.
func (b *Blocks) TF32() bool { return b.tf32 }

// kern is the product kernel k in the precision in use.
func (b *Blocks) kern(k string) string {
	if b.tf32 {
		return k + "_tc"
	}
	return k
}

// w and g are block l's tensor k in the device's parameters and gradients.
func (b *Blocks) w(l, k int) Ptr { return b.wts.p + Ptr(4*(l*b.per+b.off[k])) }
func (b *Blocks) g(l, k int) Ptr { return b.grads.p + Ptr(4*(l*b.per+b.off[k])) }

// f32 passes a float32 launch argument.
func f32(v float32) uint64 { return uint64(math.Float32bits(v)) }

// fp is p advanced by n floats.
func fp(p Ptr, n int) Ptr { return p + Ptr(4*n) }

// gemm launches kern (tr_gemm_nn, _tn or _nt): c (rows, cols; row stride
// ldc) = op(x) op(y) [+ bias], inner dimension k.
func (b *Blocks) gemm(run *launcher, kern string, c Ptr, ldc int, x Ptr, ldx int, y Ptr, ldy int, bias Ptr, rows, cols, k int) {
	run.launch(b.kern(kern), Dim3{blocks(cols, trGEMMTile), blocks(rows, trGEMMTile), 1}, Dim3{trGEMM, 1, 1}, 0,
		a(c), i(ldc), a(x), i(ldx), a(y), i(ldy), a(bias), i(0), i(rows), i(cols), i(k))
	b.flops += 2 * int64(rows) * int64(cols) * int64(k)
}

// splits returns how many row ranges (of kc rows) a weight gradient
// (in, out) over rows rows is split into.
func (b *Blocks) splits(in, out, rows int) (n, kc int) {
	tiles := int(blocks(in, trGEMMTile)) * int(blocks(out, trGEMMTile))
	n = min((rows+b.splitRows-1)/b.splitRows, (trSplitBlocks+tiles-1)/tiles)
	if n <= 1 {
		return 1, rows
	}
	kc = (rows + n - 1) / n
	return (rows + kc - 1) / kc, kc
}

// weightGrad: dw (in, out) = x^T dy for x (rows, in) and dy (rows, out):
// one tr_gemm_tn, or split-K (tr_gemm_tn_split into b.split, then the
// parts added in order) when the output has few tiles for many rows.
func (b *Blocks) weightGrad(run *launcher, dw, x Ptr, in int, dy Ptr, out, rows int) {
	n, kc := b.splits(in, out, rows)
	if n == 1 {
		b.gemm(run, "tr_gemm_tn", dw, out, x, in, dy, out, 0, in, out, rows)
		return
	}
	run.launch(b.kern("tr_gemm_tn_split"), Dim3{blocks(out, trGEMMTile), blocks(in, trGEMMTile), uint32(n)}, Dim3{trGEMM, 1, 1}, 0,
		a(b.split.p), a(x), i(in), a(dy), i(out), i(in), i(out), i(rows), i(kc))
	b.final(run, dw, b.split.p, in*out, n, in*out)
	b.flops += 2 * int64(in) * int64(out) * int64(rows)
}

// elem launches an elementwise kernel over total elements.
func elem(run *launcher, kern string, total int, args ...uint64) {
	run.launch(kern, Dim3{blocks(total, trElem), 1, 1}, Dim3{trElem, 1, 1}, 0, args...)
}

// colsum: out (cols) = the column sums of y (rows, cols), in two fixed
// stages through b.part.
func (b *Blocks) colsum(run *launcher, out, y Ptr, rows, cols int) {
	ch := (rows + trChunk - 1) / trChunk
	run.launch("tr_colsum_part", Dim3{blocks(cols, trCols), uint32(ch), 1}, Dim3{trCols, 1, 1}, 0,
		a(b.part.p), a(y), i(rows), i(cols), i(trChunk))
	b.final(run, out, b.part.p, cols, ch, cols)
}

func (b *Blocks) final(run *launcher, out, part Ptr, stride, chunks, cols int) {
	run.launch("tr_colsum_final", Dim3{blocks(cols, trCols), 1, 1}, Dim3{trCols, 1, 1}, 0,
		a(out), a(part), i(stride), i(chunks), i(cols))
}

// lnGrads: the gain's and bias's gradients (dg, db) of a LayerNorm of x
// (rows, W) with saved mean and rstd, given dy.
func (b *Blocks) lnGrads(run *launcher, dg, db, dy, x, mean, rstd Ptr, rows int) {
	W := b.W
	ch := (rows + trChunk - 1) / trChunk
	run.launch("tr_ln_part", Dim3{blocks(W, trCols), uint32(ch), 1}, Dim3{trCols, 1, 1}, 0,
		a(b.part.p), a(dy), a(x), a(mean), a(rstd), i(rows), i(W), i(trChunk))
	b.final(run, dg, b.part.p, 2*W, ch, W)
	b.final(run, db, fp(b.part.p, W), 2*W, ch, W)
}

// dropArgs are the dropout arguments of tr_resid and tr_mask for stream.
func (b *Blocks) dropArgs(stream int) []uint64 {
	thr, scale := uint64(0), float32(1)
	if b.rate > 0 {
		thr = uint64(math.Min(b.rate*(1<<32), math.MaxUint32))
		scale = float32(1 / (1 - b.rate))
	}
	return []uint64{b.seed, uint64(stream), thr, f32(scale)}
}

// attnShared is the attention kernels' dynamic shared memory.
func (b *Blocks) attnShared() uint32 {
	return uint32(4 * (b.maxT + 2*max(b.atThread, b.hd)))
}
