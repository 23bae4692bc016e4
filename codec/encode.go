package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/memowm/memowm/model"
	"hash/crc32"

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

// encoded is one episode coded by encodeBatch.
type encoded struct {
	stats     EpisodeStats
	section   []byte
	stateQ16  uint64 // ideal bits of the states, Q16, z_0 included
	actionQ16 uint64 // ideal bits of the actions, Q16
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
func encodeBatch(p worldmodel.Predictor, h *Header, keep Keeper, eps []*trajectory.Episode, keepRecon bool, opt SimOptions) ([]encoded, error) {
	J, prec, bits := h.Coords(), h.Precision, h.codeBits()
	for _, ep := range eps {
		if err := checkEpisode(ep, h); err != nil {
			return nil, err
		}
	}
	loops := make([]*loop, len(eps))
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
	out := make([]encoded, len(eps))
	maxObs := 0
	for i, ep := range eps {
		loops[i] = &loop{recon: [][]uint8{append([]uint8(nil), ep.Codes[0]...)}}
		if opt.TeacherForced {
			loops[i].truth = ep.Codes
		}
		encs[i] = entropy.NewEncoder(nil)
		acts[i] = newActionCoder()
		if h.SlotRepeat {
			reps[i] = newRepeatCoder(h.Slots, h.Subspaces)
		}
		out[i].stats = EpisodeStats{ID: ep.ID, Observations: len(ep.Codes)}
		out[i].stateQ16 = uint64(J*bits) << 16
		if h.Mix {
			// z_0 goes into the stream first, coded from its codebooks.
			m := newMixCoder(h.Slots, h.Subspaces, h.Codewords, bits, opt.Neighbours, len(ep.Codes))
			mixes[i] = m
			m.without = opt.MixWithout
			if obs := opt.Observe; obs != nil {
				m.observe = func(t, j int, hQ16 uint32, mode uint8) { obs(i, t, j, hQ16, mode) }
			}
			cost, err := m.codeInitial(bitEncoder{encs[i]}, ep.Codes[0], loops[i].recon[0])
			if err != nil {
				return nil, fmt.Errorf("codec: episode %d step 0: %w", ep.ID, err)
			}
			out[i].stateQ16 = cost
			m.start(loops[i].recon)
		}
		maxObs = max(maxObs, len(ep.Codes))
	}
	mixKeep := mixKeeper(keep)
	if mixKeep == nil && opt.Observe != nil {
		mixKeep = keepEvery{}
	}
	want := make([]bool, len(eps))
	var preds []worldmodel.Prediction
	var hs []worldmodel.History
	var err error
	total := uint32(1) << prec
	for t := 1; t < maxObs; t++ {
		for i, ep := range eps {
			want[i] = t < len(ep.Codes)
			if !want[i] {
				continue
			}
			a := &ep.Actions[t-1]
			cost, err := acts[i].encode(encs[i], a)
			if err != nil {
				return nil, fmt.Errorf("codec: episode %d step %d: %w", ep.ID, t, err)
			}
			out[i].actionQ16 += cost
			loops[i].actions = append(loops[i].actions, *a)
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
			z := ep.Codes[t]
			rec := make([]uint8, J)
			if mx := mixes[i]; mx != nil {
				mx.history = loops[i].recon
				cost, err := mx.codeState(bitEncoder{encs[i]}, pr, prec, &ep.Actions[t-1], t, z, rec, mixKeep)
				if err != nil {
					return nil, fmt.Errorf("codec: episode %d step %d: %w", ep.ID, t, err)
				}
				out[i].stateQ16 += cost
				out[i].stats.Kept += uint64(J - mx.omitted)
				out[i].stats.Omitted += uint64(mx.omitted)
				out[i].stats.Recovered += uint64(mx.recovered)
				out[i].stats.Repeated += uint64(mx.repeated)
				out[i].stats.Coords += uint64(J)
				loops[i].recon = append(loops[i].recon, sameOr(rec, z))
				continue
			}
			rp := reps[i]
			if rp != nil {
				prev := loops[i].recon[t-1]
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
						rec[j] = loops[i].recon[t-1][j]
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
			loops[i].recon = append(loops[i].recon, sameOr(rec, z))
		}
	}
	for i, ep := range eps {
		if err := encs[i].Close(); err != nil {
			return nil, fmt.Errorf("codec: episode %d: %w", ep.ID, err)
		}
		stream := encs[i].Bytes()
		packed := h.packedInitial()
		sec := make([]byte, 0, sectionHead+packed+len(stream)+sectionTail)
		sec = binary.LittleEndian.AppendUint64(sec, uint64(ep.ID))
		sec = binary.LittleEndian.AppendUint32(sec, uint32(len(ep.Codes)))
		sec = binary.LittleEndian.AppendUint32(sec, uint32(packed+len(stream)))
		if !h.Mix {
			sec = PackCodes(sec, ep.Codes[0], bits)
		}
		sec = append(sec, stream...)
		sec = binary.LittleEndian.AppendUint32(sec, loops[i].codesCRC())
		sec = binary.LittleEndian.AppendUint32(sec, crc32.Checksum(sec, castagnoli))
		e := &out[i]
		e.section = sec
		e.stats.StateBits = float64(e.stateQ16) / 65536
		e.stats.ActionBits = float64(e.actionQ16) / 65536
		e.stats.Bytes = int64(len(sec))
		e.stats.Payload = int64(packed + len(stream))
		if keepRecon {
			e.stats.Recon = loops[i].recon
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

	enc, err := encodeBatch(p, h, keep, eps, true, opt)
	if err != nil {
		return nil, err
	}
	stats := make([]EpisodeStats, len(enc))
	for i := range enc {
		stats[i] = enc[i].stats
	}
	return stats, nil
}

// sameOr returns z when the reconstruction rec equals it, so that a state
// coded exactly (every lossless one) is held once, not twice: the loop only
// reads its history, and the caller's codes are not changed.
func sameOr(rec, z []uint8) []uint8 {
	if bytes.Equal(rec, z) {
		return z
	}
	return rec
}
