package worldmodel

import (
	"encoding/binary"
	"fmt"
	"hash"
	"hash/crc32"
	"math"
	"math/rand/v2"

	"github.com/memowm/memowm/trajectory"
)

// Sequence is one episode in codes, the unit of training data: T+1 states
// z_0..z_T (each Coords() codes, slot-major) and the T actions between them
// (Actions[t] leads from z_t to z_{t+1}). Every t in 1..T is one training
// example: the window of at most Window states z_{t-w}..z_{t-1}, with their
// actions, predicts z_t.
type Sequence struct {
	Codes   [][]uint8
	Actions []trajectory.Action
}

// checkSequences validates training or evaluation data against c.
func (c *Config) checkSequences(seqs []Sequence) error {
	J := c.Coords()
	for i := range seqs {
		sq := &seqs[i]
		if len(sq.Codes) != len(sq.Actions)+1 {
			return fmt.Errorf("%w: sequence %d has %d states and %d actions, want one action fewer", ErrHistory, i, len(sq.Codes), len(sq.Actions))
		}
		for t, z := range sq.Codes {
			if len(z) != J {
				return fmt.Errorf("%w: sequence %d state %d has %d codes, want %d", ErrHistory, i, t, len(z), J)
			}
			for j, v := range z {
				if int(v) >= c.Codewords {
					return fmt.Errorf("%w: sequence %d state %d coordinate %d is %d, want < %d", ErrCode, i, t, j, v, c.Codewords)
				}
			}
		}
		for t := range sq.Actions {
			if err := c.checkAction(&sq.Actions[t]); err != nil {
				return fmt.Errorf("sequence %d action %d: %w", i, t, err)
			}
		}
	}
	return nil
}

// example is one training example: sequence ep, predicted state t >= 1.
type example struct{ ep, t int32 }

func examplesOf(seqs []Sequence) []example {
	var ex []example
	for i := range seqs {
		for t := 1; t < len(seqs[i].Codes); t++ {
			ex = append(ex, example{int32(i), int32(t)})
		}
	}
	return ex
}

// window returns the history of example e (at most win states, ending with
// z_{t-1} and u_{t-1}) in dst's storage, and the target state z_t. With
// noActions every action is replaced by the empty one (type 0, no position,
// no payload): the ablation without actions.
func window(dst History, seqs []Sequence, e example, win int, noActions bool) (History, Step) {
	sq := &seqs[e.ep]
	t := int(e.t)
	from := max(0, t-win)
	dst = dst[:0]
	for k := from; k < t; k++ {
		st := Step{Codes: sq.Codes[k], Action: sq.Actions[k]}
		if noActions {
			st.Action = trajectory.Action{}
		}
		dst = append(dst, st)
	}
	return dst, Step{Codes: sq.Codes[t]}
}

// fingerprint is a CRC-32C of the sequences' codes and actions: a
// checkpoint records its training data's, and resuming on other data is an
// error.
func fingerprint(seqs []Sequence) uint32 {
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	var b [8]byte
	for i := range seqs {
		binary.LittleEndian.PutUint32(b[:4], uint32(len(seqs[i].Codes)))
		h.Write(b[:4])
		for _, z := range seqs[i].Codes {
			h.Write(z)
		}
		for k := range seqs[i].Actions {
			hashAction(h, &seqs[i].Actions[k])
		}
	}
	return h.Sum32()
}

// hashAction writes a's fields to h in the fingerprint's layout.
func hashAction(h hash.Hash32, a *trajectory.Action) {
	var b [4]byte
	b[0] = byte(a.Type)
	b[1] = boolByte(a.HasPos) | boolByte(a.HasDelta)<<1
	h.Write(b[:2])
	for _, v := range []float32{a.X, a.Y, a.DX, a.DY} {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		h.Write(b[:])
	}
	h.Write(a.Payload)
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// order is the seeded data order: epoch e visits the examples in a
// permutation drawn from (seed, e), so step s's batch depends only on the
// seed and s, and a resumed run sees the same batches.
type order struct {
	seed  uint64
	n     int
	epoch int
	perm  []int32
}

// at returns the index of the example at global position pos.
func (o *order) at(pos int) int {
	e := pos / o.n
	if o.perm == nil || e != o.epoch {
		o.epoch = e
		o.perm = make([]int32, o.n)
		for i := range o.perm {
			o.perm[i] = int32(i)
		}
		rng := rand.New(rand.NewPCG(o.seed, uint64(e)))
		rng.Shuffle(o.n, func(i, j int) { o.perm[i], o.perm[j] = o.perm[j], o.perm[i] })
	}
	return int(o.perm[pos%o.n])
}

// InitOutputPriors sets a fresh model's output code bias to each
// coordinate's log marginal frequency in seqs (add-one-half smoothing,
// centred) and its copy-gate bias to the log-odds of a coordinate keeping its
// previous code: the order-0 prior and the copy rate the data shows, so that
// training starts from them instead of from uniform. It returns the copy
// rate. The error wraps ErrHistory or ErrCode.
func InitOutputPriors(m *Model, seqs []Sequence) (float64, error) {
	return InitOutputPriorsOn(m, Seqs(seqs))
}

// InitOutputPriorsOn is InitOutputPriors on any corpus, read through once.
func InitOutputPriorsOn(m *Model, data Corpus) (float64, error) {
	c := &m.cfg
	J, C := c.Coords(), c.Codewords
	counts := make([]float64, J*C)
	var same, total float64
	prev := make([]uint8, J)
	_, _, err := c.scanCorpus(data, func(_, t int, z []uint8) {
		for j, v := range z {
			counts[j*C+int(v)]++
		}
		if t > 0 {
			for j, v := range z {
				if prev[j] == v {
					same++
				}
			}
			total += float64(J)
		}
		copy(prev, z)
	})
	if err != nil {
		return 0, err
	}
	p := m.p
	for j := 0; j < J; j++ {
		row := counts[j*C : (j+1)*C]
		var mean float64
		for k := range row {
			row[k] = math.Log(row[k] + 0.5)
			mean += row[k]
		}
		mean /= float64(C)
		for k, v := range row {
			p.codeBias[j*C+k] = float32(v - mean)
		}
	}
	rate := 0.5
	if total > 0 {
		rate = min(max(same/total, 0.01), 0.99)
	}
	for j := range p.copyB {
		p.copyB[j] = float32(math.Log(rate / (1 - rate)))
	}
	return rate, nil
}
