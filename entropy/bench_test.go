package entropy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// Benchmarks. The overhead benchmarks measure one long stream per case and
// report bits, not time; run them once:
//
//	go test ./entropy -run '^$' -bench 'CoderOverhead|RANSOverhead' -benchtime 1x
//	go test ./entropy -run '^$' -bench 'Encode|Decode|Quantize|Entropy|Table|Adaptive|Context|RANSSpeed'

var overheadEntropies = []float64{0.05, 0.25, 1, 3, 5.8}

const overheadSymbols = 10_000_000

// targetDist returns a 64-ary distribution with entropy h bits: softmax of
// fixed random scores (seeded normals) at a temperature found by bisection.
// It returns the float32 probabilities handed to the bridge and, as the true
// distribution, those same values normalised in float64.
func targetDist(n int, h float64) ([]float32, []float64) {
	rng := rand.New(rand.NewPCG(1, 1))
	scores := make([]float64, n)
	for i := range scores {
		scores[i] = rng.NormFloat64()
	}
	dist := func(temp float64) []float64 {
		p := make([]float64, n)
		m := math.Inf(-1)
		for _, s := range scores {
			m = max(m, s)
		}
		var sum float64
		for i, s := range scores {
			p[i] = math.Exp((s - m) / temp)
			sum += p[i]
		}
		for i := range p {
			p[i] /= sum
		}
		return p
	}
	ent := func(p []float64) float64 {
		var e float64
		for _, v := range p {
			if v > 0 {
				e -= v * math.Log2(v)
			}
		}
		return e
	}
	lo, hi := 1e-4, 1e4 // log-space bisection on the temperature
	for range 200 {
		mid := math.Sqrt(lo * hi)
		if ent(dist(mid)) < h {
			lo = mid
		} else {
			hi = mid
		}
	}
	p := dist(math.Sqrt(lo * hi))
	p32 := make([]float32, n)
	var sum float64
	for i, v := range p {
		p32[i] = float32(v)
		sum += float64(p32[i])
	}
	for i := range p {
		p[i] = float64(p32[i]) / sum
	}
	return p32, p
}

// sampleSymbols draws count symbols from p (float64 inverse CDF).
func sampleSymbols(p []float64, count int) []uint8 {
	rng := rand.New(rand.NewPCG(2, 2))
	cdf := make([]float64, len(p))
	var c float64
	for i, v := range p {
		c += v
		cdf[i] = c
	}
	out := make([]uint8, count)
	for i := range out {
		u := rng.Float64() * c
		out[i] = uint8(min(sort.SearchFloat64s(cdf, u), len(p)-1))
	}
	return out
}

// BenchmarkCoderOverhead codes 10^7 symbols from a 64-ary distribution of
// each target entropy with its quantised table and reports, in percent of
// the ideal length:
//
//	overhead_pct    total stream bits vs sum(-log2 p) under the true p
//	overhead_q_pct  total stream bits vs sum(-log2 q) under the table q
//	precision_pct   sum(-log2 q) vs sum(-log2 p): the bridge's loss
//	coder_pct       coded bits before the flush vs sum(-log2 q): the coder's
//	                arithmetic loss alone
//
// and flush_bytes, the fixed cost of ending the stream. bits/symbol is the
// measured entropy.
func BenchmarkCoderOverhead(b *testing.B) {
	for _, prec := range []uint{16, 24, 28} {
		for _, h := range overheadEntropies {
			b.Run(fmt.Sprintf("prec=%d/H=%g", prec, h), func(b *testing.B) {
				p32, p := targetDist(64, h)
				freq, err := QuantizeProbsTo(nil, p32, prec)
				if err != nil {
					b.Fatal(err)
				}
				cum := CumulativeTo(nil, freq)
				syms := sampleSymbols(p, overheadSymbols)
				var idealP, idealQ float64
				for _, s := range syms {
					idealP -= math.Log2(p[s])
					idealQ += CostBits(freq[s], 1<<prec)
				}
				var e *Encoder
				b.ResetTimer()
				for b.Loop() {
					e = NewEncoder(nil)
					for _, s := range syms {
						e.Encode(cum[s], freq[s], prec)
					}
					if err := e.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				bits := 8 * float64(e.Len())
				b.ReportMetric(100*(bits-idealP)/idealP, "overhead_pct")
				b.ReportMetric(100*(bits-idealQ)/idealQ, "overhead_q_pct")
				b.ReportMetric(100*(idealQ-idealP)/idealP, "precision_pct")
				b.ReportMetric(100*(e.CodedBits()-idealQ)/idealQ, "coder_pct")
				b.ReportMetric((bits-e.CodedBits())/8, "flush_bytes")
				b.ReportMetric(idealP/float64(len(syms)), "bits/symbol")
				d, _ := NewDecoderBytes(e.Bytes())
				for i, s := range syms[:1000] {
					if got, err := d.DecodeSymbol(cum, prec); err != nil || got != int(s) {
						b.Fatalf("symbol %d: %d want %d (%v)", i, got, s, err)
					}
				}
			})
		}
	}
}

// throughputCase is a stream of 2^16 symbols under one table.
func throughputCase(n int, h float64, prec uint) (syms []uint8, freq, cum []uint32, buf []byte) {
	p32, p := targetDist(n, h)
	freq, _ = QuantizeProbsTo(nil, p32, prec)
	cum = CumulativeTo(nil, freq)
	syms = sampleSymbols(p, 1<<16)
	e := NewEncoder(nil)
	for _, s := range syms {
		e.EncodeSymbol(int(s), cum, prec)
	}
	e.Close()
	return syms, freq, cum, e.Bytes()
}

var throughputCases = []struct {
	n    int
	h    float64
	prec uint
}{{64, 0.25, 24}, {64, 3, 24}, {64, 5.8, 24}, {256, 7, 16}}

// BenchmarkEncode reports symbols/s for EncodeSymbol with a per-symbol table
// argument (as the codec calls it).
func BenchmarkEncode(b *testing.B) {
	for _, c := range throughputCases {
		b.Run(fmt.Sprintf("n=%d/H=%g/prec=%d", c.n, c.h, c.prec), func(b *testing.B) {
			syms, _, cum, buf := throughputCase(c.n, c.h, c.prec)
			e := NewEncoder(nil)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				e.Reset(nil)
				for _, s := range syms {
					e.EncodeSymbol(int(s), cum, c.prec)
				}
				e.Close()
			}
			b.ReportMetric(float64(b.N)*float64(len(syms))/b.Elapsed().Seconds(), "symbols/s")
		})
	}
}

// BenchmarkDecode reports symbols/s for DecodeSymbol (binary-search lookup).
func BenchmarkDecode(b *testing.B) {
	for _, c := range throughputCases {
		b.Run(fmt.Sprintf("n=%d/H=%g/prec=%d", c.n, c.h, c.prec), func(b *testing.B) {
			syms, _, cum, buf := throughputCase(c.n, c.h, c.prec)
			var d Decoder
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				d.ResetBytes(buf)
				for range syms {
					d.DecodeSymbol(cum, c.prec)
				}
				if err := d.Finish(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*float64(len(syms))/b.Elapsed().Seconds(), "symbols/s")
		})
	}
}

// benchLogits returns 1024 rows of n logits (a peaked model output).
func benchLogits(n int) [][]float32 {
	rng := rand.New(rand.NewPCG(1, 1))
	rows := make([][]float32, 1024)
	for i := range rows {
		rows[i] = make([]float32, n)
		for j := range rows[i] {
			rows[i][j] = float32(rng.NormFloat64() * 4)
		}
	}
	return rows
}

// BenchmarkQuantize reports ns/table for the bridge (1024 tables per
// observation in the codec).
func BenchmarkQuantize(b *testing.B) {
	for _, n := range []int{64, 256} {
		rows := benchLogits(n)
		probs := make([][]float32, len(rows))
		for i, r := range rows {
			probs[i] = make([]float32, n)
			for j, l := range r {
				probs[i][j] = float32(math.Exp(float64(l)))
			}
		}
		dst := make([]uint32, n)
		b.Run(fmt.Sprintf("logits/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				dst, _ = QuantizeLogitsTo(dst, rows[i&1023], 24)
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/table")
		})
		b.Run(fmt.Sprintf("probs/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				dst, _ = QuantizeProbsTo(dst, probs[i&1023], 24)
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/table")
		})
	}
}

// BenchmarkTablePipeline is one coordinate's integer work in the codec:
// logits -> table -> cumulative -> mode -> entropy.
func BenchmarkTablePipeline(b *testing.B) {
	rows := benchLogits(64)
	freq := make([]uint32, 64)
	cum := make([]uint32, 65)
	b.ReportAllocs()
	i := 0
	var sink uint32
	for b.Loop() {
		freq, _ = QuantizeLogitsTo(freq, rows[i&1023], 24)
		cum = CumulativeTo(cum, freq)
		sink += uint32(Mode(freq)) + EntropyQ16(freq)
		i++
	}
	_ = sink
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/table")
}

// BenchmarkEntropyQ16 reports ns/table for the integer entropy of a 64-ary
// table.
func BenchmarkEntropyQ16(b *testing.B) {
	rows := benchLogits(64)
	tables := make([][]uint32, len(rows))
	for i, r := range rows {
		tables[i], _ = QuantizeLogitsTo(nil, r, 24)
	}
	i := 0
	var sink uint32
	for b.Loop() {
		sink += EntropyQ16(tables[i&1023])
		i++
	}
	_ = sink
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/table")
}

// BenchmarkExp reports ns per call of the package's Exp.
func BenchmarkExp(b *testing.B) {
	xs := make([]float64, 1024)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range xs {
		xs[i] = -rng.ExpFloat64() * 5
	}
	var sink float64
	i := 0
	for b.Loop() {
		sink += Exp(xs[i&1023])
		i++
	}
	_ = sink
}

// BenchmarkAdaptive reports symbols/s for the 256-ary adaptive byte model.
func BenchmarkAdaptive(b *testing.B) {
	_, p := targetDist(256, 5)
	syms := sampleSymbols(p, 1<<16)
	e := NewEncoder(nil)
	for b.Loop() {
		a, _ := NewAdaptive(256)
		e.Reset(nil)
		for _, s := range syms {
			a.Encode(e, int(s))
		}
		e.Close()
	}
	b.ReportMetric(float64(b.N)*float64(len(syms))/b.Elapsed().Seconds(), "symbols/s")
}

// BenchmarkContextModel reports symbols/s for the order-1 baseline (1024
// coords x 64 contexts x 64 symbols), encoding and decoding.
func BenchmarkContextModel(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const steps = 16
	z := make([][]int, steps+1)
	z[0] = make([]int, 1024)
	for t := 1; t <= steps; t++ {
		z[t] = append([]int(nil), z[t-1]...)
		for j := range z[t] {
			if rng.IntN(4) == 0 {
				z[t][j] = rng.IntN(64)
			}
		}
	}
	enc, _ := NewContextModel(1024, 64, 64)
	dec, _ := NewContextModel(1024, 64, 64)
	e := NewEncoder(nil)
	var d Decoder
	for _, dir := range []string{"encode", "decode"} {
		b.Run(dir, func(b *testing.B) {
			for b.Loop() {
				enc.Reset()
				e.Reset(nil)
				for t := 1; t <= steps; t++ {
					for j, s := range z[t] {
						enc.Encode(e, j, z[t-1][j], s)
					}
				}
				e.Close()
				if dir == "decode" {
					dec.Reset()
					d.ResetBytes(e.Bytes())
					for t := 1; t <= steps; t++ {
						for j := range z[t] {
							dec.Decode(&d, j, z[t-1][j])
						}
					}
				}
			}
			b.ReportMetric(float64(b.N)*steps*1024/b.Elapsed().Seconds(), "symbols/s")
		})
	}
}
