package codec

import (
	"fmt"
	"hash/crc32"

	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// loop is the closed-loop state of one episode, shared by the writer and the
// decoder: the reconstructed codes so far and the actions that connect them.
type loop struct {
	recon   [][]uint8           // z~_0 .. z~_t
	truth   [][]uint8           // when set, the history reads these instead (teacher forcing)
	actions []trajectory.Action // u_0 .. u_{t-1}
	hist    worldmodel.History  // scratch
}

// history is the predictor's input for o_t (t = len(recon)): the last
// window reconstructed states, each with the action taken from it.
func (l *loop) history(window int) worldmodel.History {
	t := len(l.recon)
	lo := max(0, t-window)
	l.hist = l.hist[:0]
	src := l.recon
	if l.truth != nil {
		src = l.truth
	}
	for k := lo; k < t; k++ {
		l.hist = append(l.hist, worldmodel.Step{Codes: src[k], Action: l.actions[k]})
	}
	return l.hist
}

// codesCRC is the CRC-32C of the reconstructed codes, in order.
func (l *loop) codesCRC() uint32 {
	var c uint32
	for _, z := range l.recon {
		c = crc32.Update(c, castagnoli, z)
	}
	return c
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
