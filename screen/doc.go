// Package screen holds memowm's deterministic screen encoders: each maps one
// screen (a terminal's text or a screenshot) to one state of Slots x Dim
// float32 values, slot-major, the role a Q-Former plays in the paper.
//
// # Overview
//
// The encoders are fixed functions with no training and no parameters beyond
// built-in seeds. They are good enough for memowm to compress real recordings
// and for its reader to answer questions about them; users with an encoder of
// their own (a Q-Former, a vision transformer) skip this package and write
// states into a trajectory file directly (package trajectory).
//
// EncodeText cuts a text screen of width x height cells into 32 regions,
// TextBandRows row bands times TextBandCols column bands, slot s = band row
// s/4, band column s%4. Band b of n over a size L covers [b*L/n, (b+1)*L/n),
// so 80x24 gives regions of 20 columns x 3 rows, and any other size works.
// Each region's 512 features are signed feature hashing counts of
//
//   - every character n-gram (n = 1, 2, 3) that starts in the region, read
//     left to right within one row and cut at the region's right edge, except
//     n-grams made only of spaces;
//   - every non-space character together with its row in the region and the
//     quarter of the region's width it stands in (a coarse position);
//   - for the region holding the cursor: the cursor's row and width quarter
//     in the region (weight 4) and the character under it (weight 2).
//
// A feature's hash is SplitMix64's finaliser chained over its kind and runes
// from a fixed seed; the low 9 bits pick the channel and the top bit the sign
// (+1 or -1). The integer counts c become sign(c)*sqrt(|c|): a region of
// ordinary text gives values of about -2..2, an empty region zeros.
//
// EncodeCells is the second text encoder: it keeps the characters. The
// state is read as 1,024 groups of 16 values (group g at values
// [16g, 16g+16), OPQ's subspace g%32 of slot g/32 when the quantizer has no
// rotation). A screen of at most 1,020 cells gives every cell its own group;
// a larger one (NewCellLayout) gives a group a cell in its first row and its
// last two, where most terminal programs keep their message and status
// lines, and cuts every other row into runs of the fewest cells a group that
// fit (3 on 80 x 24: rows 0, 22 and 23 a cell a group, the 21 others 27
// groups each, 807 groups in all). Cell k of a run of c cells adds its
// character's embedding to dims [16k/c, max(16k/c+1, 16(k+1)/c)) of the
// group: a vector of values each the sum of three uniforms in [-1, 1)
// drawn by SplitMix64 from a fixed seed and the rune, the space the zero
// vector. The last 4 groups hold the cursor: column/16, column%16, row/16
// and row%16, each plus one, as embeddings from their own seeds (all zeros
// without a cursor). CellLayout.Decode reads a state back into a screen,
// each cell the printable ASCII character with the nearest embedding: the
// exact inverse on ASCII screens whose layout has at most 16 cells a group
// (past that, several cells share a dim and decoding is a guess), and what
// a quantised state still shows.
// With 64 codewords a group, a group of one cell keeps any of 64 characters
// at its place exactly; a run of 3 keeps 64 patterns of 3 characters (about
// 2 bits a cell), so the middle of a large screen is where the 6,144-bit
// state is lossy.
//
// EncodeImage area-averages a picture onto a grid of ImageGridW x ImageGridH
// cells (64 x 32; cell x covers pixel columns [x*W/64, (x+1)*W/64), at least
// one), cuts the grid into 32 regions of 8 x 8 cells, 4 rows x 8 columns
// (slot s = region row s/8, region column s%8), and describes each region by
// 96 numbers: the 64 cells' luma minus 0.5 (Rec. 601 weights) and, on 4 x 4
// blocks of 2 x 2 cells, the colour differences B-Y and R-Y. A fixed matrix of
// 96 x 512 approximately Gaussian values (each the sum of 12 uniforms minus 6,
// from SplitMix64 with a fixed seed, times 2/sqrt(96)) projects each region to
// its slot. Colours are premultiplied (alpha composites over black).
//
// # Invariants
//
//   - Determinism: the output depends only on the input, bit for bit, on
//     every machine and for any GOMAXPROCS. Text counts are integers; sqrt is
//     correctly rounded; image sums are integers divided once in float64; the
//     projection is internal/f32's MulTo (one documented summation order, no
//     fused multiply-add); the Gaussian matrix is built from integer hashing
//     and float64 additions in a fixed order. Nothing runs in goroutines.
//   - Locality: slot s depends only on its region: the cells (or pixels) of
//     region s and, for text, the cursor when it lies in region s. A change
//     confined to one region changes at most that slot. For EncodeCells a
//     cell's change changes only its own dims (shared with other cells only
//     past 16 cells a group), and slot 31 holds the cursor.
//   - Equal screens give equal states. A text row shorter than the width is
//     padded with spaces, so trailing spaces never matter.
//   - Every value is finite.
//   - Errors start with "screen: "; the encoders never panic on bad input.
package screen
