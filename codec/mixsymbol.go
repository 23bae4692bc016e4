package codec

import (
	"github.com/memowm/memowm/entropy"
	"github.com/memowm/memowm/worldmodel"
)

// symCtx is what every binary decision of one coordinate shares: the rank
// order from the previous code, the world model's table in rank order, the
// candidates and the context keys.
type symCtx struct {
	order, rank []uint8
	cum         []uint32 // the world model's cumulative table, in rank order
	cum0        []uint32 // the coordinate's code counts in this episode, cumulative in rank order
	cumF        []uint32 // the same given the code before it in the slot
	rowL        int
	mc, tc      int // match / transition candidates as ranks, -1: none
	ml, tl      int // their lengths
	cb          int // changed-so-far bucket
	mset, tmem  int
	keys        [mixContexts]uint64
	noWM, noCtx bool
	j, hi       int     // the coordinate, and the end of its slot
	rec         []uint8 // the slot's codes before j
	pr          *worldmodel.Prediction
}

// prepare fills sc for coordinate j; rec holds the slot's codes before j.
// cb is the slot's changed-so-far bucket (0, 1, 2+, or 3 for the last code
// of a slot that must change).
func (m *mixCoder) prepare(sc *symCtx, pr *worldmodel.Prediction, j int, prev, rec []uint8, cb int) {
	tbl := pr.Table(j)
	p := int(prev[j])
	sc.j, sc.hi, sc.rec, sc.pr = j, (j/m.perSlot+1)*m.perSlot, rec, pr
	// Codes are coded as ranks from the previous code (Neighbours): the
	// world model's table and the candidates are mapped.
	sc.order, sc.rank = m.nb.row(j, p), m.rankBuf
	// The codes this coordinate took so far in the episode (order 0, in
	// code space), and given the code before it in the slot, mapped to
	// rank order like the world model's table, in one pass.
	cnt := m.counts[j*m.C : (j+1)*m.C]
	left := uint64(m.C)
	if j%m.perSlot > 0 {
		left = uint64(rec[j-1])
	}
	row := int(mixHash(uint64(j)<<16|left)&uint64(len(m.countsL)/m.C-1)) * m.C
	sc.rowL = row
	cntL := m.countsL[row : row+m.C]
	sc.cum, sc.cum0, sc.cumF = m.cum, m.cum0, m.cumF
	cum, cum0, cumF := sc.cum[:len(sc.order)+1], sc.cum0[:len(sc.order)+1], sc.cumF[:len(sc.order)+1]
	var a, b, c uint32
	cum[0], cum0[0], cumF[0] = 0, 0, 0
	for r, z := range sc.order {
		a += tbl[z]
		b += uint32(cnt[z])
		c += uint32(cntL[z])
		cum[r+1], cum0[r+1], cumF[r+1] = a, b, c
		sc.rank[z] = uint8(r)
	}
	mc, ml, tc, tl := m.match.candidates(rec, j)
	if mc >= 0 {
		mc = int(sc.rank[mc])
	}
	if tc >= 0 {
		tc = int(sc.rank[tc])
	}
	sc.mc, sc.ml, sc.tc, sc.tl, sc.cb = mc, ml, tc, tl, cb
	sc.noWM, sc.noCtx = m.without&MixWorldModel != 0, m.without&MixContexts != 0
	// Counters of ranks shared by every coordinate, by the slot's changes so
	// far and which candidates exist. (Counters per coordinate and previous
	// code, per two previous codes, per candidate code and per the model's
	// mode were measured to add nothing next to the code counts above, and
	// cost a cache miss each.)
	sc.keys[0] = 6<<60 | uint64(cb)<<8 | uint64(boolInt(mc >= 0))<<1 | uint64(boolInt(tc >= 0))
	sc.tmem = 0
	if m.match.tMemory {
		sc.tmem = 16
	}
	sc.mset = 0
	switch {
	case ml >= 8:
		sc.mset = 2
	case ml > 0:
		sc.mset = 1
	}
}

// blocksFor fetches the context blocks of the group of three tree levels
// that starts at node.
func (m *mixCoder) blocksFor(sc *symCtx, node int, blocks *[mixContexts][]entropy.Counter) {
	g := uint64(node) << 52
	for i, k := range sc.keys {
		blocks[i] = m.ctx.block(k ^ g)
	}
}

// nodePred is one binary decision's prediction and what learning from it
// needs.
type nodePred struct {
	x          [mixSymInputs]int32
	set, local int
	pm1, pm2   uint32 // the two mixers' outputs
	i1, i2, iw int    // the APM entries to train
	pf         uint32 // the final probability of a 1
	pe, me, te int    // the bits the direct predictions expect
	cp, cm, ct *entropy.Counter
}

// predictNode computes the probability of a 1 at node (depth d) without
// changing any state; blocks are the node's group's context blocks.
func (m *mixCoder) predictNode(sc *symCtx, np *nodePred, blocks *[mixContexts][]entropy.Counter, node, d int) {
	shift := uint(m.bits - 1 - d)
	np.local = node >> (d / 3 * 3) // the node within its group: 1..7
	// The world model's probability of a 1 here: the node covers ranks
	// [lo, hi), its 1-branch [mid, hi), clipped to the C codewords.
	lo := (node - 1<<d) << (shift + 1)
	mid := lo + 1<<shift
	hi := lo + 1<<(shift+1)
	lo, mid, hi = min(lo, m.C), min(mid, m.C), min(hi, m.C)
	var pw uint32 = 1 << 15
	if all := sc.cum[hi] - sc.cum[lo]; all > 0 && !sc.noWM {
		pw = entropy.ClampP16(int64(uint64(sc.cum[hi]-sc.cum[mid]) << 16 / uint64(all)))
	}
	prefix := node - 1<<d // the bits decided so far
	// Direct predictions: the previous code (rank 0), the match's and the
	// transition candidate's codes, while their bits above agree with the
	// ones decided.
	pAgree := prefix == 0
	mAgree := sc.mc >= 0 && sc.mc>>(shift+1) == prefix
	tAgree := sc.tc >= 0 && sc.tc>>(shift+1) == prefix
	var xp, xm, xt int32
	np.cp, np.cm, np.ct = nil, nil, nil
	np.pe, np.me, np.te = 0, 0, 0
	if pAgree {
		np.cp = &m.direct[0][min(sc.cb, 3)*4+min(d, 3)]
		xp = -entropy.Stretch(np.cp.P16()) // rank 0: every bit is 0
	}
	if mAgree {
		np.me = sc.mc >> shift & 1
		np.cm = &m.direct[1][lenBucket(sc.ml)]
		xm = signed(entropy.Stretch(np.cm.P16()), np.me)
	}
	if tAgree {
		np.te = sc.tc >> shift & 1
		np.ct = &m.direct[2][sc.tmem+min(sc.tl, 15)]
		xt = signed(entropy.Stretch(np.ct.P16()), np.te)
	}
	// The world model's probability, recalibrated by an adaptive map per
	// depth and slot state.
	var aw uint32
	aw, np.iw = m.apmW.Peek(pw, d*4+sc.cb)
	x := np.x[:0]
	// The order-0 counts' probability of a 1 (add-one smoothed).
	p0 := entropy.ClampP16(int64(uint64(sc.cum0[hi]-sc.cum0[mid]+1) << 16 / uint64(sc.cum0[hi]-sc.cum0[lo]+2)))
	pF := entropy.ClampP16(int64(uint64(sc.cumF[hi]-sc.cumF[mid]+1) << 16 / uint64(sc.cumF[hi]-sc.cumF[lo]+2)))
	var x0, xF int32
	if !sc.noCtx {
		x0, xF = entropy.Stretch(p0), entropy.Stretch(pF)
	}
	x = append(x, 256, entropy.Stretch(pw), entropy.Stretch(aw), x0, xF)
	for i := range blocks {
		if sc.noCtx {
			x = append(x, 0)
		} else {
			x = append(x, entropy.Stretch(blocks[i][np.local].P16()))
		}
	}
	x = append(x, xp, xm, xt)
	tset := 0
	if tAgree {
		tset = 1 + np.te
	}
	np.set = (((d*3+sc.mset)*3+tset)*2+boolInt(pAgree))*4 + sc.cb
	np.pm1 = m.sym.Predict(np.set, x)
	np.pm2 = m.sym2.Predict(node, x)
	pm := entropy.Squash((entropy.Stretch(np.pm1) + entropy.Stretch(np.pm2)) >> 1)
	pctx, mctx := 0, 0
	if pAgree {
		pctx = 1
	}
	if mAgree {
		mctx = 1 + np.me
	}
	var a1, a2 uint32
	a1, np.i1 = m.apm1.Peek(pm, node*3+pctx)
	a2, np.i2 = m.apm2.Peek(pm, node*3+mctx)
	np.pf = entropy.ClampP16((2*int64(pm) + 3*int64(a1) + 3*int64(a2)) >> 3)
}

// learnNode updates every part that predicted np toward bit y.
func (m *mixCoder) learnNode(np *nodePred, blocks *[mixContexts][]entropy.Counter, node, y int) {
	m.sym.Learn(np.set, np.x[:], np.pm1, y)
	m.sym2.Learn(node, np.x[:], np.pm2, y)
	m.apm1.Learn(np.i1, y)
	m.apm2.Learn(np.i2, y)
	m.apmW.Learn(np.iw, y)
	for i := range blocks {
		blocks[i][np.local].Update(y, mixCounterLim)
	}
	if np.cp != nil {
		np.cp.Update(boolInt(y == np.pe), mixDirectLim)
	}
	if np.cm != nil {
		np.cm.Update(boolInt(y == np.me), mixDirectLim)
	}
	if np.ct != nil {
		np.ct.Update(boolInt(y == np.te), mixDirectLim)
	}
}

func signed(st int32, bit int) int32 {
	if bit == 0 {
		return -st
	}
	return st
}

// codeSymbol codes (or decodes) the coordinate that sc was prepared for,
// down its rank's binary tree, and returns the code and its ideal cost in
// Q16 bits. z is the true code on the writer's side.
func (m *mixCoder) codeSymbol(io bitIO, sc *symCtx, z int) (int, uint64, error) {
	r := int(sc.rank[z])
	var cost uint64
	node := 1
	blocks := &m.blocks
	np := &m.np
	for d := 0; d < m.bits; d++ {
		if d%3 == 0 {
			m.blocksFor(sc, node, blocks)
		}
		if d == max(m.bits-2, 0) {
			// The codes still possible: ranks [lo, hi) under node.
			lo := (node << (m.bits - d)) - m.nodes
			m.prefetchNext(sc, sc.pr, sc.j, lo, lo+1<<(m.bits-d))
		}
		m.predictNode(sc, np, blocks, node, d)
		y, err := io.code(r>>(m.bits-1-d)&1, np.pf)
		if err != nil {
			return 0, 0, err
		}
		if !m.noCost {
			cost += uint64(entropy.CostBitQ16(y, np.pf))
		}
		m.learnNode(np, blocks, node, y)
		node = node<<1 | y
	}
	c := node - m.nodes
	if c >= m.C {
		return 0, 0, errOutsideCodewords(c, m.C)
	}
	return int(sc.order[c]), cost, nil
}

// treeTable computes the mixed distribution over the codes of the
// coordinate that sc was prepared for, as a table of 2^16 in rank order
// (every entry at least 1), without learning: the retention rule's entropy
// and fill value come from it. It fetches (and so may create) the context
// blocks of every group it reaches.
func (m *mixCoder) treeTable(sc *symCtx, freq []uint32) []uint32 {
	n := m.nodes
	// p1[node]: probability of a 1 at each internal node; reach[node]:
	// probability (Q32) of reaching it.
	reach := m.reach[:2*n]
	reach[1] = 1 << 32
	var blocks [mixContexts][]entropy.Counter
	np := &m.np
	for node := 1; node < n; node++ {
		d := 0
		for node>>(d+1) > 0 {
			d++
		}
		if reach[node] == 0 && node > 1 {
			reach[2*node], reach[2*node+1] = 0, 0
			continue
		}
		m.blocksFor(sc, node>>(d%3), &blocks) // the node's group starts d%3 levels up
		m.predictNode(sc, np, &blocks, node, d)
		one := reach[node] * uint64(np.pf) >> 16
		reach[2*node+1] = one
		reach[2*node] = reach[node] - one
	}
	// Leaves n..2n-1 are the ranks; quantise to a total of 2^16 with every
	// code of the C at least 1 and the remainder on the largest.
	freq = freq[:m.C]
	const total = 1 << 16
	sum := uint64(0)
	for r := range freq {
		f := reach[n+r] * (total - uint64(m.C)) >> 32
		freq[r] = uint32(f) + 1
		sum += uint64(freq[r])
	}
	best := entropy.Mode(freq)
	freq[best] += uint32(total - sum)
	return freq
}
