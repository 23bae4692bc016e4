package codec

import "github.com/memowm/memowm/entropy"

// The initial state z_0 of a mixed file is coded without a world model
// (there is no history to predict it from): every code as its rank from the
// codeword nearest the origin of its codebook (Neighbours.originRow: the
// code of the training mean), down the rank's binary tree, under a mix of
// counters shared by all coordinates: by tree node, by node and the rank of
// the code before it in the slot, and by node and slot. Screens with much
// blank or typical content (a terminal's empty regions) code their first
// state in a fraction of its fixed width; others cost about the same.
type initialCoder struct {
	node, left, slot []entropy.Counter
	mx               *entropy.Mixer
	x                [4]int32
}

func newInitialCoder(slots, nodes int) *initialCoder {
	c := &initialCoder{
		node: fill(make([]entropy.Counter, nodes)),
		left: fill(make([]entropy.Counter, 5*nodes)),
		slot: fill(make([]entropy.Counter, slots*nodes)),
		mx:   entropy.NewMixer(4, 6*5, 0, 24),
	}
	c.mx.SetWeights([]int32{0, 22000, 22000, 22000})
	return c
}

// codeInitial codes (writer: truth set) or decodes (truth nil) z_0 into
// rec and returns its ideal cost in Q16 bits.
func (m *mixCoder) codeInitial(io bitIO, truth, rec []uint8) (uint64, error) {
	ic := newInitialCoder(m.slots, m.nodes)
	var cost uint64
	prevRank := 0 // the rank of the code before j, coded last
	for j := range rec {
		order := m.nb.originRow(j)
		r := 0
		if truth != nil {
			r = int(rankTo(m.rankBuf, order)[truth[j]])
		}
		lb := 4 // the code before j in the slot, as a rank bucket; 4: none
		if j%m.perSlot > 0 {
			lb = min(prevRank, 3)
		}
		s := j / m.perSlot
		node := 1
		for d := 0; d < m.bits; d++ {
			a, b, c := &ic.node[node], &ic.left[lb*m.nodes+node], &ic.slot[s*m.nodes+node]
			x := ic.x[:0]
			x = append(x, 256, entropy.Stretch(a.P16()), entropy.Stretch(b.P16()), entropy.Stretch(c.P16()))
			set := d*5 + lb
			p := ic.mx.Predict(set, x)
			y, err := io.code(r>>(m.bits-1-d)&1, p)
			if err != nil {
				return 0, err
			}
			if !m.noCost {
				cost += uint64(entropy.CostBitQ16(y, p))
			}
			ic.mx.Learn(set, x, p, y)
			a.Update(y, mixCounterLim)
			b.Update(y, mixCounterLim)
			c.Update(y, mixCounterLim)
			node = node<<1 | y
		}
		c := node - m.nodes
		if c >= m.C {
			return 0, errOutsideCodewords(c, m.C)
		}
		rec[j] = order[c]
		prevRank = c
	}
	return cost, nil
}
