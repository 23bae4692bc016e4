package codec

// Most of the mixing prior's time per code goes to cache misses on its
// large hashed tables (the code counts by left neighbour, the match and
// transition indexes), each read once per coordinate at a key that the
// coordinate before decides. These functions load, early, the lines that
// the next reads will need, so that their misses overlap the work in
// between instead of stalling it: before the last binary decision of a
// code, the lines of the next coordinate for both outcomes; at the start of
// a state, every slot's transition entry. They only read, and what they
// read is discarded (summed into mixCoder.sink so that the loads stay):
// nothing they do changes a bit of the output.

// prefetchNext loads the lines that coordinate j+1 of the slot in progress
// will read if coordinate j takes rank r0 or r0+1 (whichever are codes).
// rec holds the slot's codes before j.
func (m *mixCoder) prefetchNext(sc *symCtx, rec []uint8, j, r0 int) {
	next := j + 1
	if next >= sc.hi {
		return
	}
	var s uint32
	s += uint32(m.counts[next*m.C])
	rows := uint64(len(m.countsL)/m.C - 1)
	mt := &m.match
	look := mt.on && mt.mLen <= 1 // the prefix match is looked up again unless it holds and is right
	for r := r0; r <= r0+1 && r < m.C; r++ {
		c := sc.order[r]
		row := int(mixHash(uint64(next)<<16|uint64(c))&rows) * m.C
		s += uint32(m.countsL[row])
		if look {
			s += uint32(mt.index[mt.prefixKeyWith(rec, mt.lo, next, c)])
		}
	}
	m.sink += s
}

// prefixKeyWith is prefixKey(z, lo, j) for z whose code j-1 is last
// (j > lo).
func (m *matchModel) prefixKeyWith(z []uint8, lo, j int, last uint8) int {
	key := uint64(j) << 40
	for i := max(lo, j-4); i < j-1; i++ {
		key = key<<8 | uint64(z[i])
	}
	key = key<<8 | uint64(last)
	return int(mixHash(key^uint64(j)<<48) & m.mask)
}

// prefetchState loads every slot's transition entry and the first code's
// counts by left neighbour, before state t's repeat decisions.
func (m *mixCoder) prefetchState() {
	var s uint32
	mt := &m.match
	if mt.n >= 1 {
		hs := mt.stateHashes(mt.n - 1)
		for sl := range hs {
			s += uint32(mt.trans[mt.transKey(sl, hs[sl])])
		}
	}
	rows := uint64(len(m.countsL)/m.C - 1)
	for j := 0; j < m.slots*m.perSlot; j += m.perSlot {
		row := int(mixHash(uint64(j)<<16|uint64(m.C))&rows) * m.C
		s += uint32(m.countsL[row])
	}
	m.sink += s
}
