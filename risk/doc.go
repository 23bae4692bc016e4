// Package risk estimates the omission risk of every coordinate and builds the
// retention policy g_j(H) * V_j >= lambda * H (DESIGN.md section 2; the
// paper's sections 3.2 and A.3).
//
// # Overview
//
// Collect runs the world model over calibration episodes under the
// full-history reference policy (every coordinate kept, so the history is
// the true codes) and counts, per entropy bin of 0.25 bit and per
// coordinate, how often the modal prediction is wrong: the error lookup g.
// Impact replaces, one at a time, each wrongly predicted coordinate of a
// complete state by the model's mode and asks a reader how many more bits
// the reference answer costs: V_j is the mean of that change over errors
// only. Policy freezes both into a model.Policy in fixed point.
//
// Single-coordinate counterfactuals measure one step from a complete state.
// In closed loop an omitted code takes the mode and stays wrong while the
// history carries it, and a reader that is confident about each single
// change can still be moved by many changes of one slot. GroupImpacts turns
// closed-loop damages of whole groups (SlotGroups: one per slot, measured
// by calib.Setup.GroupDamage) into per-coordinate impacts on the same scale:
// a group's damage spread over its expected wrong modes.
//
// # Invariants
//
//   - Collect and Impact depend only on their inputs: batches and goroutines
//     never change the counts or the sums' order.
//   - A coordinate whose mode is right contributes nothing to V_j; a
//     coordinate that is never wrong has V_j = 0.
//   - Negative mean impacts clamp to 0 in the policy (the rule's risk is
//     non-negative).
package risk
