package calib

import "fmt"

// omitKeeper omits exactly the coordinates marked true.
type omitKeeper []bool

func (o omitKeeper) Keep(j int, h uint32) bool { return j >= len(o) || !o[j] }

// GroupDamage runs the closed loop once per group, omitting every coordinate
// of that group at every step (the rest kept), and returns each run's
// point: its distortion is the group's closed-loop damage. Omitted codes
// take the model's mode, so a wrong one stays wrong until the history moves
// it: the damage includes that persistence, which single-step
// counterfactuals miss. The points carry family "group" and the group's
// index as the parameter.
func (s *Setup) GroupDamage(groups [][]int) ([]Point, error) {
	cfg := s.P.Config()
	coords := cfg.Slots * cfg.Subspaces
	out := make([]Point, 0, len(groups))
	for g, grp := range groups {
		o := make(omitKeeper, coords)
		for _, j := range grp {
			if j < 0 || j >= coords {
				return out, fmt.Errorf("calib: group %d: coordinate %d outside [0, %d)", g, j, coords)
			}
			o[j] = true
		}
		p, err := s.Evaluate("group", float64(g), o)
		if err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}
