package igemm

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// guard fills the parts of out that no product may write.
const guard = int32(-0x21524111)

// forEachKernel runs fn with each kernel this machine and build support
// forced in turn.
func forEachKernel(t *testing.T, fn func(t *testing.T)) {
	saved := kernel
	defer func() { kernel = saved }()
	for _, k := range supported() {
		kernel = k
		t.Run(k.String(), fn)
	}
}

func randInt8(rng *rand.Rand, n int, extreme bool) []int8 {
	s := make([]int8, n)
	for i := range s {
		switch {
		case extreme:
			s[i] = []int8{-128, 127}[rng.IntN(2)]
		default:
			s[i] = int8(rng.IntN(256) - 128)
		}
	}
	return s
}

// check runs MulPackedTo on one shape with guard-filled strided output and
// compares it with MulRef element for element, strides included.
func check(t *testing.T, rng *rand.Rand, rows, K, N, lda, ldo, threads int, extreme bool) {
	t.Helper()
	a := randInt8(rng, max(0, (rows-1)*lda+K), extreme)
	w := randInt8(rng, K*N, extreme)
	size := max(0, (rows-1)*ldo+N) + 3
	want, got := make([]int32, size), make([]int32, size)
	for i := range want {
		want[i], got[i] = guard, guard
	}
	MulRef(want, ldo, a, lda, w, rows, K, N)
	MulPackedTo(got, ldo, a, lda, Pack(w, K, N), rows, threads)
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("rows=%d K=%d N=%d lda=%d ldo=%d threads=%d extreme=%v: element %d (row %d col %d) is %d, reference %d",
				rows, K, N, lda, ldo, threads, extreme, i, i/ldo, i%ldo, got[i], want[i])
		}
	}
}

// TestMulPackedRandomShapes: every kernel equals MulRef bit for bit on
// random small shapes (odd K and N, so every group and panel tail occurs),
// strides above the widths, 1 to 8 goroutines (however little the work),
// random and extreme values.
func TestMulPackedRandomShapes(t *testing.T) {
	savedWork := minWork
	defer func() { minWork = savedWork }()
	minWork = [len(minWork)]int{1, 1, 1}
	forEachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		trials := 300
		if testing.Short() {
			trials = 60
		}
		for trial := 0; trial < trials; trial++ {
			rows, K, N := 1+rng.IntN(17), 1+2*rng.IntN(150), 1+2*rng.IntN(100)
			lda, ldo := K+rng.IntN(3)*5, N+rng.IntN(3)*3
			threads := []int{1, 2, 3, 8}[trial%4]
			check(t, rng, rows, K, N, lda, ldo, threads, trial%3 == 0)
		}
	})
}

// TestMulPackedEdges: every group and panel remainder, a single row, K = 1,
// empty shapes, and the world model's shapes with strides.
func TestMulPackedEdges(t *testing.T) {
	forEachKernel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		for K := 1; K <= 9; K++ {
			for _, N := range []int{1, 15, 16, 17, 63, 64, 65, 128, 129} {
				for _, rows := range []int{1, 2, 5, 6, 7, 13} {
					check(t, rng, rows, K, N, K, N, 1+rows%3, false)
				}
			}
		}
		for _, s := range [][3]int{{0, 5, 7}, {3, 0, 7}, {3, 5, 0}, {0, 0, 0}} {
			check(t, rng, s[0], s[1], s[2], s[1]+1, s[2]+1, 2, false)
		}
		shapes := [][2]int{{256, 768}, {256, 256}, {256, 1024}, {1024, 256}, {4096, 256}}
		for _, s := range shapes {
			for _, rows := range []int{1, 7, 32} {
				if testing.Short() && rows == 32 && s[0] == 4096 {
					continue
				}
				check(t, rng, rows, s[0], s[1], s[0]+rows%4, s[1]+rows%5, []int{1, 2, 3, 8}[rows%4], rows == 7)
			}
		}
	})
}

// TestMulPackedOverflowBound: at K = MaxK the extreme sums reach within
// 16384 of the int32 limits; the VNNI kernel's intermediate sums (activations
// offset to 0..255) leave the int32 range and wrap back exactly.
func TestMulPackedOverflowBound(t *testing.T) {
	if testing.Short() {
		t.Skip("large inner dimension")
	}
	const K, N = MaxK, 3
	a := make([]int8, 2*K)
	w := make([]int8, K*N)
	for k := 0; k < K; k++ {
		a[k], a[K+k] = -128, 127
		w[k*N], w[k*N+1], w[k*N+2] = -128, 127, int8(k%256-128)
	}
	want := make([]int32, 2*N)
	MulRef(want, N, a, K, w, 2, K, N)
	if want[0] != 16384*K || want[3] != -16256*K {
		t.Fatalf("reference sums %d %d, want %d %d", want[0], want[3], 16384*K, -16256*K)
	}
	p := Pack(w, K, N)
	forEachKernel(t, func(t *testing.T) {
		got := make([]int32, 2*N)
		MulPackedTo(got, N, a, K, p, 2, 2)
		if !slices.Equal(got, want) {
			t.Fatalf("got %v, reference %v", got, want)
		}
	})
}

// TestPackRejects: a K above MaxK and short slices are programming errors.
func TestPackRejects(t *testing.T) {
	mustPanic := func(name string, fn func()) {
		t.Helper()
		defer func() {
			r := recover()
			if r == nil {
				t.Fatalf("%s did not panic", name)
			}
			if s, _ := r.(string); !strings.HasPrefix(s, "igemm: ") {
				t.Fatalf("%s panicked with %v", name, r)
			}
		}()
		fn()
	}
	mustPanic("Pack K>MaxK", func() { Pack(nil, MaxK+1, 0) })
	mustPanic("Pack short", func() { Pack(make([]int8, 5), 2, 3) })
	p := Pack(make([]int8, 6), 2, 3)
	if p.K() != 2 || p.N() != 3 {
		t.Fatalf("K, N = %d, %d", p.K(), p.N())
	}
	mustPanic("MulPackedTo short a", func() { MulPackedTo(make([]int32, 6), 3, make([]int8, 3), 2, p, 2, 1) })
	mustPanic("MulPackedTo short out", func() { MulPackedTo(make([]int32, 5), 3, make([]int8, 4), 2, p, 2, 1) })
	mustPanic("MulPackedTo ldo<N", func() { MulPackedTo(make([]int32, 6), 2, make([]int8, 4), 2, p, 2, 1) })
	mustPanic("MulRef short w", func() { MulRef(make([]int32, 6), 3, make([]int8, 4), 2, make([]int8, 5), 2, 2, 3) })
}

// TestKernelName: Kernel reports the fastest supported kernel.
func TestKernelName(t *testing.T) {
	ks := supported()
	if got, want := Kernel(), ks[len(ks)-1].String(); got != want {
		t.Fatalf("Kernel() = %q, want %q", got, want)
	}
	t.Logf("kernels: %v", ks)
}

// TestPackToReuse packs matrices of changing shapes into one Packed and
// checks each product against MulRef: reused memory holds nothing of the
// previous matrix.
func TestPackToReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	var p *Packed
	for _, sh := range [][2]int{{300, 130}, {17, 5}, {64, 64}, {3, 200}, {300, 130}, {1, 1}} {
		K, N := sh[0], sh[1]
		w := make([]int8, K*N)
		for i := range w {
			w[i] = int8(rng.IntN(256) - 128)
		}
		a := make([]int8, 3*K)
		for i := range a {
			a[i] = int8(rng.IntN(256) - 128)
		}
		p = PackTo(p, w, K, N)
		got, want := make([]int32, 3*N), make([]int32, 3*N)
		MulPackedTo(got, N, a, K, p, 3, 2)
		MulRef(want, N, a, K, w, 3, K, N)
		if !slices.Equal(got, want) {
			t.Fatalf("K=%d N=%d: a reused Packed gives another product", K, N)
		}
	}
}

// TestPackStrided packs matrices stored with a row stride, and stored
// transposed, and checks the products against MulRef on the plain copy.
func TestPackStrided(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	var p *Packed
	for _, sh := range [][2]int{{16, 512}, {32, 480}, {512, 16}, {7, 9}, {300, 65}} {
		K, N := sh[0], sh[1]
		w := make([]int8, K*N)
		for i := range w {
			w[i] = int8(rng.IntN(256) - 128)
		}
		a := make([]int8, 5*K)
		for i := range a {
			a[i] = int8(rng.IntN(256) - 128)
		}
		want := make([]int32, 5*N)
		MulRef(want, N, a, K, w, 5, K, N)
		for _, trans := range []bool{false, true} {
			rows, cols := K, N
			if trans {
				rows, cols = N, K
			}
			ld := cols + 3
			src := make([]int8, rows*ld)
			for r := 0; r < rows; r++ {
				for c := 0; c < cols; c++ {
					k, n := r, c
					if trans {
						k, n = c, r
					}
					src[r*ld+c] = w[k*N+n]
				}
			}
			p = PackStridedTo(p, src, ld, K, N, trans)
			for _, name := range Kernels() {
				if err := Use(name); err != nil {
					t.Fatal(err)
				}
				got := make([]int32, 5*N)
				MulPackedTo(got, N, a, K, p, 5, 2)
				if !slices.Equal(got, want) {
					t.Fatalf("K=%d N=%d transposed %v, kernel %s: the product differs from MulRef", K, N, trans, name)
				}
			}
		}
	}
	Use(Kernels()[len(Kernels())-1])
}

// TestColsTo: a product with a view of the first n columns equals those
// columns of the whole product, on every kernel.
func TestColsTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	K, N, rows := 16, 512, 7
	w := make([]int8, K*N)
	for i := range w {
		w[i] = int8(rng.IntN(256) - 128)
	}
	a := make([]int8, rows*K)
	for i := range a {
		a[i] = int8(rng.IntN(256) - 128)
	}
	want := make([]int32, rows*N)
	MulRef(want, N, a, K, w, rows, K, N)
	p := Pack(w, K, N)
	var v *Packed
	for _, name := range Kernels() {
		Use(name)
		for _, n := range []int{1, 32, 63, 64, 65, 200, 512} {
			v = p.ColsTo(v, n)
			got := make([]int32, rows*N)
			MulPackedTo(got, N, a, K, v, rows, 2)
			for r := 0; r < rows; r++ {
				if !slices.Equal(got[r*N:r*N+n], want[r*N:r*N+n]) {
					t.Fatalf("kernel %s, %d columns: row %d differs", name, n, r)
				}
			}
		}
	}
	Use(Kernels()[len(Kernels())-1])
}
