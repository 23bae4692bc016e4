package codec

import (
	"github.com/memowm/memowm/entropy"
	"github.com/memowm/memowm/worldmodel"
)

// codeSymbol codes (or decodes) coordinate j's code down its binary tree
// and returns the code and its ideal cost in Q16 bits. z is the true code
// on the writer's side. cb is the slot's changed-so-far bucket (0, 1, 2+,
// or 3 for the last code of a slot that must change).
func (m *mixCoder) codeSymbol(io bitIO, pr *worldmodel.Prediction, j, z int, prev, prev2, rec []uint8, cb int) (int, uint64, error) {
	tbl := pr.Table(j)
	p := int(prev[j])
	// Codes are coded as ranks from the previous code (Neighbours): the
	// world model's table, the true code and the candidates are mapped.
	order, rank := m.nb.row(j, p)
	cum := m.cum
	cum[0] = 0
	for r, z := range order {
		cum[r+1] = cum[r] + tbl[z]
	}
	z = int(rank[z])
	p2 := m.C
	if prev2 != nil {
		p2 = int(prev2[j])
	}
	mc, ml, tc, tl := m.match.candidates(m.history, rec, j)
	mcKey, tcKey := mc, tc
	if mc < 0 {
		mcKey = m.C
	} else {
		mc = int(rank[mc])
	}
	if tc < 0 {
		tcKey = m.C
	} else {
		tc = int(rank[tc])
	}
	// The contexts (hashed into m.ctx in groups of three tree levels).
	mode := uint64(pr.Mode[j])
	noWM, noCtx := m.without&MixWorldModel != 0, m.without&MixContexts != 0
	if noWM {
		mode = 0
	}
	ju := uint64(j) << 20
	keys := &m.keys
	keys[0] = 1<<60 | ju | uint64(p)
	keys[1] = 2<<60 | ju | uint64(p)<<8 | uint64(p2)
	keys[2] = 3<<60 | ju | uint64(mcKey)<<8 | uint64(min(ml, 3))
	keys[3] = 4<<60 | ju | mode<<8 | uint64(cb)
	keys[4] = 5<<60 | ju | uint64(tcKey)<<8 | uint64(min(tl, 3))
	keys[5] = 6<<60 | uint64(cb)<<8 | uint64(boolInt(mc >= 0))<<1 | uint64(boolInt(tc >= 0))
	tmem := 0
	if m.match.tMemory {
		tmem = 16
	}
	blocks := &m.blocks

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
		if d%3 == 0 {
			// A new group of levels: its blocks, keyed by the bits so far.
			g := uint64(node) << 52
			for i, k := range keys {
				blocks[i] = m.ctx.block(k ^ g)
			}
		}
		local := node >> (d / 3 * 3) // the node within its group: 1..7
		// The world model's probability of a 1 here: the node covers codes
		// [lo, hi), its 1-branch [mid, hi), clipped to the C codewords.
		lo := (node - 1<<d) << (shift + 1)
		mid := lo + 1<<shift
		hi := lo + 1<<(shift+1)
		lo, mid, hi = min(lo, m.C), min(mid, m.C), min(hi, m.C)
		var pw uint32 = 1 << 15
		if all := cum[hi] - cum[lo]; all > 0 && !noWM {
			pw = entropy.ClampP16(int64(uint64(cum[hi]-cum[mid]) << 16 / uint64(all)))
		}
		prefix := node - 1<<d // the bits decided so far
		// Direct predictions: the previous code and the match's code, while
		// their bits above agree with the ones decided.
		pAgree := prefix == 0 // the previous code is rank 0
		mAgree := mc >= 0 && mc>>(shift+1) == prefix
		tAgree := tc >= 0 && tc>>(shift+1) == prefix
		var xp, xm, xt int32
		var cp, cm, ct *entropy.Counter
		pe, me, te := 0, 0, 0
		if pAgree {
			pe = 0
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
		if tAgree {
			te = tc >> shift & 1
			ct = &m.direct[2][tmem+min(tl, 15)]
			xt = entropy.Stretch(ct.P16())
			if te == 0 {
				xt = -xt
			}
		}
		mx := m.sym
		mx.Add(256)
		mx.Add(entropy.Stretch(pw))
		for i := range blocks {
			if noCtx {
				mx.Add(0)
			} else {
				mx.Add(entropy.Stretch(blocks[i][local].P16()))
			}
		}
		mx.Add(xp)
		mx.Add(xm)
		mx.Add(xt)
		agree := 0
		if pAgree {
			agree = 1
		}
		tset := 0
		if tAgree {
			tset = 1 + te
		}
		set := (((d*3+mset)*3+tset)*2+agree)*4 + cb
		m.sym2.CopyInputs(mx)
		pm1 := mx.Mix(set)
		pm2 := m.sym2.Mix(node)
		pm := entropy.Squash((entropy.Stretch(pm1) + entropy.Stretch(pm2)) >> 1)
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
		m.sym2.Update(y)
		m.apm1.Update(y)
		m.apm2.Update(y)
		for i := range blocks {
			blocks[i][local].Update(y, mixCounterLim)
		}
		if ct != nil {
			ct.Update(boolInt(y == te), mixDirectLim)
		}
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
	return int(order[c]), cost, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
