package entropy

// Logistic arithmetic for binary context mixing, integer only.
//
// A binary probability is a P16: p(bit = 1) * 65536, in [1, 65535], the
// form the coder takes (EncodeBit, DecodeBit). The logistic domain is the
// stretch st = ln(p / (1 - p)) * 256, an integer in [-StretchMax,
// StretchMax]. Squash maps st to a P16 through squashTab, a Go literal
// (logistic_table.go) generated from the package's own Exp and pinned by a
// test's checksum; Stretch is its inverse, built from the table at start-up
// by integer search alone. Nothing here touches floating point at run time,
// so every machine computes the same bits.

// StretchMax bounds the stretch domain: st in [-StretchMax, StretchMax],
// about +-8 in natural logits (p from 3.4e-4 to 1 - 3.4e-4).
const StretchMax = 2047

// P16One is the total of a P16 probability.
const P16One = 1 << 16

// Squash maps st (clamped to [-StretchMax, StretchMax]) to a P16.
func Squash(st int32) uint32 {
	if st > StretchMax {
		st = StretchMax
	} else if st < -StretchMax {
		st = -StretchMax
	}
	return uint32(squashTab[st+StretchMax])
}

// stretchTab[p >> 2] is Stretch of a P16 p: the st whose Squash is nearest
// to the middle of p's 4-wide bucket (the highest such st on ties).
var stretchTab = makeStretch()

func makeStretch() (t [1 << 14]int16) {
	st := int32(-StretchMax)
	for i := range t {
		mid := uint32(i)<<2 | 2
		// Squash is monotone: advance while the next st squashes at least
		// as near to mid (through the plateaus at the ends).
		for st < StretchMax && absDiff(Squash(st+1), mid) <= absDiff(Squash(st), mid) {
			st++
		}
		t[i] = int16(st)
	}
	return t
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// Stretch maps a P16 (taken modulo 2^16) to the logistic domain.
func Stretch(p uint32) int32 { return int32(stretchTab[(p&0xffff)>>2]) }

// ClampP16 clamps p to [1, 65535], the range the coder accepts.
func ClampP16(p int64) uint32 {
	if p < 1 {
		return 1
	}
	if p > P16One-1 {
		return P16One - 1
	}
	return uint32(p)
}

// EncodeBit codes bit (0 or 1) with p1 = P(bit = 1) as a P16 in [1, 65535].
func (e *Encoder) EncodeBit(bit int, p1 uint32) error {
	p0 := P16One - p1
	if bit != 0 {
		return e.Encode(p0, p1, 16)
	}
	return e.Encode(0, p0, 16)
}

// DecodeBit decodes a bit coded by EncodeBit with the same p1.
func (d *Decoder) DecodeBit(p1 uint32) (int, error) {
	if p1 < 1 || p1 >= P16One {
		return 0, ErrBadFrequency
	}
	p0 := P16One - p1
	t, err := d.Target(16)
	if err != nil {
		return 0, err
	}
	if t < p0 {
		return 0, d.Consume(0, p0)
	}
	return 1, d.Consume(p0, p1)
}

// CostBitQ16 is the cost in Q16 bits of coding bit with p1.
func CostBitQ16(bit int, p1 uint32) uint32 {
	if bit != 0 {
		return CostQ16(p1, P16One)
	}
	return CostQ16(P16One-p1, P16One)
}
