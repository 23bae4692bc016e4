package bench

import (
	"fmt"

	"github.com/memowm/memowm/calib"
	"github.com/memowm/memowm/codec"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/reader"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// Gatings runs the bundle's policy and each gating baseline calibrated
// beside it (model.Bundle.Baselines: static-e, uniform-v, uncertainty,
// random at the same epsilon) on eps the same way: the closed loop as a
// memory file writes it (under the mixing prior when the policy was
// calibrated on it), as gatedRow sums it up, with the distortion of qs
// through rd (nil: the bundle's reader; without one, not measured). The first row is the policy's ("memowm"). On episodes the
// calibration did not see, it shows whether each rule's distortion holds
// and what it costs beside memowm's.
func Gatings(b *model.Bundle, p worldmodel.Predictor, eps []*trajectory.Episode, qs []*trajectory.Question, rd reader.Reader, batch int) ([]Comparison, error) {
	if batch <= 0 {
		batch = 8
	}
	opt := codec.SimOptions{}
	if b.Policy.CalibratedOnMix() {
		nb, err := codec.NeighboursOf(b.OPQ)
		if err != nil {
			return nil, err
		}
		opt = codec.SimOptions{Mix: true, Neighbours: nb}
	}
	rules := []struct {
		name string
		keep codec.Keeper
	}{{"memowm", ruleOnly{b.Policy}}}
	for _, bl := range b.Baselines {
		k := calib.KeeperOf(bl.Family, bl.Param, b.Policy, bl.ErrorRate, 1)
		if k == nil {
			return nil, fmt.Errorf("bench: the bundle's baseline %q is not a gating family this build knows (%v)", bl.Family, calib.Families)
		}
		if pol, ok := k.(model.Policy); ok && pol.Kind == model.Risk {
			k = ruleOnly{pol}
		}
		rules = append(rules, struct {
			name string
			keep codec.Keeper
		}{fmt.Sprintf("%s (%.4g)", bl.Family, bl.Param), k})
	}
	rd = scorer(b, Options{Reader: rd})
	var out []Comparison
	for _, r := range rules {
		c, err := gatedRow(b, rd, p, r.keep, eps, qs, batch, r.name, opt)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
