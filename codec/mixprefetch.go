package codec

import (
	"unsafe"

	"github.com/memowm/memowm/worldmodel"
)

// Most of the mixing prior's time per code went to cache misses on its
// large hashed tables (the code counts by left neighbour, the match and
// transition indexes), each read once per coordinate at a key that the
// coordinate before decides, and on the world model's tables. These
// functions ask the processor (prefetch) for the lines that the next reads
// will need, early enough for their misses to overlap the work in between:
// two decisions before the end of a code, the next coordinate's lines for
// each of the codes still possible; at the start of a state, every slot's
// transition entry. A prefetch changes nothing a program can see, so
// nothing here changes a bit of the output.

// prefetchNext asks for the lines that coordinate j+1 of the slot in
// progress will read if coordinate j takes one of the ranks [r0, r1).
// rec holds the slot's codes before j.
func (m *mixCoder) prefetchNext(sc *symCtx, pr *worldmodel.Prediction, j, r0, r1 int) {
	next := j + 1
	if next >= sc.hi {
		return
	}
	C := m.C
	prefetchU32(pr.Freq, next*C)
	prefetchU16(m.counts, next*C)
	rows := uint64(len(m.countsL)/C - 1)
	mt := &m.match
	// The prefix match is looked up again when none holds or the one that
	// holds misses: ask for its entry unless one has held for a while.
	look := mt.on && mt.mLen <= 1
	for r := r0; r < r1 && r < C; r++ {
		c := sc.order[r]
		prefetchU16(m.countsL, int(mixHash(uint64(next)<<16|uint64(c))&rows)*C)
		if look {
			prefetchI32(mt.index, mt.prefixKeyWith(sc.rec, mt.lo, next, c))
		}
	}
}

func prefetchU16(s []uint16, i int) {
	if uint(i) < uint(len(s)) {
		prefetch((*byte)(unsafe.Pointer(&s[i])))
	}
}

func prefetchU32(s []uint32, i int) {
	if uint(i) < uint(len(s)) {
		prefetch((*byte)(unsafe.Pointer(&s[i])))
	}
}

func prefetchI32(s []int32, i int) {
	if uint(i) < uint(len(s)) {
		prefetch((*byte)(unsafe.Pointer(&s[i])))
	}
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

// prefetchState asks for every slot's transition entry and the first
// code's counts by left neighbour, before state t's repeat decisions.
func (m *mixCoder) prefetchState() {
	mt := &m.match
	if mt.n >= 1 {
		hs := mt.stateHashes(mt.n - 1)
		for sl := range hs {
			prefetchI32(mt.trans, mt.transKey(sl, hs[sl]))
		}
	}
	rows := uint64(len(m.countsL)/m.C - 1)
	for j := 0; j < m.slots*m.perSlot; j += m.perSlot {
		prefetchU16(m.countsL, int(mixHash(uint64(j)<<16|uint64(m.C))&rows)*m.C)
	}
}
