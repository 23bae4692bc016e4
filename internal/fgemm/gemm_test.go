package fgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}

// shape is one MulTo case: sizes, strides, flags, goroutines.
type shape struct {
	m, k, n       int
	lda, ldb, ldc int
	f             Flags
	threads       int
}

func (s shape) String() string {
	return fmt.Sprintf("m=%d k=%d n=%d lda=%d ldb=%d ldc=%d flags=%03b threads=%d", s.m, s.k, s.n, s.lda, s.ldb, s.ldc, s.f, s.threads)
}

// operands returns random a and b for s and a c whose elements outside the
// m x n block (and a guard band after it) are NaN, and the guard offset.
func (s shape) operands(rng *rand.Rand) (a, b, c []float32) {
	ar, ac := s.m, s.k
	if s.f&TransA != 0 {
		ar, ac = s.k, s.m
	}
	br, bc := s.k, s.n
	if s.f&TransB != 0 {
		br, bc = s.n, s.k
	}
	_ = ac
	_ = bc
	a = randSlice(rng, max(ar, 1)*s.lda)
	b = randSlice(rng, max(br, 1)*s.ldb)
	c = make([]float32, max(s.m, 1)*s.ldc+7)
	nan := float32(math.NaN())
	for i := range c {
		c[i] = nan
	}
	for i := 0; i < s.m; i++ {
		for j := 0; j < s.n; j++ {
			c[i*s.ldc+j] = float32(rng.NormFloat64())
		}
	}
	return a, b, c
}

// reference returns the product in float64 and, per element, the sum of
// |op(a)[i][p] op(b)[p][j]| (plus |c| with Acc) that bounds its rounding.
func (s shape) reference(a, b, c []float32) (ref, mag []float64) {
	at := func(i, p int) float64 {
		if s.f&TransA != 0 {
			return float64(a[p*s.lda+i])
		}
		return float64(a[i*s.lda+p])
	}
	bt := func(p, j int) float64 {
		if s.f&TransB != 0 {
			return float64(b[j*s.ldb+p])
		}
		return float64(b[p*s.ldb+j])
	}
	ref, mag = make([]float64, s.m*s.n), make([]float64, s.m*s.n)
	for i := 0; i < s.m; i++ {
		for j := 0; j < s.n; j++ {
			var sum, abs float64
			if s.f&Acc != 0 {
				sum, abs = float64(c[i*s.ldc+j]), math.Abs(float64(c[i*s.ldc+j]))
			}
			for p := 0; p < s.k; p++ {
				v := at(i, p) * bt(p, j)
				sum += v
				abs += math.Abs(v)
			}
			ref[i*s.n+j], mag[i*s.n+j] = sum, abs
		}
	}
	return ref, mag
}

// tol is the accepted error per unit of mag: a float32 sum of k terms is
// within about k ulps of its magnitude; blocked and fused sums do better.
func tol(k int) float64 { return 2e-7 * float64(k+2) }

// checkShape runs s and compares with the float64 reference, and checks that
// nothing outside the block was written.
func checkShape(t *testing.T, rng *rand.Rand, s shape) {
	t.Helper()
	a, b, c := s.operands(rng)
	ref, mag := s.reference(a, b, c)
	NewWorkspace(s.threads).MulTo(c, s.ldc, a, s.lda, b, s.ldb, s.m, s.k, s.n, s.f)
	for i := range c {
		r, j := i/s.ldc, i%s.ldc
		inside := r < s.m && j < s.n
		if !inside {
			if !math.IsNaN(float64(c[i])) {
				t.Fatalf("%v: element %d outside the block was written (%g)", s, i, c[i])
			}
			continue
		}
		want := ref[r*s.n+j]
		if d := math.Abs(float64(c[i]) - want); !(d <= tol(s.k)*mag[r*s.n+j]+1e-30) {
			t.Fatalf("%v: c[%d][%d] = %g, reference %g (error %.3g, bound %.3g)", s, r, j, c[i], want, d, tol(s.k)*mag[r*s.n+j])
		}
	}
}

// randomShape draws a shape: mostly small and odd, sometimes crossing the
// register, inner (256) and column (512) blocks.
func randomShape(rng *rand.Rand, trial int) shape {
	var s shape
	switch trial % 6 {
	case 0:
		s.m, s.k, s.n = 1+rng.IntN(3*mr), 1+rng.IntN(600), 1+rng.IntN(3*nr)
	case 1:
		s.m, s.k, s.n = mr*(1+rng.IntN(5)), kcBlock*(1+rng.IntN(2)), nr*(1+rng.IntN(4))
	case 2:
		s.m, s.k, s.n = 1+rng.IntN(50), 1+rng.IntN(40), ncBlock-40+rng.IntN(100)
	default:
		s.m, s.k, s.n = rng.IntN(60), rng.IntN(70), rng.IntN(80)
	}
	s.f = Flags(rng.IntN(8))
	ac, bc := s.k, s.n
	if s.f&TransA != 0 {
		ac = s.m
	}
	if s.f&TransB != 0 {
		bc = s.k
	}
	s.lda, s.ldb, s.ldc = ac+rng.IntN(3), bc+rng.IntN(3), s.n+rng.IntN(4)
	s.lda, s.ldb, s.ldc = max(s.lda, 1), max(s.ldb, 1), max(s.ldc, 1)
	s.threads = 1 + rng.IntN(4)
	return s
}

// TestMulMatchesReference compares MulTo with a float64 reference over
// random shapes, every flag combination, padded strides, 1-4 goroutines and
// both register blocks (14 and 8 rows), with NaN guard bands; with the
// assembly kernels (where the machine has them) and with the plain Go
// kernel.
func TestMulMatchesReference(t *testing.T) {
	for _, asm := range []bool{true, false} {
		if asm && !useAsm {
			continue
		}
		t.Run(fmt.Sprintf("asm=%v", asm), func(t *testing.T) {
			defer func(u bool) { useAsm = u }(useAsm)
			useAsm = asm
			rng := rand.New(rand.NewPCG(1, 1))
			trials := 400
			if testing.Short() {
				trials = 100
			}
			for trial := 0; trial < trials; trial++ {
				checkShape(t, rng, randomShape(rng, trial))
			}
			// Both register blocks on every kind of shape.
			for _, rows := range []int{mr, mr8} {
				forceRows = rows
				for trial := 0; trial < trials/4; trial++ {
					checkShape(t, rng, randomShape(rng, trial))
				}
			}
			forceRows = 0
			// Every flag combination on one shape that crosses all blocks.
			for f := Flags(0); f < 8; f++ {
				m, k, n := 3*mr+5, kcBlock+37, ncBlock+nr+3
				s := shape{m: m, k: k, n: n, f: f, threads: 3, ldc: n + 1}
				s.lda, s.ldb = k, n
				if f&TransA != 0 {
					s.lda = m
				}
				if f&TransB != 0 {
					s.ldb = k
				}
				checkShape(t, rng, s)
			}
		})
	}
}

// TestThreadsIdentical: the result is the same bits for any goroutine count.
func TestThreadsIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, s := range []shape{
		{m: 301, k: 530, n: 97, f: 0},
		{m: 45, k: 1000, n: 700, f: TransA | Acc},
		{m: 200, k: 300, n: 33, f: TransB},
		{m: 129, k: 77, n: 1030, f: TransA | TransB | Acc},
	} {
		s.lda, s.ldb, s.ldc = s.k, s.n, s.n
		if s.f&TransA != 0 {
			s.lda = s.m
		}
		if s.f&TransB != 0 {
			s.ldb = s.k
		}
		a, b, c0 := s.operands(rng)
		var want []float32
		for threads := 1; threads <= 5; threads++ {
			c := append([]float32(nil), c0...)
			NewWorkspace(threads).MulTo(c, s.ldc, a, s.lda, b, s.ldb, s.m, s.k, s.n, s.f)
			if want == nil {
				want = c
				continue
			}
			for i := range c {
				if math.Float32bits(c[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%v: %d goroutines: element %d is %g, 1 goroutine %g", s, threads, i, c[i], want[i])
				}
			}
		}
	}
}

// TestShapePanics: a slice too short for its shape panics with the
// package's prefix.
func TestShapePanics(t *testing.T) {
	defer func() {
		r := recover()
		if s, ok := r.(string); !ok || len(s) < 7 || s[:7] != "fgemm: " {
			t.Fatalf("recovered %v", r)
		}
	}()
	w := NewWorkspace(1)
	w.MulTo(make([]float32, 4), 2, make([]float32, 4), 2, make([]float32, 3), 2, 2, 2, 2, 0)
}

// FuzzMulTo checks MulTo against the reference on fuzzed shapes and flags.
func FuzzMulTo(f *testing.F) {
	f.Add(uint8(5), uint16(300), uint8(40), uint8(3), uint8(2), uint64(1))
	f.Add(uint8(14), uint16(256), uint8(32), uint8(0), uint8(1), uint64(2))
	f.Fuzz(func(t *testing.T, m uint8, k uint16, n uint8, flags, threads uint8, seed uint64) {
		s := shape{m: int(m % 64), k: int(k % 700), n: int(n), f: Flags(flags % 8), threads: 1 + int(threads%4)}
		s.lda, s.ldb, s.ldc = max(s.k, 1), max(s.n, 1), max(s.n, 1)
		if s.f&TransA != 0 {
			s.lda = max(s.m, 1)
		}
		if s.f&TransB != 0 {
			s.ldb = max(s.k, 1)
		}
		checkShape(t, rand.New(rand.NewPCG(seed, 3)), s)
	})
}

// TestNoAllocs: MulTo allocates nothing once its helpers are running.
func TestNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	a, b, c := randSlice(rng, 200*300), randSlice(rng, 300*100), make([]float32, 200*100)
	for _, threads := range []int{1, 2, 3} {
		w := NewWorkspace(threads)
		w.MulTo(c, 100, a, 300, b, 100, 200, 300, 100, 0)
		if n := testing.AllocsPerRun(10, func() {
			w.MulTo(c, 100, a, 300, b, 100, 200, 300, 100, 0)
			w.MulTo(c, 100, a, 200, b, 300, 100, 200, 100, TransA|TransB|Acc)
		}); n != 0 {
			t.Fatalf("%d goroutines: %g allocations per product", threads, n)
		}
	}
}

// TestHelpersEnd: a workspace's helper goroutines end once it is
// unreachable.
func TestHelpersEnd(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := 0; i < 5; i++ {
		w := NewWorkspace(4)
		c := make([]float32, 100*100)
		w.MulTo(c, 100, make([]float32, 100*100), 100, make([]float32, 100*100), 100, 100, 100, 100, 0)
	}
	for try := 0; try < 50 && runtime.NumGoroutine() > before; try++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines before, %d after the workspaces became unreachable", before, n)
	}
}
