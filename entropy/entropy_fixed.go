package entropy

import (
	"math"
	"math/bits"
)

// Integer-exact information measures of frequency tables. They use no
// floating point, so the writer and the decoder (and any port) compute the
// same numbers; the retention rule compares H exactly.
//
// Fixed point: a value v in "Q16 bits" means v/65536 bits (FixedOne = 1 bit).
//
// Internally log2 is computed in Q24 by a 1025-entry table of log2(1 + i/1024)
// with linear interpolation on the next 21 bits of the normalised argument.
// The table itself is computed at start-up by integer repeated squaring
// (exact, machine independent). Interpolating a concave function along
// chords errs low by at most h^2/8 * max|f''| = 2^-20/8 * 1/ln2 = 1.7e-7 bit
// (about 3 Q24 units); with the table's own rounding, log2Q24 is within
// 2.5e-7 bit of log2. So H and costs are within that plus the final rounding
// (half a Q16 unit, 7.6e-6 bit) of the true values; tests hold
// |H_Q16/65536 - H| <= 2^-16 bit.

// FixedOne is one bit in the Q16 fixed-point unit of EntropyQ16 and CostQ16.
const FixedOne = 1 << 16

const (
	log2Frac      = 24 // fractional bits of log2Q24
	log2TableBits = 10
	log2InterBits = 31 - log2TableBits // bits below the table index
)

// log2Table[i] = round(log2(1 + i/1024) * 2^24), i = 0..1024.
var log2Table = makeLog2Table()

func makeLog2Table() (t [1<<log2TableBits + 1]uint32) {
	for i := range t {
		t[i] = log2RatioQ24(uint64(1<<log2TableBits + i))
	}
	return t
}

// log2RatioQ24 returns round(log2(m/1024) * 2^24) for m in [1024, 2048] by
// repeated squaring of m/1024 held in Q62: each squaring yields one bit of
// the logarithm. Truncating each product errs by 2^-62 relative, which
// reaches the result as less than 2^-60 bit.
func log2RatioQ24(m uint64) uint32 {
	const one = uint64(1) << 62
	if m == 2<<log2TableBits {
		return 1 << log2Frac
	}
	y := m << (62 - log2TableBits) // in [1, 2) as Q62
	var q30 uint64
	for bit := 29; bit >= 0; bit-- {
		hi, lo := bits.Mul64(y, y)
		y = hi<<2 | lo>>62 // y^2 in Q62, in [1, 4)
		if y >= 2*one {
			q30 |= 1 << bit
			y >>= 1
		}
	}
	return uint32((q30 + 1<<5) >> 6)
}

// log2Q24 returns log2(x) in Q24 for x >= 1 (0 for x = 0).
func log2Q24(x uint32) uint32 {
	if x == 0 {
		return 0
	}
	k := bits.Len32(x) - 1
	m := x << (31 - k) // leading 1 at bit 31
	idx := (m >> log2InterBits) & (1<<log2TableBits - 1)
	frac := uint64(m & (1<<log2InterBits - 1))
	a, b := log2Table[idx], log2Table[idx+1]
	return uint32(k)<<log2Frac + a + uint32((uint64(b-a)*frac+1<<(log2InterBits-1))>>log2InterBits)
}

// EntropyQ16 returns the entropy of the distribution freq[i]/total, with
// total = sum of freq, in Q16 bits per symbol:
//
//	H = round( floor( sum_i f_i*(L(total) - L(f_i)) / total ) / 256 )
//
// where L is the package's Q24 integer log2 (zero frequencies contribute 0).
// Only integer arithmetic is used. It returns 0 for an all-zero table and
// panics if the total is 2^32 or more (no table of this package comes near).
func EntropyQ16(freq []uint32) uint32 {
	var total uint64
	for _, f := range freq {
		total += uint64(f)
	}
	if total == 0 {
		return 0
	}
	if total > math.MaxUint32 {
		panic("entropy: EntropyQ16: table total is 2^32 or more")
	}
	lt := log2Q24(uint32(total))
	var num uint64 // <= total * 32 * 2^24 < 2^61
	for _, f := range freq {
		if f != 0 {
			num += uint64(f) * uint64(lt-log2Q24(f))
		}
	}
	var h24 uint64
	if total&(total-1) == 0 {
		h24 = num >> bits.TrailingZeros64(total)
	} else {
		h24 = num / total
	}
	return uint32((h24 + 1<<7) >> 8)
}

// CostQ16 returns the code length of a symbol of frequency freq out of total,
// -log2(freq/total), in Q16 bits: round((L(total) - L(freq)) / 256) with the
// Q24 integer log2 L. For a table of precision prec, total is 1<<prec. It
// returns math.MaxUint32 for freq = 0 (an impossible symbol) and 0 for
// freq >= total.
func CostQ16(freq, total uint32) uint32 {
	if freq == 0 {
		return math.MaxUint32
	}
	if freq >= total {
		return 0
	}
	return (log2Q24(total) - log2Q24(freq) + 1<<7) >> 8
}

// CostBits is CostQ16 in float64 (math.Log2): for reports, not for anything
// the decoder must reproduce.
func CostBits(freq, total uint32) float64 {
	return math.Log2(float64(total)) - math.Log2(float64(freq))
}

// EntropyBits is EntropyQ16 in float64 (math.Log2): for reports and tests,
// not for anything the decoder must reproduce.
func EntropyBits(freq []uint32) float64 {
	var total float64
	for _, f := range freq {
		total += float64(f)
	}
	if total == 0 {
		return 0
	}
	var h float64
	for _, f := range freq {
		if f != 0 {
			p := float64(f) / total
			h -= float64(p * math.Log2(p))
		}
	}
	return h
}

// Log2TableQ24 returns a copy of the 1025-entry table log2Q24 interpolates
// (round(log2(1 + i/1024) 2^24)), for ports of EntropyQ16 to other
// devices (package cuda's kernels).
func Log2TableQ24() []uint32 {
	t := log2Table
	return t[:]
}
