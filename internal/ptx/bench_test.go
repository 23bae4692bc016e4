package ptx

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkInterpret runs the tiled dp4a GEMM (64x64x256 int8) and reports
// interpreted PTX instructions per second, on one worker and on GOMAXPROCS.
func BenchmarkInterpret(b *testing.B) {
	const M, N, K = 64, 64, 256
	r := rng(99)
	a, bb := make([]byte, M*K), make([]byte, N*K)
	for i := range a {
		a[i] = byte(r.Uint32())
	}
	for i := range bb {
		bb[i] = byte(r.Uint32())
	}
	for _, par := range []int{1, 0} {
		b.Run(fmt.Sprintf("workers=%d", par), func(b *testing.B) {
			d := newDev(b)
			d.m.SetParallel(par)
			k := kernel(b, "dp4a", "gemm_i8")
			da, db, dc := d.upload(a), d.upload(bb), d.alloc(4*M*N)
			before := d.m.Executed()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				d.launch(k, Dim3{N / 16, M / 16, 1}, Dim3{16, 16, 1}, 0, dc, da, db, M, N, K/4)
			}
			el := time.Since(start).Seconds()
			b.ReportMetric(float64(d.m.Executed()-before)/el/1e6, "Minstr/s")
		})
	}
}

// BenchmarkMmaGemm runs the tensor-core int8 GEMM (gemm_i8 in mma.cu,
// m16n8k32 mma, 64x64x256) with fragments from shared loads and from
// ldmatrix, and reports int8 multiply-adds per second.
func BenchmarkMmaGemm(b *testing.B) {
	const M, N, K = 64, 64, 256
	r := rng(98)
	a, bb := make([]byte, M*K), make([]byte, N*K)
	for i := range a {
		a[i] = byte(r.Uint32())
	}
	for i := range bb {
		bb[i] = byte(r.Uint32())
	}
	for _, ldsm := range []uint64{0, 1} {
		b.Run(fmt.Sprintf("ldsm=%d", ldsm), func(b *testing.B) {
			d := newDev(b)
			d.m.SetParallel(1)
			k := kernel(b, "mma", "gemm_i8")
			da, db, dc := d.upload(a), d.upload(bb), d.alloc(4*M*N)
			before := d.m.Executed()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				d.launch(k, Dim3{N / 32, M / 32, 1}, Dim3{128, 1, 1}, 0, dc, da, db, M, N, K, ldsm)
			}
			el := time.Since(start).Seconds()
			b.ReportMetric(float64(d.m.Executed()-before)/el/1e6, "Minstr/s")
			b.ReportMetric(float64(M*N*K)*float64(b.N)/el/1e6, "MMAC/s")
		})
	}
}
