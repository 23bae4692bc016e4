package worldmodel

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/memowm/memowm/entropy"
)

func TestIsqrt(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	vals := []uint64{0, 1, 2, 3, 4, 15, 16, 17, 1<<62 - 1, 1 << 62, math.MaxUint64}
	for i := 0; i < 5000; i++ {
		vals = append(vals, rng.Uint64()>>rng.IntN(64))
	}
	for _, x := range vals {
		r := isqrt(x)
		hi, lo := mulFull(r, r)
		hi1, lo1 := mulFull(r+1, r+1)
		if hi != 0 || lo > x || (hi1 == 0 && lo1 <= x && r+1 != 0) {
			t.Fatalf("isqrt(%d) = %d", x, r)
		}
	}
}

func mulFull(a, b uint64) (uint64, uint64) {
	p := new(big.Int).Mul(new(big.Int).SetUint64(a), new(big.Int).SetUint64(b))
	lo := new(big.Int).And(p, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	return new(big.Int).Rsh(p, 64).Uint64(), lo
}

// TestMultApply checks the fixed-point multipliers against exact rational
// arithmetic: apply is floor(v M / 2^Sh + 1/2), and M / 2^Sh is within
// 2^-30 (relative) of the ratio it was made from.
func TestMultApply(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 1))
	for i := 0; i < 2000; i++ {
		r := math.Ldexp(0.5+rng.Float64()/2, rng.IntN(60)-40)
		m, err := newMult(r)
		if err != nil {
			t.Fatal(err)
		}
		got := math.Ldexp(float64(m.M), -int(m.Sh))
		if m.Sh < 62 && math.Abs(got-r) > r*math.Ldexp(1, -30) {
			t.Fatalf("newMult(%g) = %d/2^%d = %g", r, m.M, m.Sh, got)
		}
		v := rng.Int64N(1<<32) - 1<<31
		want := new(big.Int).Mul(big.NewInt(v), big.NewInt(m.M))
		if m.Sh > 0 {
			want.Add(want, new(big.Int).Lsh(big.NewInt(1), uint(m.Sh-1)))
		}
		want.Rsh(want, uint(m.Sh)) // floor for negatives too
		if a := m.apply(v); a != want.Int64() {
			t.Fatalf("apply(%d) with %d/2^%d = %d, want %d", v, m.M, m.Sh, a, want)
		}
		u := rng.Uint64() >> (1 + rng.IntN(63))
		wu := new(big.Int).Mul(new(big.Int).SetUint64(u), big.NewInt(m.M))
		if m.Sh > 0 {
			wu.Add(wu, new(big.Int).Lsh(big.NewInt(1), uint(m.Sh-1)))
		}
		wu.Rsh(wu, uint(m.Sh))
		wantU := uint64(math.MaxUint64)
		if wu.IsUint64() {
			wantU = wu.Uint64()
		}
		if a := m.applyWide(u); a != wantU {
			t.Fatalf("applyWide(%d) with %d/2^%d = %d, want %d", u, m.M, m.Sh, a, wantU)
		}
	}
	if _, err := newMult(math.Ldexp(1, 40)); err == nil {
		t.Error("a ratio of 2^40 was taken")
	}
	if _, err := newMult(math.NaN()); err == nil {
		t.Error("NaN was taken")
	}
}

// TestSoftmaxPKernel compares the AVX-512 softmax with the Go one on rows
// of every length up to 512 and extreme scores.
func TestSoftmaxPKernel(t *testing.T) {
	if !softmaxAVX512 {
		t.Skip("no AVX-512 on this machine: the Go softmax is the only one")
	}
	rng := rand.New(rand.NewPCG(5, 1))
	for n := 1; n <= 512; n += 1 + n/16 {
		for trial := 0; trial < 4; trial++ {
			sc := make([]int32, n)
			lim := []int32{1, 100, 1 << 12, 1 << 20}[trial]
			for k := range sc {
				sc[k] = rng.Int32N(2*lim+1) - lim
			}
			m, err := newMult32(math.Ldexp(0.5+rng.Float64()/2, rng.IntN(20)-12))
			if err != nil {
				t.Fatal(err)
			}
			e := make([]uint32, n)
			a, b := make([]int16, n), make([]int16, n)
			softmaxPGo(a, sc, e, m)
			softmaxPAVX512(b, sc, e, m)
			if !slices.Equal(a, b) {
				t.Fatalf("n=%d trial %d: AVX-512 probabilities differ from Go's", n, trial)
			}
			var sum int
			for _, v := range a {
				sum += int(v)
			}
			if sum < 16384*95/100 || sum > 16384+n {
				t.Fatalf("n=%d: probabilities sum to %d/16384", n, sum)
			}
		}
	}
}

// TestPVRow checks the value sums (VPDPWSSD where available, and Go)
// against the plain definition, for head widths with and without a
// multiple of 16 and odd key counts.
func TestPVRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 1))
	for _, hd := range []int{8, 16, 24, 32, 48, 64} {
		for _, K := range []int{1, 2, 3, 31, 32, 33, 255, 512} {
			ld := 3*hd + 5
			v := make([]int8, K*ld)
			for i := range v {
				v[i] = int8(rng.IntN(255) - 127)
			}
			p := make([]int16, K+1)
			for k := 0; k < K; k++ {
				p[k] = int16(rng.IntN(16384))
			}
			want := make([]int32, hd)
			for d := range want {
				for k := 0; k < K; k++ {
					want[d] += int32(p[k]) * int32(v[k*ld+d])
				}
			}
			vp := packPairs(nil, v, ld, K, hd)
			for _, fast := range []bool{false, true} {
				got := make([]int32, hd)
				if fast {
					pvRow(got, p, vp, K, hd)
				} else {
					pvRowGo(got, p, vp, K, hd)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("hd %d K %d (fast %v): value sums differ", hd, K, fast)
				}
			}
		}
	}
}

// TestQuantizeWeights checks the integer table: total 2^prec, every entry
// >= 1, and each within 1 + the fix-up of its exact share.
func TestQuantizeWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	for i := 0; i < 3000; i++ {
		n := 2 + rng.IntN(255)
		w := make([]uint64, n)
		for k := range w {
			if rng.IntN(3) > 0 {
				w[k] = rng.Uint64() >> (17 + rng.IntN(47))
			}
		}
		w[rng.IntN(n)] |= 1
		prec := uint(8 + rng.IntN(21))
		if n > 1<<prec/2 {
			continue
		}
		f := make([]uint32, n)
		if m := quantizeWeights(f, slices.Clone(w), prec); m != entropy.Mode(f) {
			t.Fatalf("quantizeWeights returned mode %d, the table's is %d", m, entropy.Mode(f))
		}
		var tot uint64
		for _, v := range f {
			if v < 1 {
				t.Fatalf("entry 0")
			}
			tot += uint64(v)
		}
		if tot != 1<<prec {
			t.Fatalf("total %d, want 2^%d", tot, prec)
		}
	}
}

// TestGateTable checks the fused head table against its definition: the
// weights made one by one, quantizeWeights, then the mode.
func TestGateTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	for i := 0; i < 5000; i++ {
		C := 2 + rng.IntN(255)
		e := make([]uint64, C)
		var Z uint64
		for c := range e {
			switch rng.IntN(4) {
			case 0:
				e[c] = 0
			case 1:
				e[c] = expOne
			default:
				e[c] = uint64(expTable[rng.IntN(expLen)])
			}
			Z += e[c]
		}
		if Z < expOne {
			e[0], Z = e[0]+expOne, Z+expOne
		}
		a := uint64(sigTable[rng.IntN(len(sigTable))])
		prev := rng.IntN(C)
		prec := uint(8 + rng.IntN(21))
		if C > 1<<prec/2 {
			continue
		}
		w := make([]uint64, C)
		for c := range w {
			w[c] = (sigOne - a) * e[c]
		}
		w[prev] += a * Z
		want := make([]uint32, C)
		wantMode := quantizeWeights(want, w, prec)
		got := make([]uint32, C)
		mode := gateTable(got, slices.Clone(e), Z, a, prev, prec)
		if !slices.Equal(got, want) || mode != wantMode || mode != entropy.Mode(want) {
			t.Fatalf("case %d (C=%d prec %d a %d): the fused table differs from the reference", i, C, prec, a)
		}
	}
}

// TestRequantKernels compares the AVX-512 requantisation, residual and GELU
// kernels with the Go loops on widths with and without a multiple of 8 and
// 16 columns and extreme accumulators.
func TestRequantKernels(t *testing.T) {
	if !requantAVX512 {
		t.Skip("no AVX-512 on this machine")
	}
	rng := rand.New(rand.NewPCG(13, 1))
	gelu := make([]int8, 2*geluHalf+1)
	for i := range gelu {
		gelu[i] = int8(rng.IntN(255) - 127)
	}
	gelu32 := make([]int32, len(gelu))
	for i, v := range gelu {
		gelu32[i] = int32(v)
	}
	for _, N := range []int{1, 8, 13, 16, 24, 40, 100, 1024} {
		rows := 3
		l := &qLinear{K: 1, N: N, Bias: make([]int32, N), Mult: make([]mult, N)}
		for n := range l.Mult {
			m, err := newMult(math.Ldexp(0.5+rng.Float64()/2, rng.IntN(40)-30))
			if err != nil {
				t.Fatal(err)
			}
			l.Mult[n] = m
			l.Bias[n] = rng.Int32N(1<<30) - 1<<29
		}
		rq := newRQ(l)
		acc := make([]int32, rows*N)
		for i := range acc {
			acc[i] = rng.Int32N(1<<29) - 1<<28
		}
		x := make([]int32, rows*N)
		for i := range x {
			x[i] = rng.Int32N(2*int8Resid+1) - int8Resid
		}
		run := func(fast bool) ([]int8, []int32, []int8) {
			requantAVX512 = fast
			defer func() { requantAVX512 = true }()
			o8, g8 := make([]int8, rows*N), make([]int8, rows*N)
			xr := slices.Clone(x)
			requant8(o8, acc, rq)
			addResid(xr, acc, rq)
			geluRows(g8, acc, rq, gelu, gelu32)
			return o8, xr, g8
		}
		a8, ax, ag := run(false)
		b8, bx, bg := run(true)
		if !slices.Equal(a8, b8) || !slices.Equal(ax, bx) || !slices.Equal(ag, bg) {
			t.Fatalf("N=%d: the AVX-512 kernels differ from the Go loops", N)
		}
	}
}
