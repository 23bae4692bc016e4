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
// Rows: fixed-width (ceil(log2 C) bits per code); the general-purpose
// lossless rows, each on every episode's codes packed at ceil(log2 C) bits
// and compressed alone (one stream per episode, their bytes summed; the
// actions are charged as in every row, not compressed with the codes):
// zstd (klauspost/compress at its best level), zstd-long (the same with a
// window holding the longest episode, which cuts no match the library's
// largest window would find), xz (LZMA2 from the pure-Go ulikunitz/xz,
// dictionary as long as the longest episode, greedy parse, raw stream: a
// weaker coder than the xz command), then, with Options.External, the
// external commands found on PATH on the same packed bytes, one process per
// episode and direction, one thread each, their environment stripped of
// XZ_DEFAULTS, XZ_OPT, ZSTD_CLEVEL and ZSTD_NBTHREADS: xz-9e ('xz -9e -c
// -T1', the .xz container counted), zstd-19-long ('zstd -19 --long=27 -T1
// -c') and zstd-22-long ('zstd --ultra -22 --long=27 -T1 -c'), zstd told
// each episode's length (--stream-size, which gives the bytes it writes for
// a file holding the episode), each stream counted whole and decoded back
// with the same command ('xz -dc', 'zstd -dc --long=27'); a command that is
// missing is noted in Report.External and its rows skipped. best-general is a copy of whichever general-purpose
// row, in process or external, is smallest here, its note naming it (on a
// tie the first: an in-process row before an external one). Then
// order1-context (an adaptive model per coordinate conditioned on that
// coordinate's previous code, range-coded, adapting across the episodes in
// file order; the first state of each episode raw), wm-all-send
// (the memory file with lambda = 0: lossless), wm-repeat (the same with
// slot repeat flags) and wm-gated (the memory file with the bundle's
// policy). Every row carries its ratio to fixed-width and to best-general,
// set in one pass after the last row. Speeds are wall-clock on the running
// machine; there are no Go benchmarks: each row times its own encode and
// decode, and decodes every episode back and compares it.
package bench
