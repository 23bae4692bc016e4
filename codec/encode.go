package codec

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/memowm/memowm/model"

	"github.com/memowm/memowm/entropy"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// Keeper is a retention rule: whether coordinate j, whose predictive table
// has entropy hQ16 (Q16 bits), is stored. It must decide from its arguments
// and its own fixed state alone. model.Policy is the Keeper that files use.
type Keeper interface {
	Keep(j int, hQ16 uint32) bool
}

// encoded is one episode coded by encodeBatch: its section is head,
// stream, tail.
type encoded struct {
	stats     EpisodeStats
	head      []byte     // id, observations, payload length, packed z_0 (not in a mixed file)
	stream    *streamBuf // the coder stream (closed by whoever writes the section)
	tail      [sectionTail]byte
	stateQ16  uint64 // ideal bits of the states, Q16, z_0 included
	actionQ16 uint64 // ideal bits of the actions, Q16
}

// size is the section's length in bytes.
func (e *encoded) size() int { return len(e.head) + e.stream.Len() + len(e.tail) }

// writeTo writes the section to w.
func (e *encoded) writeTo(w io.Writer) error {
	if _, err := w.Write(e.head); err != nil {
		return err
	}
	if _, err := e.stream.WriteTo(w); err != nil {
		return err
	}
	_, err := w.Write(e.tail[:])
	return err
}

// SimOptions change Simulate's loop for comparisons the file format cannot
// express (a decoder could not follow them).
type SimOptions struct {
	// FillPrevious fills an omitted coordinate with the previous
	// reconstructed code instead of the model's mode.
	FillPrevious bool
	// TeacherForced predicts from the true history instead of the
	// reconstructed one.
	TeacherForced bool
	// SlotRepeat codes a repeat flag per slot before each state, as a
	// memory file written with Options.SlotRepeat does.
	SlotRepeat bool
	// Mix codes every state under the mixing prior, as a memory file
	// written with Options.Mix does.
	Mix bool
	// Neighbours is the bundle's neighbour order (NeighboursOf its
	// quantizer), which Mix needs.
	Neighbours *Neighbours
	// MixWithout leaves parts of the mixing prior out (ablations; no file
	// can hold them).
	MixWithout MixPart
	// Observe, with Mix, receives the entropy (Q16 bits) and mode of the
	// mixed distribution at every coordinate the retention rule decides
	// on: every coordinate of a slot that does not repeat, at steps t >= 1
	// of episode ep (its index in the batch). With Observe set, the
	// distribution is computed even under a lossless policy, as a lossy
	// writer computes it, so the loop is the one a lossy writer runs.
	Observe func(ep, t, j int, hQ16 uint32, mode uint8)
	// Threads is how many episodes are coded at once, each on its own
	// goroutine, after each step's predictor call; the results are the
	// same for any number. 0 means GOMAXPROCS when the retention rule is a
	// model.Policy and Observe is nil, and 1 otherwise: with more than 1,
	// the rule and Observe are called from several goroutines (each
	// episode's calls in order, different episodes' interleaved), so they
	// must be safe for that and must not depend on the order of calls
	// across episodes.
	Threads int
}

// keepEvery keeps every coordinate without being a lossless Policy, so the
// mixing prior still computes each coordinate's mixed distribution.
type keepEvery struct{}

func (keepEvery) Keep(int, uint32) bool { return true }

// encodeBatch runs the closed loop over eps as one predictor batch and
// returns each episode's section and accounting. keep decides retention.
// An episode is held as its codes (Compact ones in a fraction of the
// memory; a lossless loop shares them as its reconstruction) and the
// model's window of states whole; its coder stream goes into a streamBuf
// like streams (its dir and discard), which the caller closes, also after
// an error. After each step's predictor call the episodes are coded on up
// to threads goroutines (see forEach); the bytes are the same for any
// number.
func encodeBatch(p worldmodel.Predictor, h *Header, keep Keeper, eps []*trajectory.Episode, keepRecon bool, opt SimOptions, streams streamBuf, threads int) (out []encoded, err error) {
	for _, ep := range eps {
		if err := checkEpisode(ep, h); err != nil {
			return nil, err
		}
	}
	threads = threadsFor(threads, len(eps))
	window := p.Config().MaxHistory
	ws := make([]*epWriter, len(eps))
	defer func() {
		for _, w := range ws {
			if w == nil {
				continue
			}
			if w.mix != nil {
				w.mix.release()
			}
			if err != nil {
				w.buf.Close()
			}
		}
	}()
	out = make([]encoded, len(eps))
	maxObs := 0
	for i, ep := range eps {
		maxObs = max(maxObs, ep.Len())
		w := &epWriter{h: h, ep: ep, out: &out[i], keep: keep, mixKeep: mixKeeper(keep), opt: &opt,
			loop: newLoop(h, window, ep), truth: newTruthCodes(ep, window+2),
			buf: &streamBuf{dir: streams.dir, discard: streams.discard}, act: newActionCoder()}
		if w.mixKeep == nil && opt.Observe != nil {
			w.mixKeep = keepEvery{}
		}
		if opt.TeacherForced {
			w.loop.truth = w.truth
		}
		w.enc = entropy.NewEncoder(w.buf)
		if h.SlotRepeat {
			w.rep = newRepeatCoder(h.Slots, h.Subspaces)
		}
		if h.Mix {
			w.mix = newMixCoder(h.Slots, h.Subspaces, h.Codewords, h.codeBits(), opt.Neighbours, ep.Len())
			w.mix.without = opt.MixWithout
			if obs := opt.Observe; obs != nil {
				w.mix.observe = func(t, j int, hQ16 uint32, mode uint8) { obs(i, t, j, hQ16, mode) }
			}
		}
		ws[i] = w
	}
	if err := forEach(len(ws), threads, func(i int) error { return ws[i].start() }); err != nil {
		return nil, err
	}
	want := make([]bool, len(eps))
	pi := make([]int, len(eps)) // episode i's prediction is preds[pi[i]]
	var preds []worldmodel.Prediction
	var hs []worldmodel.History
	loops := make([]*loop, len(ws))
	for i, w := range ws {
		loops[i] = w.loop
	}
	for t := 1; t < maxObs; t++ {
		k := 0
		for i, w := range ws {
			want[i] = t < w.ep.Len()
			if !want[i] {
				continue
			}
			if err := w.action(t); err != nil {
				return nil, err
			}
			pi[i] = k
			k++
		}
		if preds, hs, err = predictBatch(p, loops, want, preds, hs); err != nil {
			return nil, err
		}
		err := forEach(len(ws), threads, func(i int) error {
			if !want[i] {
				return nil
			}
			return ws[i].state(t, &preds[pi[i]])
		})
		if err != nil {
			return nil, err
		}
	}
	err = forEach(len(ws), threads, func(i int) error { return ws[i].finish(streams.discard, keepRecon) })
	if err != nil {
		return nil, err
	}
	return out, nil
}

// epWriter is one episode's writer state in encodeBatch: only the goroutine
// coding the episode touches it.
type epWriter struct {
	h             *Header
	ep            *trajectory.Episode
	out           *encoded
	keep, mixKeep Keeper
	opt           *SimOptions
	loop          *loop
	truth         *truthCodes
	buf           *streamBuf
	enc           *entropy.Encoder
	act           *actionCoder
	rep           *repeatCoder
	mix           *mixCoder
}

// start codes z_0: in a mixed file into the stream first, coded from its
// codebooks; otherwise it is packed raw into the section's head (finish).
func (w *epWriter) start() error {
	h, out, l := w.h, w.out, w.loop
	out.stats = EpisodeStats{ID: w.ep.ID, Observations: w.ep.Len()}
	out.stateQ16 = uint64(h.Coords()*h.codeBits()) << 16
	z0, rec := w.truth.row(0), l.next()
	copy(rec, z0)
	if w.mix != nil {
		cost, err := w.mix.codeInitial(bitEncoder{w.enc}, z0, rec)
		if err != nil {
			return fmt.Errorf("codec: episode %d step 0: %w", w.ep.ID, err)
		}
		out.stateQ16 = cost
		w.mix.start(rec)
	}
	l.push(z0)
	return nil
}

// action codes u_{t-1}, before the prediction of state t.
func (w *epWriter) action(t int) error {
	a := &w.ep.Actions[t-1]
	cost, err := w.act.encode(w.enc, a)
	if err != nil {
		return fmt.Errorf("codec: episode %d step %d: %w", w.ep.ID, t, err)
	}
	w.out.actionQ16 += cost
	w.loop.actions = w.ep.Actions[:t]
	return nil
}

// state codes state t under the prediction pr.
func (w *epWriter) state(t int, pr *worldmodel.Prediction) error {
	h, out, l, ep := w.h, w.out, w.loop, w.ep
	J, prec := h.Coords(), h.Precision
	z, prev, rec := w.truth.row(t), l.row(t-1), l.next()
	if mx := w.mix; mx != nil {
		cost, err := mx.codeState(bitEncoder{w.enc}, pr, prec, &ep.Actions[t-1], t, l.recon, z, prev, rec, w.mixKeep)
		if err != nil {
			return fmt.Errorf("codec: episode %d step %d: %w", ep.ID, t, err)
		}
		out.stateQ16 += cost
		out.stats.Kept += uint64(J - mx.omitted)
		out.stats.Omitted += uint64(mx.omitted)
		out.stats.Recovered += uint64(mx.recovered)
		out.stats.Repeated += uint64(mx.repeated)
		out.stats.Coords += uint64(J)
		l.push(z)
		return nil
	}
	total := uint32(1) << prec
	rp := w.rep
	if rp != nil {
		for sl := range h.Slots {
			same := rp.same(z, prev, sl)
			cost, err := rp.encode(w.enc, sl, same)
			if err != nil {
				return fmt.Errorf("codec: episode %d step %d: %w", ep.ID, t, err)
			}
			out.stateQ16 += uint64(cost)
			if same {
				rp.copySlot(rec, prev, sl)
			}
		}
	}
	for j := 0; j < J; j++ {
		if rp != nil && rp.repeats(j) {
			out.stats.Kept++
			out.stats.Repeated++
			continue
		}
		if !w.keep.Keep(j, pr.Entropy[j]) {
			rec[j] = pr.Mode[j]
			if w.opt.FillPrevious {
				rec[j] = prev[j]
			}
			out.stats.Omitted++
			if rec[j] == z[j] {
				out.stats.Recovered++
			}
			continue
		}
		tbl := pr.Table(j)
		var cum uint32
		for _, f := range tbl[:z[j]] {
			cum += f
		}
		f := tbl[z[j]]
		if err := w.enc.Encode(cum, f, prec); err != nil {
			return fmt.Errorf("codec: episode %d step %d: %w", ep.ID, t, err)
		}
		out.stateQ16 += uint64(entropy.CostQ16(f, total))
		out.stats.Kept++
		rec[j] = z[j]
	}
	out.stats.Coords += uint64(J)
	l.push(z)
	return nil
}

// finish closes the coder and completes the episode's section and
// accounting.
func (w *epWriter) finish(discard, keepRecon bool) error {
	h, e, ep := w.h, w.out, w.ep
	if err := w.enc.Close(); err != nil {
		return fmt.Errorf("codec: episode %d: %w", ep.ID, err)
	}
	e.stream = w.buf
	packed := h.packedInitial()
	head := make([]byte, 0, sectionHead+packed)
	head = binary.LittleEndian.AppendUint64(head, uint64(ep.ID))
	head = binary.LittleEndian.AppendUint32(head, uint32(ep.Len()))
	head = binary.LittleEndian.AppendUint32(head, uint32(packed+e.stream.Len()))
	if !h.Mix {
		head = PackCodes(head, w.truth.row(0), h.codeBits())
	}
	e.head = head
	binary.LittleEndian.PutUint32(e.tail[:], w.loop.crc)
	if !discard {
		crc, err := e.stream.crc(crc32.Checksum(head, castagnoli))
		if err != nil {
			return fmt.Errorf("codec: episode %d: %w", ep.ID, err)
		}
		binary.LittleEndian.PutUint32(e.tail[4:], crc32.Update(crc, castagnoli, e.tail[:4]))
	}
	e.stats.StateBits = float64(e.stateQ16) / 65536
	e.stats.ActionBits = float64(e.actionQ16) / 65536
	e.stats.Bytes = int64(e.size())
	e.stats.Payload = int64(packed + e.stream.Len())
	if keepRecon {
		e.stats.Recon = w.loop.codes(ep)
	}
	return nil
}

// Simulate runs the writer's closed loop over eps with the predictor p and
// the retention rule keep, without writing a file, and returns every
// episode's accounting with its reconstructed codes (EpisodeStats.Recon):
// what a memory file written with that rule would hold and decode to.
func Simulate(p worldmodel.Predictor, keep Keeper, eps []*trajectory.Episode) ([]EpisodeStats, error) {
	return SimulateWith(p, keep, eps, SimOptions{})
}

// SimulateWith is Simulate with the loop changed by opt.
func SimulateWith(p worldmodel.Predictor, keep Keeper, eps []*trajectory.Episode, opt SimOptions) ([]EpisodeStats, error) {
	cfg := p.Config()
	h := &Header{Profile: p.Profile(), Precision: p.Precision(), Slots: cfg.Slots, Subspaces: cfg.Subspaces, Codewords: cfg.Codewords,
		SlotRepeat: opt.SlotRepeat, Mix: opt.Mix}
	if err := h.checkCoding(); err != nil {
		return nil, err
	}
	if pol, ok := keep.(model.Policy); ok {
		if err := checkPrior(pol, opt.Mix); err != nil {
			return nil, err
		}
	}
	if opt.Mix && !opt.Neighbours.fits(h) {
		return nil, fmt.Errorf("codec: the mixing prior needs the neighbour order of the bundle's quantizer (SimOptions.Neighbours)")
	}

	// Nothing is written: the streams are only counted.
	threads := opt.Threads
	if _, ok := keep.(model.Policy); threads == 0 && (!ok || opt.Observe != nil) {
		threads = 1
	}
	enc, err := encodeBatch(p, h, keep, eps, true, opt, streamBuf{discard: true}, threads)
	if err != nil {
		return nil, err
	}
	stats := make([]EpisodeStats, len(enc))
	for i := range enc {
		stats[i] = enc[i].stats
	}
	return stats, nil
}
