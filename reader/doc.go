// Package reader holds memowm's fixed reader: the model R whose answer loss
//
//	l(q, y; Z) = -log2 P_R(y | q, Z)
//
// defines distortion (DESIGN.md sec. 2). Task impact V_j, the counterfactual
// labels, and lambda calibration all read answers through a Reader.
//
// # Overview
//
// A Reader scores (state, question) pairs: the state is one decoded
// observation, Slots x Dim float32 values, slot-major (the output of
// opq.Quantizer.Decode), and the question a trajectory.Question whose Answer is
// one of its Choices. The result is the bits of the reference answer.
//
// Three readers are provided:
//
//   - Probe, a small built-in model trained on complete quantised states and
//     the sim questions (TrainProbe), then frozen and saved (Probe.WriteTo,
//     Read, Save, Load). Its forward pass (probe.go) is
//
//     x'   = (x - mean) * invstd               per (slot, channel), fixed from training data
//     y_s  = x'_s Wp                           S x K slot projection, question independent
//     u, b, c = sums of hashed question-feature rows (kind, subject, kind|subject)
//     l_s  = y_s . u + b_s                     attention logit of slot s
//     a    = softmax(l)                        over the S slots
//     r    = sum_s a_s y_s                     pooled evidence (K)
//     h    = relu(r W1 + b1 + c)               hidden (H)
//     s_i  = h . E_i + e_i                     E_i, e_i: sums of hashed choice-feature rows
//     P    = softmax(s) over the choices       (choice, subject|choice, kind|choice)
//
//     Features are hashed (FNV-1a 64, two buckets each), so a subject or choice
//     never seen in training still gets a score.
//
//   - TextReader, the built-in reader of text screens: it reads a state of
//     the cells encoder (screen.EncodeCells) back into a screen (each cell
//     the character whose embedding is nearest) and scores each choice by
//     where it stands on that screen: a log-linear model over hashed
//     features of the choice (its value, whether it appears at all, whether
//     it is the cursor's column or row) and of every place it appears (the
//     characters and character classes around it, its row from the top and
//     the bottom, its column band), each joined with the question's kind,
//
//     s(y) = w . f(y) + log sum over places o of exp(w . f(o))
//     P    = softmax(s) over the choices
//
//     So it reads values never seen in training ("T:" then digits on the
//     bottom row is the turn) when the quantised state still shows them,
//     and falls back to the value prior when it does not. TrainText fits w
//     with AdaGrad, one question a step, in a seeded order.
//
//   - HTTPReader, an adapter for a reader of the user's own (for example an LLM
//     behind a local endpoint), speaking the JSON protocol documented in
//     external.go (version 1, one question per request) and external_batch.go
//     (version 2, batches; a server that refuses the first batch is spoken to
//     in version 1), with a timeout and retries; docs/reader-protocol.md for
//     users, reader/reference/server.py a worked example of the server side.
//
// Single-coordinate counterfactuals change one slot of a decoded state (a code
// j belongs to slot j / Subspaces, and OPQ's rotation acts within a slot), so
// Reader.BitsEdits scores many one-slot edits of one base state under one
// question. The probe projects the base state once and each edit's slot once.
//
// # Invariants
//
//   - Determinism: the probe's results depend only on its parameters and the
//     inputs, never on batch size, batch order, GOMAXPROCS or the path taken:
//     Bits of a batch equals Bits one by one, and BitsEdits equals Bits of the
//     edited state, bit for bit. The projection is internal/f32's MulTo (one
//     documented order, no fused multiply-add); the rest is float64 with a fixed
//     order of operations and explicit float64(a*b) roundings.
//   - The standard library's math.Exp and math.Log are used. Reader outputs
//     feed calibration statistics (V_j, lambda) that are stored in the model
//     bundle; they are never recomputed by a decoder, so they do not need to be
//     bit-identical across architectures, only reproducible on one machine.
//   - Training (TrainProbe) is seeded and deterministic for a given config:
//     the split, the shuffles, the initialisation and the gradient sums (a
//     fixed number of chunks summed in chunk order) do not depend on GOMAXPROCS.
//   - The text reader's results depend only on its weights and the inputs:
//     decoding is nearest-neighbour in float64 over a fixed alphabet, sums
//     over features run in feature order, and BitsEdits (which re-decodes
//     only the edited slot's cells) equals Bits of the edited state.
//   - Files are versioned and end in a CRC-32C (kind 1 the probe, kind 2
//     the text reader); Read consumes exactly a probe's
//     bytes, refuses damaged or foreign data with an error wrapping ErrFormat,
//     never panics, and grows memory only with the bytes actually read.
//   - Every error message starts with "reader: ".
//
// # Concurrency
//
// A Probe or a TextReader is immutable after training or Read and safe for
// concurrent use.
// An HTTPReader is safe for concurrent use.
package reader

import "errors"

// Errors. Each error returned by this package wraps at most one of these.
var (
	// ErrFormat is wrapped by every error about data that is not a valid
	// probe file.
	ErrFormat = errors.New("reader: not a valid reader file")
	// ErrShape is wrapped when a state has the wrong number of values or is
	// not finite, or a slot edit is out of range.
	ErrShape = errors.New("reader: state does not match the reader's shape")
	// ErrQuestion is wrapped when a question has no choices or its answer
	// is not among them.
	ErrQuestion = errors.New("reader: invalid question")
	// ErrResponse is wrapped when an external reader's response is not
	// usable: not JSON, a missing field, a non-finite or out-of-range value,
	// the wrong number of log-probabilities, or a non-retryable HTTP status.
	ErrResponse = errors.New("reader: bad response from external reader")
	// ErrUnavailable is wrapped when an external reader did not answer
	// successfully within its retries (timeouts, 5xx, connection errors).
	ErrUnavailable = errors.New("reader: external reader unavailable")
	// ErrConfig is wrapped when a ProbeConfig or an option is out of range.
	ErrConfig = errors.New("reader: invalid configuration")
)
