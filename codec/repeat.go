package codec

import (
	"bytes"

	"github.com/memowm/memowm/entropy"
)

// Slot repeat flags (Header.SlotRepeat). Before the coordinates of a
// predicted state, the writer codes one binary flag per slot: 1 when the
// slot's true codes equal the previous reconstructed state's codes of that
// slot, which the decoder then copies without consulting the model; 0 when
// they differ, and the slot's coordinates follow the retention rule as
// usual. Screens recorded from real programs repeat most of their regions
// from step to step, and a flag costs far less than a prior over every code
// of the region.
//
// Each slot has two adaptive binary models, chosen by the slot's previous
// flag (1 before the first step), with the entropy package's fixed update
// rule, so writer and decoder hold the same counts.
type repeatCoder struct {
	perSlot int
	models  []*entropy.Adaptive // 2 per slot: previous flag 0, 1
	prev    []uint8             // previous flag per slot
}

func newRepeatCoder(slots, perSlot int) *repeatCoder {
	r := &repeatCoder{perSlot: perSlot, models: make([]*entropy.Adaptive, 2*slots), prev: make([]uint8, slots)}
	for i := range r.models {
		m, err := entropy.NewAdaptive(2)
		if err != nil {
			panic("codec: a binary adaptive model with default options: " + err.Error()) // cannot happen
		}
		r.models[i] = m
	}
	for s := range r.prev {
		r.prev[s] = 1
	}
	return r
}

// model is slot s's model for its next flag.
func (r *repeatCoder) model(s int) *entropy.Adaptive { return r.models[2*s+int(r.prev[s])] }

// repeats reports whether coordinate j lies in a slot whose flag, the last
// one coded or decoded, says it repeats.
func (r *repeatCoder) repeats(j int) bool { return r.prev[j/r.perSlot] == 1 }

// copySlot copies slot s of prev into rec.
func (r *repeatCoder) copySlot(rec, prev []uint8, s int) {
	copy(rec[s*r.perSlot:(s+1)*r.perSlot], prev[s*r.perSlot:])
}

// same reports whether slot s of z equals slot s of prev.
func (r *repeatCoder) same(z, prev []uint8, s int) bool {
	lo, hi := s*r.perSlot, (s+1)*r.perSlot
	return bytes.Equal(z[lo:hi], prev[lo:hi])
}

// encode codes slot s's flag and returns its ideal cost in Q16 bits.
func (r *repeatCoder) encode(e *entropy.Encoder, s int, repeat bool) (uint32, error) {
	f := 0
	if repeat {
		f = 1
	}
	m := r.model(s)
	cost := m.CostQ16(f)
	if err := m.Encode(e, f); err != nil {
		return 0, err
	}
	r.prev[s] = uint8(f)
	return cost, nil
}

// decode decodes slot s's flag.
func (r *repeatCoder) decode(d *entropy.Decoder, s int) (bool, error) {
	f, err := r.model(s).Decode(d)
	if err != nil {
		return false, err
	}
	r.prev[s] = uint8(f)
	return f == 1, nil
}
