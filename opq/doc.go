// Package opq quantises observation states into discrete codes with optimised
// product quantisation (OPQ), and reconstructs states from codes.
//
// # Overview
//
// A state is Slots x Dim float32 values, slot-major (32 x 512 by default). A
// Quantizer maps it to Codes = Slots x Subspaces codes (1,024 by default), each
// an index into a codebook of Codewords entries (64: six bits each):
//
//  1. standardise: x[s][c] = (v[s][c] - mean[s][c]) / std[s][c], with the
//     training mean and std of each (slot, channel); std is floored so that a
//     constant channel maps to 0 instead of dividing by zero;
//  2. rotate: y[s] = x[s] R, one Dim x Dim orthogonal matrix shared by all
//     slots (identity, PCA, or PCA refined by OPQ rounds);
//  3. split y[s] into Subspaces blocks of Dim/Subspaces values; block m of
//     slot s is coordinate j = s*Subspaces + m;
//  4. code z[j] = the nearest codeword of the codebook of (s, m) (one per
//     (slot, subspace) by default, or one per subspace shared by all slots).
//
// Decode (the paper's D_omega) reverses it: codewords, rotation by R^T, and
// de-standardisation.
//
// Fit learns mean, std, R and the codebooks from training states: PCA on the
// standardised slot vectors with eigen-directions assigned to subspaces so
// that their variance is balanced, optional OPQ rounds (k-means, then the
// orthogonal Procrustes step R = U V^T from the SVD of X^T Y^), and k-means
// per codebook with k-means++ seeding, a fixed number of Lloyd iterations,
// deterministic repair of empty clusters and a seeded subsample of at most
// MaxPointsPerCentroid points per centroid.
//
// # Invariants
//
//   - Determinism: Fit with the same states and Config gives byte-identical
//     files for any GOMAXPROCS and worker count: every random choice comes
//     from a generator seeded by (Seed, what it is for), parallel work splits
//     outputs (codebooks, rows, columns) and never a sum, and every sum runs
//     in a fixed order.
//   - Encode gives the same codes for any GOMAXPROCS and batch size. Its
//     arithmetic is float32 with a fixed order of operations (internal/f32's
//     MulTo: products rounded before they are added, AVX2 and the plain loop
//     bit-identical); nearest means the smallest |c|^2 - 2<y,c>, the lowest
//     index on ties.
//   - Codes are the data that the rest of memowm keeps exact: a memory file
//     stores them and its decoder never re-encodes a state, so float
//     differences between architectures in Encode or Decode cannot desync a
//     writer and a decoder.
//   - Encode(Decode(z)) = z for codes that Encode produced (a fixed point),
//     up to codewords closer together than float32 rounding can separate.
//   - Files (WriteTo, Read, Save, Load) are versioned and end in a CRC-32C of
//     everything before it; Read refuses unknown versions, damaged files and
//     non-finite values with errors, never a panic. Every single-bit flip and
//     every truncation is an error (TestQuantizerCampaign counts them), and a
//     file that reads writes back to the same bytes. Save writes a temporary
//     file and renames it.
//   - Bounded allocation: the header's geometry is checked against
//     Config.Validate's limits and, before any array is allocated, the file
//     size it implies against the bytes the reader can hold (Load: the
//     file's size); arrays grow as their data arrives.
//   - Fit refuses fewer points per codebook than codewords (k-means++
//     cannot seed them), naming the states it needs.
//   - Fit reports, never prints: Warnings (fewer training states than
//     ReliableStates = 1,600, measured as the point from which held-out R^2
//     is within 0.015 of what 20,000 states give; a PCA rotation from fewer
//     slot vectors than channels) is computed from Info, so a quantizer read
//     from a file has them too; HeldOut is the R^2 on Config.HeldOut, stored
//     in the file (zero, "not measured", in files from before it).
//
// # Concurrency
//
// A Quantizer is immutable after Fit or Read and safe for concurrent use. An
// Encoder holds scratch buffers: use one per goroutine.
package opq
