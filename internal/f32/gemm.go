package f32

import (
	"fmt"
	"sync"
)

// Blocking of MulParTo: inner chunks of gemmKC values (the kernel continues
// from the stored partial sums, which is the same sequence of roundings as
// one pass), row blocks of gemmMC rows, packed panels of 32 columns.
const (
	gemmKC = 256
	gemmMC = 128
)

// MulParTo computes exactly MulTo's result (bit for bit, see the package
// order) with cache blocking and up to threads goroutines, which split the
// output columns into contiguous ranges. Splitting inner into chunks does not
// change the order: each element's running sum is stored as float32 between
// chunks and continued in the same sequence. It panics if a slice is too
// short for its shape.
func MulParTo(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, n, inner, k, threads int) {
	if n == 0 || k == 0 {
		return
	}
	if n < 0 || k < 0 || inner < 0 || lda < inner || ldb < k || ldc < k ||
		len(a) < (n-1)*lda+inner || len(c) < (n-1)*ldc+k || (inner > 0 && len(b) < (inner-1)*ldb+k) {
		panic(fmt.Sprintf("f32: MulParTo shapes n=%d inner=%d k=%d with strides %d %d %d do not fit slices of %d, %d, %d",
			n, inner, k, lda, ldb, ldc, len(a), len(b), len(c)))
	}
	threads = max(threads, 1)
	if !useAVX512 || inner == 0 || n < 8 || k < 32 {
		// Row chunks with the AVX2 (or plain) kernel.
		chunk := max(4, (n/threads+3)&^3)
		parallelRanges((n+chunk-1)/chunk, threads, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				r0, r1 := i*chunk, min((i+1)*chunk, n)
				MulTo(c[r0*ldc:], ldc, a[r0*lda:], lda, b, ldb, r1-r0, inner, k)
			}
		})
		return
	}
	mulBlocked(c, ldc, a, lda, b, ldb, nil, n, inner, k, threads)
}

// Packed is a right-hand matrix B (inner x k) repacked once for MulPackedTo:
// for each chunk of gemmKC rows, panels of 32 columns stored contiguously.
// Packing costs one copy of B; a matrix used many times (weights) then
// multiplies without repacking. It keeps a reference to B for the columns
// past the last full panel.
type Packed struct {
	data     []float32
	b        []float32
	ldb      int
	inner, k int
}

// Pack returns B (inner x k, row stride ldb) packed for MulPackedTo.
func Pack(b []float32, ldb, inner, k int) *Packed {
	if inner < 0 || k < 0 || ldb < k || (inner > 0 && len(b) < (inner-1)*ldb+k) {
		panic(fmt.Sprintf("f32: Pack shape inner=%d k=%d stride %d does not fit a slice of %d", inner, k, ldb, len(b)))
	}
	p := &Packed{b: b, ldb: ldb, inner: inner, k: k}
	panels := k / 32
	p.data = make([]float32, inner*32*panels)
	for pc := 0; pc < inner; pc += gemmKC {
		kl := min(gemmKC, inner-pc)
		for q := 0; q < panels; q++ {
			dst := p.data[pc*32*panels+q*kl*32:]
			for l := 0; l < kl; l++ {
				copy(dst[l*32:l*32+32], b[(pc+l)*ldb+32*q:])
			}
		}
	}
	return p
}

// MulPackedTo is MulParTo with a packed right-hand side: c (n x k) = a
// (n x inner) times the packed B, bit-identical to MulTo.
func MulPackedTo(c []float32, ldc int, a []float32, lda int, b *Packed, n, threads int) {
	inner, k := b.inner, b.k
	if n == 0 || k == 0 {
		return
	}
	if n < 0 || lda < inner || ldc < k || len(a) < (n-1)*lda+inner || len(c) < (n-1)*ldc+k {
		panic(fmt.Sprintf("f32: MulPackedTo shapes n=%d inner=%d k=%d with strides %d %d do not fit slices of %d, %d",
			n, inner, k, lda, ldc, len(a), len(c)))
	}
	threads = max(threads, 1)
	if !useAVX512 || inner == 0 || n < 8 || k < 32 {
		MulParTo(c, ldc, a, lda, b.b, b.ldb, n, inner, k, threads)
		return
	}
	mulBlocked(c, ldc, a, lda, b.b, b.ldb, b.data, n, inner, k, threads)
}

// mulBlocked is the AVX-512 blocked product; packed is B already packed, or
// nil to pack per call (per goroutine, its own columns).
func mulBlocked(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, packed []float32, n, inner, k, threads int) {
	panels := k / 32
	nb := n &^ 7
	parallelRanges(panels, threads, func(p0, p1 int) {
		var bp []float32
		if packed == nil {
			bp = make([]float32, min(gemmKC, inner)*32*(p1-p0))
		}
		for pc := 0; pc < inner; pc += gemmKC {
			kl := min(gemmKC, inner-pc)
			var base []float32
			if packed != nil {
				base = packed[pc*32*panels+p0*kl*32:]
			} else {
				base = bp
				// Pack B[pc:pc+kl, 32*p0 : 32*p1] into panels of kl x 32.
				for p := p0; p < p1; p++ {
					dst := bp[(p-p0)*kl*32:]
					for l := 0; l < kl; l++ {
						copy(dst[l*32:l*32+32], b[(pc+l)*ldb+32*p:])
					}
				}
			}
			acc := 0
			if pc > 0 {
				acc = 1
			}
			for i0 := 0; i0 < nb; i0 += gemmMC {
				i1 := min(i0+gemmMC, nb)
				for p := p0; p < p1; p++ {
					panel := &base[(p-p0)*kl*32]
					for i := i0; i < i1; i += 8 {
						kernel8x32(&c[i*ldc+32*p], ldc, &a[i*lda+pc], lda, panel, kl, acc)
					}
				}
			}
		}
	})
	// Columns past the last full panel and rows past the last block of 8.
	if kb := panels * 32; kb < k {
		MulTo(c[kb:], ldc, a, lda, b[kb:], ldb, nb, inner, k-kb)
	}
	if nb < n {
		MulTo(c[nb*ldc:], ldc, a[nb*lda:], lda, b, ldb, n-nb, inner, k)
	}
}

// parallelRanges splits [0, n) into up to threads contiguous ranges and runs
// fn on each in its own goroutine.
func parallelRanges(n, threads int, fn func(lo, hi int)) {
	t := min(threads, n)
	if t <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < t; w++ {
		lo, hi := w*n/t, (w+1)*n/t
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}
