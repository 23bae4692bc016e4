package corpus

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/memowm/memowm/trajectory"
)

// recordHead is the fixed part of an action's record: type, flags, X, Y,
// DX, DY; the payload follows.
const recordHead = 2 + 4*4

// File is training data in a file (see the package doc). It implements
// worldmodel.Corpus.
type File struct {
	f     *os.File
	named string // the file's name while it still has one (unlinking failed)
	width int
	seqs  []seq
	size  int64
	trans int
}

// seq is where sequence i lies: n states at codes, its n offsets (n-1
// actions and the end) at offs, its records after them.
type seq struct {
	n           int64
	codes, offs int64
}

// Build writes the episodes that next returns, until it returns io.EOF,
// into a new File in dir ("" for the system's temporary folder). Every
// episode holds codes (Codes or Compact) of width codes each, at least one
// state and one action fewer. progress, when not nil, is called after each
// episode with the sequences and states so far.
func Build(dir string, width int, next func() (*trajectory.Episode, error), progress func(seqs, states int)) (cf *File, err error) {
	if width <= 0 {
		return nil, fmt.Errorf("corpus: width %d, want > 0", width)
	}
	f, err := os.CreateTemp(dir, ".memowm-corpus-*")
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	out := &File{f: f, width: width}
	if os.Remove(f.Name()) != nil {
		out.named = f.Name()
	}
	defer func() {
		if err != nil {
			out.Close()
			cf = nil
		}
	}()
	cf = out
	w := bufio.NewWriterSize(f, 1<<20)
	var off int64
	var buf []uint8
	var states int
	var offs, recs []byte
	for {
		ep, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		n := ep.Len()
		switch {
		case ep.States != nil:
			return nil, fmt.Errorf("corpus: episode %d holds states, want codes", ep.ID)
		case n < 1:
			return nil, fmt.Errorf("corpus: episode %d has no states", ep.ID)
		case len(ep.Actions) != n-1:
			return nil, fmt.Errorf("corpus: episode %d has %d states and %d actions, want one action fewer", ep.ID, n, len(ep.Actions))
		}
		s := seq{n: int64(n), codes: off}
		for t := range n {
			row := ep.CodesAt(buf, t)
			if ep.Compact != nil {
				buf = row // CodesAt wrote into it; Codes' rows are the caller's
			}
			if len(row) != width {
				return nil, fmt.Errorf("corpus: episode %d state %d has %d codes, want %d", ep.ID, t, len(row), width)
			}
			if _, err := w.Write(row); err != nil {
				return nil, fmt.Errorf("corpus: %w", err)
			}
		}
		off += int64(n) * int64(width)
		s.offs = off
		offs, recs = offs[:0], recs[:0]
		for k := range ep.Actions {
			offs = binary.LittleEndian.AppendUint32(offs, uint32(len(recs)))
			recs = appendRecord(recs, &ep.Actions[k])
			if uint64(len(recs)) > math.MaxUint32 {
				return nil, fmt.Errorf("corpus: episode %d: its actions take over 4 GiB", ep.ID)
			}
		}
		offs = binary.LittleEndian.AppendUint32(offs, uint32(len(recs)))
		for _, b := range [][]byte{offs, recs} {
			if _, err := w.Write(b); err != nil {
				return nil, fmt.Errorf("corpus: %w", err)
			}
		}
		off += int64(len(offs) + len(recs))
		out.seqs = append(out.seqs, s)
		out.trans += n - 1
		states += n
		if progress != nil {
			progress(len(out.seqs), states)
		}
	}
	if err := w.Flush(); err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	out.size = off
	return out, nil
}

func appendRecord(b []byte, a *trajectory.Action) []byte {
	var flags byte
	if a.HasPos {
		flags |= 1
	}
	if a.HasDelta {
		flags |= 2
	}
	b = append(b, byte(a.Type), flags)
	for _, v := range []float32{a.X, a.Y, a.DX, a.DY} {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return append(b, a.Payload...)
}

// Sequences is the number of sequences.
func (c *File) Sequences() int { return len(c.seqs) }

// States is the number of states of sequence i.
func (c *File) States(i int) int { return int(c.seqs[i].n) }

// Transitions is the number of transitions (states after the first).
func (c *File) Transitions() int { return c.trans }

// Size is the file's size in bytes.
func (c *File) Size() int64 { return c.size }

// Read copies states from..to-1 of sequence i into codes (width codes
// each) and appends the actions leading from states from..min(to, n-1)-1
// to acts; their payloads share one new buffer.
func (c *File) Read(codes []uint8, acts []trajectory.Action, i, from, to int) ([]trajectory.Action, error) {
	if c.f == nil {
		return acts, errors.New("corpus: read after Close")
	}
	if i < 0 || i >= len(c.seqs) {
		return acts, fmt.Errorf("corpus: sequence %d of %d", i, len(c.seqs))
	}
	s := &c.seqs[i]
	if from < 0 || int64(to) > s.n || from >= to {
		return acts, fmt.Errorf("corpus: states %d..%d of sequence %d, which has %d", from, to, i, s.n)
	}
	if len(codes) < (to-from)*c.width {
		return acts, fmt.Errorf("corpus: %d codes do not hold %d states of %d", len(codes), to-from, c.width)
	}
	if err := c.readAt(codes[:(to-from)*c.width], s.codes+int64(from)*int64(c.width), i); err != nil {
		return acts, err
	}
	k1 := min(int64(to), s.n-1)
	if int64(from) >= k1 {
		return acts, nil
	}
	nk := int(k1) - from
	ob := make([]byte, 4*(nk+1))
	if err := c.readAt(ob, s.offs+4*int64(from), i); err != nil {
		return acts, err
	}
	lo := binary.LittleEndian.Uint32(ob)
	hi := binary.LittleEndian.Uint32(ob[4*nk:])
	if hi < lo || hi-lo < uint32(nk*recordHead) {
		return acts, fmt.Errorf("corpus: sequence %d: damaged action table", i)
	}
	recs := make([]byte, hi-lo)
	if err := c.readAt(recs, s.offs+4*(s.n)+int64(lo), i); err != nil {
		return acts, err
	}
	for k := 0; k < nk; k++ {
		a := binary.LittleEndian.Uint32(ob[4*k:]) - lo
		b := binary.LittleEndian.Uint32(ob[4*k+4:]) - lo
		if b < a || b-a < recordHead || b > uint32(len(recs)) {
			return acts, fmt.Errorf("corpus: sequence %d action %d: damaged record", i, from+k)
		}
		r := recs[a:b]
		act := trajectory.Action{Type: trajectory.ActionType(r[0]), HasPos: r[1]&1 != 0, HasDelta: r[1]&2 != 0,
			X: f32(r[2:]), Y: f32(r[6:]), DX: f32(r[10:]), DY: f32(r[14:])}
		if len(r) > recordHead {
			act.Payload = r[recordHead:len(r):len(r)]
		}
		acts = append(acts, act)
	}
	return acts, nil
}

func f32(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

func (c *File) readAt(p []byte, off int64, i int) error {
	if _, err := c.f.ReadAt(p, off); err != nil {
		return fmt.Errorf("corpus: sequence %d: %w", i, err)
	}
	return nil
}

// Close releases the file (and removes it, where unlinking at creation
// failed).
func (c *File) Close() error {
	if c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	if c.named != "" {
		if rerr := os.Remove(c.named); err == nil {
			err = rerr
		}
	}
	return err
}
