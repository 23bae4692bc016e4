package risk

import (
	"fmt"

	"github.com/memowm/memowm/codec"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// CollectMix is Collect on the mixing prior's distribution: it runs the
// mixing prior's closed loop over eps with every coordinate kept (so the
// reconstruction is the truth), as a lossy writer runs it, and counts the
// mixed distribution's wrong modes per entropy bin and per coordinate.
// Only coordinates of slots that change are counted: a slot whose codes
// repeat is copied by its repeat decision and never reaches the retention
// rule. The kept modes hold the truth at such coordinates. nb is the
// bundle's neighbour order (codec.NeighboursOf its quantizer).
func CollectMix(p worldmodel.Predictor, nb *codec.Neighbours, eps []*trajectory.Episode, binQ16 uint32, keep map[StepKey]bool, batch int) (*Calibration, error) {
	cfg := p.Config()
	J := cfg.Coords()
	bits := opq.CodeBits(cfg.Codewords)
	if binQ16 == 0 {
		return nil, fmt.Errorf("risk: entropy bin width 0")
	}
	if nb == nil {
		return nil, fmt.Errorf("risk: the mixing prior needs the bundle's neighbour order")
	}
	nbins := int(uint32(bits)<<16/binQ16) + 1
	c := &Calibration{BinQ16: binQ16, BinN: make([]uint64, nbins), BinErr: make([]uint64, nbins),
		CoordN: make([]uint64, J), CoordErr: make([]uint64, J), Modes: map[StepKey][]uint8{}}
	batch = max(batch, 1)
	for _, ep := range eps {
		if ep.Codes == nil || len(ep.Codes) != len(ep.Actions)+1 {
			return nil, fmt.Errorf("risk: episode %d holds no codes with their actions", ep.ID)
		}
	}
	for lo := 0; lo < len(eps); lo += batch {
		group := eps[lo:min(len(eps), lo+batch)]
		observe := func(i, t, j int, hQ16 uint32, mode uint8) {
			ep := group[i]
			b := min(int(hQ16/binQ16), nbins-1)
			c.BinN[b]++
			c.CoordN[j]++
			if mode != ep.Codes[t][j] {
				c.BinErr[b]++
				c.CoordErr[j]++
			}
			k := StepKey{ep.ID, t}
			if keep[k] {
				m, ok := c.Modes[k]
				if !ok {
					m = append([]uint8(nil), ep.Codes[t]...)
					c.Modes[k] = m
				}
				m[j] = mode
			}
		}
		opt := codec.SimOptions{Mix: true, Neighbours: nb, Observe: observe}
		if _, err := codec.SimulateWith(p, model.Policy{Kind: model.KeepAll}, group, opt); err != nil {
			return nil, fmt.Errorf("risk: %w", err)
		}
	}
	// Steps where every slot repeated were never observed: their modes are
	// the truth.
	for _, ep := range eps {
		for t := 1; t < len(ep.Codes); t++ {
			if k := (StepKey{ep.ID, t}); keep[k] && c.Modes[k] == nil {
				c.Modes[k] = append([]uint8(nil), ep.Codes[t]...)
			}
		}
	}
	return c, nil
}
