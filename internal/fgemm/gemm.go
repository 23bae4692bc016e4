package fgemm

import (
	"fmt"
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

// Workspace holds MulTo's packing buffers for up to Threads goroutines. A
// Workspace serves one MulTo at a time; give each concurrent caller its own.
type Workspace struct {
	threads int
	bufs    []threadBuf
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
	w := &Workspace{threads: threads, bufs: make([]threadBuf, threads)}
	for i := range w.bufs {
		w.bufs[i].a = make([]float32, mr*kcBlock)
		w.bufs[i].b = make([]float32, kcBlock*ncBlock)
	}
	return w
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
	g := gemm{c: c, ldc: ldc, a: a, lda: lda, b: b, ldb: ldb, k: k,
		ta: f&TransA != 0, tb: f&TransB != 0, acc: f&Acc != 0}
	mp, np := (m+mr-1)/mr, (n+nr-1)/nr
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
		g.run(&w.bufs[0], 0, m, 0, n)
		return
	}
	var wg sync.WaitGroup
	for i := 0; i < t; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if rows {
				g.run(&w.bufs[i], mr*(i*mp/t), min(m, mr*((i+1)*mp/t)), 0, n)
			} else {
				g.run(&w.bufs[i], 0, m, nr*(i*np/t), min(n, nr*((i+1)*np/t)))
			}
		}(i)
	}
	wg.Wait()
}

// gemm is one product's operands.
type gemm struct {
	c, a, b       []float32
	ldc, lda, ldb int
	k             int
	ta, tb, acc   bool
}

// Where the kernel reads a panel of op(a): a packed panel, or in place
// (assembly only, full panels): a's rows, or a's columns (a stored
// transposed).
const (
	aPacked = iota
	aRows
	aCols
)

// run computes the block rows [i0, i1) x columns [j0, j1) of c; i0 and j0
// are multiples of the register block.
func (g *gemm) run(buf *threadBuf, i0, i1, j0, j1 int) {
	for jc := j0; jc < j1; jc += ncBlock {
		nc := min(ncBlock, j1-jc)
		for pc := 0; pc < g.k; pc += kcBlock {
			kc := min(kcBlock, g.k-pc)
			packB(buf.b, g.b, g.ldb, g.tb, jc, nc, pc, kc)
			load := pc > 0 || g.acc
			for ir := i0; ir < i1; ir += mr {
				rows := min(mr, i1-ir)
				src, ap := aPacked, (*float32)(nil)
				switch {
				case useAsm && rows == mr && !g.ta:
					_ = g.a[(ir+mr-1)*g.lda+pc+kc-1]
					src, ap = aRows, &g.a[ir*g.lda+pc]
				case useAsm && rows == mr:
					_ = g.a[(pc+kc-1)*g.lda+ir+mr-1]
					src, ap = aCols, &g.a[pc*g.lda+ir]
				default:
					packA(buf.a, g.a, g.lda, g.ta, ir, rows, pc, kc)
				}
				for jr := 0; jr < nc; jr += nr {
					cols := min(nr, nc-jr)
					bp := buf.b[jr*kc : (jr+nr)*kc]
					off := ir*g.ldc + jc + jr
					if rows == mr && cols == nr {
						g.kernel(kc, src, ap, buf.a, bp, g.c[off:], g.ldc, load)
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
					g.kernel(kc, src, ap, buf.a, bp, tile, nr, load)
					for i := 0; i < rows; i++ {
						copy(g.c[off+i*g.ldc:][:cols], tile[i*nr:i*nr+cols])
					}
				}
			}
		}
	}
}

// kernel runs the micro-kernel on one block: a's panel from src (ap in
// place, or the packed panel), b's packed panel, c a full block at stride
// ldc. It is the assembly kernel where there is one, else kernelGo.
func (g *gemm) kernel(kc, src int, ap *float32, packed, b, c []float32, ldc int, load bool) {
	_ = c[(mr-1)*ldc+nr-1]
	_ = b[kc*nr-1]
	switch {
	case src == aRows:
		kernel14x32r(kc, ap, &b[0], &c[0], ldc, b2i(load), g.lda)
	case src == aCols:
		kernel14x32(kc, ap, &b[0], &c[0], ldc, b2i(load), 4*g.lda)
	case useAsm:
		_ = packed[kc*mr-1]
		kernel14x32(kc, &packed[0], &b[0], &c[0], ldc, b2i(load), 4*mr)
	default:
		kernelGo(kc, packed, b, c, ldc, load)
	}
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
