// Package codec is memowm's closed-loop writer and decoder and the memory
// file that holds their output.
//
// # Overview
//
// The writer stores an episode (codes z_0..z_T and actions u_0..u_{T-1}) as:
// z_0 packed raw (ceil(log2 C) bits per coordinate); then for t = 1..T the
// action u_{t-1} (adaptive models per field, lossless) and, for every
// coordinate j of o_t that the retention policy keeps, the true code z_{t,j}
// range-coded under the world model's integer table, or, in files written
// with Options.Mix, under the mixing prior that takes that table as one of
// its inputs (see Invariants). The model predicts o_t
// from the *reconstructed* history z~ (at most the model's window), never
// from the true codes: a kept coordinate reconstructs as z_{t,j}, an omitted
// one as the table's mode. The decoder runs the same model on the same
// reconstructed history, so it recomputes every table and every keep/omit
// decision; no mask is stored. Several episodes run through the predictor as
// one batch.
//
// # The memory file
//
//	header   magic "\x89MWM\r\n\x1a\n", version, bundle SHA-256, profile,
//	         precision, geometry, policy; CRC-32C
//	sections one per episode: id, observations, payload length, payload
//	         (z_0 packed, then the range-coder stream), CRC-32C of the
//	         reconstructed codes, CRC-32C of the section
//	index    per episode: id, offset, length, observations, kept coordinates,
//	         ideal bits of states and actions (Q16); CRC-32C
//	footer   index offset and length, end magic "MWMEND\r\n"
//
// The index at the end lets a reader decode one episode without reading the
// others. Files are written under a temporary name and renamed by Close.
//
// # Invariants
//
//   - Everything the decoder computes after the model's output is integer:
//     tables, modes, entropies, decisions, the coder.
//   - Every byte of the file is under a CRC-32C, so any single-bit flip and
//     any truncation is an error; the codes CRC of an episode also catches a
//     writer/decoder desync.
//   - A memory file names the bundle it was written with; Open refuses any
//     other bundle, naming both hashes.
//   - Decoders never panic on input.
//   - With Header.SlotRepeat (bit 16 of the stored policy kind; any other
//     flag bit is refused) every predicted state starts with one adaptive
//     binary flag per slot; a flagged slot equals the previous
//     reconstruction exactly and counts as kept (EpisodeStats.Repeated).
//     Files without the bit are read exactly as before.
//   - With Header.Mix (bit 17; never together with bit 16) every predicted
//     state is coded under the mixing prior (mix.go): per slot a binary
//     repeat decision, then the other slots' codes as ranks from the
//     previous code (Neighbours, computed in integers from the bundle's
//     quantizer), bit by bit under an integer logistic mix of the world
//     model's table, adaptive context models and long-range copy (mixmatch.go),
//     refined by adaptive probability maps and coded at 16-bit precision.
//     Writer and decoder run one function over a bitIO, so they update the
//     same state in the same order. Every adaptive part starts fresh with
//     each episode: episodes decode alone, in any batch. With a lossy
//     policy the rule reads the mixed distribution over the codes (its
//     entropy decides, its mode fills); a kept code is then coded as in the
//     lossless case. z_0 is coded first in the stream (mixinitial.go: ranks
//     from each codebook's codeword nearest the origin, under adaptive
//     counters shared by all coordinates), not packed raw.
package codec
