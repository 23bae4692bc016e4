package codec

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/memowm/memowm/entropy"
	"github.com/memowm/memowm/trajectory"
)

// actionCoder codes actions losslessly with adaptive models, one per field:
// the type; a 2-bit flag (has position, has delta); each float32 field's four
// bytes (little-endian, one model per byte position); the payload length and
// its bytes. The models start fresh for every episode. The world model reads
// the actions the decoder returns, so they must come back bit for bit.
type actionCoder struct {
	typ, flags, length, payload *entropy.Adaptive
	floats                      [4][4]*entropy.Adaptive // (field x, y, dx, dy; byte)
}

func newActionCoder() *actionCoder {
	m := func(n int) *entropy.Adaptive {
		a, err := entropy.NewAdaptive(n)
		if err != nil {
			panic(err) // n is a constant in range
		}
		return a
	}
	c := &actionCoder{typ: m(trajectory.NumActionTypes), flags: m(4), length: m(trajectory.MaxPayload + 1), payload: m(256)}
	for f := range c.floats {
		for b := range c.floats[f] {
			c.floats[f][b] = m(256)
		}
	}
	return c
}

// encode codes a and returns its ideal cost in Q16 bits.
func (c *actionCoder) encode(e *entropy.Encoder, a *trajectory.Action) (uint64, error) {
	var cost uint64
	put := func(m *entropy.Adaptive, s int) error {
		cost += uint64(m.CostQ16(s))
		return m.Encode(e, s)
	}
	if !a.Type.Valid() || len(a.Payload) > trajectory.MaxPayload {
		return 0, fmt.Errorf("codec: invalid action %v", a.Type)
	}
	if err := put(c.typ, int(a.Type)); err != nil {
		return 0, err
	}
	flags := 0
	if a.HasPos {
		flags |= 1
	}
	if a.HasDelta {
		flags |= 2
	}
	if err := put(c.flags, flags); err != nil {
		return 0, err
	}
	for f, v := range [4]float32{a.X, a.Y, a.DX, a.DY} {
		if (f < 2 && !a.HasPos) || (f >= 2 && !a.HasDelta) {
			continue
		}
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		for i, x := range b {
			if err := put(c.floats[f][i], int(x)); err != nil {
				return 0, err
			}
		}
	}
	if err := put(c.length, len(a.Payload)); err != nil {
		return 0, err
	}
	for _, x := range a.Payload {
		if err := put(c.payload, int(x)); err != nil {
			return 0, err
		}
	}
	return cost, nil
}

// decode is encode's mirror.
func (c *actionCoder) decode(d *entropy.Decoder) (trajectory.Action, error) {
	var a trajectory.Action
	t, err := c.typ.Decode(d)
	if err != nil {
		return a, err
	}
	a.Type = trajectory.ActionType(t)
	flags, err := c.flags.Decode(d)
	if err != nil {
		return a, err
	}
	a.HasPos, a.HasDelta = flags&1 != 0, flags&2 != 0
	dst := [4]*float32{&a.X, &a.Y, &a.DX, &a.DY}
	for f := range dst {
		if (f < 2 && !a.HasPos) || (f >= 2 && !a.HasDelta) {
			continue
		}
		var b [4]byte
		for i := range b {
			x, err := c.floats[f][i].Decode(d)
			if err != nil {
				return a, err
			}
			b[i] = byte(x)
		}
		*dst[f] = math.Float32frombits(binary.LittleEndian.Uint32(b[:]))
	}
	n, err := c.length.Decode(d)
	if err != nil {
		return a, err
	}
	if n > 0 {
		a.Payload = make([]byte, n)
		for i := range a.Payload {
			x, err := c.payload.Decode(d)
			if err != nil {
				return a, err
			}
			a.Payload[i] = byte(x)
		}
	}
	return a, nil
}
