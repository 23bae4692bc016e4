package codec

import (
	"fmt"
	"hash/fnv"
	"sync"

	"github.com/memowm/memowm/entropy"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// The mixing prior (Header.Mix). Every predicted state is coded as:
//
//  1. per slot, one binary "repeat" decision: the slot's codes equal the
//     previous reconstruction's. A repeated slot is copied. Its probability
//     mixes counters of the slot's last two decisions, of how many slots
//     changed so far in this state, of the world model's cost of the slot
//     repeating, and of the action (type and payload) with the slot.
//  2. for the other slots, every code as its rank from the coordinate's
//     previous code (Neighbours: rank 0 is the previous code, rank 1 its
//     nearest codeword, ...), in ceil(log2 C) binary decisions, most
//     significant bit first, down the rank's binary tree.
//
// Each binary decision of a rank is a logistic mix of these predictions in
// the stretch domain, by two mixers (weight sets chosen by depth, match
// state and how much of the slot changed, and by tree node), averaged and
// refined by two adaptive probability maps, coded at 16-bit precision:
//
//   - the world model: its table's probability of the bit given the bits
//     above it, computed exactly from the integer table in rank order, and
//     the same refined by an adaptive map per depth and slot state;
//   - adaptive code counts in code space, mapped to rank order the same
//     way: the coordinate's codes so far in the episode, and its codes
//     given the code before it in the slot (hashed rows);
//   - one adaptive context shared by every coordinate (entropy.Counter
//     blocks, one counter per node of three tree levels): the slot's
//     changes so far and which candidates exist;
//   - long-range copy (mixmatch.go): the prefix match (the latest earlier
//     state whose slot began with the same codes) and the transition
//     candidate (the state that last followed the slot's current content),
//     each as a direct prediction of its bits with a confidence learned per
//     match length;
//   - the previous code (rank 0) as a direct prediction.
//
// With a lossy retention rule, the mixed distribution over all codes (every
// node of the tree, without learning) gives the rule its entropy and the
// fill value; a kept code is then coded as above.
//
// Every part starts fresh with each episode, so episodes decode alone. The
// writer and the decoder run the same function (codeState) over a bitIO
// that either codes known bits or decodes them, so they update the same
// state in the same order by construction.

// bitIO codes one binary decision: the writer codes bit and returns it, the
// decoder ignores bit and returns the decoded one.
type bitIO interface {
	code(bit int, p1 uint32) (int, error)
}

type bitEncoder struct{ e *entropy.Encoder }

func (b bitEncoder) code(bit int, p1 uint32) (int, error) { return bit, b.e.EncodeBit(bit, p1) }

type bitDecoder struct{ d *entropy.Decoder }

func (b bitDecoder) code(_ int, p1 uint32) (int, error) { return b.d.DecodeBit(p1) }

// Mixing-prior sizes and rates. Changing any of them changes the files:
// they are part of the format (Header.Mix).
const (
	mixMatchBits   = 18 // log2 entries of the match index
	mixDirectLim   = 1023
	mixCounterLim  = 30 // count limit of context counters: they keep adapting
	mixLR          = 64 // the symbol mixers' learning rate
	mixAPMRate     = 6
	mixFlagLR      = 4 // the flag mixer's learning rate
	mixSymInputs   = 5 + mixContexts + 3
	mixContexts    = 1
	mixFlagInputs  = 7
	mixMaxMatchLen = 15
)

// ctxTable is a hashed table of counter blocks. A block is `nodes`
// counters; its first entry holds the tag of the key that owns it (so a
// lookup touches one cache line), the others are the key's counters.
type ctxTable struct {
	nodes  int
	blocks []entropy.Counter
}

func newCtxTable(bits, nodes int) *ctxTable {
	return &ctxTable{nodes: nodes, blocks: make([]entropy.Counter, (1<<bits)*nodes)}
}

// ctxPools recycle the large symbol-context tables between episodes, by
// size; a table taken from a pool is cleared, so it is exactly a new one.
var ctxPools [24]sync.Pool

func getCtxTable(bits, nodes int) *ctxTable {
	if t, ok := ctxPools[bits].Get().(*ctxTable); ok && t.nodes == nodes {
		clear(t.blocks)
		return t
	}
	return newCtxTable(bits, nodes)
}

func putCtxTable(t *ctxTable) {
	bits := 0
	for 1<<bits < len(t.blocks)/t.nodes {
		bits++
	}
	ctxPools[bits].Put(t)
}

// block returns key's block (entry 0 is the tag: use entries 1..nodes-1),
// with fresh counters when the slot held another key.
func (t *ctxTable) block(key uint64) []entropy.Counter {
	h := mixHash(key)
	n := len(t.blocks) / t.nodes
	i := int(h&uint64(n-1)) * t.nodes
	tag := entropy.Counter(uint32(h>>32) | 1)
	b := t.blocks[i : i+t.nodes : i+t.nodes]
	if b[0] != tag {
		b[0] = tag
		for k := 1; k < len(b); k++ {
			b[k] = entropy.CounterInit
		}
	}
	return b
}

// mixHash is a 64-bit finaliser (splitmix64).
func mixHash(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// mixCoder is one episode's mixing state.
type mixCoder struct {
	slots, perSlot, C, bits int
	nodes                   int // 1 << bits

	ctx        *ctxTable // every symbol context, in blocks of 8 counters
	keys       [mixContexts]uint64
	blocks     [mixContexts][]entropy.Counter
	nb         *Neighbours
	direct     [3][32]entropy.Counter // previous code / match / transition: p(predicted bit right) by bucket
	sym, sym2  *entropy.Mixer
	apm1, apm2 *entropy.APM
	apmW       *entropy.APM // the world model's probability by depth and slot state

	match matchModel

	// slot flags
	flagPrev, flagPrev2 []uint8
	fSlot               []entropy.Counter // slot x prev flag x prev2 flag
	fChanged            []entropy.Counter // changed-so-far bucket x prev flag
	fWM                 []entropy.Counter // world-model repeat cost bucket x prev flag
	fAction             *ctxTable         // (action, slot) -> one counter
	fSlotWM             []entropy.Counter // slot x wm bucket
	fNear               []entropy.Counter // slot x left slot's decision x upper slot's x prev flag
	flag                *entropy.Mixer
	fapm                *entropy.APM

	cum       []uint32
	cum0      []uint32
	cumF      []uint32
	countsL   []uint16 // hashed rows of code counts by (coordinate, code before it in the slot)
	counts    []uint16 // (J, C): order-0 code counts per coordinate in this episode
	repeated  int      // coordinates copied by repeat decisions in the last codeState
	omitted   int      // coordinates filled by the retention rule in the last codeState
	recovered int      // omitted coordinates whose fill was right (writer only)
	sc        symCtx
	np        nodePred
	reach     []uint64
	freq      []uint32
	rankBuf   []uint8 // the ranks of the codes in the order in use (rankTo)
	without   MixPart
	noCost    bool                                    // the decoder's: codeInitial and codeSymbol return no cost (0)
	observe   func(t, j int, hQ16 uint32, mode uint8) // SimOptions.Observe for this episode
}

// MixPart names parts of the mixing prior, for ablations (SimOptions.MixWithout).
type MixPart uint

const (
	// MixWorldModel is the world model's input (and its features in the
	// repeat decisions).
	MixWorldModel MixPart = 1 << iota
	// MixMatch is the long-range match model.
	MixMatch
	// MixContexts are the adaptive context models (the symbol contexts, and
	// all repeat-decision contexts but the slot's own history).
	MixContexts
)

// newMixCoder returns the mixing state of an episode of obs observations
// (its context table grows with it, from 2^12 to 2^19 blocks of 36 bytes:
// 18 MiB at most).
func newMixCoder(slots, perSlot, C, bits int, nb *Neighbours, obs int) *mixCoder {
	nodes := 1 << bits
	tb := 12
	for tb < 19 && 1<<tb < obs*slots*perSlot*mixContexts/2 {
		tb++
	}
	m := &mixCoder{slots: slots, perSlot: perSlot, C: C, bits: bits, nodes: nodes, nb: nb,
		ctx:   getCtxTable(tb, 8),
		sym:   entropy.NewMixer(mixSymInputs, bits*3*3*2*4, 0, mixLR),
		apm1:  entropy.NewAPM(nodes*3, mixAPMRate),
		apm2:  entropy.NewAPM(nodes*3, mixAPMRate),
		apmW:  entropy.NewAPM(bits*4, mixAPMRate),
		match: newMatchModel(perSlot, slots*perSlot, obs),

		flagPrev: make([]uint8, slots), flagPrev2: make([]uint8, slots),
		fSlot:    fill(make([]entropy.Counter, slots*4)),
		fChanged: fill(make([]entropy.Counter, 8*2)),
		fWM:      fill(make([]entropy.Counter, 16*2)),
		fAction:  newCtxTable(12, 2),
		fSlotWM:  fill(make([]entropy.Counter, slots*16)),
		fNear:    fill(make([]entropy.Counter, slots*3*3*2)),
		flag:     entropy.NewMixer(mixFlagInputs, 2*8, 0, mixFlagLR),
		fapm:     entropy.NewAPM(slots*2, mixAPMRate),
		cum:      make([]uint32, C+1),
		cum0:     make([]uint32, C+1),
		cumF:     make([]uint32, C+1),
		countsL:  getCounts((1 << 14) * C),
		counts:   getCounts(slots * perSlot * C),
		reach:    make([]uint64, 2*nodes),
		freq:     make([]uint32, C),
		rankBuf:  make([]uint8, C),
	}
	// Start by trusting the world model and the previous code a little.
	m.sym2 = entropy.NewMixer(mixSymInputs, nodes, 0, mixLR)
	w := make([]int32, mixSymInputs)
	for i := range w {
		w[i] = 16000
	}
	w[0], w[1], w[2], w[3], w[4] = 0, 10000, 10000, 8000, 8000
	m.sym.SetWeights(w)
	m.sym2.SetWeights(w)
	m.flag.SetWeights([]int32{0, 20000, 20000, 20000, 20000, 20000, 20000})
	for i := range m.flagPrev {
		m.flagPrev[i], m.flagPrev2[i] = 1, 1
	}
	for i := range m.direct {
		for k := range m.direct[i] {
			m.direct[i][k] = entropy.CounterInit
		}
	}
	return m
}

func fill(c []entropy.Counter) []entropy.Counter {
	for i := range c {
		c[i] = entropy.CounterInit
	}
	return c
}

// actionKey hashes an action's type and payload.
func actionKey(a *trajectory.Action) uint64 {
	h := fnv.New64a()
	h.Write([]byte{byte(a.Type)})
	h.Write(a.Payload)
	return h.Sum64()
}

// lenBucket maps a match length to [0, 15].
func lenBucket(n int) int { return min(n, mixMaxMatchLen) }

// wmBucket maps the world model's cost of repeating a slot (Q16 bits) to
// [0, 15]: about 1.5 buckets per doubling.
func wmBucket(costQ16 uint64) int {
	bitsCost := costQ16 >> 14 // quarter bits
	b := 0
	for bitsCost > 0 && b < 15 {
		bitsCost = bitsCost * 2 / 3
		b++
	}
	return b
}

func changedBucket(n int) int {
	switch {
	case n < 4:
		return n
	case n < 8:
		return 4
	case n < 12:
		return 5
	case n < 20:
		return 6
	}
	return 7
}

// release hands the context table back for reuse; m is unusable after.
func (m *mixCoder) release() {
	if m.ctx != nil {
		putCtxTable(m.ctx)
		m.ctx = nil
		countPool.Put(&m.counts)
		countPool.Put(&m.countsL)
		m.counts, m.countsL = nil, nil
	}
}

// countPool recycles count arrays; a recycled one is cleared, so it is
// exactly a new one.
var countPool sync.Pool

func getCounts(n int) []uint16 {
	if p, ok := countPool.Get().(*[]uint16); ok && cap(*p) >= n {
		c := (*p)[:n]
		clear(c)
		return c
	}
	return make([]uint16, n)
}

// start takes the episode's initial state z_0.
func (m *mixCoder) start(z0 []uint8) {
	m.match.start(z0)
}

// codeState codes (writer: truth set) or decodes (truth nil) state t into
// rec, given the world model's prediction for it and the action that led to
// it; it returns the ideal cost in Q16 bits (with m.noCost, that of the
// repeat decisions alone). rec must have J entries; hist must hold states
// 0..t-1 (it may hold more), prev is state t-1.
func (m *mixCoder) codeState(io bitIO, pr *worldmodel.Prediction, prec uint, a *trajectory.Action, t int, hist *trajectory.CodeRows, truth, prev, rec []uint8, keep Keeper) (uint64, error) {
	var cost uint64
	total := uint32(1) << prec
	akey := actionKey(a)
	m.prefetchState()
	changedSlots := 0
	m.repeated, m.omitted, m.recovered = 0, 0, 0
	for s := 0; s < m.slots; s++ {
		lo, hi := s*m.perSlot, (s+1)*m.perSlot
		y, flagCost, err := m.codeRepeat(io, pr, total, akey, s, changedSlots, truth, prev)
		if err != nil {
			return 0, err
		}
		cost += flagCost
		if y == 1 {
			m.repeated += m.perSlot
			copy(rec[lo:hi], prev[lo:hi])
			continue
		}
		changedSlots++
		m.match.beginSlot(hist, s, m.without&MixMatch == 0)
		changed := 0
		for j := lo; j < hi; j++ {
			cb := min(changed, 2)
			if j == hi-1 && changed == 0 {
				cb = 3 // the slot differs, so this code must
			}
			var z int
			if truth != nil {
				z = int(truth[j])
			}
			sc := &m.sc
			m.prepare(sc, pr, j, prev, rec, cb)
			if keep != nil {
				// The retention rule reads the mixed distribution: its
				// entropy decides, its mode fills.
				m.freq = m.treeTable(sc, m.freq)
				h, mode := entropy.EntropyQ16(m.freq), sc.order[entropy.Mode(m.freq)]
				if m.observe != nil {
					m.observe(t, j, h, mode)
				}
				if !keep.Keep(j, h) {
					rec[j] = mode
					m.omitted++
					if truth != nil && rec[j] == truth[j] {
						m.recovered++
					}
					if rec[j] != prev[j] {
						changed++
					}
					m.match.advance(rec, j)
					continue
				}
			}
			c, bitsCost, err := m.codeSymbol(io, sc, z)
			if err != nil {
				return 0, err
			}
			cost += bitsCost
			rec[j] = uint8(c)
			m.count(j, c)
			addCount(m.countsL[m.sc.rowL:m.sc.rowL+m.C], c)
			if rec[j] != prev[j] {
				changed++
			}
			m.match.advance(rec, j)
		}
		m.match.endSlot(t, s)
	}
	m.match.endState(rec)
	return cost, nil
}

func errOutsideCodewords(c, C int) error {
	return fmt.Errorf("%w: decoded code %d is outside the %d codewords", ErrFormat, c, C)
}

// mixKeeper is the retention rule the mixing prior applies: nil (keep
// everything, without computing the mixed distribution) for a lossless
// policy.
func mixKeeper(k Keeper) Keeper {
	if p, ok := k.(model.Policy); ok && p.Lossless() {
		return nil
	}
	return k
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// count adds code c of coordinate j to its order-0 counts (halving them
// all when they grow past 60,000).
func (m *mixCoder) count(j, c int) { addCount(m.counts[j*m.C:(j+1)*m.C], c) }

// addCount adds code c to the counts cnt, halving them all when one grows
// past 60,000.
func addCount(cnt []uint16, c int) {
	cnt[c] += 32
	if cnt[c] > 60000 {
		for i := range cnt {
			cnt[i] >>= 1
		}
	}
}
