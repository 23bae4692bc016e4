package entropy

import (
	"errors"
	"fmt"
	"io"
)

// Errors returned by this package. Every message starts with "entropy: ".
// Errors about a particular byte of a stream wrap one of these with the byte
// offset ("entropy: corrupt stream at byte 17"), so test them with errors.Is.
var (
	// ErrTruncated: the stream ended before the decoder had the bytes it needs.
	// It wraps io.ErrUnexpectedEOF, so errors.Is(err, io.ErrUnexpectedEOF) holds.
	ErrTruncated = fmt.Errorf("entropy: truncated stream: %w", io.ErrUnexpectedEOF)

	// ErrCorrupt: the stream cannot have been written by an Encoder with the
	// tables the decoder was given (a target outside the table, or a final byte
	// the encoder would not have written).
	ErrCorrupt = errors.New("entropy: corrupt stream")

	// ErrTrailingData: Finish found bytes after the end of the stream, or the
	// caller decoded fewer symbols than were encoded.
	ErrTrailingData = errors.New("entropy: data after end of stream")

	// ErrBadFrequency: a (cumulative, frequency) pair that is not a valid slice
	// of the total (zero frequency, past the total, or, for Consume, not the
	// symbol the last Target points at), or a symbol outside its table.
	ErrBadFrequency = errors.New("entropy: invalid cumulative frequency or frequency")

	// ErrBadPrecision: a precision outside [1, MaxPrecision] or a total outside
	// [1, MaxTotal].
	ErrBadPrecision = errors.New("entropy: precision or total out of range")

	// ErrNoTarget: Consume was called without a preceding Target or TargetTotal.
	ErrNoTarget = errors.New("entropy: Consume without Target")

	// ErrClosed: the Encoder was used after Close.
	ErrClosed = errors.New("entropy: encoder already closed")

	// ErrAlphabet: an alphabet of fewer than 2 symbols, or more symbols than
	// the total 2^precision can give frequency 1 each.
	ErrAlphabet = errors.New("entropy: alphabet size out of range")

	// ErrNaN: a distribution handed to the bridge contains NaN.
	ErrNaN = errors.New("entropy: NaN in distribution")

	// ErrBadValue: a probability that is negative or infinite, or a logit
	// that is +Inf.
	ErrBadValue = errors.New("entropy: negative or infinite value in distribution")

	// ErrZeroSum: every probability is zero (or every logit is -Inf).
	ErrZeroSum = errors.New("entropy: distribution has zero total mass")

	// ErrOption: an invalid option value.
	ErrOption = errors.New("entropy: invalid option")
)

// atByte annotates a stream error with the offset of the byte concerned.
func atByte(err error, off int64) error {
	return fmt.Errorf("%w at byte %d", err, off)
}
