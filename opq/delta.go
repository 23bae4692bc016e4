package opq

// AddCoordinateDelta adds to state (a decoded state, StateLen values) the
// change that replacing coordinate j's code from by to makes to the decoded
// state: D(z with z_j = to) - D(z with z_j = from), which touches only j's
// slot. Decoding is linear in the codewords, so this equals the difference
// of two full decodes up to float32 rounding, at 1/Subspaces of the cost:
//
//	state[s][c] += std[s][c] * sum_l (cw_to[l] - cw_from[l]) * R^T[m*SubDim+l][c]
//
// with s, m the slot and subspace of j. It panics if j, from or to is out of
// range or state is short.
func (q *Quantizer) AddCoordinateDelta(state []float32, j int, from, to uint8) {
	d, s := q.shape.Dim, j/q.subspaces
	q.AddSlotDelta(state[s*d:(s+1)*d], j, from, to)
}

// AddSlotDelta is AddCoordinateDelta on the Dim values of j's slot alone.
func (q *Quantizer) AddSlotDelta(out []float32, j int, from, to uint8) {
	if from == to {
		return
	}
	d, sd := q.shape.Dim, q.subDim
	s, m := j/q.subspaces, j%q.subspaces
	a, b := q.Codeword(j, int(to)), q.Codeword(j, int(from))
	out = out[:d]
	std := q.std[s*d : (s+1)*d]
	for c := range out {
		var acc float32
		for l := 0; l < sd; l++ {
			acc += float32((a[l] - b[l]) * q.rotT[(m*sd+l)*d+c])
		}
		out[c] += float32(acc * std[c])
	}
}
