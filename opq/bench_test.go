package opq

import (
	"math/rand/v2"
	"sync"
	"testing"
)

var (
	benchOnce   sync.Once
	benchQ      *Quantizer
	benchStates [][]float32
)

// benchQuantizer fits a default-geometry quantizer (32x512, 1,024 codebooks
// of 64) on 256 sim states, once per test binary.
func benchQuantizer(b *testing.B) (*Quantizer, [][]float32) {
	benchOnce.Do(func() {
		states := simStates(b, 16, 20, 1, 512)
		cfg := DefaultConfig()
		cfg.Iterations = 5
		benchQ = mustFit(b, states[:256], cfg)
		benchStates = simStates(b, 4, 15, 2, 512)
	})
	return benchQ, benchStates
}

// BenchmarkEncode measures EncodeBatch on batches of 64 default-geometry
// states with all cores.
func BenchmarkEncode(b *testing.B) { benchEncode(b, 0) }

// BenchmarkEncodeOneWorker is BenchmarkEncode on one goroutine.
func BenchmarkEncodeOneWorker(b *testing.B) { benchEncode(b, 1) }

func benchEncode(b *testing.B, workers int) {
	q, states := benchQuantizer(b)
	src := flatten(states[:64])
	dst := make([]uint8, 64*q.Shape().Codes)
	enc := q.NewEncoder()
	if workers > 0 {
		enc = q.NewEncoderWorkers(workers)
	}
	enc.EncodeBatch(dst, src) // allocate the scratch
	b.SetBytes(int64(len(src) * 4))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := enc.EncodeBatch(dst, src); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(64*b.N)/b.Elapsed().Seconds(), "states/s")
}

// BenchmarkDecode measures DecodeBatch on batches of 64 states.
func BenchmarkDecode(b *testing.B) {
	q, states := benchQuantizer(b)
	codes := encodeAll(b, q, states[:64])
	dst := make([]float32, 64*q.Shape().StateLen())
	enc := q.NewEncoder()
	enc.DecodeBatch(dst, codes) // allocate the scratch
	b.SetBytes(int64(len(dst) * 4))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := enc.DecodeBatch(dst, codes); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(64*b.N)/b.Elapsed().Seconds(), "states/s")
}

// BenchmarkRotate measures the rotation alone (rows of 512 times 512x512),
// the bulk of Encode, in GFLOP/s.
func BenchmarkRotate(b *testing.B) {
	q, _ := benchQuantizer(b)
	rng := rand.New(rand.NewPCG(1, 1))
	rows := chunkRows
	x := randFloats(rng, rows*512)
	y := make([]float32, rows*512)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q.rotateTo(y, x, q.rot, rows)
	}
	b.ReportMetric(float64(2*rows*512*512)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkKMeans measures one codebook's k-means: 16,384 points of 16 dims,
// 64 centroids, 25 Lloyd iterations (the default per-codebook work).
func BenchmarkKMeans(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	n, sd, k := 256*64, 16, 64
	pts := randFloats(rng, n*sd)
	var km kmeans
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		km.run(pts, n, sd, k, 25, nil, rand.New(rand.NewPCG(0, uint64(i))))
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "books/s")
}
