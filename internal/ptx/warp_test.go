package ptx

import (
	"math"
	"math/bits"
	"strings"
	"testing"
)

// shflRef is the PTX ISA pseudocode of shfl.sync for lane l of a full warp
// whose source values are a: the result and the predicate.
func shflRef(mode string, a *[32]uint32, l int, b, c uint32) (uint32, uint32) {
	bval, cval, seg := int(b&31), int(c&31), int(c>>8&31)
	maxLane := l&seg | cval&^seg
	minLane := l & seg
	var j int
	var p bool
	switch mode {
	case "up":
		j = l - bval
		p = j >= maxLane
	case "down":
		j = l + bval
		p = j <= maxLane
	case "bfly":
		j = l ^ bval
		p = j <= maxLane
	case "idx":
		j = minLane | bval&^seg
		p = j <= maxLane
	}
	if !p {
		return a[l], 0
	}
	return a[j], 1
}

func TestShflModes(t *testing.T) {
	const n = 128
	r := rng(31)
	in := make([]uint32, 3*n)
	for i := range in {
		switch i % 3 {
		case 0:
			in[i] = r.Uint32()
		case 1: // b: mostly small, sometimes out of range
			in[i] = r.Uint32N(40)
			if r.IntN(8) == 0 {
				in[i] = r.Uint32()
			}
		default: // c: clamp and segment mask, plus junk bits
			in[i] = r.Uint32N(32) | r.Uint32N(32)<<8
			if r.IntN(4) == 0 {
				in[i] = r.Uint32()
			}
		}
	}
	// Edge rows: the classic CUDA operands (width 32 and 8).
	for l := 0; l < 32; l++ {
		in[3*l+1], in[3*l+2] = 1, 0x181f
	}
	d := newDev(t)
	dout, din := d.alloc(4*8*n), d.upload(u32bytes(in))
	d.launch(kernel(t, "warp", "shfl_modes"), Dim3{2, 1, 1}, Dim3{64, 1, 1}, 0, dout, din)
	got := bytesU32(d.read(dout, 4*8*n))
	for w := 0; w < n/32; w++ {
		var a [32]uint32
		for l := range a {
			a[l] = in[3*(32*w+l)]
		}
		for l := 0; l < 32; l++ {
			i := 32*w + l
			for k, mode := range []string{"idx", "up", "down", "bfly"} {
				v, p := shflRef(mode, &a, l, in[3*i+1], in[3*i+2])
				if got[8*i+k] != v || got[8*i+4+k] != p {
					t.Fatalf("thread %d shfl.%s b=%d c=%#x: got (%#x, %d) want (%#x, %d)", i, mode, in[3*i+1], in[3*i+2], got[8*i+k], got[8*i+4+k], v, p)
				}
			}
		}
	}
}

func TestWarpReduce(t *testing.T) {
	const n = 96
	r := rng(32)
	in := make([]uint32, n)
	fin := make([]uint32, n)
	for i := range in {
		in[i] = r.Uint32()
		fin[i] = math.Float32bits(float32(r.NormFloat64()))
	}
	in[0], in[1] = 0x7fffffff, 0x7fffffff // wraps
	for _, width := range []uint32{32, 8, 1} {
		d := newDev(t)
		sums, bc, fs := d.alloc(4*n), d.alloc(4*n), d.alloc(4*n)
		d.launch(kernel(t, "warp", "warp_reduce"), Dim3{1, 1, 1}, Dim3{n, 1, 1}, 0, sums, bc, fs, d.upload(u32bytes(in)), d.upload(u32bytes(fin)), uint64(width))
		gs, gb, gf := bytesU32(d.read(sums, 4*n)), bytesU32(d.read(bc, 4*n)), bytesU32(d.read(fs, 4*n))
		for w := 0; w < n/32; w++ {
			var v [32]uint32
			var f [32]float32
			copy(v[:], in[32*w:])
			for l := range f {
				f[l] = math.Float32frombits(fin[32*w+l])
			}
			for o := 16; o > 0; o >>= 1 {
				var nv [32]uint32
				for l := range v {
					src := v[l] // shfl.down with c=31 keeps the own value past lane 31
					if l+o <= 31 {
						src = v[l+o]
					}
					nv[l] = v[l] + src
				}
				v = nv
			}
			for o := 1; o < int(width); o <<= 1 {
				var nf [32]float32
				for l := range f {
					nf[l] = f[l] + f[l^o]
				}
				f = nf
			}
			for l := 0; l < 32; l++ {
				i := 32*w + l
				if gs[i] != v[l] || gb[i] != v[0] || gf[i] != math.Float32bits(f[l]) {
					t.Fatalf("width %d thread %d: got sum %d bcast %d f %v, want %d %d %v", width, i, int32(gs[i]), int32(gb[i]),
						math.Float32frombits(gf[i]), int32(v[l]), int32(v[0]), f[l])
				}
			}
		}
		if width == 32 {
			var total uint32
			for _, x := range in[:32] {
				total += x
			}
			if gb[0] != total {
				t.Errorf("warp 0 sum %d, want %d", int32(gb[0]), int32(total))
			}
		}
	}
}

func TestVotes(t *testing.T) {
	const n, threads = 70, 128
	r := rng(33)
	in := make([]uint32, threads)
	for i := range in {
		in[i] = uint32(int32(r.IntN(9) - 4))
	}
	for i := 32; i < 64; i++ { // a warp where every x > 0: all and uni hold
		in[i] = uint32(1 + r.IntN(5))
	}
	for i := 64; i < n; i++ { // a partial warp where no x > 0: uni holds, all does not
		in[i] = uint32(-int32(r.IntN(5)))
	}
	d := newDev(t)
	out := d.upload(make([]byte, 4*8*threads))
	d.launch(kernel(t, "warp", "votes"), Dim3{2, 1, 1}, Dim3{64, 1, 1}, 0, out, d.upload(u32bytes(in)), n)
	got := bytesU32(d.read(out, 4*8*threads))
	b2 := func(b bool) uint32 {
		if b {
			return 1
		}
		return 0
	}
	for i := 0; i < threads; i++ {
		if i >= n {
			for k := 0; k < 8; k++ {
				if got[8*i+k] != 0 {
					t.Fatalf("exited thread %d wrote %d", i, got[8*i+k])
				}
			}
			continue
		}
		base, l := i/32*32, i%32
		var act, pos, neg, odd, br2 uint32
		for j := 0; j < 32 && base+j < n; j++ {
			x := int32(in[base+j])
			act |= 1 << j
			if x > 0 {
				pos |= 1 << j
			}
			if x < 0 {
				neg |= 1 << j
			}
			if x&1 != 0 {
				odd |= 1 << j
			}
			if x&2 != 0 {
				br2 |= 1 << j
			}
		}
		half := uint32(0xffff)
		if l >= 16 {
			half = 0xffff0000
		}
		x := int32(in[i])
		want := []uint32{pos, act &^ pos, b2(pos == act), b2(neg != 0), b2(pos == act || pos == 0), act, odd & half, 0}
		if x&2 != 0 {
			want[7] = br2 ^ 0x5a5a0000
		} else {
			want[7] = act&^br2 + uint32(i)
		}
		for k, w := range want {
			if got[8*i+k] != w {
				t.Fatalf("thread %d (x=%d) output %d: got %#x want %#x", i, x, k, got[8*i+k], w)
			}
		}
	}
	if bits.OnesCount32(got[8*64+5]) != 6 {
		t.Errorf("activemask of the partial warp: %#x", got[8*64+5])
	}
}

func TestShflExitedLane(t *testing.T) {
	d := newDev(t)
	out := d.alloc(4 * 64)
	k := kernel(t, "warp", "shfl_exited")
	// Lane 5 of each warp has exited: it is not waited for, and reading
	// another lane is fine.
	d.launch(k, Dim3{1, 1, 1}, Dim3{64, 1, 1}, 0, out, 0)
	got := bytesU32(d.read(out, 4*64))
	for i, v := range got {
		if want := uint32(i / 32 * 32); i%32 != 5 && v != want {
			t.Fatalf("out[%d] = %d, want %d", i, v, want)
		}
	}
	// Reading the exited lane is undefined: a fault.
	e := execErr(t, d.m.Launch(k, Dim3{1, 1, 1}, Dim3{64, 1, 1}, 0, out, 5))
	if e.Thread != (Dim3{0, 0, 0}) || e.Line != lineOf(t, "warp", "shfl_exited", "shfl.sync.idx") ||
		!strings.Contains(e.Msg, "reads lane 5, which exited at line") {
		t.Errorf("got %+v", *e)
	}
}

func TestShflMasks(t *testing.T) {
	d := newDev(t)
	out := d.alloc(4 * 64)
	k := kernel(t, "warp", "shfl_mask")
	line := lineOf(t, "warp", "shfl_mask", "shfl.sync.idx")
	for _, c := range []struct {
		block uint32
		m, m3 uint32
	}{
		{64, 0xffffffff, 0xffffffff},
		{32, 0xfffffff7, 0x8}, // disjoint masks at one instruction: two groups
		{16, 0xffff, 0xffff},
	} {
		d.launch(k, Dim3{1, 1, 1}, Dim3{c.block, 1, 1}, 0, out, uint64(c.m), uint64(c.m3))
		got := bytesU32(d.read(out, 4*int(c.block)))
		for i := 0; i < int(c.block); i++ {
			l := i % 32
			mask := c.m
			if l == 3 {
				mask = c.m3
			}
			if mask>>l&1 == 0 {
				continue
			}
			src := mask & (0xfffffffe << l)
			if src == 0 {
				src = mask
			}
			if want := uint32(i/32*32 + bits.TrailingZeros32(src)); got[i] != want {
				t.Fatalf("masks %#x/%#x: out[%d] = %d, want %d", c.m, c.m3, i, got[i], want)
			}
		}
	}
	cases := []struct {
		block  uint32
		m, m3  uint64
		thread uint32
		msg    string
	}{
		{32, 1, 1, 1, "membermask 0x00000001 does not include the executing lane 1"},
		{32, 0xffffffff, 0xf, 3, "membermask 0x0000000f of lane 3 differs from 0xffffffff of lane 0"},
		{16, 0xffffffff, 0xffffffff, 0, "names lanes 16..31, which do not exist (warp 0 of this 16-thread block has 16 threads)"},
		{32, 0xfffffff0, 0xfffffff0, 0, "does not include the executing lane 0"},
	}
	for _, c := range cases {
		e := execErr(t, d.m.Launch(k, Dim3{1, 1, 1}, Dim3{c.block, 1, 1}, 0, out, c.m, c.m3))
		if e.Thread != (Dim3{c.thread, 0, 0}) || e.Line != line || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("mask %#x/%#x: got %+v, want thread %d %q", c.m, c.m3, *e, c.thread, c.msg)
		}
	}
}

func TestWarpDeadlocks(t *testing.T) {
	d := newDev(t)
	out := d.alloc(4 * 64)
	e := execErr(t, d.m.Launch(kernel(t, "warp", "shfl_vs_barrier"), Dim3{1, 1, 1}, Dim3{32, 1, 1}, 0, out))
	if e.Line != lineOf(t, "warp", "shfl_vs_barrier", "shfl.sync") ||
		!strings.Contains(e.Msg, "shfl.sync can never complete: lane 16 (thread (16,0,0)) waits at bar.sync at line") {
		t.Errorf("got %+v", *e)
	}
	e = execErr(t, d.m.Launch(kernel(t, "warp", "vote_divergent"), Dim3{1, 1, 1}, Dim3{32, 1, 1}, 0, out))
	if !strings.Contains(e.Msg, "vote.sync can never complete") || !strings.Contains(e.Msg, "waits at a different warp collective (vote.sync)") {
		t.Errorf("got %+v", *e)
	}
}

func TestSyncwarp(t *testing.T) {
	const n = 53
	in := make([]uint32, 64)
	for i := range in {
		in[i] = uint32(i*7 + 1)
	}
	d := newDev(t)
	out := d.upload(make([]byte, 4*64))
	d.launch(kernel(t, "warp", "syncwarp_xchg"), Dim3{1, 1, 1}, Dim3{64, 1, 1}, 0, out, d.upload(u32bytes(in)), n)
	got := bytesU32(d.read(out, 4*64))
	for i := 0; i < 64; i++ {
		var want uint32
		if j := i ^ 1; i < n && j < n {
			want = in[j] + 1
			if j&1 != 0 {
				want = in[j] * 3
			}
		}
		if got[i] != want {
			t.Fatalf("out[%d] = %d, want %d", i, got[i], want)
		}
	}
}
