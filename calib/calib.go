package calib

import (
	"fmt"
	"math"
	"sort"

	"github.com/memowm/memowm/codec"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/risk"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// Point is one evaluated candidate.
type Point struct {
	Family     string  `json:"family"`
	Param      float64 `json:"param"` // lambda, tau (bits) or keep probability
	Rate       float64 `json:"rate_bits_per_obs"`
	Distortion float64 `json:"delta_nll_bits"`
	// AbsChange is the mean magnitude of the per-answer change: how much the
	// reconstruction moves the reader at all, whatever the sign.
	AbsChange float64 `json:"abs_change_bits"`
	Kept      float64 `json:"kept_fraction"`
}

// Setup is what every evaluation shares.
type Setup struct {
	P         worldmodel.Predictor
	Q         *opq.Quantizer
	Scorer    risk.Scorer
	Episodes  []*trajectory.Episode  // calibration episodes, codes
	Questions []*trajectory.Question // about those episodes
	Batch     int                    // episodes per predictor batch (default 8)
	Progress  func(p Point)          // called after each evaluation, if not nil
	// Mix, when set (the bundle's neighbour order), runs the closed loop
	// under the mixing prior: the retention rule reads the mixed
	// distribution, as 'encode --prior mix' does.
	Mix    *codec.Neighbours
	byID   map[int64]int          // episode position by ID
	base   []float64              // answer bits on the complete states
	qsUsed []*trajectory.Question // the questions that name a known step
	states [][]float32            // scratch
}

func (s *Setup) init() error {
	if s.base != nil {
		return nil
	}
	s.byID = map[int64]int{}
	for i, ep := range s.Episodes {
		s.byID[ep.ID] = i
	}
	var states [][]float32
	for _, q := range s.Questions {
		i, ok := s.byID[q.Episode]
		if !ok || q.Step < 0 || q.Step >= len(s.Episodes[i].Codes) {
			continue
		}
		x, err := s.Q.Decode(s.Episodes[i].Codes[q.Step])
		if err != nil {
			return fmt.Errorf("calib: %w", err)
		}
		states = append(states, x)
		s.qsUsed = append(s.qsUsed, q)
	}
	if len(s.qsUsed) == 0 {
		return fmt.Errorf("calib: no question names a step of the calibration episodes")
	}
	var err error
	if s.base, err = s.Scorer.Bits(nil, states, s.qsUsed); err != nil {
		return fmt.Errorf("calib: %w", err)
	}
	return nil
}

// Evaluate runs the closed loop with keep and returns its rate, distortion
// and kept fraction.
func (s *Setup) Evaluate(family string, param float64, keep codec.Keeper) (Point, error) {
	if err := s.init(); err != nil {
		return Point{}, err
	}
	batch := s.Batch
	if batch <= 0 {
		batch = 8
	}
	recon := make([][][]uint8, len(s.Episodes))
	var bits float64
	var obs int
	var kept, coords uint64
	for lo := 0; lo < len(s.Episodes); lo += batch {
		var opt codec.SimOptions
		if s.Mix != nil {
			opt = codec.SimOptions{Mix: true, Neighbours: s.Mix}
		}
		st, err := codec.SimulateWith(s.P, keep, s.Episodes[lo:min(len(s.Episodes), lo+batch)], opt)
		if err != nil {
			return Point{}, fmt.Errorf("calib: %w", err)
		}
		for k, e := range st {
			recon[lo+k] = e.Recon
			bits += e.StateBits + e.ActionBits
			obs += e.Observations
			kept += e.Kept
			coords += e.Coords
		}
	}
	s.states = s.states[:0]
	for _, q := range s.qsUsed {
		x, err := s.Q.Decode(recon[s.byID[q.Episode]][q.Step])
		if err != nil {
			return Point{}, fmt.Errorf("calib: %w", err)
		}
		s.states = append(s.states, x)
	}
	got, err := s.Scorer.Bits(nil, s.states, s.qsUsed)
	if err != nil {
		return Point{}, fmt.Errorf("calib: %w", err)
	}
	var d, a float64
	for i := range got {
		d += got[i] - s.base[i]
		a += math.Abs(got[i] - s.base[i])
	}
	n := float64(len(got))
	p := Point{Family: family, Param: param, Rate: bits / float64(max(obs, 1)), Distortion: d / n, AbsChange: a / n}
	if coords > 0 {
		p.Kept = float64(kept) / float64(coords)
	}
	if s.Progress != nil {
		s.Progress(p)
	}
	return p, nil
}

// Select returns the point of smallest rate with |distortion| <= epsilon,
// and false if none qualifies. Ties go to the earlier point.
func Select(points []Point, epsilon float64) (Point, bool) {
	best, ok := Point{}, false
	for _, p := range points {
		if math.Abs(p.Distortion) <= epsilon && (!ok || p.Rate < best.Rate) {
			best, ok = p, true
		}
	}
	return best, ok
}

// LambdaGrid is the default lambda candidates: 0 and a geometric grid from
// 1e-6 to 10 (sqrt(10) apart).
func LambdaGrid() []float64 {
	g := []float64{0}
	for e := -12; e <= 2; e++ {
		g = append(g, math.Pow(10, float64(e)/2))
	}
	return g
}

// Q16 converts a non-negative value to Q16, rounded and saturated.
func Q16(x float64) uint32 {
	return uint32(math.Round(min(max(x, 0), float64(math.MaxUint32)/65536) * 65536))
}

// Q32 converts a non-negative value to Q32, rounded and saturated.
func Q32(x float64) uint64 {
	return uint64(math.Round(min(max(x, 0), 1<<31) * (1 << 32)))
}

// Families are the gating rules Sweep knows.
var Families = []string{"memowm", "static-e", "uniform-v", "uncertainty", "random"}

// Sweep evaluates family over its grid, ordered from keeping most to
// keeping least, then refines the step where the distortion first leaves
// [-epsilon, epsilon]: refine bisections between the last grid point inside
// and the next one (geometric for lambda, arithmetic otherwise). base is the
// calibrated risk policy (its tables; lambda ignored); errRate is the
// overall reference error rate for static-e; seed drives random. The points
// come back ordered by decreasing rate.
func (s *Setup) Sweep(family string, base model.Policy, errRate float64, seed uint64, epsilon float64, refine int) ([]Point, error) {
	var grid []float64
	geometric := false
	switch family {
	case "memowm", "static-e", "uniform-v":
		grid, geometric = LambdaGrid(), true
	case "uncertainty":
		bits := math.Log2(float64(s.P.Config().Codewords))
		for tau := 0.0; tau <= bits+1e-9; tau += bits / 12 {
			grid = append(grid, tau)
		}
	case "random":
		grid = []float64{1, 0.95, 0.9, 0.8, 0.6, 0.4, 0.2, 0.1, 0.05, 0}
	default:
		return nil, fmt.Errorf("calib: unknown family %q (want one of %v)", family, Families)
	}
	keeper := func(param float64) codec.Keeper { return KeeperOf(family, param, base, errRate, seed) }
	var out []Point
	inside := func(p Point) bool { return math.Abs(p.Distortion) <= epsilon }
	for _, g := range grid {
		p, err := s.Evaluate(family, g, keeper(g))
		if err != nil {
			return out, err
		}
		out = append(out, p)
	}
	// Refine between the last inside point that is followed by an outside one.
	lo := -1
	for i := 0; i+1 < len(out); i++ {
		if inside(out[i]) && !inside(out[i+1]) {
			lo = i
		}
	}
	if lo >= 0 {
		a, b := grid[lo], grid[lo+1]
		for r := 0; r < refine; r++ {
			mid := (a + b) / 2
			if geometric && a > 0 {
				mid = math.Sqrt(a * b)
			}
			p, err := s.Evaluate(family, mid, keeper(mid))
			if err != nil {
				return out, err
			}
			out = append(out, p)
			if inside(p) {
				a = mid
			} else {
				b = mid
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Rate > out[j].Rate })
	return out, nil
}

// KeeperOf is family's gating rule at param: memowm, static-e and
// uniform-v are base's risk policy (static-e with one error rate errRate,
// uniform-v with one impact) at lambda param; uncertainty keeps a
// coordinate when its entropy is at least param bits; random keeps one with
// probability param, from a stream seeded by seed (in call order). An
// unknown family gives nil.
func KeeperOf(family string, param float64, base model.Policy, errRate float64, seed uint64) codec.Keeper {
	switch family {
	case "memowm", "static-e", "uniform-v":
		pol := base
		switch family {
		case "static-e":
			pol = staticE(base, errRate)
		case "uniform-v":
			pol = uniformV(base)
		}
		return pol.WithLambda(Q32(param))
	case "uncertainty":
		return model.Policy{Kind: model.MinEntropy, MinEntropyQ16: Q16(param)}
	case "random":
		return &randomKeeper{threshold: uint64(param * (1 << 32)), state: seed}
	}
	return nil
}

// staticE is the risk policy with one error rate for every bin and
// coordinate.
func staticE(p model.Policy, errRate float64) model.Policy {
	r := Q16(errRate)
	p.BinRate = []int32{int32(r)}
	p.Marginal = make([]uint32, len(p.Impact))
	for j := range p.Marginal {
		p.Marginal[j] = r
	}
	return p
}

// uniformV is the risk policy with every coordinate's impact set to their
// mean.
func uniformV(p model.Policy) model.Policy {
	var sum float64
	for _, v := range p.Impact {
		sum += float64(v)
	}
	mean := uint64(math.Round(sum / float64(max(len(p.Impact), 1))))
	p.Impact = make([]uint64, len(p.Impact))
	for j := range p.Impact {
		p.Impact[j] = mean
	}
	return p
}

// randomKeeper keeps each coordinate with probability threshold / 2^32,
// from a SplitMix64 stream in call order.
type randomKeeper struct {
	threshold uint64
	state     uint64
}

func (r *randomKeeper) Keep(j int, h uint32) bool {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return z>>32 < r.threshold
}
