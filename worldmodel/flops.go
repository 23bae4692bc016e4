package worldmodel

// FLOPs returns the floating-point operations (a multiply-add counts 2) of
// the matrix products of one prediction from a history of n steps, as this
// package computes it: every layer but the last over all n*S tokens, the last
// layer's attention output and MLP over the last block only, attention scores
// and values over the block-causal keys, and the output heads. LayerNorm,
// GELU, softmax and the action encoder (about 0.1 MFLOP per step at the
// paper's size) are not counted.
func (c *Config) FLOPs(n int) int64 {
	S, W, M, L := int64(c.Slots), int64(c.Width()), int64(c.MLP), int64(c.Layers)
	N := int64(n)
	T := N * S
	qkv := 2 * T * W * 3 * W
	full := qkv + 2*S*S*W*N*(N+1) + 2*T*W*W + 4*T*W*M
	last := qkv + 4*S*S*W*N + 2*S*W*W + 4*S*W*M
	J, C, E := int64(c.Coords()), int64(c.Codewords), int64(c.CodeDim)
	heads := 2*J*C*E + 2*J*E + 2*W*S
	return (L-1)*full + last + heads
}
