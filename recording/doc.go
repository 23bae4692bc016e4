// Package recording reads and writes recording folders, memowm's format for
// real agent sessions (docs/recording-format.md), and imports them as
// trajectories.
//
// # Overview
//
// A recording folder holds one episode: recording.json (what was recorded),
// N screens (screens.jsonl for text, frames/NNNNNN.png for images), the N-1
// actions between them (actions.jsonl), and optionally one flat facts object
// per screen (facts.jsonl) and recorder timings (timing.jsonl, ignored here).
//
// Recorders (memowm record tty, memowm record web) write a folder step by
// step with a Writer and then call Import, the same function behind
// 'memowm import', so a recorder's trajectory is exactly what importing its
// folder gives. Read checks a folder; Recording.Episode turns it into a
// trajectory.Episode, every screen through package screen's fixed encoders
// (32 x 512 states); Import writes many folders as one trajectory file plus
// its questions, drawn from the facts by EpisodeQuestions.
//
// Users with an encoder of their own do not need this package: they write
// states straight into a trajectory file (package trajectory).
//
// # Invariants
//
//   - Read accepts exactly the documented format: unknown fields, blank lines
//     inside a file, wrong counts (N screens, N-1 actions, N facts), an
//     unknown action type, a position outside [0, 1], only one of x/y or
//     dx/dy, both text and key, a payload over 40 bytes, a text screen wider
//     or taller than recording.json says, or a PNG of another size are
//     errors naming the file (and line). Damaged input is an error, never a
//     panic.
//   - A Writer checks every item as it is added, writes recording.json last
//     (so a folder without it is unfinished and Read refuses it), and what it
//     writes, Read reads back unchanged.
//   - Import is deterministic: the same folders, order and seed give the same
//     trajectory and questions, byte for byte. Episode ids are 0..n-1 in the
//     order of the folders. On error nothing is left under the output names.
//   - Facts are stored in the trajectory as canonical JSON: compact, keys
//     sorted, numbers as written.
//   - Every error message starts with "recording: " (or "trajectory: " for
//     the output file).
package recording
