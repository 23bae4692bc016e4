// Package bench measures bits per observation of memowm and its baselines
// under one accounting (DESIGN.md sections 2 and 5).
//
// # Accounting
//
// Every row codes the same episodes' codes. Observations count N + K
// (transitions plus one initial state per episode). Actions are charged to
// every row the same way: the codec's adaptive action coder's cost. A row's
// bits_per_obs is physical (bytes actually produced, times 8, plus the
// actions); ideal_bits_per_obs is the model's code length where the method
// has one (-log2 p of what it codes), else equal to the physical figure.
//
// Rows: fixed-width (ceil(log2 C) bits per code), zstd (klauspost/compress
// at its best level on each episode's codes packed at ceil(log2 C) bits),
// order1-context (an adaptive model per coordinate conditioned on that
// coordinate's previous code, range-coded, adapting across the episodes in
// file order; the first state of each episode raw), wm-all-send (the memory
// file with lambda = 0: lossless) and wm-gated (the memory file with the
// bundle's policy). Speeds are wall-clock on the running machine.
package bench
