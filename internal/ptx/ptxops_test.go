package ptx

import (
	"math/big"
	"math/bits"
	"testing"
)

// The references below follow the PTX ISA pseudo-code literally (bit by
// bit), independently of the interpreter's implementation.

func specBfe(a uint64, pos, ln uint64, msb int, signed bool) uint64 {
	pos, ln = pos&0xff, ln&0xff
	var sbit uint64
	if signed && ln != 0 {
		i := int(pos + ln - 1)
		if i > msb {
			i = msb
		}
		sbit = a >> i & 1
	}
	var d uint64
	for i := 0; i <= msb; i++ {
		bit := sbit
		if uint64(i) < ln && pos+uint64(i) <= uint64(msb) {
			bit = a >> (pos + uint64(i)) & 1
		}
		d |= bit << i
	}
	return d
}

func specBfi(a, b, pos, ln uint64, msb int) uint64 {
	pos, ln = pos&0xff, ln&0xff
	f := b
	for i := uint64(0); i < ln && pos+i <= uint64(msb); i++ {
		f = f&^(1<<(pos+i)) | (a>>i&1)<<(pos+i)
	}
	return f
}

func specPrmt(a, b, c uint32) uint32 {
	tmp := [8]uint32{}
	for i := 0; i < 4; i++ {
		tmp[i] = a >> (8 * i) & 0xff
		tmp[4+i] = b >> (8 * i) & 0xff
	}
	var d uint32
	for i := 0; i < 4; i++ {
		sel := c >> (4 * i) & 0xf
		by := tmp[sel&7]
		if sel&8 != 0 {
			by = 0
			if tmp[sel&7]&0x80 != 0 {
				by = 0xff
			}
		}
		d |= by << (8 * i)
	}
	return d
}

func specShf(a, b, c uint32, left, wrap bool) uint32 {
	n := c
	if wrap {
		n &= 31
	} else if n > 32 {
		n = 32
	}
	if left {
		if n == 0 {
			return b
		}
		return b<<n | a>>(32-n)
	}
	if n == 32 {
		return b
	}
	if n == 0 {
		return a
	}
	return b<<(32-n) | a>>n
}

func specDp4a(a, b, c uint32, as, bs bool) uint32 {
	acc := int64(int32(c))
	for i := 0; i < 4; i++ {
		x, y := int64(a>>(8*i)&0xff), int64(b>>(8*i)&0xff)
		if as && x >= 128 {
			x -= 256
		}
		if bs && y >= 128 {
			y -= 256
		}
		acc += x * y
	}
	return uint32(acc)
}

func satS32(v int64) uint32 {
	return uint32(int32(max(min(v, 1<<31-1), -1<<31)))
}

func refPtxops32(a, b, c uint32) []uint32 {
	o := make([]uint32, 34)
	if c < 32 {
		o[0], o[1], o[2] = a<<c, a>>c, uint32(int32(a)>>c)
	} else {
		o[2] = uint32(int32(a) >> 31)
	}
	o[3] = uint32(specBfe(uint64(a), uint64(b), uint64(c), 31, false))
	o[4] = uint32(specBfe(uint64(a), uint64(b), uint64(c), 31, true))
	o[5] = uint32(specBfi(uint64(a), uint64(b), uint64(c), uint64(c>>8), 31))
	o[6] = specPrmt(a, b, c)
	o[7] = specShf(a, b, c, true, true)
	o[8] = specShf(a, b, c, true, false)
	o[9] = specShf(a, b, c, false, true)
	o[10] = specShf(a, b, c, false, false)
	o[11] = uint32(bits.LeadingZeros32(a))
	o[12] = uint32(bits.OnesCount32(a))
	o[13] = bits.Reverse32(a)
	o[14] = uint32((int64(int32(a)) * int64(int32(b))) >> 32)
	o[15] = uint32(uint64(a)*uint64(b)>>32) + c
	o[16] = a*b + c
	x := uint32(0)
	if c&1 != 0 {
		x = a
	}
	o[17] = uint32(bu(x == 0))
	o[18] = specDp4a(a, b, c, true, true)
	o[19] = specDp4a(a, b, c, false, false)
	o[20] = specDp4a(a, b, c, true, false)
	o[21] = specDp4a(a, b, c, false, true)
	o[22] = satS32(int64(int32(a)) + int64(int32(b)))
	o[23] = satS32(int64(int32(a)) - int64(int32(b)))
	o[24] = b
	if int32(c) >= 0 {
		o[24] = a
	}
	o[25] = 7
	if int32(a) < int32(b) {
		o[25] = 9
	}
	o[26] = uint32(bu(a > b && c&1 == 0))
	if int32(a) < int32(b) {
		o[27] = 0xffffffff
	}
	o[28] = uint32((uint64(b)<<32 | uint64(a)) >> 12)
	o[29] = a
	if int32(a) < 0 {
		o[29] = -a
	}
	o[30] = uint32(int32(a) % int32(b|1))
	lo, c1 := bits.Add32(a, b, 0)
	lo, b1 := bits.Sub32(lo, c, 0)
	o[31] = lo ^ (c1 - b1)
	sh := c
	if sh > 15 {
		sh = 15
	}
	o[32] = uint32(int32(int16(a) >> sh))
	o[33] = uint32(int32(int16(a)) * int32(int16(b)))
	return o
}

func refPtxops64(a, b, c uint64) []uint64 {
	o := make([]uint64, 14)
	s := uint64(uint32(c))
	if s < 64 {
		o[0], o[1], o[2] = a<<s, a>>s, uint64(int64(a)>>s)
	} else {
		o[2] = uint64(int64(a) >> 63)
	}
	o[3] = specBfe(a, uint64(uint32(b)), s, 63, false)
	o[4] = specBfe(a, uint64(uint32(b)), s, 63, true)
	o[5] = specBfi(a, b, s, s>>8, 63)
	p := new(big.Int).Mul(big.NewInt(int64(a)), big.NewInt(int64(b)))
	p.Rsh(p, 64)
	o[6] = uint64(p.Int64())
	hi, _ := bits.Mul64(a, b)
	o[7] = hi + c
	o[8] = uint64(bits.LeadingZeros64(a))
	o[9] = uint64(bits.OnesCount64(a))
	o[10] = bits.Reverse64(a)
	lo, c1 := bits.Add64(a, b, 0)
	h, c2 := bits.Add64(a, c, c1)
	o[11] = c2 ^ lo ^ h
	o[12] = uint64(uint32(a))*uint64(uint32(b)) + c
	o[13] = max(uint64(min(int64(a), int64(b))), c)
	return o
}

func TestPTXOps32(t *testing.T) {
	r := rng(32)
	av := []uint32{0, 1, 2, 0xffffffff, 0x80000000, 0x7fffffff, 0x80000001, 0x12345678, 0xfedcba98, 0xff}
	cv := []uint32{0, 1, 7, 8, 15, 16, 31, 32, 33, 63, 64, 255, 256, 0x1f08, 0x0820, 0x3210, 0x7654, 0x8a9b, 0xffffffff, 0x80000000}
	var in []uint32
	for _, a := range av {
		for _, c := range cv {
			in = append(in, a, av[r.IntN(len(av))], c, r.Uint32(), a, c)
		}
	}
	for i := 0; i < 2000; i++ {
		in = append(in, r.Uint32(), r.Uint32(), r.Uint32()>>r.IntN(32))
	}
	n := len(in) / 3
	d := newDev(t)
	out := d.alloc(4 * 34 * n)
	d.launch(kernel(t, "ptxops", "ptxops32"), blocks(n, 256), Dim3{256, 1, 1}, 0, out, d.upload(u32bytes(in)), uint64(n))
	got := bytesU32(d.read(out, 4*34*n))
	for i := 0; i < n; i++ {
		a, b, c := in[3*i], in[3*i+1], in[3*i+2]
		want := refPtxops32(a, b, c)
		for k := range want {
			if got[34*i+k] != want[k] {
				t.Fatalf("a=%#x b=%#x c=%#x op %d: got %#x want %#x", a, b, c, k, got[34*i+k], want[k])
			}
		}
	}
}

func TestPTXOps64(t *testing.T) {
	r := rng(64)
	av := append(edgeInts(64), 0x0123456789abcdef, 0xfedcba9876543210)
	cv := []uint64{0, 1, 31, 32, 63, 64, 65, 255, 256, 0x3f10, 0x2040, 0x4008, 0xffffffff, 1 << 40}
	var in []uint64
	for _, a := range av {
		for _, c := range cv {
			in = append(in, a, av[r.IntN(len(av))], c)
		}
	}
	for i := 0; i < 1500; i++ {
		in = append(in, r.Uint64(), r.Uint64()>>r.IntN(64), r.Uint64()>>r.IntN(64))
	}
	n := len(in) / 3
	d := newDev(t)
	out := d.alloc(8 * 14 * n)
	d.launch(kernel(t, "ptxops", "ptxops64"), blocks(n, 96), Dim3{96, 1, 1}, 0, out, d.upload(u64bytes(in)), uint64(n))
	got := bytesU64(d.read(out, 8*14*n))
	for i := 0; i < n; i++ {
		a, b, c := in[3*i], in[3*i+1], in[3*i+2]
		want := refPtxops64(a, b, c)
		for k := range want {
			if got[14*i+k] != want[k] {
				t.Fatalf("a=%#x b=%#x c=%#x op %d: got %#x want %#x", a, b, c, k, got[14*i+k], want[k])
			}
		}
	}
}
