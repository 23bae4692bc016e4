package codec

import "github.com/memowm/memowm/trajectory"

// matchModel predicts the codes of a changing slot from earlier states of
// the episode, two ways:
//
//   - the transition candidate: the state that last followed the slot's
//     current content (the slot held the same codes at t-1 as at t”-1, and
//     changed at t”), else the state two back when that slot differed
//     there. It predicts from the slot's first code and is dropped at its
//     first wrong code.
//   - the prefix match: a hash of the coordinate and the slot's codes so far
//     (the last four at most) finds the latest earlier state whose slot
//     began the same way; it predicts while it is right and is looked up
//     again after a miss.
//
// Every changed slot's positions are indexed as they are coded (a repeated
// slot's content is already indexed), so the index holds the latest state
// per key. The candidates' codes come from the episode's reconstructed
// states (loop.recon), read a slot at a time.
type matchModel struct {
	perSlot int
	mask    uint64   // len(index) - 1 = len(trans) - 1
	index   []int32  // prefix key -> state + 1
	trans   []int32  // transition key -> state + 1
	hashes  []uint64 // content hash of every slot of the last two states: state k's at [k%2*slots:]
	n       int      // states recorded (endState)
	on      bool     // this slot's candidates are in use (ablations turn them off)

	hist         *trajectory.CodeRows // states 0..t-1
	t, lo        int                  // the state and first coordinate of the slot in progress
	mState, mLen int                  // prefix match: state, codes matched (0: none)
	tState, tLen int                  // transition candidate: state (-1: none), codes matched
	mCodes       []uint8              // the prefix match's slot codes (a buffer)
	tCodes       []uint8              // the transition candidate's slot codes (a buffer)
	tMemory      bool
}

// newMatchModel sizes the indexes for an episode of obs states of coords
// codes: a power of two from 2^12 to 2^mixMatchBits entries, four per code
// (2^18 at most: 1 MiB each).
func newMatchModel(perSlot, coords, obs int) matchModel {
	bits := 12
	for bits < mixMatchBits && 1<<bits < 4*obs*coords {
		bits++
	}
	return matchModel{perSlot: perSlot, index: make([]int32, 1<<bits), trans: make([]int32, 1<<bits), mask: 1<<bits - 1,
		hashes: make([]uint64, 2*coords/perSlot)}
}

// start indexes the initial state z_0.
func (m *matchModel) start(z []uint8) {
	for lo := 0; lo < len(z); lo += m.perSlot {
		for j := lo + 1; j < lo+m.perSlot; j++ {
			m.index[m.prefixKey(z, lo, j)] = 1
		}
	}
	m.endState(z)
}

// slotHash is the content hash of the slot starting at lo.
func (m *matchModel) slotHash(z []uint8, lo int) uint64 {
	h := uint64(lo)
	for _, c := range z[lo : lo+m.perSlot] {
		h = mixHash(h ^ uint64(c))
	}
	return h
}

// endState records the content hashes of the state just coded, state n.
func (m *matchModel) endState(z []uint8) {
	hs := m.stateHashes(m.n)
	for s := range hs {
		hs[s] = m.slotHash(z, s*m.perSlot)
	}
	m.n++
}

// stateHashes are the slot hashes of state k, one of the last two recorded
// (beginSlot and endSlot read no others).
func (m *matchModel) stateHashes(k int) []uint64 {
	slots := len(m.hashes) / 2
	return m.hashes[k%2*slots : (k%2+1)*slots]
}

// prefixKey is the index slot of coordinate j given the codes of z from
// the slot's start lo (the last four at most).
func (m *matchModel) prefixKey(z []uint8, lo, j int) int {
	key := uint64(j) << 40
	for i := max(lo, j-4); i < j; i++ {
		key = key<<8 | uint64(z[i])
	}
	return int(mixHash(key^uint64(j)<<48) & m.mask)
}

func (m *matchModel) transKey(s int, h uint64) int {
	return int(mixHash(h^uint64(s)<<52^0x5bd1e995) & m.mask)
}

// beginSlot readies the candidates of slot s of state t = n, whose
// earlier states hist holds (in slots of perSlot codes).
func (m *matchModel) beginSlot(hist *trajectory.CodeRows, s int, on bool) {
	t := m.n
	m.hist, m.t, m.lo, m.on = hist, t, s*m.perSlot, on
	m.mLen, m.tState, m.tLen, m.tMemory = 0, -1, 0, false
	if !on {
		return
	}
	if v := int(m.trans[m.transKey(s, m.stateHashes(t - 1)[s])]) - 1; v >= 0 && v < t {
		m.tState, m.tMemory = v, true
	} else if t >= 2 && m.stateHashes(t - 2)[s] != m.stateHashes(t - 1)[s] {
		m.tState = t - 2
	}
	if m.tState >= 0 {
		m.tCodes = hist.CodesTo(m.tCodes, m.tState, m.lo, m.lo+m.perSlot)
	}
}

// candidates returns the prefix match's and the transition candidate's
// codes for coordinate j (-1: none) and their lengths; rec holds the
// slot's codes before j.
func (m *matchModel) candidates(rec []uint8, j int) (mc, ml, tc, tl int) {
	mc, tc = -1, -1
	if !m.on {
		return
	}
	if m.mLen == 0 && j > m.lo {
		if v := int(m.index[m.prefixKey(rec, m.lo, j)]) - 1; v >= 0 && v < m.t {
			m.mState, m.mLen = v, 1
			m.mCodes = m.hist.CodesTo(m.mCodes, v, m.lo, m.lo+m.perSlot)
		}
	}
	if m.mLen > 0 {
		mc, ml = int(m.mCodes[j-m.lo]), m.mLen
	}
	if m.tState >= 0 {
		tc, tl = int(m.tCodes[j-m.lo]), m.tLen
	}
	return
}

// advance checks the candidates against coordinate j's code and indexes it.
func (m *matchModel) advance(rec []uint8, j int) {
	c := rec[j]
	if m.mLen > 0 {
		if m.mCodes[j-m.lo] == c {
			m.mLen++
		} else {
			m.mLen = 0
		}
	}
	if m.tState >= 0 {
		if m.tCodes[j-m.lo] == c {
			m.tLen++
		} else {
			m.tState = -1
		}
	}
	if j > m.lo {
		m.index[m.prefixKey(rec, m.lo, j)] = int32(m.t + 1)
	}
}

// endSlot records that slot s changed at state t after its content at t-1.
func (m *matchModel) endSlot(t, s int) {
	m.trans[m.transKey(s, m.stateHashes(t - 1)[s])] = int32(t + 1)
}
