package risk

import (
	"fmt"

	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// DefaultBinQ16 is the paper's entropy bin: 0.25 bit in Q16.
const DefaultBinQ16 = 1 << 14

// StepKey names one observation: an episode and a step.
type StepKey struct {
	Episode int64
	Step    int
}

// Calibration is what a reference pass over calibration episodes counts.
type Calibration struct {
	BinQ16   uint32
	BinN     []uint64 // predictions per entropy bin
	BinErr   []uint64 // wrong modes per entropy bin
	CoordN   []uint64 // predictions per coordinate
	CoordErr []uint64 // wrong modes per coordinate
	// Modes holds the reference prediction's mode at the steps Collect was
	// asked to keep (one code per coordinate).
	Modes map[StepKey][]uint8
}

// Collect predicts every step t >= 1 of eps from its true history (the
// reference policy keeps every coordinate, so the reconstruction is the
// truth) and counts wrong modes per entropy bin of binQ16 and per
// coordinate. It keeps the modes of the steps in keep. Episodes go through
// the predictor batch at a time.
func Collect(p worldmodel.Predictor, eps []*trajectory.Episode, binQ16 uint32, keep map[StepKey]bool, batch int) (*Calibration, error) {
	cfg := p.Config()
	J := cfg.Coords()
	bits := opq.CodeBits(cfg.Codewords)
	if binQ16 == 0 {
		return nil, fmt.Errorf("risk: entropy bin width 0")
	}
	nb := int(uint32(bits)<<16/binQ16) + 1
	c := &Calibration{BinQ16: binQ16, BinN: make([]uint64, nb), BinErr: make([]uint64, nb),
		CoordN: make([]uint64, J), CoordErr: make([]uint64, J), Modes: map[StepKey][]uint8{}}
	batch = max(batch, 1)
	window := cfg.MaxHistory
	var preds []worldmodel.Prediction
	for lo := 0; lo < len(eps); lo += batch {
		group := eps[lo:min(len(eps), lo+batch)]
		maxObs := 0
		for _, ep := range group {
			if ep.Codes == nil || len(ep.Codes) != len(ep.Actions)+1 {
				return nil, fmt.Errorf("risk: episode %d holds no codes with their actions", ep.ID)
			}
			maxObs = max(maxObs, len(ep.Codes))
		}
		for t := 1; t < maxObs; t++ {
			var hs []worldmodel.History
			var who []*trajectory.Episode
			for _, ep := range group {
				if t >= len(ep.Codes) {
					continue
				}
				var h worldmodel.History
				for k := max(0, t-window); k < t; k++ {
					h = append(h, worldmodel.Step{Codes: ep.Codes[k], Action: ep.Actions[k]})
				}
				hs = append(hs, h)
				who = append(who, ep)
			}
			var err error
			if preds, err = p.Predict(preds, hs); err != nil {
				return nil, fmt.Errorf("risk: %w", err)
			}
			for i, ep := range who {
				pr, z := &preds[i], ep.Codes[t]
				for j := 0; j < J; j++ {
					b := min(int(pr.Entropy[j]/binQ16), nb-1)
					c.BinN[b]++
					c.CoordN[j]++
					if pr.Mode[j] != z[j] {
						c.BinErr[b]++
						c.CoordErr[j]++
					}
				}
				if k := (StepKey{ep.ID, t}); keep[k] {
					c.Modes[k] = append([]uint8(nil), pr.Mode...)
				}
			}
		}
	}
	return c, nil
}

// Lookup returns g: the error rate of every entropy bin with at least
// minCount predictions (Q16, rounded), -1 for the others, and every
// coordinate's marginal error rate (Q16), the fallback for empty bins.
func (c *Calibration) Lookup(minCount uint64) (binRate []int32, marginal []uint32) {
	binRate = make([]int32, len(c.BinN))
	for b, n := range c.BinN {
		binRate[b] = -1
		if n >= max(minCount, 1) {
			binRate[b] = int32((c.BinErr[b]<<16 + n/2) / n)
		}
	}
	marginal = make([]uint32, len(c.CoordN))
	for j, n := range c.CoordN {
		if n > 0 {
			marginal[j] = uint32((c.CoordErr[j]<<16 + n/2) / n)
		}
	}
	return binRate, marginal
}

// ErrorRate is the overall rate of wrong modes.
func (c *Calibration) ErrorRate() float64 {
	var n, e uint64
	for b := range c.BinN {
		n += c.BinN[b]
		e += c.BinErr[b]
	}
	if n == 0 {
		return 0
	}
	return float64(e) / float64(n)
}
