// Package trajectory is memowm's data model for recorded agent trajectories and
// its file formats.
//
// # Overview
//
// An Episode is T+1 observations and the T actions between them:
// (o_0, u_0, o_1, ..., u_{T-1}, o_T). An observation is either a state, Slots x Dim
// float32 values from an encoder (32 x 512 by default, see DefaultShape), or the
// state's Codes OPQ codes (1,024 by default) once quantised. A file holds one kind
// of observation, never both.
//
// Files are Arrow IPC (.arrow) and Parquet (.parquet), both with one row per
// observation (see Schema for the columns; files from DuckDB and pandas with
// list columns are read too), and NumPy (.npy) as an export of the
// observations alone for Python users. Questions about an episode's ground truth
// travel in a JSON Lines side file (QuestionsPath).
//
// # Invariants
//
//   - Rows of one episode are contiguous and their steps are 0, 1, ..., T in order.
//   - The action u_{t-1} sits on the row of the observation o_t it leads to, so the
//     row of step 0 has no action and every other row has exactly one.
//   - Every state value is finite; every action type is one of the NumActionTypes
//     kinds; positions lie in [0, 1]; payloads are at most MaxPayload bytes.
//   - A Writer validates every episode before writing it and writes to a temporary
//     name that it renames only on a successful Close, so a failed run never leaves
//     a half-written file under the final name.
//   - A Reader streams: it holds one record batch and one episode at a time, so a
//     file larger than memory can be read. Every violation it meets is a
//     *ValidationError naming the episode and step; damaged files are errors, never
//     panics. Every error about a file starts with "trajectory: " and names the
//     file; damage wraps ErrFormat (and ErrChecksum or ErrLimit where they apply).
//   - End of data is never confused with damage. Reader.Next returns the bare
//     io.EOF only at a clean end: a Parquet file has delivered exactly the rows
//     its metadata counts (in all and in its row groups), an Arrow file every
//     record batch its footer lists, and the footer's batches are the ones the
//     IPC stream before it holds (checked on opening), so a footer that lost
//     blocks is an error. No other error from this package satisfies
//     errors.Is(err, io.EOF): errors from arrow-go, Parquet or the operating
//     system that wrap io.EOF are rewrapped with io.ErrUnexpectedEOF in its
//     place (notEOF), so a loop that stops on errors.Is(err, io.EOF) never
//     takes a damaged file for a short one.
//   - The observation column may also be a list or large_list (DuckDB's and
//     pandas/pyarrow's Parquet), of float64 (every value exactly a float32) or
//     of any integer type for codes (every value in 0..255); each row is
//     checked to hold the file's width of non-null values, and a row that does
//     not is a *ValidationError naming its episode and step. Without memowm
//     metadata (in the schema, or a Parquet file's key-value metadata) the
//     width comes from the first row.
//   - Nothing is allocated from a number read from a file before that number is
//     checked against the file's size: Arrow IPC flatbuffers (footer, schema,
//     every record batch and dictionary message, and the Arrow schema stored in a
//     Parquet file) are verified before arrow-go parses them (every vector,
//     string and table inside the buffer, nesting depth and table count bounded,
//     every block and buffer inside the file); .npy shapes must account for the
//     file's bytes exactly; a questions line is at most MaxQuestionLine bytes.
//     What only decoding reveals (decompressed sizes) is capped per allocation by
//     WithMaxAlloc (default DefaultMaxAlloc: 64 MiB plus 64 times the file size).
//   - Every Arrow and Parquet file memowm writes carries a CRC-32C per episode,
//     over the episode's content (checksum.go): the schema key memowm.checksum
//     promises them, and they follow the data (an Arrow file's last, row-less
//     record batch; a Parquet file's key-value metadata). The Reader checks each
//     episode as it completes and the episode count at the end, so damage that
//     still decodes is an error naming the episode, never other content. Files
//     without checksums (other tools, memowm before them) are read unchecked, and
//     Reader.Checksummed and Summary.Checksummed say so. arrow-go v18.9 neither
//     writes nor verifies Parquet page CRCs. NumPy exports and questions files
//     carry no checksum.
//   - A Writer given questions (SetQuestions) writes them under a temporary name
//     and renames them with the trajectory; a failure leaves neither under its
//     final name, and a Writer without questions removes a stale questions file
//     beside its final name.
//   - The checksum is computed row by row in reading order, so a Reader checks
//     an episode it never holds whole: WithQuantize turns each state into codes
//     as its row is read (after validation and checksumming), and the episode
//     comes back with Codes only.
//   - A codes file may name the quantizer that made it (Meta.Quantizer, schema
//     key memowm.quantizer); only codes files do.
//   - A NumPy export writes three files, renamed together: the observations,
//     IndexPath (episode, step per row) and ActionsPath (one float64 row of
//     ActionColumns per action).
package trajectory
