package worldmodel

import (
	"fmt"
	"math/rand/v2"
)

// Shape letters used in comments throughout the package:
//
//	S  slots per state (32)         G  subspaces per slot (32)
//	C  codewords (64)               E  code embedding width (8)
//	W  token width, G*E (256)       M  MLP width (4096)
//	H  history window (16)          A  action feature width (32)
//	Y  payload byte width (16)      P  payload GRU width (64)
//	K  action types (17)            X  coordinate bins + 1 (65)
//	N  token rows of a batch        T  tokens of one history, n*S

// initKind says how a tensor is initialised.
type initKind uint8

const (
	initZero  initKind = iota // biases
	initOne                   // LayerNorm gains
	initEmbed                 // embeddings: normal(0, 0.02)
	initFanIn                 // matrices: normal(0, 1/sqrt(rows))
)

// Tensor describes one named parameter tensor: a slice of Params.Data.
type Tensor struct {
	Name  string // e.g. "layer3/mlp_w1"
	Group string // component, for the parameter breakdown
	Shape []int  // row-major
	Off   int    // offset in Params.Data
	init  initKind
}

// Size is the number of values of the tensor.
func (t *Tensor) Size() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// layerParams are one Transformer block's weights; matrices are (in, out),
// row-major, so that y = x W.
type layerParams struct {
	ln1g, ln1b []float32 // (W) attention LayerNorm gain and bias
	wqkv       []float32 // (W, 3W) columns: q | k | v, head h at [h*W/heads, (h+1)*W/heads) of each
	bqkv       []float32 // (3W)
	wo         []float32 // (W, W)
	bo         []float32 // (W)
	ln2g, ln2b []float32 // (W) MLP LayerNorm gain and bias
	w1         []float32 // (W, M)
	b1         []float32 // (M)
	w2         []float32 // (M, W)
	b2         []float32 // (W)
}

// Params are a model's weights, carved from one allocation (Data) in the
// order of Tensors. The layout follows the reference implementation's
// parameter set one for one, including the few vectors that only its
// ablation variants read (state_mask, action/mask, action/payload_mask) and
// the padding vectors that its masking multiplies by zero (state_pad,
// action/pad): they are counted, stored and never read at inference.
type Params struct {
	Data    []float32
	Tensors []Tensor

	codeEmb  []float32 // (S, G, C, E) code embeddings, also the output weights
	slotEmb  []float32 // (S, W)
	timeEmb  []float32 // (H, W) by position in the left-padded window
	taskEmb  []float32 // (Tasks, W)
	validW   []float32 // (S, W) slot-validity vector -> embedding
	validB   []float32 // (W)
	typeEmb  []float32 // (K, A)
	xEmb     []float32 // (X, A)
	yEmb     []float32 // (X, A)
	deltaW   []float32 // (3, A) on [slog dx, slog dy, has-delta]
	deltaB   []float32 // (A)
	byteEmb  []float32 // (256, Y)
	gruWx    []float32 // (Y, 3P) columns: z | r | n
	gruWh    []float32 // (P, 3P)
	gruB     []float32 // (3P)
	actW     []float32 // (4A+P, W) projection of [type, x, y, delta, payload]
	actB     []float32 // (W)
	validHW  []float32 // (W, S) validity head
	validHB  []float32 // (S)
	codeBias []float32 // (S, G, C) output logit bias
	layers   []layerParams
	finalG   []float32 // (W)
	finalB   []float32 // (W)
	copyW    []float32 // (S, G, E) copy-gate weights
	copyB    []float32 // (S, G)
}

// layout lists the tensors of a configuration in file order.
func (c *Config) layout() []Tensor {
	S, G, C, E, W, M := c.Slots, c.Subspaces, c.Codewords, c.CodeDim, c.Width(), c.MLP
	A, Y, P := c.ActionDim, c.ByteDim, c.PayloadHidden
	var ts []Tensor
	off := 0
	add := func(name, group string, k initKind, shape ...int) {
		t := Tensor{Name: name, Group: group, Shape: shape, Off: off, init: k}
		off += t.Size()
		ts = append(ts, t)
	}
	add("code_embedding", "code embedding (tied output weights)", initEmbed, S, G, C, E)
	add("slot_embedding", "slot, time, task embeddings", initEmbed, S, W)
	add("time_embedding", "slot, time, task embeddings", initEmbed, c.MaxHistory, W)
	add("task_embedding", "slot, time, task embeddings", initEmbed, c.Tasks, W)
	add("state_mask", "mask and padding vectors", initEmbed, W)
	add("state_pad", "mask and padding vectors", initEmbed, W)
	add("valid/w", "validity embedding", initFanIn, S, W)
	add("valid/b", "validity embedding", initZero, W)
	add("action/type_embedding", "action: type, x, y, delta", initEmbed, c.ActionTypes, A)
	add("action/byte_embedding", "action: payload GRU", initEmbed, 256, Y)
	add("action/gru_wx", "action: payload GRU", initFanIn, Y, 3*P)
	add("action/gru_wh", "action: payload GRU", initFanIn, P, 3*P)
	add("action/gru_b", "action: payload GRU", initZero, 3*P)
	add("action/payload_mask", "mask and padding vectors", initEmbed, P)
	add("action/x_embedding", "action: type, x, y, delta", initEmbed, c.CoordBins+1, A)
	add("action/y_embedding", "action: type, x, y, delta", initEmbed, c.CoordBins+1, A)
	add("action/delta_w", "action: type, x, y, delta", initFanIn, 3, A)
	add("action/delta_b", "action: type, x, y, delta", initZero, A)
	add("action/proj_w", "action: projection", initFanIn, c.ActionWidth(), W)
	add("action/proj_b", "action: projection", initZero, W)
	add("action/mask", "mask and padding vectors", initEmbed, W)
	add("action/pad", "mask and padding vectors", initEmbed, W)
	add("mask_head/w", "validity head", initFanIn, W, S)
	add("mask_head/b", "validity head", initZero, S)
	add("code_head/b", "output code bias", initZero, S, G, C)
	for l := 0; l < c.Layers; l++ {
		p := fmt.Sprintf("layer%d/", l)
		add(p+"attn_norm_scale", "transformer: attention", initOne, W)
		add(p+"attn_norm_bias", "transformer: attention", initZero, W)
		add(p+"qkv_w", "transformer: attention", initFanIn, W, 3*W)
		add(p+"qkv_b", "transformer: attention", initZero, 3*W)
		add(p+"attn_out_w", "transformer: attention", initFanIn, W, W)
		add(p+"attn_out_b", "transformer: attention", initZero, W)
		add(p+"mlp_norm_scale", "transformer: MLP", initOne, W)
		add(p+"mlp_norm_bias", "transformer: MLP", initZero, W)
		add(p+"mlp_w1", "transformer: MLP", initFanIn, W, M)
		add(p+"mlp_b1", "transformer: MLP", initZero, M)
		add(p+"mlp_w2", "transformer: MLP", initFanIn, M, W)
		add(p+"mlp_b2", "transformer: MLP", initZero, W)
	}
	add("final_norm_scale", "final LayerNorm", initOne, W)
	add("final_norm_bias", "final LayerNorm", initZero, W)
	// The reference initialises the copy gate to zero (a = 1/2 everywhere).
	add("copy_head/w", "copy gate", initZero, S, G, E)
	add("copy_head/b", "copy gate", initZero, S, G)
	return ts
}

// countParams is the number of parameters of the configuration, computed
// without allocating the layout's tensors' data.
func (c *Config) countParams() int {
	S, G, C, E, W, M := c.Slots, c.Subspaces, c.Codewords, c.CodeDim, c.Subspaces*c.CodeDim, c.MLP
	A, Y, P := c.ActionDim, c.ByteDim, c.PayloadHidden
	n := S*G*C*E + S*W + c.MaxHistory*W + c.Tasks*W + 2*W + S*W + W
	n += c.ActionTypes*A + 256*Y + Y*3*P + P*3*P + 3*P + P + 2*(c.CoordBins+1)*A + 3*A + A
	n += (4*A+P)*W + W + 2*W + W*S + S + S*G*C
	n += c.Layers * (2*W + W*3*W + 3*W + W*W + W + 2*W + W*M + M + M*W + W)
	n += 2*W + S*G*E + S*G
	return n
}

// NumParams is the number of parameters of a model with this configuration.
func (c *Config) NumParams() int { return c.countParams() }

// Component is one line of a parameter breakdown.
type Component struct {
	Name   string `json:"name"`
	Params int    `json:"params"`
}

// Breakdown returns the parameter count per component, in layout order of
// first appearance; the counts sum to NumParams.
func (c *Config) Breakdown() []Component {
	var out []Component
	idx := map[string]int{}
	for _, t := range c.layout() {
		i, ok := idx[t.Group]
		if !ok {
			i = len(out)
			idx[t.Group] = i
			out = append(out, Component{Name: t.Group})
		}
		out[i].Params += t.Size()
	}
	return out
}

// newParams allocates zeroed parameters for a valid configuration and carves
// the named slices.
func newParams(c *Config) *Params {
	ts := c.layout()
	last := ts[len(ts)-1]
	p := &Params{Data: make([]float32, last.Off+last.Size()), Tensors: ts}
	p.carve(c)
	return p
}

func (p *Params) carve(c *Config) {
	i := 0
	next := func() []float32 {
		t := &p.Tensors[i]
		i++
		return p.Data[t.Off : t.Off+t.Size() : t.Off+t.Size()]
	}
	p.codeEmb, p.slotEmb, p.timeEmb, p.taskEmb = next(), next(), next(), next()
	next() // state_mask: ablation variants only
	next() // state_pad: multiplied by zero in the reference
	p.validW, p.validB = next(), next()
	p.typeEmb, p.byteEmb, p.gruWx, p.gruWh, p.gruB = next(), next(), next(), next(), next()
	next() // action/payload_mask: ablation variants only
	p.xEmb, p.yEmb, p.deltaW, p.deltaB = next(), next(), next(), next()
	p.actW, p.actB = next(), next()
	next() // action/mask: ablation variants only
	next() // action/pad: multiplied by zero in the reference
	p.validHW, p.validHB, p.codeBias = next(), next(), next()
	p.layers = make([]layerParams, c.Layers)
	for l := range p.layers {
		L := &p.layers[l]
		L.ln1g, L.ln1b, L.wqkv, L.bqkv, L.wo, L.bo = next(), next(), next(), next(), next(), next()
		L.ln2g, L.ln2b, L.w1, L.b1, L.w2, L.b2 = next(), next(), next(), next(), next(), next()
	}
	p.finalG, p.finalB, p.copyW, p.copyB = next(), next(), next(), next()
}

// initRandom fills the parameters from a generator seeded by seed: biases 0,
// gains 1, embeddings normal(0, 0.02), matrices normal(0, 1/sqrt(rows)) as in
// the reference. The normals are Irwin-Hall sums of 12 uniforms (bounded by
// 6 standard deviations) computed with plain float64 additions, so the same
// seed gives the same bits on every architecture (Go's NormFloat64 goes
// through math.Exp and math.Log, which are not).
func (p *Params) initRandom(seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x776f726c646d6f64)) // "worldmod"
	for _, t := range p.Tensors {
		d := p.Data[t.Off : t.Off+t.Size()]
		var std float64
		switch t.init {
		case initZero:
			clear(d)
			continue
		case initOne:
			for i := range d {
				d[i] = 1
			}
			continue
		case initEmbed:
			std = 0.02
		case initFanIn:
			std = 1 / sqrt64(float64(t.Shape[0]))
		}
		for i := range d {
			s := 0.0
			for k := 0; k < 12; k++ {
				s += float64(rng.Uint64()>>11) / (1 << 53)
			}
			d[i] = float32((s - 6) * std)
		}
	}
}
