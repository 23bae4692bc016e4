package entropy

import (
	"fmt"
	"math"
	"testing"
)

// A reference rANS coder (ryg_rans' rans64: 64-bit state in [2^31, 2^63),
// 32-bit output words), kept only to measure the design choice: the same
// cases as BenchmarkCoderOverhead and the same throughput cases, coded with
// rANS instead of the range coder. rANS encodes in reverse, so a codec using
// it must buffer every symbol and its table until the end of a stream.

const ransL = 1 << 31

// ransEncode codes syms (with one fixed table) and returns the stream as
// 32-bit words in decoding order, including the 8-byte final state.
func ransEncode(syms []uint8, cum, freq []uint32, prec uint) []uint32 {
	out := make([]uint32, 0, len(syms)/2+2)
	x := uint64(ransL)
	for i := len(syms) - 1; i >= 0; i-- {
		s := syms[i]
		f := uint64(freq[s])
		if x >= ((ransL>>prec)<<32)*f {
			out = append(out, uint32(x))
			x >>= 32
		}
		x = (x/f)<<prec + x%f + uint64(cum[s])
	}
	out = append(out, uint32(x), uint32(x>>32))
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 { // decoding order
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func ransDecode(dst []uint8, words []uint32, cum, freq []uint32, prec uint) []uint8 {
	x := uint64(words[0])<<32 | uint64(words[1])
	pos := 2
	mask := uint64(1)<<prec - 1
	for i := range dst {
		s := Lookup(cum, uint32(x&mask))
		dst[i] = uint8(s)
		x = uint64(freq[s])*(x>>prec) + x&mask - uint64(cum[s])
		if x < ransL && pos < len(words) {
			x = x<<32 | uint64(words[pos])
			pos++
		}
	}
	return dst
}

func TestRANSReference(t *testing.T) {
	syms, freq, cum, _ := throughputCase(64, 3, 24)
	words := ransEncode(syms, cum, freq, 24)
	got := ransDecode(make([]uint8, len(syms)), words, cum, freq, 24)
	for i := range syms {
		if got[i] != syms[i] {
			t.Fatalf("rANS reference: symbol %d", i)
		}
	}
}

// BenchmarkRANSOverhead is BenchmarkCoderOverhead for the reference rANS:
// overhead_q_pct is the total stream (with its 8-byte state) against the
// table's ideal length, flush_bytes the fixed cost.
func BenchmarkRANSOverhead(b *testing.B) {
	for _, prec := range []uint{16, 24} {
		for _, h := range overheadEntropies {
			b.Run(fmt.Sprintf("prec=%d/H=%g", prec, h), func(b *testing.B) {
				p32, p := targetDist(64, h)
				freq, _ := QuantizeProbsTo(nil, p32, prec)
				cum := CumulativeTo(nil, freq)
				syms := sampleSymbols(p, overheadSymbols)
				var idealP, idealQ float64
				for _, s := range syms {
					idealP -= math.Log2(p[s])
					idealQ += CostBits(freq[s], 1<<prec)
				}
				var words []uint32
				for b.Loop() {
					words = ransEncode(syms, cum, freq, prec)
				}
				bits := 32 * float64(len(words))
				b.ReportMetric(100*(bits-idealP)/idealP, "overhead_pct")
				b.ReportMetric(100*(bits-idealQ)/idealQ, "overhead_q_pct")
				// The final state x holds log2(x) - 31 bits of information.
				coded := 32*float64(len(words)-2) + math.Log2(float64(uint64(words[0])<<32|uint64(words[1]))) - 31
				b.ReportMetric(100*(coded-idealQ)/idealQ, "coder_pct")
				b.ReportMetric((bits-coded)/8, "flush_bytes")
			})
		}
	}
}

// BenchmarkRANSSpeed is BenchmarkEncode/BenchmarkDecode for the reference
// rANS (encode includes the reversal a forward-decoding codec would need).
func BenchmarkRANSSpeed(b *testing.B) {
	for _, c := range throughputCases {
		syms, freq, cum, _ := throughputCase(c.n, c.h, c.prec)
		words := ransEncode(syms, cum, freq, c.prec)
		b.Run(fmt.Sprintf("encode/n=%d/H=%g/prec=%d", c.n, c.h, c.prec), func(b *testing.B) {
			for b.Loop() {
				ransEncode(syms, cum, freq, c.prec)
			}
			b.ReportMetric(float64(b.N)*float64(len(syms))/b.Elapsed().Seconds(), "symbols/s")
		})
		dst := make([]uint8, len(syms))
		b.Run(fmt.Sprintf("decode/n=%d/H=%g/prec=%d", c.n, c.h, c.prec), func(b *testing.B) {
			for b.Loop() {
				ransDecode(dst, words, cum, freq, c.prec)
			}
			b.ReportMetric(float64(b.N)*float64(len(syms))/b.Elapsed().Seconds(), "symbols/s")
		})
	}
}
