package bench

import (
	"fmt"

	"github.com/memowm/memowm/codec"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// Names of the mixing-prior rows.
const (
	WMMix           = "wm-mix"
	WMMixNoWM       = "wm-mix-no-wm"
	WMMixNoLongCopy = "wm-mix-no-copy"
	WMMixNoContexts = "wm-mix-no-contexts"
)

// mixRows benchmarks the mixing prior (a real memory file, written and
// decoded) and its ablations on the same episodes (Simulate: ideal bits,
// plus the file overhead the wm-mix row measured).
func mixRows(b *model.Bundle, p worldmodel.Predictor, eps []*trajectory.Episode, opt Options, progress func(string)) ([]Row, error) {
	progress(WMMix)
	mix, err := memoryRow(b, p, eps, model.Policy{Kind: model.KeepAll}, codec.Options{Mix: true}, opt)
	if err != nil {
		return nil, err
	}
	zero := 0.0
	mix.Name = WMMix
	mix.DeltaNLLBits = &zero
	mix.Note = fmt.Sprintf("lossless; the world model mixed with adaptive contexts and long-range copy; %.1f%% of the predicted coordinates copied by slot repeat decisions", 100*mix.repeated)
	rows := []Row{mix}
	nb, err := codec.NeighboursOf(b.OPQ)
	if err != nil {
		return nil, err
	}
	overhead := mix.BitsPerObs - mix.IdealBitsPerObs
	for _, a := range []struct {
		name    string
		without codec.MixPart
		what    string
	}{
		{WMMixNoWM, codec.MixWorldModel, "without the world model's input"},
		{WMMixNoLongCopy, codec.MixMatch, "without long-range copy (the prefix match and transition candidates)"},
		{WMMixNoContexts, codec.MixContexts, "without the adaptive context models"},
	} {
		progress(a.name)
		st, err := simulate(p, model.Policy{Kind: model.KeepAll}, eps, opt.Batch,
			codec.SimOptions{Mix: true, Neighbours: nb, MixWithout: a.without})
		if err != nil {
			return nil, err
		}
		var state, action float64
		nobs := 0
		for _, s := range st {
			state += s.StateBits
			action += s.ActionBits
			nobs += s.Observations
		}
		o := float64(max(nobs, 1))
		ideal := (state + action) / o
		rows = append(rows, Row{Name: a.name, BitsPerObs: ideal + overhead, IdealBitsPerObs: ideal, ActionBitsPerObs: action / o,
			DeltaNLLBits: &zero, KeptFraction: 1,
			Note: a.what + "; simulated: ideal bits plus wm-mix's file overhead"})
	}
	return rows, nil
}
