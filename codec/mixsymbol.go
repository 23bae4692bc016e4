package codec

import (
	"github.com/memowm/memowm/entropy"
	"github.com/memowm/memowm/worldmodel"
)

// codeSymbol codes (or decodes) coordinate j's code down its binary tree
// and returns the code and its ideal cost in Q16 bits. z is the true code
// on the writer's side. cb is the slot's changed-so-far bucket (0, 1, 2+,
// or 3 for the last code of a slot that must change).
func (m *mixCoder) codeSymbol(io bitIO, pr *worldmodel.Prediction, j, z int, prev, prev2 []uint8, cb int) (int, uint64, error) {
	t := len(m.history)
	tbl := pr.Table(j)
	cum := m.cum
	cum[0] = 0
	for i, f := range tbl {
		cum[i+1] = cum[i] + f
	}
	p := int(prev[j])
	p2 := m.C
	if prev2 != nil {
		p2 = int(prev2[j])
	}
	mc, ml := m.matchFor(t, j)
	mcKey := mc
	if mc < 0 {
		mcKey = m.C
	}
	ju := uint64(j) << 20
	b1 := m.o1.block(1<<60 | ju | uint64(p))
	b2 := m.o2.block(2<<60 | ju | uint64(p)<<8 | uint64(p2))
	bm := m.om.block(3<<60 | ju | uint64(mcKey)<<8 | uint64(min(ml, 3)))
	bw := m.ow.block(4<<60 | ju | uint64(pr.Mode[j])<<8 | uint64(cb))

	var cost uint64
	node := 1
	bits := m.bits
	mlb := lenBucket(ml)
	mset := 0
	switch {
	case ml >= 8:
		mset = 2
	case ml > 0:
		mset = 1
	}
	for d := 0; d < bits; d++ {
		shift := uint(bits - 1 - d)
		// The world model's probability of a 1 here: the node covers codes
		// [lo, hi), its 1-branch [mid, hi), clipped to the C codewords.
		lo := (node - 1<<d) << (shift + 1)
		mid := lo + 1<<shift
		hi := lo + 1<<(shift+1)
		lo, mid, hi = min(lo, m.C), min(mid, m.C), min(hi, m.C)
		var pw uint32 = 1 << 15
		if all := cum[hi] - cum[lo]; all > 0 {
			pw = entropy.ClampP16(int64(uint64(cum[hi]-cum[mid]) << 16 / uint64(all)))
		}
		prefix := node - 1<<d // the bits decided so far
		// Direct predictions: the previous code and the match's code, while
		// their bits above agree with the ones decided.
		pAgree := p>>(shift+1) == prefix
		mAgree := mc >= 0 && mc>>(shift+1) == prefix
		var xp, xm int32
		var cp, cm *entropy.Counter
		pe, me := 0, 0
		if pAgree {
			pe = p >> shift & 1
			cp = &m.direct[0][min(cb, 3)*4+min(d, 3)]
			xp = entropy.Stretch(cp.P16())
			if pe == 0 {
				xp = -xp
			}
		}
		if mAgree {
			me = mc >> shift & 1
			cm = &m.direct[1][mlb]
			xm = entropy.Stretch(cm.P16())
			if me == 0 {
				xm = -xm
			}
		}
		k1, k2, km, kw := &b1[node], &b2[node], &bm[node], &bw[node]
		mx := m.sym
		mx.Add(256)
		mx.Add(entropy.Stretch(pw))
		mx.Add(entropy.Stretch(k1.P16()))
		mx.Add(entropy.Stretch(k2.P16()))
		mx.Add(entropy.Stretch(km.P16()))
		mx.Add(entropy.Stretch(kw.P16()))
		mx.Add(xp)
		mx.Add(xm)
		agree := 0
		if pAgree {
			agree = 1
		}
		set := ((d*3+mset)*2+agree)*4 + cb
		pm := mx.Mix(set)
		pctx := 0
		if pAgree {
			pctx = 1 + pe
		}
		mctx := 0
		if mAgree {
			mctx = 1 + me
		}
		a1 := m.apm1.Refine(pm, node*3+pctx)
		a2 := m.apm2.Refine(pm, node*3+mctx)
		pf := entropy.ClampP16((2*int64(pm) + 3*int64(a1) + 3*int64(a2)) >> 3)
		y := z >> shift & 1
		y, err := io.code(y, pf)
		if err != nil {
			return 0, 0, err
		}
		cost += uint64(entropy.CostBitQ16(y, pf))
		mx.Update(y)
		m.apm1.Update(y)
		m.apm2.Update(y)
		k1.Update(y, mixCounterLim)
		k2.Update(y, mixCounterLim)
		km.Update(y, mixCounterLim)
		kw.Update(y, mixCounterLim)
		if cp != nil {
			cp.Update(boolInt(y == pe), mixDirectLim)
		}
		if cm != nil {
			cm.Update(boolInt(y == me), mixDirectLim)
		}
		node = node<<1 | y
	}
	c := node - m.nodes
	if c >= m.C {
		return 0, 0, errOutsideCodewords(c, m.C)
	}
	return c, cost, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
