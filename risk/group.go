package risk

import "fmt"

// SlotGroups returns the coordinates of each slot as one group: slot s owns
// coordinates s*perSlot .. (s+1)*perSlot-1 (opq's code order).
func SlotGroups(coords, perSlot int) ([][]int, error) {
	if perSlot <= 0 || coords <= 0 || coords%perSlot != 0 {
		return nil, fmt.Errorf("risk: %d coordinates do not split into slots of %d", coords, perSlot)
	}
	g := make([][]int, coords/perSlot)
	for s := range g {
		g[s] = make([]int, perSlot)
		for k := range g[s] {
			g[s][k] = s*perSlot + k
		}
	}
	return g, nil
}

// GroupImpacts turns closed-loop group damages into per-coordinate impacts
// on the rule's scale (answer bits per wrong mode that is omitted).
//
// damage[g] is the distortion measured when every coordinate of group g is
// omitted at every step in closed loop (the omitted codes take the mode and
// stay wrong for as long as the history carries them). That damage is what
// the group's wrong modes cost together, so each coordinate of the group
// gets V_j = max(damage, 0) / sum of the group's error rates (errRate[j],
// the reference policy's marginal rate of wrong modes): the expected number
// of wrong modes omitted per step is that sum, and the rule multiplies V_j
// by an error probability again. A group that is never wrong gets its
// damage spread evenly over its coordinates.
func GroupImpacts(damage []float64, groups [][]int, errRate []float64) ([]float64, error) {
	if len(damage) != len(groups) {
		return nil, fmt.Errorf("risk: %d damages for %d groups", len(damage), len(groups))
	}
	v := make([]float64, len(errRate))
	seen := make([]bool, len(errRate))
	for g, grp := range groups {
		if len(grp) == 0 {
			return nil, fmt.Errorf("risk: group %d is empty", g)
		}
		var e float64
		for _, j := range grp {
			if j < 0 || j >= len(v) || seen[j] {
				return nil, fmt.Errorf("risk: group %d: coordinate %d is out of range or in two groups", g, j)
			}
			seen[j] = true
			e += errRate[j]
		}
		if e <= 0 {
			e = float64(len(grp))
		}
		d := max(damage[g], 0)
		for _, j := range grp {
			v[j] = d / e
		}
	}
	return v, nil
}
