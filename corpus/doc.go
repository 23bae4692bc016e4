// Package corpus keeps a world model's training data in a file, so that a
// corpus of any size trains in bounded memory: File implements
// worldmodel.Corpus, reading each example's window (at most 17 states and
// their actions) from disk as the trainer draws it; the operating system's
// page cache keeps what fits.
//
// Build writes the episodes it is given, one after another, into an unnamed
// temporary file in a folder of the caller's choice (unlinked as soon as it
// is created where the system allows it, so nothing is left behind whatever
// happens to the process). Per sequence the file holds its code vectors
// (width bytes each), then a table of the offsets of its actions' records
// and the records (type, flags, position, displacement, payload).
//
// # Invariants
//
//   - Memory holds 24 bytes per sequence (where it lies in the file),
//     whatever the number or length of the sequences; Build holds one
//     episode at a time (the caller's reader decides how).
//   - A File reads back exactly what Build was given: the same codes and
//     actions, so training on it gives the same weights bit for bit as on
//     the same sequences in memory (worldmodel.Seqs), and a checkpoint
//     resumes on either.
//   - Reads are safe for concurrent use (ReadAt); a failed or short read is
//     an error naming the sequence, never a panic.
//   - Errors start with "corpus: ".
package corpus
