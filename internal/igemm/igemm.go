package igemm

import (
	"fmt"
	"sync"
)

// MaxK is the largest inner dimension Pack accepts: every partial and final
// sum is at most K*128*128 in magnitude (the product (-128)*(-128) is 16384),
// and 131071*16384 is the largest such multiple below 2^31.
const MaxK = (1<<31 - 1) / (128 * 128)

// Packing geometry: a panel is 64 output columns; a group is 4 consecutive
// inner indices. Group g of panel p is 256 bytes at (p*groups+g)*256, column
// j's four weights at 4j (index 4g+i at 4j+i), zero past K and past N.
const (
	panelCols  = 64
	groupK     = 4
	groupBytes = panelCols * groupK
)

// kernelID names a kernel; kernel is the one MulPackedTo runs (tests set it
// to each of supported() in turn).
type kernelID int

const (
	kernelGo kernelID = iota
	kernelAVX2
	kernelVNNI
)

func (k kernelID) String() string {
	switch k {
	case kernelAVX2:
		return "avx2"
	case kernelVNNI:
		return "avx512vnni"
	}
	return "go"
}

var kernel = best()

// minWork is the fewest multiply-adds per goroutine for each kernel (about
// 5 microseconds of work).
var minWork = [...]int{kernelGo: 1 << 15, kernelAVX2: 1 << 18, kernelVNNI: 1 << 21}

// best is the fastest kernel this machine and build can run.
func best() kernelID {
	ks := supported()
	return ks[len(ks)-1]
}

// Kernel names the kernel MulPackedTo uses: "avx512vnni", "avx2" or "go".
func Kernel() string { return kernel.String() }

// Kernels lists the kernels this machine and build can run, slowest first.
func Kernels() []string {
	var names []string
	for _, k := range supported() {
		names = append(names, k.String())
	}
	return names
}

// Use makes MulPackedTo run the named kernel (one of Kernels) from now on,
// for checks that every kernel writes the same files (scripts/crossarch)
// and for benchmarks. All give the same results; it is not safe to call
// while products run.
func Use(name string) error {
	for _, k := range supported() {
		if k.String() == name {
			kernel = k
			return nil
		}
	}
	return fmt.Errorf("igemm: kernel %q is not available here (have %v)", name, Kernels())
}

// MulRef is the plain reference: for i < rows and n < N,
//
//	out[i*ldo+n] = sum over k < K of int32(a[i*lda+k]) * int32(w[k*N+n])
//
// with w (K x N) row-major. K must be at most MaxK (the sums then fit int32).
// It panics if a slice is too short for its shape.
func MulRef(out []int32, ldo int, a []int8, lda int, w []int8, rows, K, N int) {
	checkMul("MulRef", out, ldo, a, lda, rows, K, N)
	if N > 0 && K > len(w)/N {
		panic(fmt.Sprintf("igemm: MulRef weights K=%d N=%d do not fit a slice of %d", K, N, len(w)))
	}
	for i := 0; i < rows; i++ {
		o := out[i*ldo : i*ldo+N]
		clear(o)
		for k, av := range a[i*lda : i*lda+K] {
			x := int32(av)
			for n, wv := range w[k*N : k*N+N] {
				o[n] += x * int32(wv)
			}
		}
	}
}

// checkMul panics (a programming error) unless the shapes fit the slices.
func checkMul(name string, out []int32, ldo int, a []int8, lda int, rows, K, N int) {
	if rows < 0 || K < 0 || N < 0 || K > MaxK || lda < K || ldo < N ||
		(rows > 0 && (len(a) < (rows-1)*lda+K || len(out) < (rows-1)*ldo+N)) {
		panic(fmt.Sprintf("igemm: %s shapes rows=%d K=%d N=%d with strides %d %d do not fit slices of %d, %d (K at most %d)",
			name, rows, K, N, lda, ldo, len(a), len(out), MaxK))
	}
}

// Packed is a (K x N) int8 weight matrix packed once for MulPackedTo: panels
// of 64 columns, each a run of groups of 4 consecutive inner indices (the
// operand layout of VPDPBUSD), zero-padded to whole groups and panels, and
// -128 times each column's sum (the correction for activations offset by
// 128 to unsigned bytes). It is read-only once packed: any number of
// MulPackedTo calls may use it at once.
type Packed struct {
	k, n           int
	groups, panels int
	data           []int8
	bias           []int32
}

// Pack returns w (K x N, row-major) packed for MulPackedTo. It panics if w
// is too short or K exceeds MaxK (the int32 sums could overflow): both are
// programming errors.
func Pack(w []int8, K, N int) *Packed {
	return PackTo(nil, w, K, N)
}

// PackTo is Pack into dst's memory (grown when short; a new Packed when dst
// is nil), for a matrix packed once per use (attention's keys and values).
func PackTo(dst *Packed, w []int8, K, N int) *Packed {
	return PackStridedTo(dst, w, N, K, N, false)
}

// PackStridedTo is PackTo for a (K, N) matrix stored with row stride ld
// (element (k, n) at w[k*ld+n]), or, with trans, stored transposed (element
// (k, n) at w[n*ld+k]): attention packs its keys and values in place from
// the rows of the QKV product.
func PackStridedTo(dst *Packed, w []int8, ld, K, N int, trans bool) *Packed {
	if K < 0 || N < 0 || K > MaxK {
		panic(fmt.Sprintf("igemm: Pack K=%d N=%d: K must be in [0, %d] so that the int32 sums cannot overflow", K, N, MaxK))
	}
	rows, cols := K, N
	if trans {
		rows, cols = N, K
	}
	if rows > 0 && (ld < cols || (rows-1)*ld+cols > len(w)) {
		panic(fmt.Sprintf("igemm: Pack K=%d N=%d (stride %d, transposed %v) does not fit a slice of %d", K, N, ld, trans, len(w)))
	}
	p := dst
	if p == nil {
		p = new(Packed)
	}
	p.k, p.n, p.groups, p.panels = K, N, (K+groupK-1)/groupK, (N+panelCols-1)/panelCols
	nd, nb := p.panels*p.groups*groupBytes, p.panels*panelCols
	if cap(p.data) < nd {
		p.data = make([]int8, nd)
	} else {
		p.data = p.data[:nd]
		clear(p.data)
	}
	if cap(p.bias) < nb {
		p.bias = make([]int32, nb)
	} else {
		p.bias = p.bias[:nb]
		clear(p.bias)
	}
	if trans {
		// Column n is row n of w: its groups of 4 consecutive k are 4
		// contiguous bytes of w, copied whole.
		full := K / groupK
		for n := 0; n < N; n++ {
			pn, j := n/panelCols, n%panelCols
			base := pn*p.groups*groupBytes + groupK*j
			row := w[n*ld : n*ld+K]
			var sum int32
			for g := 0; g < full; g++ {
				src := row[g*groupK : g*groupK+groupK]
				dst := p.data[base+g*groupBytes : base+g*groupBytes+groupK]
				copy(dst, src)
				sum += int32(src[0]) + int32(src[1]) + int32(src[2]) + int32(src[3])
			}
			for k := full * groupK; k < K; k++ {
				p.data[base+(k/groupK)*groupBytes+k%groupK] = row[k]
				sum += int32(row[k])
			}
			p.bias[n] = -128 * sum
		}
		return p
	}
	for k := 0; k < K; k++ {
		g, i := k/groupK, k%groupK
		for n, v := range w[k*ld : k*ld+N] {
			pn, j := n/panelCols, n%panelCols
			p.data[(pn*p.groups+g)*groupBytes+groupK*j+i] = v
			p.bias[n] -= 128 * int32(v)
		}
	}
	return p
}

// ColsTo sets dst (allocated when nil) to a view of p's first n columns,
// sharing p's memory (panels are stored one after another, so the first
// ones are a prefix), and returns it: a product with it computes only
// those columns (attention's scores of a query block against its keys).
func (p *Packed) ColsTo(dst *Packed, n int) *Packed {
	if n < 0 || n > p.n {
		panic(fmt.Sprintf("igemm: ColsTo %d of %d columns", n, p.n))
	}
	if dst == nil {
		dst = new(Packed)
	}
	panels := (n + panelCols - 1) / panelCols
	*dst = Packed{k: p.k, n: n, groups: p.groups, panels: panels,
		data: p.data[:panels*p.groups*groupBytes], bias: p.bias[:panels*panelCols]}
	return dst
}

// K is the inner dimension (rows of the weight matrix).
func (p *Packed) K() int { return p.k }

// N is the output dimension (columns of the weight matrix).
func (p *Packed) N() int { return p.n }

// MulPackedTo computes MulRef's result with p's matrix, bit for bit, on up to
// threads goroutines, which split the output columns (and rows, when there
// are fewer column panels than threads), never the inner sum. It panics if a
// slice is too short for its shape.
func MulPackedTo(out []int32, ldo int, a []int8, lda int, p *Packed, rows, threads int) {
	K, N := p.k, p.n
	checkMul("MulPackedTo", out, ldo, a, lda, rows, K, N)
	if rows == 0 || N == 0 {
		return
	}
	if K == 0 {
		for i := 0; i < rows; i++ {
			clear(out[i*ldo : i*ldo+N])
		}
		return
	}
	// Each goroutine gets at least minWork multiply-adds: below that,
	// starting it costs more than it saves.
	threads = int(min(int64(threads), max(1, int64(rows)*int64(K)*int64(N)/int64(minWork[kernel]))))
	switch kernel {
	case kernelVNNI:
		mulVNNI(out, ldo, a, lda, p, rows, threads)
	case kernelAVX2:
		mulAVX2(out, ldo, a, lda, p, rows, threads)
	default:
		mulGo(out, ldo, a, lda, p, rows, threads)
	}
}

// parallel runs fn(p, r0, r1) over every column panel p < panels and row
// range of a partition of [0, rows) into chunks of a multiple of unit rows,
// on up to threads goroutines, each taking a contiguous run of (panel, row
// chunk) items. Rows are cut only when there are fewer panels than threads.
func parallel(panels, rows, unit, threads int, fn func(p, r0, r1 int)) {
	threads = max(threads, 1)
	chunks := 1
	if panels < threads {
		chunks = min((threads+panels-1)/panels, (rows+unit-1)/unit)
	}
	per := ((rows+chunks-1)/chunks + unit - 1) / unit * unit
	chunks = (rows + per - 1) / per
	items := panels * chunks
	run := func(lo, hi int) {
		for it := lo; it < hi; it++ {
			p, c := it/chunks, it%chunks
			fn(p, c*per, min(rows, (c+1)*per))
		}
	}
	t := min(threads, items)
	if t <= 1 {
		run(0, items)
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < t; w++ {
		lo, hi := w*items/t, (w+1)*items/t
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(lo, hi)
		}()
	}
	wg.Wait()
}

// bufPool holds the per-call copies of the activations (padded to whole
// groups, offset to unsigned for the VNNI kernel).
var bufPool sync.Pool

func getBuf(n int) *[]int8 {
	if b, ok := bufPool.Get().(*[]int8); ok && cap(*b) >= n {
		*b = (*b)[:n]
		return b
	}
	b := make([]int8, n)
	return &b
}

// buf64Pool holds the plain Go kernel's per-call row pairs.
var buf64Pool sync.Pool

func getBuf64(n int) *[]int64 {
	if b, ok := buf64Pool.Get().(*[]int64); ok && cap(*b) >= n {
		*b = (*b)[:n]
		return b
	}
	b := make([]int64, n)
	return &b
}

// buf16Pool holds the AVX2 kernel's per-call activations as int16.
var buf16Pool sync.Pool

func getBuf16(n int) *[]int16 {
	if b, ok := buf16Pool.Get().(*[]int16); ok && cap(*b) >= n {
		*b = (*b)[:n]
		return b
	}
	b := make([]int16, n)
	return &b
}
