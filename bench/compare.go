package bench

import (
	"github.com/memowm/memowm/codec"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/reader"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// Comparison is one variant of the closed loop at one fixed retention rule
// (the paper's figure 4): how omitted coordinates are filled, and which
// history the model reads.
type Comparison struct {
	Name            string   `json:"name"` // wm-fill, copy-fill, teacher-forced, mix
	IdealBitsPerObs float64  `json:"ideal_bits_per_obs"`
	KeptFraction    float64  `json:"kept_fraction"`
	ExactRecovery   float64  `json:"exact_recovery"` // omitted coordinates whose fill is the true code
	DeltaNLLBits    *float64 `json:"delta_nll_bits"` // null without a reader and questions
}

// simulate runs codec.SimulateWith over eps in predictor batches of batch
// episodes and returns every episode's accounting in order.
func simulate(p worldmodel.Predictor, keep codec.Keeper, eps []*trajectory.Episode, batch int, opt codec.SimOptions) ([]codec.EpisodeStats, error) {
	var all []codec.EpisodeStats
	for lo := 0; lo < len(eps); lo += batch {
		st, err := codec.SimulateWith(p, keep, eps[lo:min(len(eps), lo+batch)], opt)
		if err != nil {
			return nil, err
		}
		all = append(all, st...)
	}
	return all, nil
}

// Compare runs the gated loop three ways with the rule keep: the model's
// mode as fill (what memory files do), the previous reconstructed code as
// fill, and predictions from the true history (teacher forcing; no decoder
// could follow it: it shows what the closed loop costs); then the mixing
// prior, whose mixed distribution gives the rule its entropies and fills
// (what 'encode --prior mix' writes). A risk policy's g(H) was calibrated
// on one of the two distributions (Policy.Prior), so the rows of the other
// read it off its scale: a writer refuses that, the comparison shows it.
func Compare(b *model.Bundle, p worldmodel.Predictor, eps []*trajectory.Episode, keep codec.Keeper, qs []*trajectory.Question, batch int) ([]Comparison, error) {
	if batch <= 0 {
		batch = 8
	}
	nb, err := codec.NeighboursOf(b.OPQ)
	if err != nil {
		return nil, err
	}
	variants := []struct {
		name string
		opt  codec.SimOptions
	}{
		{"wm-fill", codec.SimOptions{}},
		{"copy-fill", codec.SimOptions{FillPrevious: true}},
		{"teacher-forced", codec.SimOptions{TeacherForced: true}},
		{"mix", codec.SimOptions{Mix: true, Neighbours: nb}},
	}
	if pol, ok := keep.(model.Policy); ok && pol.Kind == model.Risk {
		keep = ruleOnly{pol}
	}
	rd := scorer(b, Options{})
	var out []Comparison
	for _, v := range variants {
		c, err := gatedRow(b, rd, p, keep, eps, qs, batch, v.name, v.opt)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// gatedRow runs keep's closed loop on eps with opt and sums it up as the
// row name: ideal bits per observation, the share of predicted coordinates
// kept, the share of omitted ones whose fill is the true code, and the
// distortion of qs through rd (nil: not measured).
func gatedRow(b *model.Bundle, rd reader.Reader, p worldmodel.Predictor, keep codec.Keeper, eps []*trajectory.Episode, qs []*trajectory.Question, batch int, name string, opt codec.SimOptions) (Comparison, error) {
	st, err := simulate(p, keep, eps, batch, opt)
	if err != nil {
		return Comparison{}, err
	}
	var bits float64
	var obs int
	var kept, coords, omitted, recovered uint64
	recon := map[int64][][]uint8{}
	for _, s := range st {
		bits += s.StateBits + s.ActionBits
		obs += s.Observations
		kept += s.Kept
		coords += s.Coords
		omitted += s.Omitted
		recovered += s.Recovered
		recon[s.ID] = s.Recon
	}
	c := Comparison{Name: name, IdealBitsPerObs: bits / float64(max(obs, 1))}
	if coords > 0 {
		c.KeptFraction = float64(kept) / float64(coords)
	}
	if omitted > 0 {
		c.ExactRecovery = float64(recovered) / float64(omitted)
	}
	if rd != nil && len(qs) > 0 {
		d, _, err := distortion(b, rd, eps, recon, qs)
		if err != nil {
			return Comparison{}, err
		}
		c.DeltaNLLBits = &d
	}
	return c, nil
}

// ruleOnly applies a policy's rule without being a model.Policy, so the
// writer's check that a risk policy is applied under the prior it was
// calibrated on (Policy.Prior) lets a comparison cross priors.
type ruleOnly struct{ p model.Policy }

func (r ruleOnly) Keep(j int, hQ16 uint32) bool { return r.p.Keep(j, hQ16) }
