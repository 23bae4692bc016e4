package ptx

import (
	"fmt"
	"math/big"
	"math/bits"
	"testing"
)

type sInt interface {
	~int8 | ~int16 | ~int32 | ~int64
}
type uInt interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

func bu(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// refIntops is intops in testdata/intops.cu, in Go.
func refIntops[S sInt, U uInt](ax, ay uint64, w int) []uint64 {
	ux, uy := U(ax), U(ay)
	x, y := S(ux), S(uy)
	mn := S(U(1) << (w - 1))
	o := make([]uint64, 24)
	o[0] = uint64(ux + uy)
	o[1] = uint64(ux - uy)
	o[2] = uint64(ux * uy)
	var q, r S
	switch {
	case y == 0:
	case x == mn && y == -1:
		q = x
	default:
		q, r = x/y, x%y
	}
	o[3], o[4] = uint64(int64(q)), uint64(int64(r))
	if uy != 0 {
		o[5], o[6] = uint64(ux/uy), uint64(ux%uy)
	}
	o[7], o[8], o[9], o[10] = bu(x < y), bu(ux < uy), bu(x >= y), bu(ux <= uy)
	o[11] = uint64(int64(min(x, y)))
	o[12] = uint64(max(ux, uy))
	s := uy & U(w-1)
	o[13] = uint64(int64(x >> s))
	o[14] = uint64(ux << s)
	o[15] = uint64(ux >> s)
	o[16] = uint64(ux)
	if x < 0 {
		o[16] = uint64(U(0 - ux))
	}
	o[17] = uint64((^ux & uy) ^ (ux | 0x5a))
	o[18] = uint64(int64(x))
	o[19] = uint64(int64(int8(ux)))
	o[20] = uint64(uint16(ux))
	o[21] = uint64(int64(int32(ux)))
	o[22] = uint64(bits.OnesCount64(uint64(ux)))
	o[23] = uint64(int64(x*3 + y>>1))
	return o
}

// intInputs pairs every edge value with every other, then adds random pairs.
func intInputs(w int, seed uint64, nrand int) []uint64 {
	r := rng(seed)
	e := edgeInts(w)
	var in []uint64
	for _, a := range e {
		for _, b := range e {
			in = append(in, a, b)
		}
	}
	for i := 0; i < nrand; i++ {
		in = append(in, r.Uint64(), r.Uint64()>>(r.IntN(64)))
	}
	return in
}

func TestIntops(t *testing.T) {
	for _, w := range []int{8, 16, 32, 64} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			d := newDev(t)
			in := intInputs(w, uint64(w), 300)
			n := len(in) / 2
			out := d.alloc(8 * 24 * n)
			d.launch(kernel(t, "intops", fmt.Sprintf("intops%d", w)), blocks(n, 128), Dim3{128, 1, 1}, 0, out, d.upload(u64bytes(in)), uint64(n))
			got := bytesU64(d.read(out, 8*24*n))
			for i := 0; i < n; i++ {
				a, b := in[2*i], in[2*i+1]
				var want []uint64
				switch w {
				case 8:
					want = refIntops[int8, uint8](a, b, w)
				case 16:
					want = refIntops[int16, uint16](a, b, w)
				case 32:
					want = refIntops[int32, uint32](a, b, w)
				default:
					want = refIntops[int64, uint64](a, b, w)
				}
				for k := range want {
					if got[24*i+k] != want[k] {
						t.Fatalf("w=%d a=%#x b=%#x op %d: got %#x want %#x", w, a, b, k, got[24*i+k], want[k])
					}
				}
			}
		})
	}
}

func TestMulhi(t *testing.T) {
	d := newDev(t)
	in := intInputs(64, 7, 400)
	in = append(in, intInputs(32, 8, 0)...)
	n := len(in) / 2
	out := d.alloc(8 * 6 * n)
	d.launch(kernel(t, "intops", "mulhi"), blocks(n, 64), Dim3{64, 1, 1}, 0, out, d.upload(u64bytes(in)), uint64(n))
	got := bytesU64(d.read(out, 8*6*n))
	two64 := new(big.Int).Lsh(big.NewInt(1), 64)
	for i := 0; i < n; i++ {
		a, b := in[2*i], in[2*i+1]
		p := new(big.Int).Mul(big.NewInt(int64(a)), big.NewInt(int64(b)))
		p.Rsh(p, 64) // floor division: the high word of the signed product
		if p.Sign() < 0 {
			p.Add(p, two64)
		}
		hu, _ := bits.Mul64(a, b)
		want := []uint64{hu, p.Uint64(),
			uint64(uint32(a)) * uint64(uint32(b)) >> 32,
			uint64(int64(int32((int64(int32(a)) * int64(int32(b))) >> 32))),
			uint64(int64(int32(a)) * int64(int32(b))),
			uint64(uint32(a)) * uint64(uint32(b))}
		for k := range want {
			if got[6*i+k] != want[k] {
				t.Fatalf("a=%#x b=%#x op %d: got %#x want %#x", a, b, k, got[6*i+k], want[k])
			}
		}
	}
}
