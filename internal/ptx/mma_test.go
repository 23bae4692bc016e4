package ptx

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// The fragment layouts below are transcribed from the PTX ISA ("Matrix
// Fragments for mma.m16n8k32 / m16n8k16 with integer type / m16n8k8"),
// independently of mma.go: g = lane>>2, q = lane%4, element e of a fragment
// is byte e%4 of register e/4 (8-bit types) or register e (tf32).

func i8Frags(A [][]int32, B [][]int32, C [][]int32, k int) (af, bf, cf []uint32) {
	na, nb := 4, 2
	if k == 16 {
		na, nb = 2, 1
	}
	af, bf, cf = make([]uint32, 4*32), make([]uint32, 2*32), make([]uint32, 4*32)
	for l := 0; l < 32; l++ {
		g, q := l>>2, l&3
		for e := 0; e < 4*na; e++ {
			var row, col int
			if k == 32 {
				row = g
				if !(e < 4 || e >= 8 && e < 12) {
					row = g + 8
				}
				col = q*4 + e&3
				if e >= 8 {
					col += 16
				}
			} else {
				row = g
				if e >= 4 {
					row = g + 8
				}
				col = q*4 + e&3
			}
			af[4*l+e/4] |= uint32(uint8(A[row][col])) << (8 * (e % 4))
		}
		for e := 0; e < 4*nb; e++ {
			row := q*4 + e&3
			if e >= 4 {
				row += 16
			}
			bf[2*l+e/4] |= uint32(uint8(B[row][g])) << (8 * (e % 4))
		}
		for e := 0; e < 4; e++ {
			cf[4*l+e] = uint32(C[g+8*(e/2)][q*2+e&1])
		}
	}
	return
}

func randMat(r *rand.Rand, rows, cols int, lo, hi int32) [][]int32 {
	m := make([][]int32, rows)
	for i := range m {
		m[i] = make([]int32, cols)
		for j := range m[i] {
			switch r.IntN(8) {
			case 0:
				m[i][j] = lo
			case 1:
				m[i][j] = hi
			default:
				m[i][j] = int32(int64(lo) + r.Int64N(int64(hi)-int64(lo)+1))
			}
		}
	}
	return m
}

func TestMmaInt8(t *testing.T) {
	r := rng(41)
	cases := []struct {
		kernel             string
		k                  int
		alo, ahi, blo, bhi int32
		sat                bool
	}{
		{"mma_k32_ss", 32, -128, 127, -128, 127, false},
		{"mma_k32_uu", 32, 0, 255, 0, 255, false},
		{"mma_k32_us", 32, 0, 255, -128, 127, false},
		{"mma_k32_ss_sat", 32, -128, 127, -128, 127, true},
		{"mma_k16_ss", 16, -128, 127, -128, 127, false},
		{"mma_k16_su", 16, -128, 127, 0, 255, false},
	}
	for _, c := range cases {
		for trial := 0; trial < 3; trial++ {
			A := randMat(r, 16, c.k, c.alo, c.ahi)
			B := randMat(r, c.k, 8, c.blo, c.bhi)
			C := randMat(r, 16, 8, math.MinInt32, math.MaxInt32)
			if trial == 0 {
				// Rows of extremes against columns of extremes, with C
				// next to the int32 limits: the sums overflow.
				for j := range A[0] {
					A[0][j], A[1][j], A[8][j] = c.ahi, c.alo, c.ahi
				}
				for i := range B {
					B[i][0], B[i][1] = c.bhi, c.blo
				}
				C[0][0], C[0][1], C[1][0], C[8][1] = math.MaxInt32-1000, math.MinInt32+1000, math.MinInt32+7, math.MaxInt32
			}
			af, bf, cf := i8Frags(A, B, C, c.k)
			// Two warps: the second gets the same fragments shifted by one
			// lane group, a different product.
			af2, bf2, cf2 := append(af, af[16:]...), append(bf, bf[8:]...), append(cf, cf[16:]...)
			af2, bf2, cf2 = append(af2, af[:16]...), append(bf2, bf[:8]...), append(cf2, cf[:16]...)
			d := newDev(t)
			out := d.alloc(4 * 4 * 64)
			d.launch(kernel(t, "mma", c.kernel), Dim3{1, 1, 1}, Dim3{64, 1, 1}, 0, out,
				d.upload(u32bytes(af2)), d.upload(u32bytes(bf2)), d.upload(u32bytes(cf2)))
			got := bytesU32(d.read(out, 4*4*64))
			for l := 0; l < 32; l++ {
				g, q := l>>2, l&3
				for e := 0; e < 4; e++ {
					row, col := g+8*(e/2), q*2+e&1
					s := int64(C[row][col])
					for k := 0; k < c.k; k++ {
						s += int64(A[row][k]) * int64(B[k][col])
					}
					if c.sat {
						s = max(math.MinInt32, min(math.MaxInt32, s))
					}
					if got[4*l+e] != uint32(s) {
						t.Fatalf("%s trial %d D[%d][%d]: got %d want %d", c.kernel, trial, row, col, int32(got[4*l+e]), int32(s))
					}
				}
			}
			// Warp 1 computed from rotated fragments: check it against the
			// interpreter's own warp-0 arithmetic on those fragments.
			if trial == 0 {
				d.launch(kernel(t, "mma", c.kernel), Dim3{1, 1, 1}, Dim3{32, 1, 1}, 0, out,
					d.upload(u32bytes(af2[4*32:])), d.upload(u32bytes(bf2[2*32:])), d.upload(u32bytes(cf2[4*32:])))
				if one := bytesU32(d.read(out, 4*4*32)); !equalU32(one, got[4*32:]) {
					t.Fatalf("%s: warp 1 of a two-warp block differs from the same product on one warp", c.kernel)
				}
			}
		}
	}
}

func equalU32(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// tf32Ref is float32(c + sum a_k*b_k) with the operands truncated to tf32,
// summed exactly in rationals and rounded once to nearest even.
func tf32Ref(c float32, a, b []float32) uint32 {
	tr := func(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ 0x1fff) }
	sum := new(big.Rat)
	if isF32Special(c) {
		return specialRef(c, a, b, tr)
	}
	for k := range a {
		x, y := tr(a[k]), tr(b[k])
		if isF32Special(x) || isF32Special(y) {
			return specialRef(c, a, b, tr)
		}
		p := new(big.Rat).SetFloat64(float64(x))
		sum.Add(sum, p.Mul(p, new(big.Rat).SetFloat64(float64(y))))
	}
	sum.Add(sum, new(big.Rat).SetFloat64(float64(c)))
	if sum.Sign() == 0 {
		allNeg := math.Signbit(float64(c))
		for k := range a {
			p := float64(tr(a[k])) * float64(tr(b[k]))
			allNeg = allNeg && math.Signbit(p)
		}
		if allNeg {
			return 0x80000000
		}
		return 0
	}
	f, _ := sum.Float32()
	return math.Float32bits(f)
}

func isF32Special(x float32) bool { return math.IsInf(float64(x), 0) || x != x }

func specialRef(c float32, a, b []float32, tr func(float32) float32) uint32 {
	s := float64(c)
	for k := range a {
		s += float64(tr(a[k])) * float64(tr(b[k]))
	}
	if s != s {
		return 0x7fffffff
	}
	return math.Float32bits(float32(s))
}

func randF32(r *rand.Rand) float32 {
	switch r.IntN(10) {
	case 0:
		return 0
	case 1:
		return float32(math.Copysign(0, -1))
	case 2: // subnormal
		return math.Float32frombits(r.Uint32N(1<<23) | r.Uint32()&0x80000000)
	case 3: // huge
		return math.Float32frombits(uint32(0x7e000000+r.IntN(0x800000)) | r.Uint32()&0x80000000)
	case 4: // tiny normal
		return math.Float32frombits(uint32(0x00800000+r.IntN(0x4000000)) | r.Uint32()&0x80000000)
	}
	return float32(r.NormFloat64() * math.Exp2(float64(r.IntN(40)-20)))
}

func TestSumF32(t *testing.T) {
	r := rng(42)
	tr := func(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ 0x1fff) }
	for n := 0; n < 20000; n++ {
		a, b := make([]float32, 8), make([]float32, 8)
		for k := range a {
			a[k], b[k] = randF32(r), randF32(r)
		}
		c := randF32(r)
		if n%3 == 0 { // cancellation: c = -(a0*b0) when exact in float32
			if p := float32(float64(tr(a[0])) * float64(tr(b[0]))); float64(p) == float64(tr(a[0]))*float64(tr(b[0])) {
				c = -p
			}
		}
		var p [8]float64
		for k := range p {
			p[k] = tf32(uint64(math.Float32bits(a[k]))) * tf32(uint64(math.Float32bits(b[k])))
		}
		if got, want := sumF32(math.Float32bits(c), p[:]), tf32Ref(c, a, b); got != want {
			t.Fatalf("c=%g a=%v b=%v: got %#x want %#x", c, a, b, got, want)
		}
	}
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		c    float32
		a, b []float32
		want uint32
	}{
		{1, []float32{inf, 0, 0, 0, 0, 0, 0, 0}, []float32{0, 0, 0, 0, 0, 0, 0, 0}, 0x7fffffff},
		{1, []float32{inf, -inf, 0, 0, 0, 0, 0, 0}, []float32{1, 1, 0, 0, 0, 0, 0, 0}, 0x7fffffff},
		{-inf, []float32{inf, 0, 0, 0, 0, 0, 0, 0}, []float32{2, 0, 0, 0, 0, 0, 0, 0}, 0x7fffffff},
		{nan, make([]float32, 8), make([]float32, 8), 0x7fffffff},
		{3, []float32{-inf, 1, 0, 0, 0, 0, 0, 0}, []float32{2, 1, 0, 0, 0, 0, 0, 0}, 0xff800000},
		// 1+0.75*2^-10 is truncated to 1 (round to nearest would give 1+2^-10).
		{0, []float32{math.Float32frombits(0x3f801800), 0, 0, 0, 0, 0, 0, 0}, []float32{1, 0, 0, 0, 0, 0, 0, 0}, 0x3f800000},
		// Products are exact and summed exactly: (1+2^-10)^2 + (-1) = 2^-9 + 2^-20.
		{-1, []float32{1 + 1.0/1024, 0, 0, 0, 0, 0, 0, 0}, []float32{1 + 1.0/1024, 0, 0, 0, 0, 0, 0, 0}, math.Float32bits(1.0/512 + 1.0/(1<<20))},
		// One rounding at the end: 1 + 2^-24 + 2^-24 rounds up to 1+2^-23;
		// float32 addition in any order would give 1.
		{1, []float32{1.0 / (1 << 12), 1.0 / (1 << 12), 0, 0, 0, 0, 0, 0}, []float32{1.0 / (1 << 12), 1.0 / (1 << 12), 0, 0, 0, 0, 0, 0}, 0x3f800001},
		{float32(math.Copysign(0, -1)), make([]float32, 8), make([]float32, 8), 0},
	} {
		var p [8]float64
		for k := range p {
			p[k] = tf32(uint64(math.Float32bits(c.a[k]))) * tf32(uint64(math.Float32bits(c.b[k])))
		}
		if got := sumF32(math.Float32bits(c.c), p[:]); got != c.want {
			t.Errorf("c=%g a=%v b=%v: got %#x want %#x", c.c, c.a, c.b, got, c.want)
		}
		if ref := tf32Ref(c.c, c.a, c.b); ref != c.want {
			t.Errorf("reference: c=%g a=%v b=%v: got %#x want %#x", c.c, c.a, c.b, ref, c.want)
		}
	}
}

func TestMmaTF32(t *testing.T) {
	r := rng(43)
	for trial := 0; trial < 4; trial++ {
		var A [16][8]float32
		var B [8][8]float32
		var C [16][8]float32
		for i := range A {
			for j := range A[i] {
				A[i][j] = randF32(r)
				if trial < 2 {
					A[i][j] = float32(r.NormFloat64())
				}
			}
		}
		for i := range B {
			for j := range B[i] {
				B[i][j] = randF32(r)
				if trial < 2 {
					B[i][j] = float32(r.NormFloat64())
				}
			}
		}
		for i := range C {
			for j := range C[i] {
				C[i][j] = randF32(r)
			}
		}
		af, bf, cf := make([]uint32, 4*32), make([]uint32, 2*32), make([]uint32, 4*32)
		for l := 0; l < 32; l++ {
			g, q := l>>2, l&3
			// a0 (g, q), a1 (g+8, q), a2 (g, q+4), a3 (g+8, q+4)
			af[4*l], af[4*l+1], af[4*l+2], af[4*l+3] = math.Float32bits(A[g][q]), math.Float32bits(A[g+8][q]), math.Float32bits(A[g][q+4]), math.Float32bits(A[g+8][q+4])
			bf[2*l], bf[2*l+1] = math.Float32bits(B[q][g]), math.Float32bits(B[q+4][g])
			for e := 0; e < 4; e++ {
				cf[4*l+e] = math.Float32bits(C[g+8*(e/2)][2*q+e&1])
			}
		}
		d := newDev(t)
		out := d.alloc(4 * 4 * 32)
		d.launch(kernel(t, "mma", "mma_tf32"), Dim3{1, 1, 1}, Dim3{32, 1, 1}, 0, out,
			d.upload(u32bytes(af)), d.upload(u32bytes(bf)), d.upload(u32bytes(cf)))
		got := bytesU32(d.read(out, 4*4*32))
		for l := 0; l < 32; l++ {
			g, q := l>>2, l&3
			for e := 0; e < 4; e++ {
				row, col := g+8*(e/2), 2*q+e&1
				var a, b [8]float32
				for k := 0; k < 8; k++ {
					a[k], b[k] = A[row][k], B[k][col]
				}
				if want := tf32Ref(C[row][col], a[:], b[:]); got[4*l+e] != want {
					t.Fatalf("trial %d D[%d][%d]: got %#x (%g) want %#x (%g)", trial, row, col, got[4*l+e],
						math.Float32frombits(got[4*l+e]), want, math.Float32frombits(want))
				}
			}
		}
	}
}

func gemmRef(A, B []int8, M, N, K int) []uint32 {
	C := make([]uint32, M*N)
	for i := 0; i < M; i++ {
		for j := 0; j < N; j++ {
			var s int32
			for k := 0; k < K; k++ {
				s += int32(A[i*K+k]) * int32(B[j*K+k])
			}
			C[i*N+j] = uint32(s)
		}
	}
	return C
}

func TestGemmMma(t *testing.T) {
	r := rng(44)
	for _, sh := range [][3]int{{37, 29, 70}, {64, 64, 128}, {1, 1, 1}, {33, 65, 33}, {16, 8, 32}} {
		M, N, K := sh[0], sh[1], sh[2]
		A, B := make([]int8, M*K), make([]int8, N*K)
		for i := range A {
			A[i] = int8(r.Uint32())
		}
		for i := range B {
			B[i] = int8(r.Uint32())
		}
		A[0], B[0] = -128, -128
		if K > 1 {
			A[1], B[1] = 127, -128
		}
		want := gemmRef(A, B, M, N, K)
		for _, ldsm := range []uint64{0, 1} {
			d := newDev(t)
			c := d.upload(make([]byte, 4*M*N))
			ab, bb := make([]byte, len(A)), make([]byte, len(B))
			for i, x := range A {
				ab[i] = byte(x)
			}
			for i, x := range B {
				bb[i] = byte(x)
			}
			d.launch(kernel(t, "mma", "gemm_i8"), Dim3{uint32((N + 31) / 32), uint32((M + 31) / 32), 1}, Dim3{128, 1, 1}, 0,
				c, d.upload(ab), d.upload(bb), uint64(M), uint64(N), uint64(K), ldsm)
			if got := bytesU32(d.read(c, 4*M*N)); !equalU32(got, want) {
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%dx%dx%d ldsm=%d: C[%d][%d] = %d, want %d", M, N, K, ldsm, i/N, i%N, int32(got[i]), int32(want[i]))
					}
				}
			}
		}
	}
}

func TestLdmatrix(t *testing.T) {
	r := rng(45)
	in := make([]uint16, 32*8)
	for i := range in {
		in[i] = uint16(r.Uint32())
	}
	b := make([]byte, 2*len(in))
	for i, x := range in {
		b[2*i], b[2*i+1] = byte(x), byte(x>>8)
	}
	d := newDev(t)
	out := d.alloc(4 * 512)
	d.launch(kernel(t, "mma", "ldsm_test"), Dim3{1, 1, 1}, Dim3{32, 1, 1}, 0, out, d.upload(b))
	got := bytesU32(d.read(out, 4*512))
	el := func(row, col int) uint32 { return uint32(in[8*row+col]) }
	for v, n := range []int{1, 2, 4, 4} {
		for j := 0; j < n; j++ {
			for l := 0; l < 32; l++ {
				var want uint32
				if v < 3 {
					want = el(8*j+l/4, 2*(l%4)) | el(8*j+l/4, 2*(l%4)+1)<<16
				} else {
					want = el(8*j+2*(l%4), l/4) | el(8*j+2*(l%4)+1, l/4)<<16
				}
				if g := got[32*(4*v+j)+l]; g != want {
					t.Fatalf("variant %d matrix %d lane %d: got %#x want %#x", v, j, l, g, want)
				}
			}
		}
	}
}

func TestMmaFaults(t *testing.T) {
	d := newDev(t)
	out, a := d.alloc(4*64), d.upload(make([]byte, 16))
	e := execErr(t, d.m.Launch(kernel(t, "mma", "mma_divergent"), Dim3{1, 1, 1}, Dim3{32, 1, 1}, 0, out, a))
	if e.Line != lineOf(t, "mma", "mma_divergent", "mma.sync") || e.Thread != (Dim3{0, 0, 0}) ||
		!strings.Contains(e.Msg, "mma.sync.aligned while lane 16 (thread (16,0,0)) has exited at line") {
		t.Errorf("got %+v", *e)
	}
	k := kernel(t, "mma", "mma_all")
	d.launch(k, Dim3{1, 1, 1}, Dim3{64, 1, 1}, 0, out, a)
	e = execErr(t, d.m.Launch(k, Dim3{1, 1, 1}, Dim3{48, 1, 1}, 0, out, a))
	if e.Thread != (Dim3{32, 0, 0}) || !strings.Contains(e.Msg, "needs all 32 threads of the warp; warp 1 of this 48-thread block has 16") {
		t.Errorf("got %+v", *e)
	}
	k = kernel(t, "mma", "ldsm_misaligned")
	d.launch(k, Dim3{1, 1, 1}, Dim3{32, 1, 1}, 0, out, 0)
	e = execErr(t, d.m.Launch(k, Dim3{1, 1, 1}, Dim3{32, 1, 1}, 0, out, 8))
	if e.Thread != (Dim3{9, 0, 0}) || e.Line != lineOf(t, "mma", "ldsm_misaligned", "ldmatrix") || !strings.Contains(e.Msg, "misaligned shared load of 16 bytes") {
		t.Errorf("got %+v", *e)
	}
	e = execErr(t, d.m.Launch(k, Dim3{1, 1, 1}, Dim3{32, 1, 1}, 0, out, 4096))
	if e.Thread != (Dim3{9, 0, 0}) || !strings.Contains(e.Msg, "out-of-bounds shared load") {
		t.Errorf("got %+v", *e)
	}
}
