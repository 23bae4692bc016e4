package codec

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/memowm/memowm/entropy"
	"github.com/memowm/memowm/internal/fileread"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// Reader reads a memory file: its header and index on Open, an episode's
// section only when it is decoded.
type Reader struct {
	path  string
	f     io.ReaderAt
	c     io.Closer // nil for OpenReaderAt
	size  int64
	hdr   *Header
	index []indexEntry
	nb    *Neighbours // set by CheckBundle for a mixed file

	// Compact makes Decode return episodes with Compact codes instead of
	// Codes: a long episode then takes a fraction of the memory
	// (trajectory.CodeRows).
	Compact bool
	// Threads is how many episodes of a Decode are decoded at once, each
	// on its own goroutine, between the batch's predictor calls (0:
	// GOMAXPROCS). The codes are the same for any number.
	Threads int
}

// EpisodeInfo is what the index says about one episode.
type EpisodeInfo struct {
	ID           int64   `json:"id"`
	Observations int     `json:"observations"`
	Kept         uint64  `json:"kept"`          // coordinates stored for t >= 1
	StateBits    float64 `json:"state_bits"`    // ideal bits of the states
	ActionBits   float64 `json:"action_bits"`   // ideal bits of the actions
	Bytes        int64   `json:"section_bytes"` // the section's size in the file
	Payload      int64   `json:"payload_bytes"` // of which packed z_0 and the coder stream
}

// Open reads the header, footer and index of the memory file at path.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("codec: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("codec: %w", err)
	}
	r, err := OpenReaderAt(f, st.Size(), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.c = f
	return r, nil
}

// OpenReaderAt is Open for size bytes of ra; name appears in errors.
func OpenReaderAt(ra io.ReaderAt, size int64, name string) (*Reader, error) {
	r, err := open(ra, size)
	if err != nil {
		return nil, fmt.Errorf("codec: %s: %w", name, err)
	}
	r.path = name
	return r, nil
}

func open(f io.ReaderAt, size int64) (*Reader, error) {
	var err error
	r := &Reader{f: f, size: size}
	if r.size < headerLen+footerLen {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrFormat, r.size)
	}
	hb := make([]byte, headerLen)
	if _, err := f.ReadAt(hb, 0); err != nil {
		return nil, err
	}
	if r.hdr, err = parseHeader(hb); err != nil {
		return nil, err
	}
	var foot [footerLen]byte
	if _, err := f.ReadAt(foot[:], r.size-footerLen); err != nil {
		return nil, err
	}
	if string(foot[16:]) != EndMagic {
		return nil, fmt.Errorf("%w: no end marker (truncated file?)", ErrFormat)
	}
	off, n := binary.LittleEndian.Uint64(foot[:]), binary.LittleEndian.Uint64(foot[8:])
	if off < headerLen || n > uint64(r.size) || off+n != uint64(r.size-footerLen) {
		return nil, fmt.Errorf("%w: index at %d+%d does not fit the file", ErrFormat, off, n)
	}
	ib := make([]byte, n)
	if _, err := f.ReadAt(ib, int64(off)); err != nil {
		return nil, err
	}
	if r.index, err = parseIndex(ib); err != nil {
		return nil, err
	}
	next := uint64(headerLen)
	for i, e := range r.index {
		if e.Offset != next || e.Length < sectionHead+sectionTail || e.Length > off-e.Offset || e.Observations == 0 {
			return nil, fmt.Errorf("%w: index entry %d (episode %d) is inconsistent", ErrFormat, i, e.ID)
		}
		next += e.Length
	}
	if next != off {
		return nil, fmt.Errorf("%w: sections end at %d, the index starts at %d", ErrFormat, next, off)
	}
	return r, nil
}

// Close closes the file (nothing for OpenReaderAt).
func (r *Reader) Close() error {
	if r.c == nil {
		return nil
	}
	return r.c.Close()
}

// Header returns the file's header.
func (r *Reader) Header() *Header { return r.hdr }

// Size is the file's size in bytes.
func (r *Reader) Size() int64 { return r.size }

// Episodes returns the index: one entry per episode, in file order.
func (r *Reader) Episodes() []EpisodeInfo {
	out := make([]EpisodeInfo, len(r.index))
	for i, e := range r.index {
		out[i] = EpisodeInfo{ID: e.ID, Observations: int(e.Observations), Kept: e.Kept,
			StateBits: float64(e.StateQ16) / 65536, ActionBits: float64(e.ActionQ16) / 65536, Bytes: int64(e.Length),
			Payload: int64(e.Length) - sectionHead - sectionTail}
	}
	return out
}

// Find returns the position of episode id in the file, or -1.
func (r *Reader) Find(id int64) int {
	for i, e := range r.index {
		if e.ID == id {
			return i
		}
	}
	return -1
}

// CheckBundle reports whether the file was written with bundle b; the error
// (wrapping ErrBundle) names both hashes. A file written with a risk policy
// takes its tables from the bundle here, so call it before Decode.
func (r *Reader) CheckBundle(b *model.Bundle) error {
	if h := b.Hash(); h != r.hdr.Bundle {
		return fmt.Errorf("codec: %s: %w: the file needs bundle %s, this one is %s",
			r.path, ErrBundle, hex.EncodeToString(r.hdr.Bundle[:]), hex.EncodeToString(h[:]))
	}
	if r.hdr.Mix {
		nb, err := NeighboursOf(b.OPQ)
		if err != nil {
			return fmt.Errorf("codec: %s: %w", r.path, err)
		}
		if !nb.fits(r.hdr) {
			return fmt.Errorf("codec: %s: %w: the bundle's quantizer does not fit the file's geometry", r.path, ErrFormat)
		}
		r.nb = nb
	}
	if r.hdr.Policy.Kind == model.Risk {
		if b.Policy.Kind != model.Risk {
			return fmt.Errorf("codec: %s: %w: the file uses a risk policy, the bundle has none", r.path, ErrFormat)
		}
		r.hdr.Policy = b.Policy.WithLambda(r.hdr.Policy.LambdaQ32)
	}
	return nil
}

// CheckSections reads every episode's section and checks its checksum and
// its agreement with the index, without decoding; the header and the index
// were checked by Open. It finds damage to the stored bytes; only Decode
// also checks the decoded codes against the writer's (a file that the
// bundle does not decode, or a writer's bug). It returns the positions of
// the damaged episodes (see Episodes), in file order, and the first one's
// error, naming it; nil and nil when all hold.
func (r *Reader) CheckSections() (damaged []int, first error) {
	for i := range r.index {
		if _, _, _, err := r.section(i); err != nil {
			damaged = append(damaged, i)
			if first == nil {
				first = r.epErr(i, err)
			}
		}
	}
	return damaged, first
}

// section checks episode i's section and returns its packed initial state
// (nil in a mixed file, whose stream holds it), a reader of its coder stream
// and its codes CRC. The section is read twice, to check its CRC and then
// as it is decoded, and never held whole.
func (r *Reader) section(i int) (z0 []uint8, stream io.Reader, codesCRC uint32, err error) {
	e := r.index[i]
	off, n := int64(e.Offset), int64(e.Length)
	var head [sectionHead]byte
	var tail [sectionTail]byte
	if _, err := r.f.ReadAt(head[:], off); err != nil {
		return nil, nil, 0, err
	}
	if _, err := r.f.ReadAt(tail[:], off+n-sectionTail); err != nil {
		return nil, nil, 0, err
	}
	crc := crc32.New(castagnoli)
	if _, err := io.CopyBuffer(crc, io.NewSectionReader(r.f, off, n-4), make([]byte, 64<<10)); err != nil {
		return nil, nil, 0, err
	}
	if got, want := binary.LittleEndian.Uint32(tail[4:]), crc.Sum32(); got != want {
		return nil, nil, 0, fmt.Errorf("%w: section checksum mismatch", ErrFormat)
	}
	id := int64(binary.LittleEndian.Uint64(head[:]))
	obs := binary.LittleEndian.Uint32(head[8:])
	plen := int64(binary.LittleEndian.Uint32(head[12:]))
	h := r.hdr
	packed := int64(h.packedInitial())
	if id != e.ID || obs != e.Observations || sectionHead+plen+sectionTail != n || plen < packed {
		return nil, nil, 0, fmt.Errorf("%w: section does not match the index", ErrFormat)
	}
	if !h.Mix {
		pz := make([]byte, packed)
		if _, err := r.f.ReadAt(pz, off+sectionHead); err != nil {
			return nil, nil, 0, err
		}
		z0 = make([]uint8, h.Coords())
		if err := unpackCodes(z0, pz, h.codeBits(), h.Codewords); err != nil {
			return nil, nil, 0, err
		}
	}
	return z0, io.NewSectionReader(r.f, off+sectionHead+packed, plen-packed), binary.LittleEndian.Uint32(tail[:]), nil
}

// Decode decodes the episodes at positions which (see Find; nil: all) as
// one predictor batch and returns them with codes and actions (Compact
// codes with r.Compact). p must run the bundle that CheckBundle accepts.
// Every episode's codes are checked against the writer's CRC; an error
// names the episode.
func (r *Reader) Decode(p worldmodel.Predictor, which []int) ([]*trajectory.Episode, error) {
	h := r.hdr
	if err := checkPredictor(p, h); err != nil {
		return nil, err
	}
	if err := h.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("codec: %s: %w (call CheckBundle first)", r.path, err)
	}
	if which == nil {
		which = make([]int, len(r.index))
		for i := range which {
			which[i] = i
		}
	}
	n := len(which)
	threads := threadsFor(r.Threads, n)
	window := p.Config().MaxHistory
	ds := make([]*epReader, n)
	defer func() {
		for _, d := range ds {
			if d != nil && d.mix != nil {
				d.mix.release()
			}
		}
	}()
	for k := range ds {
		ds[k] = &epReader{r: r, i: which[k]}
	}
	if err := forEach(n, threads, func(k int) error { return ds[k].start(window) }); err != nil {
		return nil, err
	}
	maxObs := 0
	loops := make([]*loop, n)
	for k, d := range ds {
		maxObs = max(maxObs, d.obs)
		loops[k] = d.loop
	}
	cfg := p.Config()
	want := make([]bool, n)
	pi := make([]int, n) // episode k's prediction is preds[pi[k]]
	var preds []worldmodel.Prediction
	var hs []worldmodel.History
	var err error
	for t := 1; t < maxObs; t++ {
		m := 0
		for k, d := range ds {
			want[k] = t < d.obs
			if !want[k] {
				continue
			}
			if err := d.action(t, &cfg); err != nil {
				return nil, err
			}
			pi[k] = m
			m++
		}
		if preds, hs, err = predictBatch(p, loops, want, preds, hs); err != nil {
			return nil, r.predictErr(p, loops, want, which, t, err)
		}
		err := forEach(n, threads, func(k int) error {
			if !want[k] {
				return nil
			}
			return ds[k].state(t, &preds[pi[k]])
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]*trajectory.Episode, n)
	err = forEach(n, threads, func(k int) error {
		ep, err := ds[k].finish()
		out[k] = ep
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// epReader is one episode's decoder state in Decode: only the goroutine
// decoding the episode touches it.
type epReader struct {
	r    *Reader
	i    int // the episode's position in the file
	obs  int
	crc  uint32
	loop *loop
	dec  *entropy.Decoder
	act  *actionCoder
	rep  *repeatCoder
	mix  *mixCoder
	cum  []uint32
}

// start checks the episode's section and decodes z_0.
func (d *epReader) start(window int) error {
	r, i := d.r, d.i
	h := r.hdr
	if i < 0 || i >= len(r.index) {
		return fmt.Errorf("codec: no episode at position %d", i)
	}
	z0, stream, crc, err := r.section(i)
	if err != nil {
		return r.epErr(i, err)
	}
	if d.dec, err = entropy.NewDecoder(stream); err != nil {
		return r.epErr(i, fmt.Errorf("%w: %w", ErrFormat, err))
	}
	d.act = newActionCoder()
	if h.SlotRepeat {
		d.rep = newRepeatCoder(h.Slots, h.Subspaces)
	}
	d.obs = int(r.index[i].Observations)
	l := newLoop(h, window, nil)
	d.loop = l
	l.actions = make([]trajectory.Action, 0, d.obs-1)
	if h.Mix {
		if r.nb == nil {
			return fmt.Errorf("codec: %s: the mixing prior needs the bundle's quantizer (call CheckBundle first)", r.path)
		}
		m := newMixCoder(h.Slots, h.Subspaces, h.Codewords, h.codeBits(), r.nb, d.obs)
		d.mix = m
		m.noCost = true // nothing reads it
		if _, err := m.codeInitial(bitDecoder{d.dec}, nil, l.next()); err != nil {
			return r.epErr(i, fmt.Errorf("%w: step 0: %w", ErrFormat, err))
		}
		m.start(l.next())
	} else {
		copy(l.next(), z0)
	}
	l.push(nil)
	d.crc = crc
	return nil
}

// action decodes u_{t-1}, before the prediction of state t.
func (d *epReader) action(t int, cfg *worldmodel.Config) error {
	a, err := d.act.decode(d.dec)
	if err == nil {
		// The writer codes only actions its world model takes.
		err = cfg.CheckAction(&a)
	}
	if err != nil {
		return d.r.epErr(d.i, fmt.Errorf("%w: step %d action: %w", ErrFormat, t, err))
	}
	d.loop.actions = append(d.loop.actions, a)
	return nil
}

// state decodes state t under the prediction pr.
func (d *epReader) state(t int, pr *worldmodel.Prediction) error {
	r, l := d.r, d.loop
	h := r.hdr
	J, prec := h.Coords(), h.Precision
	prev, rec := l.row(t-1), l.next()
	if mx := d.mix; mx != nil {
		if _, err := mx.codeState(bitDecoder{d.dec}, pr, prec, &l.actions[t-1], t, l.recon, nil, prev, rec, mixKeeper(h.Policy)); err != nil {
			return r.epErr(d.i, fmt.Errorf("%w: step %d: %w", ErrFormat, t, err))
		}
		l.push(nil)
		return nil
	}
	rp := d.rep
	if rp != nil {
		for sl := range h.Slots {
			same, err := rp.decode(d.dec, sl)
			if err != nil {
				return r.epErr(d.i, fmt.Errorf("%w: step %d slot %d repeat flag: %w", ErrFormat, t, sl, err))
			}
			if same {
				rp.copySlot(rec, prev, sl)
			}
		}
	}
	for j := 0; j < J; j++ {
		if rp != nil && rp.repeats(j) {
			continue
		}
		if !h.Policy.Keep(j, pr.Entropy[j]) {
			rec[j] = pr.Mode[j]
			continue
		}
		d.cum = entropy.CumulativeTo(d.cum, pr.Table(j))
		s, err := d.dec.DecodeSymbol(d.cum, prec)
		if err != nil {
			return r.epErr(d.i, fmt.Errorf("%w: step %d coordinate %d: %w", ErrFormat, t, j, err))
		}
		rec[j] = uint8(s)
	}
	l.push(nil)
	return nil
}

// finish checks the end of the stream and the codes' CRC and returns the
// decoded episode.
func (d *epReader) finish() (*trajectory.Episode, error) {
	r, l := d.r, d.loop
	if err := d.dec.Finish(); err != nil {
		return nil, r.epErr(d.i, fmt.Errorf("%w: %w", ErrFormat, err))
	}
	if l.crc != d.crc {
		return nil, r.epErr(d.i, ErrDesync)
	}
	ep := &trajectory.Episode{ID: r.index[d.i].ID, Actions: l.actions}
	if r.Compact {
		ep.Compact = l.recon
	} else {
		ep.Codes = l.codes(nil)
	}
	return ep, nil
}

// predictErr names the episode whose decoded history the predictor refused
// at step t (a decoded action or code the writer cannot have produced): it
// predicts each wanted episode alone to find it.
func (r *Reader) predictErr(p worldmodel.Predictor, loops []*loop, want []bool, which []int, t int, err error) error {
	one := make([]bool, len(loops))
	for k := range loops {
		if !want[k] {
			continue
		}
		one[k] = true
		_, _, e := predictBatch(p, loops, one, nil, nil)
		one[k] = false
		if e != nil {
			return r.epErr(which[k], fmt.Errorf("%w: step %d: %w", ErrFormat, t, e))
		}
	}
	return fmt.Errorf("codec: %s: step %d: %w: %w", r.path, t, ErrFormat, err)
}

func (r *Reader) epErr(i int, err error) error {
	return fmt.Errorf("codec: %s: episode %d: %w", r.path, r.index[i].ID, err)
}

// IsFile reports whether the file at path starts with the memory-file magic.
func IsFile(path string) bool { return fileread.HasMagic(path, Magic) }
