package codec

import (
	"bytes"

	"github.com/memowm/memowm/entropy"
	"github.com/memowm/memowm/worldmodel"
)

// codeRepeat codes (writer: truth set) or decodes slot s's repeat decision
// in a state whose previous reconstruction is prev: 1 when the slot's codes
// equal prev's. Its probability mixes counters of the slot's last two
// decisions (c1), of how many slots changed so far in this state (c2), of
// the world model's cost of the slot repeating (c3, and per slot c5), of the
// action with the slot (c4), and of whether the slots left and above
// changed (c6); changedSlots is the number of slots that changed before s. It
// returns the decision and its ideal cost in Q16 bits.
func (m *mixCoder) codeRepeat(io bitIO, pr *worldmodel.Prediction, total uint32, akey uint64, s, changedSlots int, truth, prev []uint8) (int, uint64, error) {
	lo, hi := s*m.perSlot, (s+1)*m.perSlot
	// The world model's cost of the slot repeating.
	var wmCost uint64
	for j := lo; j < hi; j++ {
		wmCost += uint64(entropy.CostQ16(pr.Table(j)[prev[j]], total))
	}
	wb := wmBucket(wmCost)
	if m.without&MixWorldModel != 0 {
		wb = 0
	}
	pf, pf2 := int(m.flagPrev[s]), int(m.flagPrev2[s])
	cb := changedBucket(changedSlots)
	c1 := &m.fSlot[s*4+pf*2+pf2]
	c2 := &m.fChanged[cb*2+pf]
	c3 := &m.fWM[wb*2+pf]
	c4 := &m.fAction.block(akey ^ uint64(s)<<56)[1]
	c5 := &m.fSlotWM[s*16+wb]
	// The slots to the left and above (in a grid 8 wide) were decided
	// already in this state: neighbouring regions change together.
	left, up := 2, 2
	if cols := 8; m.slots%cols == 0 {
		if s%cols > 0 {
			left = int(m.flagPrev[s-1])
		}
		if s >= cols {
			up = int(m.flagPrev[s-cols])
		}
	}
	c6 := &m.fNear[((s*3+left)*3+up)*2+pf]
	m.flag.Add(256)
	m.flag.Add(entropy.Stretch(c1.P16()))
	if m.without&MixContexts == 0 {
		m.flag.Add(entropy.Stretch(c2.P16()))
		m.flag.Add(entropy.Stretch(c3.P16()))
		m.flag.Add(entropy.Stretch(c4.P16()))
		m.flag.Add(entropy.Stretch(c5.P16()))
		m.flag.Add(entropy.Stretch(c6.P16()))
	} else {
		for range 5 {
			m.flag.Add(0)
		}
	}
	pm := m.flag.Mix(pf*8 + cb)
	pa := m.fapm.Refine(pm, s*2+pf)
	p := entropy.ClampP16((int64(pm) + 3*int64(pa)) >> 2)
	y := 0
	if truth != nil && bytes.Equal(truth[lo:hi], prev[lo:hi]) {
		y = 1
	}
	y, err := io.code(y, p)
	if err != nil {
		return 0, 0, err
	}
	cost := uint64(entropy.CostBitQ16(y, p))
	for _, c := range []*entropy.Counter{c1, c2, c3, c4, c5, c6} {
		c.Update(y, mixCounterLim)
	}
	m.flag.Update(y)
	m.fapm.Update(y)
	m.flagPrev2[s], m.flagPrev[s] = m.flagPrev[s], uint8(y)
	return y, cost, nil
}
