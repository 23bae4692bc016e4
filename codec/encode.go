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
// an error.
func encodeBatch(p worldmodel.Predictor, h *Header, keep Keeper, eps []*trajectory.Episode, keepRecon bool, opt SimOptions, streams streamBuf) (out []encoded, err error) {
	J, prec, bits := h.Coords(), h.Precision, h.codeBits()
	for _, ep := range eps {
		if err := checkEpisode(ep, h); err != nil {
			return nil, err
		}
	}
	window := p.Config().MaxHistory
	loops := make([]*loop, len(eps))
	truths := make([]*truthCodes, len(eps))
	bufs := make([]*streamBuf, len(eps))
	defer func() {
		if err != nil {
			for _, b := range bufs {
				if b != nil {
					b.Close()
				}
			}
		}
	}()
	encs := make([]*entropy.Encoder, len(eps))
	acts := make([]*actionCoder, len(eps))
	reps := make([]*repeatCoder, len(eps))
	mixes := make([]*mixCoder, len(eps))
	defer func() {
		for _, m := range mixes {
			if m != nil {
				m.release()
			}
		}
	}()
	out = make([]encoded, len(eps))
	maxObs := 0
	for i, ep := range eps {
		n := ep.Len()
		loops[i] = newLoop(h, window, ep)
		truths[i] = newTruthCodes(ep, window+2)
		if opt.TeacherForced {
			loops[i].truth = truths[i]
		}
		bufs[i] = &streamBuf{dir: streams.dir, discard: streams.discard}
		encs[i] = entropy.NewEncoder(bufs[i])
		acts[i] = newActionCoder()
		if h.SlotRepeat {
			reps[i] = newRepeatCoder(h.Slots, h.Subspaces)
		}
		out[i].stats = EpisodeStats{ID: ep.ID, Observations: n}
		out[i].stateQ16 = uint64(J*bits) << 16
		z0, rec := truths[i].row(0), loops[i].next()
		copy(rec, z0)
		if h.Mix {
			// z_0 goes into the stream first, coded from its codebooks.
			m := newMixCoder(h.Slots, h.Subspaces, h.Codewords, bits, opt.Neighbours, n)
			mixes[i] = m
			m.without = opt.MixWithout
			if obs := opt.Observe; obs != nil {
				m.observe = func(t, j int, hQ16 uint32, mode uint8) { obs(i, t, j, hQ16, mode) }
			}
			cost, err := m.codeInitial(bitEncoder{encs[i]}, z0, rec)
			if err != nil {
				return nil, fmt.Errorf("codec: episode %d step 0: %w", ep.ID, err)
			}
			out[i].stateQ16 = cost
			m.start(rec)
		}
		loops[i].push(z0)
		maxObs = max(maxObs, n)
	}
	mixKeep := mixKeeper(keep)
	if mixKeep == nil && opt.Observe != nil {
		mixKeep = keepEvery{}
	}
	want := make([]bool, len(eps))
	var preds []worldmodel.Prediction
	var hs []worldmodel.History
	total := uint32(1) << prec
	for t := 1; t < maxObs; t++ {
		for i, ep := range eps {
			want[i] = t < ep.Len()
			if !want[i] {
				continue
			}
			a := &ep.Actions[t-1]
			cost, err := acts[i].encode(encs[i], a)
			if err != nil {
				return nil, fmt.Errorf("codec: episode %d step %d: %w", ep.ID, t, err)
			}
			out[i].actionQ16 += cost
			loops[i].actions = ep.Actions[:t]
		}
		if preds, hs, err = predictBatch(p, loops, want, preds, hs); err != nil {
			return nil, err
		}
		k := 0
		for i, ep := range eps {
			if !want[i] {
				continue
			}
			pr := &preds[k]
			k++
			l := loops[i]
			z, prev, rec := truths[i].row(t), l.row(t-1), l.next()
			if mx := mixes[i]; mx != nil {
				cost, err := mx.codeState(bitEncoder{encs[i]}, pr, prec, &ep.Actions[t-1], t, l.recon, z, prev, rec, mixKeep)
				if err != nil {
					return nil, fmt.Errorf("codec: episode %d step %d: %w", ep.ID, t, err)
				}
				out[i].stateQ16 += cost
				out[i].stats.Kept += uint64(J - mx.omitted)
				out[i].stats.Omitted += uint64(mx.omitted)
				out[i].stats.Recovered += uint64(mx.recovered)
				out[i].stats.Repeated += uint64(mx.repeated)
				out[i].stats.Coords += uint64(J)
				l.push(z)
				continue
			}
			rp := reps[i]
			if rp != nil {
				for sl := range h.Slots {
					same := rp.same(z, prev, sl)
					cost, err := rp.encode(encs[i], sl, same)
					if err != nil {
						return nil, fmt.Errorf("codec: episode %d step %d: %w", ep.ID, t, err)
					}
					out[i].stateQ16 += uint64(cost)
					if same {
						rp.copySlot(rec, prev, sl)
					}
				}
			}
			for j := 0; j < J; j++ {
				if rp != nil && rp.repeats(j) {
					out[i].stats.Kept++
					out[i].stats.Repeated++
					continue
				}
				if !keep.Keep(j, pr.Entropy[j]) {
					rec[j] = pr.Mode[j]
					if opt.FillPrevious {
						rec[j] = prev[j]
					}
					out[i].stats.Omitted++
					if rec[j] == z[j] {
						out[i].stats.Recovered++
					}
					continue
				}
				tbl := pr.Table(j)
				var cum uint32
				for _, f := range tbl[:z[j]] {
					cum += f
				}
				f := tbl[z[j]]
				if err := encs[i].Encode(cum, f, prec); err != nil {
					return nil, fmt.Errorf("codec: episode %d step %d: %w", ep.ID, t, err)
				}
				out[i].stateQ16 += uint64(entropy.CostQ16(f, total))
				out[i].stats.Kept++
				rec[j] = z[j]
			}
			out[i].stats.Coords += uint64(J)
			l.push(z)
		}
	}
	for i, ep := range eps {
		if err := encs[i].Close(); err != nil {
			return nil, fmt.Errorf("codec: episode %d: %w", ep.ID, err)
		}
		e := &out[i]
		e.stream = bufs[i]
		packed := h.packedInitial()
		head := make([]byte, 0, sectionHead+packed)
		head = binary.LittleEndian.AppendUint64(head, uint64(ep.ID))
		head = binary.LittleEndian.AppendUint32(head, uint32(ep.Len()))
		head = binary.LittleEndian.AppendUint32(head, uint32(packed+e.stream.Len()))
		if !h.Mix {
			head = PackCodes(head, truths[i].row(0), bits)
		}
		e.head = head
		binary.LittleEndian.PutUint32(e.tail[:], loops[i].crc)
		if !streams.discard {
			crc, err := e.stream.crc(crc32.Checksum(head, castagnoli))
			if err != nil {
				return nil, fmt.Errorf("codec: episode %d: %w", ep.ID, err)
			}
			binary.LittleEndian.PutUint32(e.tail[4:], crc32.Update(crc, castagnoli, e.tail[:4]))
		}
		e.stats.StateBits = float64(e.stateQ16) / 65536
		e.stats.ActionBits = float64(e.actionQ16) / 65536
		e.stats.Bytes = int64(e.size())
		e.stats.Payload = int64(packed + e.stream.Len())
		if keepRecon {
			e.stats.Recon = loops[i].codes(ep)
		}
	}
	return out, nil
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
	enc, err := encodeBatch(p, h, keep, eps, true, opt, streamBuf{discard: true})
	if err != nil {
		return nil, err
	}
	stats := make([]EpisodeStats, len(enc))
	for i := range enc {
		stats[i] = enc[i].stats
	}
	return stats, nil
}
