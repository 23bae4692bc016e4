package worldmodel

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/memowm/memowm/trajectory"
)

// Corpus is training or evaluation data read a window at a time, so that it
// need not be held in memory: Seqs holds it in memory, package corpus in a
// file. Sequence i has States(i) states z_0..z_T and T actions, as a
// Sequence does.
type Corpus interface {
	// Sequences is the number of sequences.
	Sequences() int
	// States is the number of states of sequence i.
	States(i int) int
	// Read copies states from..to-1 of sequence i (0 <= from < to <=
	// States(i)) into codes, one code vector after another, and appends
	// to acts the actions leading from states from..min(to, States(i)-1)-1.
	// An action's Payload may share memory with the corpus: read only.
	Read(codes []uint8, acts []trajectory.Action, i, from, to int) ([]trajectory.Action, error)
}

// Seqs is a Corpus held in memory.
type Seqs []Sequence

// EpisodeSeqs is the corpus of episodes' codes (Codes or Compact, which is
// unpacked) and actions.
func EpisodeSeqs(eps []*trajectory.Episode) Seqs {
	s := make(Seqs, len(eps))
	for i, ep := range eps {
		codes := ep.Codes
		if codes == nil {
			codes = make([][]uint8, ep.Len())
			for t := range codes {
				codes[t] = ep.CodesAt(nil, t)
			}
		}
		s[i] = Sequence{Codes: codes, Actions: ep.Actions}
	}
	return s
}

// Sequences implements Corpus.
func (s Seqs) Sequences() int { return len(s) }

// States implements Corpus.
func (s Seqs) States(i int) int { return len(s[i].Codes) }

// Read implements Corpus.
func (s Seqs) Read(codes []uint8, acts []trajectory.Action, i, from, to int) ([]trajectory.Action, error) {
	sq := &s[i]
	if from < 0 || to > len(sq.Codes) || from >= to {
		return acts, fmt.Errorf("%w: states %d..%d of sequence %d, which has %d", ErrHistory, from, to, i, len(sq.Codes))
	}
	o := 0
	for k := from; k < to; k++ {
		o += copy(codes[o:], sq.Codes[k])
	}
	return append(acts, sq.Actions[from:min(to, len(sq.Actions))]...), nil
}

// scanChunk is how many states a pass over a corpus reads at a time.
const scanChunk = 64

// scanCorpus reads every sequence of data once, in order, a chunk of states
// at a time: it checks every code and action against c and returns the
// fingerprint (the same as fingerprint's for the same sequences), the
// examples, and calls each (when not nil) with every state in order.
func (c *Config) scanCorpus(data Corpus, each func(i, t int, z []uint8)) (uint32, []example, error) {
	if s, ok := data.(Seqs); ok {
		if err := c.checkSequences(s); err != nil {
			return 0, nil, err
		}
		if each != nil {
			for i := range s {
				for t, z := range s[i].Codes {
					each(i, t, z)
				}
			}
		}
		return fingerprint(s), examplesOf(s), nil
	}
	J := c.Coords()
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	var b [8]byte
	codes := make([]uint8, scanChunk*J)
	var acts []trajectory.Action
	var ex []example
	for i := range data.Sequences() {
		n := data.States(i)
		if n < 1 {
			return 0, nil, fmt.Errorf("%w: sequence %d has no states", ErrHistory, i)
		}
		binary.LittleEndian.PutUint32(b[:4], uint32(n))
		h.Write(b[:4])
		// The codes of the whole sequence, then its actions (fingerprint's
		// order): the actions are read again in a second pass.
		for lo := 0; lo < n; lo += scanChunk {
			hi := min(lo+scanChunk, n)
			var err error
			if acts, err = data.Read(codes, acts[:0], i, lo, hi); err != nil {
				return 0, nil, fmt.Errorf("sequence %d: %w", i, err)
			}
			if want := min(hi, n-1) - lo; len(acts) != max(want, 0) {
				return 0, nil, fmt.Errorf("%w: sequence %d: %d actions from state %d, want %d", ErrHistory, i, len(acts), lo, max(want, 0))
			}
			h.Write(codes[:(hi-lo)*J])
			for t := lo; t < hi; t++ {
				z := codes[(t-lo)*J : (t-lo+1)*J]
				for j, v := range z {
					if int(v) >= c.Codewords {
						return 0, nil, fmt.Errorf("%w: sequence %d state %d coordinate %d is %d, want < %d", ErrCode, i, t, j, v, c.Codewords)
					}
				}
				if t > 0 {
					ex = append(ex, example{int32(i), int32(t)})
				}
				if each != nil {
					each(i, t, z)
				}
				if t-lo < len(acts) {
					if err := c.checkAction(&acts[t-lo]); err != nil {
						return 0, nil, fmt.Errorf("sequence %d action %d: %w", i, t, err)
					}
				}
			}
		}
		for lo := 0; lo < n-1; lo += scanChunk {
			hi := min(lo+scanChunk, n-1)
			var err error
			if acts, err = data.Read(codes, acts[:0], i, lo, hi); err != nil {
				return 0, nil, fmt.Errorf("sequence %d: %w", i, err)
			}
			for k := range acts {
				hashAction(h, &acts[k])
			}
		}
	}
	return h.Sum32(), ex, nil
}

// windowBuf holds one example's window read from a Corpus that is not in
// memory: the codes of its states and target, and its actions.
type windowBuf struct {
	codes []uint8
	acts  []trajectory.Action
}

// readWindow is window for any corpus: from Seqs it takes the states in
// place, from others it reads them into wb (grown as needed).
func readWindow(dst History, wb *windowBuf, data Corpus, J int, e example, win int, noActions bool) (History, Step, error) {
	if s, ok := data.(Seqs); ok {
		h, target := window(dst, s, e, win, noActions)
		return h, target, nil
	}
	t := int(e.t)
	from := max(0, t-win)
	n := t + 1 - from
	if len(wb.codes) < n*J {
		wb.codes = make([]uint8, (win+1)*J)
	}
	var err error
	if wb.acts, err = data.Read(wb.codes, wb.acts[:0], int(e.ep), from, t+1); err != nil {
		return dst, Step{}, fmt.Errorf("sequence %d: %w", e.ep, err)
	}
	if len(wb.acts) < t-from {
		return dst, Step{}, fmt.Errorf("%w: sequence %d: %d actions from state %d, want %d", ErrHistory, e.ep, len(wb.acts), from, t-from)
	}
	dst = dst[:0]
	for k := from; k < t; k++ {
		st := Step{Codes: wb.codes[(k-from)*J : (k-from+1)*J], Action: wb.acts[k-from]}
		if noActions {
			st.Action = trajectory.Action{}
		}
		dst = append(dst, st)
	}
	return dst, Step{Codes: wb.codes[(t-from)*J : (t-from+1)*J]}, nil
}

// First is the corpus of data's first n sequences (all of them when n is
// at least data.Sequences()), read from data itself.
func First(data Corpus, n int) Corpus {
	if n >= data.Sequences() {
		return data
	}
	return firstN{data, max(n, 0)}
}

type firstN struct {
	Corpus
	n int
}

func (f firstN) Sequences() int { return f.n }

// Transitions is the number of transitions of data: each sequence's
// states but its first.
func Transitions(data Corpus) int {
	n := 0
	for i := range data.Sequences() {
		n += max(data.States(i)-1, 0)
	}
	return n
}
