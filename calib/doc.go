// Package calib chooses lambda, the retention policy's one free parameter,
// by full closed-loop reconstruction of calibration episodes, and tunes the
// gating baselines to the same distortion (DESIGN.md sections 2 and 5; the
// paper's section 3.4 and A.5).
//
// # Overview
//
// Evaluate runs the writer's closed loop (codec.Simulate) over the
// calibration episodes with a retention rule, every candidate from fresh
// histories, and measures the rate (ideal bits per observation: states and
// actions, over N + K observations) and the distortion D: the mean, over the
// questions about those episodes, of the reader's answer bits on the
// reconstructed state minus those on the complete state. Sweep evaluates a
// family of rules over its parameter grid; Select picks the smallest rate
// with |D| <= epsilon.
//
// Families: memowm (the risk policy g(H) V >= lambda H), static-e (one
// state-independent error rate for g), uniform-v (one impact for every
// coordinate), uncertainty (keep when H >= tau), random (keep with a fixed
// probability, from a seeded generator).
//
// # Invariants
//
//   - Every candidate starts from the same episodes and fresh histories; a
//     candidate's result depends only on it and the inputs.
//   - The base answer bits (complete states) are computed once.
package calib
