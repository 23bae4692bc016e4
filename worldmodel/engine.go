package worldmodel

import "fmt"

// BlockEngine runs the Transformer blocks of training steps on another
// device (package cuda's GPU engine): the tape embeds the tokens, and runs
// the final LayerNorm, the heads, the loss, the optimizer and the
// embedding's backward on the CPU; the engine runs every block's forward
// and backward. The blocks are nearly all of a step's arithmetic (for the
// paper preset, all but a few parts in ten thousand).
//
// The weights stay in the Model (the optimizer updates them on the CPU), so
// checkpoints are the CPU's and a run can move between devices; an engine
// reads them afresh at each Forward. Its results need not be bit-exact with
// the tape's own blocks (training is not part of an inference profile), but
// must be within the tolerance its parity test states.
type BlockEngine interface {
	// Forward runs the blocks of m on x0 (N, W), the embedded tokens after
	// the embedding's dropout: history b's rows are start[b]..start[b+1],
	// its last state the last Slots of them. dropRate > 0 drops units of
	// both residual branches of every block (masks from dropSeed; they
	// need not be the tape's). It returns the last block's output rows of
	// each history's last state, (B*Slots, W), valid until the next call.
	Forward(m *Model, x0 []float32, start []int, dropRate float64, dropSeed uint64) ([]float32, error)
	// Backward takes the gradient of Forward's output (B*Slots, W), adds
	// the blocks' parameter gradients into g (Params.Block) and returns the
	// gradient of x0 (N, W), valid until the next call.
	Backward(dxL []float32, g *Params) ([]float32, error)
}

// BlockTensors are one Transformer block's parameters (or gradients),
// aliasing a Params' Data. Shapes as in params.go: LN gains and biases
// (W); WQKV (W, 3W), columns q | k | v; WO (W, W); W1 (W, M); W2 (M, W);
// row-major.
type BlockTensors struct {
	LN1G, LN1B, WQKV, BQKV, WO, BO, LN2G, LN2B, W1, B1, W2, B2 []float32
}

// Block returns block l's tensors.
func (p *Params) Block(l int) BlockTensors {
	L := &p.layers[l]
	return BlockTensors{L.ln1g, L.ln1b, L.wqkv, L.bqkv, L.wo, L.bo, L.ln2g, L.ln2b, L.w1, L.b1, L.w2, L.b2}
}

// SetBlockEngine makes the trainer's steps run the blocks on e (nil: the
// CPU's own). Evaluation stays on the CPU.
func (t *Trainer) SetBlockEngine(e BlockEngine) { t.tape.engine = e }

// engineForward runs the blocks on the engine: xs[L] gets its output.
func (t *tape) engineForward(rate float64, dropSeed uint64) {
	W, L := t.m.cfg.Width(), t.m.cfg.Layers
	t.xs[L] = t.grow(t.xs[L], t.Nq, W)
	xL, err := t.engine.Forward(t.m, t.xs[0][:t.N*W], t.start, rate, dropSeed)
	if err == nil && len(xL) != t.Nq*W {
		err = fmt.Errorf("worldmodel: block engine: %d outputs, want %d", len(xL), t.Nq*W)
	}
	if err != nil {
		t.engineErr = err
		clear(t.xs[L])
		return
	}
	copy(t.xs[L], xL)
}

// engineBackward: dx (Nq, W) in, d xs[0] (N, W) into t.dx.
func (t *tape) engineBackward(g *Params, dx []float32) []float32 {
	W := t.m.cfg.Width()
	if t.engineErr != nil {
		clear(t.dx[:t.N*W])
		return t.dx[:t.N*W]
	}
	dx0, err := t.engine.Backward(dx, g)
	if err == nil && len(dx0) != t.N*W {
		err = fmt.Errorf("worldmodel: block engine: %d input gradients, want %d", len(dx0), t.N*W)
	}
	if err != nil {
		t.engineErr = err
		clear(t.dx[:t.N*W])
		return t.dx[:t.N*W]
	}
	copy(t.dx[:t.N*W], dx0)
	return t.dx[:t.N*W]
}

// LastGrad returns the gradient of the last Step's loss, before clipping
// (aliasing the trainer's buffer, in Params' Data layout; valid until the
// next Step): for parity checks of block engines.
func (t *Trainer) LastGrad() []float32 { return t.grad.Data }
