package fgemm

import (
	"fmt"
	"runtime"
	"sync"
)

// Flags select the operands' orientation and whether the product is added.
type Flags uint8

const (
	// TransA: op(a) is a's transpose (a stored k x m, row stride lda).
	TransA Flags = 1 << iota
	// TransB: op(b) is b's transpose (b stored n x k, row stride ldb).
	TransB
	// Acc: c += op(a) op(b) instead of c = op(a) op(b).
	Acc
)

// Cache blocking: inner steps per packed block (the block boundaries are
// fixed multiples of kcBlock, whatever the thread count: see the package
// invariants) and columns of op(b) packed at once (kcBlock x ncBlock floats,
// 512 KiB, meant to stay in L2).
const (
	kcBlock = 256
	ncBlock = 512
)

// minParallel is the smallest product (m*k*n multiply-adds) worth more than
// one goroutine.
const minParallel = 1 << 16

// Workspace holds MulTo's packing buffers and helper goroutines for up to
// Threads goroutines. A Workspace serves one MulTo at a time; give each
// concurrent caller its own. Its Threads-1 helper goroutines start at the
// first product that uses them, wait between products and end once the
// Workspace is unreachable.
type Workspace struct {
	threads int
	team    *team
}

// team is the state the helper goroutines share with MulTo (apart from the
// Workspace, so that they do not keep it reachable).
type team struct {
	bufs    []threadBuf
	started bool
	work    chan int // part numbers for the helpers
	done    sync.WaitGroup

	// The current product and its split into parts.
	g          gemm
	rows       bool // parts are row ranges (else column ranges)
	parts      int
	m, n       int
	mpan, npan int // row and column panels
}

// threadBuf is one goroutine's packing space.
type threadBuf struct {
	a    []float32        // mr x kcBlock: one packed panel of op(a)
	b    []float32        // kcBlock x ncBlock: packed panels of op(b)
	tile [mr * nr]float32 // an edge block, staged
}

// NewWorkspace returns a workspace for products on up to threads goroutines
// (at least 1). Its buffers take about 530 KiB per goroutine.
func NewWorkspace(threads int) *Workspace {
	threads = max(threads, 1)
	tm := &team{bufs: make([]threadBuf, threads)}
	for i := range tm.bufs {
		tm.bufs[i].a = make([]float32, mr*kcBlock)
		tm.bufs[i].b = make([]float32, kcBlock*ncBlock)
	}
	return &Workspace{threads: threads, team: tm}
}

// Threads returns the number of goroutines the workspace serves.
func (w *Workspace) Threads() int { return w.threads }

// MulTo sets c (m x n, row stride ldc) to op(a) op(b), or adds the product
// to c when f has Acc, where op(a) is m x k and op(b) is k x n (see Flags).
// It equals, up to rounding, the plain loop
//
//	for i < m, j < n: s := 0 (c[i][j] with Acc); for p < k: s += op(a)[i][p] * op(b)[p][j]; c[i][j] = s
//
// with fused multiply-adds where the machine has them. The result does not
// depend on the number of goroutines. c must not overlap a or b. It panics if
// a slice is too short for its shape.
func (w *Workspace) MulTo(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, k, n int, f Flags) {
	check(c, ldc, a, lda, b, ldb, m, k, n, f)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		if f&Acc == 0 {
			for i := 0; i < m; i++ {
				clear(c[i*ldc : i*ldc+n])
			}
		}
		return
	}
	tm := w.team
	tm.g = gemm{c: c, ldc: ldc, a: a, lda: lda, b: b, ldb: ldb, k: k,
		ta: f&TransA != 0, tb: f&TransB != 0, acc: f&Acc != 0, mr: panelRows(m)}
	pr := tm.g.mr
	mp, np := (m+pr-1)/pr, (n+nr-1)/nr
	t := w.threads
	if m*k*n < minParallel {
		t = 1
	}
	// Split the larger side (each goroutine packs the whole of the other
	// operand's share), in whole panels.
	rows := m >= n && mp >= t || np < t
	if rows {
		t = min(t, mp)
	} else {
		t = min(t, np)
	}
	if t <= 1 {
		tm.g.run(&tm.bufs[0], 0, m, 0, n)
		tm.g = gemm{}
		return
	}
	tm.rows, tm.parts, tm.m, tm.n, tm.mpan, tm.npan = rows, t, m, n, mp, np
	if !tm.started {
		tm.started = true
		tm.work = make(chan int)
		for i := 1; i < w.threads; i++ {
			go tm.help()
		}
		runtime.AddCleanup(w, func(work chan int) { close(work) }, tm.work)
	}
	tm.done.Add(t - 1)
	for i := 1; i < t; i++ {
		tm.work <- i
	}
	tm.part(0)
	tm.done.Wait()
	tm.g = gemm{} // drop the references to the operands
}

// help runs the parts it is sent until the channel closes.
func (tm *team) help() {
	for i := range tm.work {
		tm.part(i)
		tm.done.Done()
	}
}

// part computes part i of the current product: a range of whole row (or
// column) panels.
func (tm *team) part(i int) {
	t, pr := tm.parts, tm.g.mr
	if tm.rows {
		tm.g.run(&tm.bufs[i], pr*(i*tm.mpan/t), min(tm.m, pr*((i+1)*tm.mpan/t)), 0, tm.n)
	} else {
		tm.g.run(&tm.bufs[i], 0, tm.m, nr*(i*tm.npan/t), min(tm.n, nr*((i+1)*tm.npan/t)))
	}
}

// gemm is one product's operands.
type gemm struct {
	c, a, b       []float32
	ldc, lda, ldb int
	k             int
	ta, tb, acc   bool
	mr            int // the register block's rows: mr or mr8
}

// forceRows, when not 0, overrides panelRows (benchmarks).
var forceRows = 0

// panelRows returns the register block's rows for a product of m rows: 8
// when 8-row panels waste fewer rows than 14-row ones (m = 32 of attention:
// 4 full panels instead of 42 rows; the two kernels ran within 4% of each
// other on large products), else 14. It depends on m only, so the choice is
// the same for any number of goroutines.
func panelRows(m int) int {
	if forceRows != 0 {
		return forceRows
	}
	if float64((m+mr8-1)/mr8*mr8)*1.02 < float64((m+mr-1)/mr*mr) {
		return mr8
	}
	return mr
}

// Where the kernel reads a panel of op(a): a packed panel, or in place
// (assembly only, full panels): a's rows, or a's columns (a stored
// transposed).
const (
	aPacked = iota
	aRows
	aCols
)

// bInPlace selects reading full panels of an untransposed b in place
// instead of packing them (a benchmark switches it).
var bInPlace = true

// run computes the block rows [i0, i1) x columns [j0, j1) of c; i0 and j0
// are multiples of the register block.
func (g *gemm) run(buf *threadBuf, i0, i1, j0, j1 int) {
	// b is read in place unless its rows are a multiple of 4 KiB apart,
	// where the panel's rows would share cache sets.
	direct := useAsm && !g.tb && bInPlace && g.ldb%1024 != 0
	for jc := j0; jc < j1; jc += ncBlock {
		nc := min(ncBlock, j1-jc)
		for pc := 0; pc < g.k; pc += kcBlock {
			kc := min(kcBlock, g.k-pc)
			if !direct {
				packB(buf.b, g.b, g.ldb, g.tb, jc, nc, pc, kc)
			} else if full := nc &^ (nr - 1); full < nc {
				packB(buf.b[full*kc:], g.b, g.ldb, g.tb, jc+full, nc-full, pc, kc)
			}
			load := pc > 0 || g.acc
			for ir := i0; ir < i1; ir += g.mr {
				rows := min(g.mr, i1-ir)
				src, ap := aPacked, (*float32)(nil)
				switch {
				case useAsm && rows == g.mr && !g.ta:
					_ = g.a[(ir+g.mr-1)*g.lda+pc+kc-1]
					src, ap = aRows, &g.a[ir*g.lda+pc]
				case useAsm && rows == g.mr:
					_ = g.a[(pc+kc-1)*g.lda+ir+g.mr-1]
					src, ap = aCols, &g.a[pc*g.lda+ir]
				default:
					packA(buf.a, g.a, g.lda, g.ta, g.mr, ir, rows, pc, kc)
				}
				for jr := 0; jr < nc; jr += nr {
					cols := min(nr, nc-jr)
					bp := buf.b[jr*kc : (jr+nr)*kc]
					bptr, bst := &bp[0], 4*nr
					if direct && cols == nr {
						_ = g.b[(pc+kc-1)*g.ldb+jc+jr+nr-1]
						bptr, bst = &g.b[pc*g.ldb+jc+jr], 4*g.ldb
					}
					off := ir*g.ldc + jc + jr
					if rows == g.mr && cols == nr {
						g.kernel(kc, src, ap, buf.a, bptr, bst, bp, g.c[off:], g.ldc, load)
						continue
					}
					// An edge block: staged in the tile so that the kernel
					// runs the same steps on every element.
					tile := buf.tile[:]
					if load {
						for i := 0; i < rows; i++ {
							copy(tile[i*nr:i*nr+cols], g.c[off+i*g.ldc:][:cols])
						}
					}
					g.kernel(kc, src, ap, buf.a, bptr, bst, bp, tile, nr, load)
					for i := 0; i < rows; i++ {
						copy(g.c[off+i*g.ldc:][:cols], tile[i*nr:i*nr+cols])
					}
				}
			}
		}
	}
}

// kernel runs the micro-kernel on one block: a's panel from src (ap in
// place, or the packed panel), b's panel at bptr (bst bytes per step; bp is
// the packed panel for the Go kernel), c a full block at stride ldc. It is
// the assembly kernel where there is one, else kernelGo.
func (g *gemm) kernel(kc, src int, ap *float32, packed []float32, bptr *float32, bst int, bp, c []float32, ldc int, load bool) {
	_ = c[(g.mr-1)*ldc+nr-1]
	l := b2i(load)
	if src == aPacked {
		if !useAsm {
			kernelGo(kc, g.mr, packed, bp, c, ldc, load)
			return
		}
		_ = packed[kc*g.mr-1]
		ap = &packed[0]
	}
	switch {
	case src == aRows && g.mr == mr:
		kernel14x32r(kc, ap, bptr, &c[0], ldc, l, g.lda, bst)
	case src == aRows:
		kernel8x32r(kc, ap, bptr, &c[0], ldc, l, g.lda, bst)
	case g.mr == mr:
		kernel14x32(kc, ap, bptr, &c[0], ldc, l, astride(src, g), bst)
	default:
		kernel8x32(kc, ap, bptr, &c[0], ldc, l, astride(src, g), bst)
	}
}

// astride is the bytes between the steps of a's panel for kernel14x32 and
// kernel8x32.
func astride(src int, g *gemm) int {
	if src == aCols {
		return 4 * g.lda
	}
	return 4 * g.mr
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// check panics unless the slices hold the shapes.
func check(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, k, n int, f Flags) {
	ar, ac := m, k // stored shape of a
	if f&TransA != 0 {
		ar, ac = k, m
	}
	br, bc := k, n
	if f&TransB != 0 {
		br, bc = n, k
	}
	fits := func(s []float32, ld, r, cols int) bool {
		return ld >= cols && (r == 0 || cols == 0 || len(s) >= (r-1)*ld+cols)
	}
	if m < 0 || k < 0 || n < 0 || !fits(c, ldc, m, n) || !fits(a, lda, ar, ac) || !fits(b, ldb, br, bc) {
		panic(fmt.Sprintf("fgemm: MulTo shapes m=%d k=%d n=%d (flags %03b) with strides %d %d %d do not fit slices of %d, %d, %d",
			m, k, n, f, lda, ldb, ldc, len(a), len(b), len(c)))
	}
}
