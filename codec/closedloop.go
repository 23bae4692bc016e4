package codec

import (
	"bytes"
	"fmt"
	"hash/crc32"

	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// loop is the closed-loop state of one episode, shared by the writer and the
// decoder: the reconstructed codes so far and the actions that connect them.
// It holds every reconstructed state compactly (the mixing prior reads any
// of them, the decoder returns them) and the model's window of them whole.
type loop struct {
	recon   *trajectory.CodeRows // z~_0 .. z~_{n-1}
	shared  bool                 // recon is the episode's own Compact codes, every state so far reconstructed exactly
	n       int                  // states reconstructed so far
	slots   int                  // slots per state
	win     [][]uint8            // the latest states, z~_k at win[k%len(win)]; z~_n is written into win[n%len(win)]
	crc     uint32               // CRC-32C of z~_0 .. z~_{n-1}, in order
	truth   *truthCodes          // when set, the history reads these instead (teacher forcing)
	actions []trajectory.Action  // u_0 .. u_{n-2} at least
	hist    worldmodel.History   // scratch
}

// newLoop returns the loop of an episode of states of h's geometry whose
// predictor sees window states. With truth set (the writer), an episode
// held Compact in h's slots lends its rows as the reconstruction for as
// long as they agree, so a lossless writer holds its states once.
func newLoop(h *Header, window int, truth *trajectory.Episode) *loop {
	J := h.Coords()
	l := &loop{win: make([][]uint8, window+1), slots: h.Slots}
	flat := make([]uint8, len(l.win)*J)
	for k := range l.win {
		l.win[k] = flat[k*J : (k+1)*J : (k+1)*J]
	}
	if c := truth; c != nil && c.Compact != nil && c.Compact.Width() == J {
		l.recon, l.shared = c.Compact, true
	} else {
		l.recon = trajectory.NewCodeRows(J, h.Slots)
	}
	return l
}

// next is the buffer that the next state, z~_n, is reconstructed into.
func (l *loop) next() []uint8 { return l.win[l.n%len(l.win)] }

// row is z~_k, one of the latest len(l.win)-1 states.
func (l *loop) row(k int) []uint8 { return l.win[k%len(l.win)] }

// push records the state reconstructed into next(); z is its true state
// (nil in the decoder).
func (l *loop) push(z []uint8) {
	rec := l.next()
	l.crc = crc32.Update(l.crc, castagnoli, rec)
	if l.shared && !bytes.Equal(rec, z) {
		// The reconstruction leaves the truth: copy the states so far.
		own := trajectory.NewCodeRows(l.recon.Width(), l.slots)
		var buf []uint8
		for k := range l.n {
			buf = l.recon.RowTo(buf, k)
			own.Append(buf)
		}
		l.recon, l.shared = own, false
	}
	if !l.shared {
		l.recon.Append(rec)
	}
	l.n++
}

// history is the predictor's input for o_t (t = l.n): the last window
// reconstructed states, each with the action taken from it.
func (l *loop) history(window int) worldmodel.History {
	t := l.n
	lo := max(0, t-window)
	l.hist = l.hist[:0]
	for k := lo; k < t; k++ {
		z := l.row(k)
		if l.truth != nil {
			z = l.truth.row(k)
		}
		l.hist = append(l.hist, worldmodel.Step{Codes: z, Action: l.actions[k]})
	}
	return l.hist
}

// codes returns z~_0 .. z~_{n-1} as code vectors; a state equal to truth's
// (when truth holds Codes) shares its slice.
func (l *loop) codes(truth *trajectory.Episode) [][]uint8 {
	out := make([][]uint8, l.n)
	var buf []uint8
	for k := range out {
		buf = l.recon.RowTo(buf, k)
		if truth != nil && truth.Codes != nil && bytes.Equal(buf, truth.Codes[k]) {
			out[k] = truth.Codes[k]
			continue
		}
		out[k], buf = buf, nil
	}
	return out
}

// truthCodes reads an episode's true codes, from Codes or Compact; Compact
// rows are unpacked into a ring, row k at ring[k%len(ring)], so the latest
// len(ring) rows read stay valid.
type truthCodes struct {
	ep   *trajectory.Episode
	ring [][]uint8
}

func newTruthCodes(ep *trajectory.Episode, rows int) *truthCodes {
	return &truthCodes{ep: ep, ring: make([][]uint8, rows)}
}

func (c *truthCodes) row(k int) []uint8 {
	if c.ep.Compact == nil {
		return c.ep.Codes[k]
	}
	b := &c.ring[k%len(c.ring)]
	*b = c.ep.Compact.RowTo(*b, k)
	return *b
}

// predictBatch runs the predictor on the histories of the loops that have
// step t to do (want[i]) and returns their predictions in the same order.
func predictBatch(p worldmodel.Predictor, loops []*loop, want []bool, dst []worldmodel.Prediction, hs []worldmodel.History) ([]worldmodel.Prediction, []worldmodel.History, error) {
	window := p.Config().MaxHistory
	hs = hs[:0]
	for i, l := range loops {
		if want[i] {
			hs = append(hs, l.history(window))
		}
	}
	if len(hs) == 0 {
		return dst[:0], hs, nil
	}
	out, err := p.Predict(dst, hs)
	if err != nil {
		return dst, hs, fmt.Errorf("codec: %w", err)
	}
	return out, hs, nil
}

// checkPredictor reports whether p matches the header's geometry and
// profile.
func checkPredictor(p worldmodel.Predictor, h *Header) error {
	cfg := p.Config()
	if cfg.Slots != h.Slots || cfg.Subspaces != h.Subspaces || cfg.Codewords != h.Codewords {
		return fmt.Errorf("codec: the predictor's geometry %dx%d/%d differs from the file's %dx%d/%d",
			cfg.Slots, cfg.Subspaces, cfg.Codewords, h.Slots, h.Subspaces, h.Codewords)
	}
	if p.Profile() != h.Profile || p.Precision() != h.Precision {
		return fmt.Errorf("codec: the predictor runs profile %q at precision %d, the file needs %q at %d",
			p.Profile(), p.Precision(), h.Profile, h.Precision)
	}
	return nil
}

// headerFor is the header of a file written with bundle b and policy.
func headerFor(b *model.Bundle, policy model.Policy) *Header {
	cfg := b.Model.Config()
	return &Header{
		Bundle: b.Hash(), Profile: b.Profile, Precision: b.Precision,
		Slots: cfg.Slots, Subspaces: cfg.Subspaces, Codewords: cfg.Codewords, Policy: policy,
	}
}

// PackCodes appends z packed at bits per code, little-endian bit order: the
// fixed-width form of a code vector (memory files store z_0 this way).
func PackCodes(dst []byte, z []uint8, bits int) []byte {
	var acc uint64
	n := 0
	for _, c := range z {
		acc |= uint64(c) << n
		n += bits
		for n >= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
			n -= 8
		}
	}
	if n > 0 {
		dst = append(dst, byte(acc))
	}
	return dst
}

// unpackCodes is PackCodes' inverse; it reports an error for a code outside
// [0, codewords).
func unpackCodes(dst []uint8, src []byte, bits, codewords int) error {
	var acc uint64
	n, p := 0, 0
	mask := uint64(1)<<bits - 1
	for i := range dst {
		for n < bits {
			acc |= uint64(src[p]) << n
			p++
			n += 8
		}
		c := acc & mask
		acc >>= bits
		n -= bits
		if int(c) >= codewords {
			return fmt.Errorf("%w: initial code %d of coordinate %d is outside the %d codewords", ErrFormat, c, i, codewords)
		}
		dst[i] = uint8(c)
	}
	return nil
}

// packedLen is the byte length of n codes at bits each.
func packedLen(n, bits int) int { return (n*bits + 7) / 8 }
