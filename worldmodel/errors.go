package worldmodel

import "errors"

// Errors returned by this package. Every message starts with "worldmodel: ".
// Functions wrap them with details (which history, which step, which byte),
// so test them with errors.Is.
var (
	// ErrConfig: a Config that fails Validate, or an unknown preset name.
	ErrConfig = errors.New("worldmodel: invalid configuration")

	// ErrHistory: an empty history, one longer than MaxHistory, or a state
	// whose code vector has the wrong length.
	ErrHistory = errors.New("worldmodel: invalid history")

	// ErrCode: a code outside [0, Codewords).
	ErrCode = errors.New("worldmodel: code out of range")

	// ErrAction: an action the encoder cannot represent (unknown type,
	// position outside [0, 1], non-finite displacement, payload too long).
	ErrAction = errors.New("worldmodel: invalid action")

	// ErrFormat: a weights file that is not one (bad magic, truncated, sizes
	// that contradict the configuration, non-finite weights). Truncation also
	// wraps io.ErrUnexpectedEOF.
	ErrFormat = errors.New("worldmodel: invalid weights file")

	// ErrVersion: a weights file of a format version this build cannot read.
	ErrVersion = errors.New("worldmodel: unsupported weights file version")

	// ErrChecksum: the CRC-32C trailer of a weights file does not match.
	ErrChecksum = errors.New("worldmodel: weights file checksum mismatch")

	// ErrProfile: an inference profile this backend cannot reproduce.
	ErrProfile = errors.New("worldmodel: unsupported inference profile")
)
