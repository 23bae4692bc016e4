package ptx

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

func randI32s(seed uint64, n int) []uint32 {
	r := rng(seed)
	v := make([]uint32, n)
	for i := range v {
		switch r.IntN(10) {
		case 0:
			v[i] = 0x80000000
		case 1:
			v[i] = 0x7fffffff
		default:
			v[i] = r.Uint32()
		}
	}
	return v
}

func TestBlockSum(t *testing.T) {
	const W, B = 1000, 5
	x := randI32s(1, W*B)
	d := newDev(t)
	out := d.alloc(8 * B)
	d.launch(kernel(t, "shared", "blocksum"), Dim3{B, 1, 1}, Dim3{256, 1, 1}, 0, out, d.upload(u32bytes(x)), W)
	got := bytesU64(d.read(out, 8*B))
	for b := 0; b < B; b++ {
		var want int64
		for _, v := range x[b*W : (b+1)*W] {
			want += int64(int32(v))
		}
		if int64(got[b]) != want {
			t.Errorf("block %d: got %d want %d", b, int64(got[b]), want)
		}
	}
}

func TestDynSum(t *testing.T) {
	const W, B, T = 700, 6, 128
	x := randI32s(2, W*B)
	d := newDev(t)
	k := kernel(t, "shared", "dynsum")
	if k.SharedBytes() != 128 {
		t.Errorf("static shared = %d, want 128", k.SharedBytes())
	}
	out, mx := d.alloc(8*B), d.alloc(4*B)
	d.launch(k, Dim3{B, 1, 1}, Dim3{T, 1, 1}, 8*T, out, mx, d.upload(u32bytes(x)), W)
	got, gotMax := bytesU64(d.read(out, 8*B)), bytesU32(d.read(mx, 4*B))
	for b := 0; b < B; b++ {
		var want int64
		var wmax uint32
		for _, v := range x[b*W : (b+1)*W] {
			want += int64(int32(v))
			a := v
			if int32(v) < 0 {
				a = -v
			}
			wmax = max(wmax, a)
		}
		if int64(got[b]) != want || gotMax[b] != wmax {
			t.Errorf("block %d: got %d, %#x want %d, %#x", b, int64(got[b]), gotMax[b], want, wmax)
		}
	}
	// One int64 slot short of the dynamic window: thread T-1 must fault.
	err := d.m.Launch(k, Dim3{1, 1, 1}, Dim3{T, 1, 1}, 8*T-8, out, mx, d.upload(u32bytes(x)), W)
	if err == nil {
		t.Fatal("undersized dynamic shared memory: no error")
	}
	t.Log(err)
}

func TestHistogram(t *testing.T) {
	const n = 5000
	r := rng(3)
	x := make([]byte, n)
	for i := range x {
		x[i] = byte(r.IntN(256) & r.IntN(256))
	}
	d := newDev(t)
	h := d.alloc(4 * 256)
	d.launch(kernel(t, "shared", "histogram"), Dim3{4, 1, 1}, Dim3{128, 1, 1}, 0, h, d.upload(x), n)
	got := bytesU32(d.read(h, 4*256))
	want := make([]uint32, 256)
	for _, b := range x {
		want[b]++
	}
	if !slices.Equal(got, want) {
		t.Fatalf("histogram differs:\n got %v\nwant %v", got, want)
	}
}

func TestAtomics(t *testing.T) {
	const n = 2500
	x := randI32s(4, n)
	d := newDev(t)
	c64 := d.alloc(8)
	init := []uint32{math.MaxInt32, 0x80000000, 0, 0, 0xffffffff, 0x80000000, 0}
	c32 := d.upload(u32bytes(init))
	d.launch(kernel(t, "shared", "atomics"), blocks(n, 64), Dim3{64, 1, 1}, 0, c64, c32, d.upload(u32bytes(x)), n)
	var sum int64
	want := slices.Clone(init)
	for _, v := range x {
		s := int32(v)
		sum += int64(s)
		want[0] = uint32(min(int32(want[0]), s))
		want[1] = uint32(max(int32(want[1]), s))
		want[2] ^= v
		want[3] |= v & 0xff0f
		want[4] &= v | 0xf0
		want[5] = uint32(max(int32(want[5]), int32(v*3)))
		if want[6] >= 1000 {
			want[6] = 0
		} else {
			want[6]++
		}
	}
	if got := int64(binary.LittleEndian.Uint64(d.read(c64, 8))); got != sum {
		t.Errorf("atom.add.u64: got %d want %d", got, sum)
	}
	if got := bytesU32(d.read(c32, 4*7)); !slices.Equal(got, want) {
		t.Errorf("atomics: got %#x want %#x", got, want)
	}
}

func TestGrid3D(t *testing.T) {
	grid, block := Dim3{3, 2, 2}, Dim3{4, 3, 2}
	W, H, D := 12, 6, 4
	d := newDev(t)
	out := d.alloc(4 * W * H * D)
	d.launch(kernel(t, "shared", "grid3d"), grid, block, 0, out)
	got := bytesU32(d.read(out, 4*W*H*D))
	for z := 0; z < D; z++ {
		for y := 0; y < H; y++ {
			for x := 0; x < W; x++ {
				want := uint32(x*7+y*131+z*1031) ^ uint32(x%4)<<20 ^ uint32(z/2)<<27
				if g := got[(z*H+y)*W+x]; g != want {
					t.Fatalf("(%d,%d,%d): got %#x want %#x", x, y, z, g, want)
				}
			}
		}
	}
}

func TestTranspose(t *testing.T) {
	const rows, cols = 37, 50
	in := randI32s(5, rows*cols)
	d := newDev(t)
	out := d.alloc(4 * rows * cols)
	d.launch(kernel(t, "shared", "transpose"), Dim3{4, 3, 1}, Dim3{16, 16, 1}, 0, out, d.upload(u32bytes(in)), rows, cols)
	got := bytesU32(d.read(out, 4*rows*cols))
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			if got[c*rows+r] != in[r*cols+c] {
				t.Fatalf("(%d,%d): got %#x want %#x", r, c, got[c*rows+r], in[r*cols+c])
			}
		}
	}
}

func TestGemmI8(t *testing.T) {
	const M, N, K = 33, 45, 160
	r := rng(6)
	a, b := make([]byte, M*K), make([]byte, N*K)
	for i := range a {
		a[i] = byte(r.Uint32())
	}
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	a[0], b[0], a[1], b[1] = 0x80, 0x80, 0x7f, 0x80
	d := newDev(t)
	c := d.alloc(4 * M * N)
	d.launch(kernel(t, "dp4a", "gemm_i8"), Dim3{3, 3, 1}, Dim3{16, 16, 1}, 0, c, d.upload(a), d.upload(b), M, N, K/4)
	got := bytesU32(d.read(c, 4*M*N))
	for i := 0; i < M; i++ {
		for j := 0; j < N; j++ {
			var want int32
			for k := 0; k < K; k++ {
				want += int32(int8(a[i*K+k])) * int32(int8(b[j*K+k]))
			}
			if int32(got[i*N+j]) != want {
				t.Fatalf("C[%d][%d]: got %d want %d", i, j, int32(got[i*N+j]), want)
			}
		}
	}
}

func TestLocalSort(t *testing.T) {
	const n = 300
	in := randI32s(7, 16*n)
	d := newDev(t)
	k := kernel(t, "misc", "localsort")
	if k.LocalBytes() == 0 {
		t.Fatal("localsort has no .local depot; the test no longer covers local memory")
	}
	out := d.alloc(4 * 17 * n)
	d.launch(k, blocks(n, 64), Dim3{64, 1, 1}, 0, out, d.upload(u32bytes(in)), n)
	got := bytesU32(d.read(out, 4*17*n))
	for i := 0; i < n; i++ {
		v := make([]int32, 16)
		for k := range v {
			v[k] = int32(in[16*i+k])
		}
		pick := in[16*i] & 15
		slices.Sort(v)
		for k := 0; k < 16; k++ {
			if int32(got[17*i+k]) != v[k] {
				t.Fatalf("thread %d slot %d: got %d want %d", i, k, int32(got[17*i+k]), v[k])
			}
		}
		if int32(got[17*i+16]) != v[pick] {
			t.Fatalf("thread %d pick: got %d want %d", i, int32(got[17*i+16]), v[pick])
		}
	}
}

func TestLUT(t *testing.T) {
	const n = 1000
	sbox := []uint32{14, 4, 13, 1, 2, 15, 11, 8, 3, 10, 6, 12, 5, 9, 0, 7}
	mix := []uint32{0x9e3779b9, 0x7f4a7c15, 0x85ebca6b, 0xc2b2ae35, 0x27d4eb2f, 0x165667b1, 0xd3a2646c, 0xfd7046c5}
	in := randI32s(8, n)
	d := newDev(t)
	mod := loadModule(t, "misc")
	out := d.alloc(4 * n)
	d.launch(kernel(t, "misc", "lut"), blocks(n, 128), Dim3{128, 1, 1}, 0, out, d.upload(u32bytes(in)), n)
	got := bytesU32(d.read(out, 4*n))
	for i, x := range in {
		var y uint32
		for k := 0; k < 8; k++ {
			y |= sbox[x>>(4*k)&15] << (4 * k)
		}
		if want := y ^ mix[x&7]; got[i] != want {
			t.Fatalf("lut(%#x): got %#x want %#x", x, got[i], want)
		}
	}
	l, err := d.m.Load(mod)
	if err != nil {
		t.Fatal(err)
	}
	addr, size, err := l.Symbol("counter")
	if err != nil || size != 4 {
		t.Fatalf("Symbol(counter) = %#x, %d, %v", addr, size, err)
	}
	if c := binary.LittleEndian.Uint32(d.read(addr, 4)); c != n {
		t.Errorf("counter = %d, want %d", c, n)
	}
	addr, size, err = l.Symbol("mix")
	if err != nil || size != 32 || bytesU32(d.read(addr, 32))[3] != mix[3] {
		t.Errorf("Symbol(mix) = %#x, %d, %v", addr, size, err)
	}
	if _, _, err := l.Symbol("nope"); err == nil {
		t.Error("Symbol(nope): no error")
	}
	if err := d.m.Free(addr); err == nil {
		t.Error("Free of a module variable: no error")
	}
}
