// Package entropy is memowm's entropy coder and the exact bridge from a
// model's floating-point distributions to the integer tables it codes with.
//
// # Read me first
//
//   - The coder never sees a model. It codes a symbol as a slice
//     [cum, cum+freq) of an integer total (2^prec, or any total up to
//     MaxTotal for adaptive models). Symbols decode in the order they were
//     encoded, and the decoder asks for each symbol's table only when it gets
//     there, so the table of symbol t+1 may depend on symbol t.
//   - Writer and decoder must build bit-identical tables. Everything after
//     QuantizeProbsTo / QuantizeLogitsTo is integer arithmetic: Mode,
//     CumulativeTo, Lookup, EntropyQ16, CostQ16, the coder. The bridge's float
//     steps are fixed (left-to-right float64 sums, no fused multiply-add, the
//     package's own Exp) and checked against golden vectors in testdata.
//   - A stream ends with one flush byte; the decoder reads up to 6 zeros past
//     the end of its input instead of the missing bytes. A streaming decoder
//     must be given exactly the stream (io.LimitReader if it is embedded).
//   - Call Decoder.Finish after the last symbol: it checks the stream ended
//     exactly there. A truncated stream gives ErrTruncated (or, if the
//     truncation changed the symbols decoded before it was noticed,
//     ErrCorrupt or ErrTrailingData); the codec's checksum catches the rest.
//   - Costs and entropies are integers in Q16 bits (FixedOne = 1 bit).
//     CostBits and EntropyBits are float64 versions for reports only.
//
// # Overview
//
// The coder (rangecoder.go, rangedecoder.go) is a range coder with a 56-bit
// window, carry propagation and byte output. Its loss is below
// 2^prec / 2^48 / ln 2 bits per symbol (8.6e-8 bit at 24-bit precision); the
// stream costs one flush byte. Encoder streams to an io.Writer or fills a
// buffer (NewEncoder(nil), Bytes); Decoder reads an io.Reader or a []byte.
//
// A typical step of the codec, on both sides:
//
//	freq, _ = entropy.QuantizeLogitsTo(freq, logits, 24)
//	cum = entropy.CumulativeTo(cum, freq)
//	mode := entropy.Mode(freq)          // the fill value
//	h := entropy.EntropyQ16(freq)       // the retention rule's H
//	enc.EncodeSymbol(z, cum, 24)        // writer
//	z, err = dec.DecodeSymbol(cum, 24)  // decoder
//
// The bridge (bridge.go) turns probabilities or logits into a table that
// totals exactly 2^prec with every frequency at least 1; its rules are
// written out step by step at the top of bridge.go. Exp (explog.go) is the
// machine-independent exponential it uses. EntropyQ16 and CostQ16
// (entropy_fixed.go) use an integer log2. Adaptive and ContextModel
// (adaptive.go) are count-based models with a fixed update rule, for side
// information and the order-1 baseline.
//
// Binary context mixing (logistic.go, cm.go) is integer only: probabilities
// of a bit as P16 (1/65536 units, in [1, 65535]), Squash and Stretch
// between them and the logistic domain through a pinned Go-literal table
// (logistic_table.go, generated from the package's own Exp), Counter (an
// adaptive bit probability whose rate falls as 1/(n+1.5) down to a limit),
// Mixer (weight sets of a logistic mix, trained online) and APM (an
// adaptive probability map, interpolated). EncodeBit and DecodeBit code a
// bit with a P16.
//
// # Invariants
//
//   - A quantised table has len(probs) entries, each in [1, 2^prec - 1], summing
//     to exactly 2^prec. It depends only on the input bits and prec: not on
//     the architecture, GOMAXPROCS or the table's previous contents.
//   - Rounding remainders go to the mode (largest frequency, lowest index on
//     ties), or, when that is not enough, to the largest frequencies in turn.
//     Mode uses the same tie rule.
//   - NaN anywhere in a distribution is an error (ErrNaN); negative or infinite
//     probabilities and +Inf logits are ErrBadValue; zero probabilities and
//     -Inf logits are allowed and get frequency 1.
//   - Encoding the same symbols with the same tables gives the same bytes,
//     streaming or buffered. A stream that decodes and passes Finish is exactly
//     the encoding of the symbols it decoded.
//   - The decoder never panics on any input and never reads outside it; every
//     error is one of the sentinels in errors.go (possibly wrapped with a byte
//     offset) or an error of the io.Reader.
//   - Adaptive counts are always >= 1 and their total below the limit.
//
// # Aliasing
//
// Functions ending in To write into dst (resliced, reallocated only when its
// capacity is short) and return it; dst must not overlap the input.
// NewDecoderBytes keeps src without copying. Encoder.Bytes aliases the
// Encoder's buffer.
package entropy
