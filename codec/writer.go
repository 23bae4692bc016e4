package codec

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memowm/memowm/internal/atomicfile"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// Writer writes a memory file. Episodes go in with Write, in batches that run
// through the predictor together; Close writes the index and renames the
// temporary file to its final name. A Writer is not safe for concurrent use.
type Writer struct {
	path  string
	tmp   *os.File
	bw    *bufio.Writer
	hdr   *Header
	pred  worldmodel.Predictor
	off   uint64
	index []indexEntry
	ids   map[int64]bool
	done  bool
	err   error       // sticky
	nb    *Neighbours // the bundle's neighbour order, with Options.Mix

	// KeepRecon makes Write return every episode's reconstructed codes in
	// EpisodeStats.Recon (the codes the decoder will return).
	KeepRecon bool
	// Threads is how many episodes of a Write are coded at once, each on
	// its own goroutine, between the batch's predictor calls (0: GOMAXPROCS).
	// The file's bytes are the same for any number.
	Threads int
}

// Create starts a memory file at path for episodes coded with bundle b, the
// predictor p (which must run b's world model) and the retention policy.
// Nothing appears under path until Close succeeds.
func Create(path string, b *model.Bundle, p worldmodel.Predictor, policy model.Policy) (*Writer, error) {
	return CreateWith(path, b, p, policy, Options{})
}

// Options are coding choices a memory file records in its header.
type Options struct {
	// SlotRepeat codes one repeat flag per slot before each predicted state
	// (default off): a slot whose codes all equal the previous
	// reconstructed state's is copied without consulting the model. It
	// pays on recorded screens, where most regions repeat (NetHack: 0.57x
	// the rate without), and a little on the sim world, whose encoder
	// jitter changes most codes every step.
	SlotRepeat bool
	// Mix codes every predicted state under the mixing prior (mix.go): the
	// world model's table is one input of an adaptive, exact logistic mix
	// with adaptive counts and long-range copy; with a lossy policy the rule
	// reads the mixed distribution. It replaces SlotRepeat.
	Mix bool
}

// CreateWith is Create with coding options.
func CreateWith(path string, b *model.Bundle, p worldmodel.Predictor, policy model.Policy, opt Options) (*Writer, error) {
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	if err := atomicfile.CheckTarget(path); err != nil {
		return nil, fmt.Errorf("codec: %w", err)
	}
	if b.Hash() == ([32]byte{}) {
		return nil, fmt.Errorf("codec: the bundle has no identity yet (read or save it first)")
	}
	hdr := headerFor(b, policy)
	hdr.SlotRepeat = opt.SlotRepeat
	hdr.Mix = opt.Mix
	if err := hdr.checkCoding(); err != nil {
		return nil, err
	}
	if err := checkPrior(policy, opt.Mix); err != nil {
		return nil, err
	}
	if err := checkPredictor(p, hdr); err != nil {
		return nil, err
	}
	if err := policy.CheckCoords(hdr.Coords()); err != nil {
		return nil, err
	}
	var nb *Neighbours
	if opt.Mix {
		var err error
		if nb, err = NeighboursOf(b.OPQ); err != nil {
			return nil, err
		}
	}
	// Registered with atomicfile: an interrupt removes it, and no rename
	// happens after one.
	tmp, err := atomicfile.CreateTemp(path)
	if err != nil {
		return nil, fmt.Errorf("codec: %w", err)
	}
	w := &Writer{path: path, tmp: tmp, bw: bufio.NewWriterSize(tmp, 1<<20), hdr: hdr, pred: p, ids: map[int64]bool{}, nb: nb}
	h := hdr.marshal()
	w.bw.Write(h)
	w.off = uint64(len(h))
	return w, nil
}

// EpisodeStats is the accounting of one episode (DESIGN.md Eq. 7).
type EpisodeStats struct {
	ID           int64   `json:"id"`
	Observations int     `json:"observations"`
	Kept         uint64  `json:"kept"`          // coordinates stored for t >= 1
	Coords       uint64  `json:"coords"`        // coordinates predicted for t >= 1
	StateBits    float64 `json:"state_bits"`    // ideal: z_0 raw + sum of -log2 p of kept codes
	ActionBits   float64 `json:"action_bits"`   // ideal: B_aux, the actions
	Bytes        int64   `json:"section_bytes"` // physical: the episode's section in the file
	Payload      int64   `json:"payload_bytes"` // physical: packed z_0 and the coder stream, in bytes
	Omitted      uint64  `json:"omitted"`       // coordinates filled instead of stored
	Recovered    uint64  `json:"recovered"`     // omitted coordinates whose fill equals the true code
	Repeated     uint64  `json:"repeated"`      // kept coordinates copied by a slot repeat flag (SlotRepeat)

	Recon [][]uint8 `json:"-"` // z~_0..z~_T, with Writer.KeepRecon (a state equal to the input shares its slice: read only)
}

// Write codes the episodes (codes content) as one predictor batch and
// appends them to the file. Episode IDs must be unique in a file.
func (w *Writer) Write(eps []*trajectory.Episode) ([]EpisodeStats, error) {
	if w.err != nil {
		return nil, w.err
	}
	if w.done {
		return nil, fmt.Errorf("codec: write after Close")
	}
	stats, err := w.write(eps)
	if err != nil {
		w.err = err
	}
	return stats, err
}

func (w *Writer) write(eps []*trajectory.Episode) ([]EpisodeStats, error) {
	for _, ep := range eps {
		if w.ids[ep.ID] {
			return nil, fmt.Errorf("codec: episode %d appears twice", ep.ID)
		}
		w.ids[ep.ID] = true
	}
	// A long episode's coder stream waits in a file beside the output.
	enc, err := encodeBatch(w.pred, w.hdr, w.hdr.Policy, eps, w.KeepRecon, SimOptions{Neighbours: w.nb}, streamBuf{dir: filepath.Dir(w.tmp.Name())}, w.Threads)
	if err != nil {
		return nil, err
	}
	defer func() {
		for i := range enc {
			enc[i].stream.Close()
		}
	}()
	stats := make([]EpisodeStats, len(enc))
	for i := range enc {
		e := &enc[i]
		if err := e.writeTo(w.bw); err != nil {
			return nil, fmt.Errorf("codec: %w", err)
		}
		stats[i] = e.stats
		w.index = append(w.index, indexEntry{
			ID: e.stats.ID, Offset: w.off, Length: uint64(e.size()), Observations: uint32(e.stats.Observations),
			Kept: e.stats.Kept, StateQ16: e.stateQ16, ActionQ16: e.actionQ16,
		})
		w.off += uint64(e.size())
	}
	return stats, nil
}

// checkEpisode checks that ep holds codes (Codes or Compact) of the file's
// geometry.
func checkEpisode(ep *trajectory.Episode, h *Header) error {
	if ep.Codes == nil && ep.Compact == nil || ep.States != nil {
		return fmt.Errorf("codec: episode %d holds no codes (quantize states first)", ep.ID)
	}
	if ep.Codes != nil && ep.Compact != nil {
		return fmt.Errorf("codec: episode %d holds both Codes and Compact codes", ep.ID)
	}
	n := ep.Len()
	if n == 0 {
		return fmt.Errorf("codec: episode %d has no observations", ep.ID)
	}
	if len(ep.Actions) != n-1 {
		return fmt.Errorf("codec: episode %d has %d actions for %d observations", ep.ID, len(ep.Actions), n)
	}
	var buf []uint8
	for t := range n {
		z := ep.CodesAt(buf, t)
		if ep.Compact != nil {
			buf = z
		}
		if len(z) != h.Coords() {
			return fmt.Errorf("codec: episode %d step %d has %d codes, want %d", ep.ID, t, len(z), h.Coords())
		}
		for j, c := range z {
			if int(c) >= h.Codewords {
				return fmt.Errorf("codec: episode %d step %d coordinate %d: code %d is outside the %d codewords", ep.ID, t, j, c, h.Codewords)
			}
		}
	}
	return nil
}

// Close writes the index and the footer, syncs, and renames the file to its
// final name. After an error nothing is left under that name.
func (w *Writer) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	if w.err != nil {
		w.Abort()
		return w.err
	}
	idx := marshalIndex(w.index)
	w.bw.Write(idx)
	var foot [footerLen]byte
	binary.LittleEndian.PutUint64(foot[:], w.off)
	binary.LittleEndian.PutUint64(foot[8:], uint64(len(idx)))
	copy(foot[16:], EndMagic)
	w.bw.Write(foot[:])
	err := w.bw.Flush()
	if err == nil {
		err = w.tmp.Sync()
	}
	if cerr := w.tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		atomicfile.Remove(w.tmp.Name())
		return fmt.Errorf("codec: %w", err)
	}
	if err := atomicfile.Commit(w.tmp.Name(), w.path); err != nil { // mode 0644
		return fmt.Errorf("codec: %s: %w", w.path, err)
	}
	return nil
}

// Abort discards the file.
func (w *Writer) Abort() {
	w.done = true
	w.tmp.Close()
	atomicfile.Remove(w.tmp.Name())
}
