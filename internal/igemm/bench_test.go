package igemm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memowm/memowm/internal/f32"
)

// timer keeps the fastest of a benchmark's iterations: on a shared machine
// the best iteration is the closest to the kernel's own speed.
type timer struct {
	t0  time.Time
	min time.Duration
}

func (t *timer) start() { t.t0 = time.Now() }

func (t *timer) stop() {
	if d := time.Since(t.t0); t.min == 0 || d < t.min {
		t.min = d
	}
}

// report sets the benchmark's bytes per operation and its GOP/s (ops
// integer or floating-point operations per iteration), mean and best.
func (t *timer) report(b *testing.B, ops float64, bytes int) {
	b.SetBytes(int64(bytes))
	b.ReportMetric(ops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GOP/s")
	b.ReportMetric(ops/t.min.Seconds()/1e9, "best-GOP/s")
}

// BenchmarkPeak measures VPDPBUSD's throughput on registers alone, on 1 and
// 2 goroutines: the ceiling for the VNNI kernel.
func BenchmarkPeak(b *testing.B) {
	if !slices.Contains(supported(), kernelVNNI) {
		b.Skip("no AVX-512 VNNI kernel on this machine or build")
	}
	const iters = 1 << 16
	for _, t := range []int{1, 2} {
		b.Run(fmt.Sprintf("t%d", t), func(b *testing.B) {
			var tm timer
			for i := 0; i < b.N; i++ {
				tm.start()
				var wg sync.WaitGroup
				for g := 0; g < t; g++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						vnniPeak(iters)
					}()
				}
				wg.Wait()
				tm.stop()
			}
			tm.report(b, float64(3072*iters*t), 0)
		})
	}
}

// benchShapes are the world model's products on 512 tokens (a 16-step
// history), 256 tokens (8 steps of 32) and one token: qkv (256 x 768), an
// MLP half (256 x 1024, 1024 x 256); and a long inner dimension (4096).
var benchShapes = []struct{ rows, K, N int }{
	{512, 256, 768}, {512, 256, 1024}, {512, 1024, 256},
	{256, 256, 768}, {256, 256, 1024}, {256, 1024, 256},
	{1, 256, 1024}, {1, 1024, 256},
	{512, 4096, 256},
}

// BenchmarkMulPacked times MulPackedTo with each kernel this machine
// supports and internal/f32's exact float32 MulPackedTo ("f32") on the same
// shapes, on 1 and 2 goroutines. GOP/s counts 2*rows*K*N operations; the
// bytes are the weights, activations and outputs of one product.
func BenchmarkMulPacked(b *testing.B) {
	saved := kernel
	defer func() { kernel = saved }()
	for _, s := range benchShapes {
		rng := rand.New(rand.NewPCG(7, 7))
		a, w := randInt8(rng, s.rows*s.K, false), randInt8(rng, s.K*s.N, false)
		out := make([]int32, s.rows*s.N)
		p := Pack(w, s.K, s.N)
		ops := float64(2 * s.rows * s.K * s.N)
		elems := s.K*s.N + s.rows*s.K + s.rows*s.N
		for _, t := range []int{1, 2} {
			for _, k := range supported() {
				b.Run(fmt.Sprintf("%dx%dx%d/%s/t%d", s.rows, s.K, s.N, k, t), func(b *testing.B) {
					kernel = k
					var tm timer
					for i := 0; i < b.N; i++ {
						tm.start()
						MulPackedTo(out, s.N, a, s.K, p, s.rows, t)
						tm.stop()
					}
					tm.report(b, ops, elems)
				})
			}
			b.Run(fmt.Sprintf("%dx%dx%d/f32/t%d", s.rows, s.K, s.N, t), func(b *testing.B) {
				fa, fw := make([]float32, len(a)), make([]float32, len(w))
				for i, v := range a {
					fa[i] = float32(v)
				}
				for i, v := range w {
					fw[i] = float32(v)
				}
				fp := f32.Pack(fw, s.N, s.K, s.N)
				fout := make([]float32, len(out))
				var tm timer
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					tm.start()
					f32.MulPackedTo(fout, s.N, fa, s.K, fp, s.rows, t)
					tm.stop()
				}
				tm.report(b, ops, 4*elems)
			})
		}
	}
}

// BenchmarkMulRef times the reference loop on a slice of the qkv shape.
func BenchmarkMulRef(b *testing.B) {
	const rows, K, N = 64, 256, 768
	rng := rand.New(rand.NewPCG(7, 7))
	a, w := randInt8(rng, rows*K, false), randInt8(rng, K*N, false)
	out := make([]int32, rows*N)
	var tm timer
	for i := 0; i < b.N; i++ {
		tm.start()
		MulRef(out, N, a, K, w, rows, K, N)
		tm.stop()
	}
	tm.report(b, 2*rows*K*N, K*N+rows*K+rows*N)
}
