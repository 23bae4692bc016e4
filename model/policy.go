package model

import (
	"fmt"
	"math/bits"
)

// Policy is the retention rule: which coordinates of a predicted state the
// writer stores. It decides from integers alone (a coordinate index and the
// Q16 entropy of the coordinate's integer table), so the decoder recomputes
// every decision. The zero Policy keeps everything (lossless).
//
// Kinds:
//   - "keep-all" (or ""): every coordinate is kept; the paper's lambda = 0.
//   - "min-entropy": keep coordinate j iff its predictive entropy H_j (Q16
//     bits) is at least MinEntropyQ16; omitted coordinates take the model's
//     mode. The Uncertainty gating baseline (entropy alone).
//   - "risk": the paper's rule (Eq. 5), keep j iff g_j(H) * V_j >= lambda * H,
//     ties keep, in fixed point: g_j(H) is BinRate[bin(H)] when that bin is
//     populated (>= 0), else Marginal[j], both error rates in Q16; V_j is
//     Impact[j] in Q32 bits; lambda is LambdaQ32; H is Q16 bits; both sides
//     are exact 128-bit products in Q48. bin(H) = H / BinQ16, the last bin
//     for larger H. lambda = 0 keeps everything. (Impacts and lambda need
//     Q32: impacts of 1e-4 bit and lambdas of 1e-6 are common.)
//
// Prior names the distribution a risk policy's error lookup was measured
// on: the world model's table ("" or "wm") or the mixing prior's mixed
// distribution ("mix"). A rule applies where it was calibrated: the writer
// refuses the other prior for a risk policy that omits anything.
type Policy struct {
	Kind          string `json:"kind"`
	MinEntropyQ16 uint32 `json:"min_entropy_q16,omitempty"`

	LambdaQ32 uint64   `json:"lambda_q32,omitempty"`
	BinQ16    uint32   `json:"bin_q16,omitempty"`  // entropy bin width (16384: 0.25 bit)
	BinRate   []int32  `json:"bin_rate,omitempty"` // per bin: pooled error rate, Q16; -1: not populated
	Marginal  []uint32 `json:"marginal,omitempty"` // per coordinate: marginal error rate, Q16
	Impact    []uint64 `json:"impact,omitempty"`   // per coordinate: task impact V_j, Q32 bits
	Prior     string   `json:"prior,omitempty"`    // risk: what g(H) was measured on: "" or "wm", or "mix"
	// Reader names the external reader (reader.HTTPReader's Name,
	// "http:URL") the impacts were measured with; "" for the bundle's own
	// probe.
	Reader string `json:"reader,omitempty"`
}

// Policy kinds.
const (
	KeepAll    = "keep-all"
	MinEntropy = "min-entropy"
	Risk       = "risk"
)

// Priors a risk policy is calibrated on (Policy.Prior).
const (
	PriorWM  = "wm"
	PriorMix = "mix"
)

// CalibratedOnMix reports whether p is a risk policy whose error lookup was
// measured on the mixing prior's distribution.
func (p Policy) CalibratedOnMix() bool { return p.Kind == Risk && p.Prior == PriorMix }

// Validate reports whether p is a known, well-formed policy.
func (p Policy) Validate() error {
	switch p.Kind {
	case "", KeepAll:
		if p.MinEntropyQ16 != 0 || p.LambdaQ32 != 0 || p.BinRate != nil || p.Impact != nil || p.Prior != "" {
			return fmt.Errorf("model: policy %q takes no parameters", KeepAll)
		}
		return nil
	case MinEntropy:
		return nil
	case Risk:
		switch {
		case p.Prior != "" && p.Prior != PriorWM && p.Prior != PriorMix:
			return fmt.Errorf("model: risk policy calibrated on an unknown prior %q (want %s or %s)", p.Prior, PriorWM, PriorMix)
		case p.BinQ16 == 0 || len(p.BinRate) == 0:
			return fmt.Errorf("model: risk policy without an entropy lookup")
		case len(p.Marginal) == 0 || len(p.Marginal) != len(p.Impact):
			return fmt.Errorf("model: risk policy with %d marginal rates and %d impacts", len(p.Marginal), len(p.Impact))
		}
		for b, r := range p.BinRate {
			if r < -1 || r > 1<<16 {
				return fmt.Errorf("model: risk policy bin %d has rate %d outside [-1, 65536]", b, r)
			}
		}
		for j, r := range p.Marginal {
			if r > 1<<16 {
				return fmt.Errorf("model: risk policy coordinate %d has marginal rate %d above 65536", j, r)
			}
		}
		return nil
	}
	return fmt.Errorf("model: unknown retention policy %q (want %s, %s or %s)", p.Kind, KeepAll, MinEntropy, Risk)
}

// CheckCoords reports whether a risk policy has one entry per coordinate.
func (p Policy) CheckCoords(coords int) error {
	if p.Kind == Risk && len(p.Impact) != coords {
		return fmt.Errorf("model: risk policy for %d coordinates, the model has %d", len(p.Impact), coords)
	}
	return nil
}

// Lossless reports whether the policy keeps every coordinate.
func (p Policy) Lossless() bool {
	switch p.Kind {
	case MinEntropy:
		return p.MinEntropyQ16 == 0
	case Risk:
		return p.LambdaQ32 == 0
	}
	return true
}

// Keep reports whether coordinate j, whose predictive distribution has
// entropy hQ16 (Q16 bits), is stored.
func (p Policy) Keep(j int, hQ16 uint32) bool {
	switch p.Kind {
	case MinEntropy:
		return hQ16 >= p.MinEntropyQ16
	case Risk:
		if p.LambdaQ32 == 0 {
			return true
		}
		rh, rl := p.Risk(j, hQ16)
		lh, ll := bits.Mul64(p.LambdaQ32, uint64(hQ16))
		return rh > lh || (rh == lh && rl >= ll)
	}
	return true
}

// Risk is the estimated omission risk g_j(H) * V_j of a risk policy in Q48
// bits, as the high and low words of a 128-bit product.
func (p Policy) Risk(j int, hQ16 uint32) (hi, lo uint64) {
	b := int(hQ16 / p.BinQ16)
	if b >= len(p.BinRate) {
		b = len(p.BinRate) - 1
	}
	g := uint64(p.Marginal[j])
	if r := p.BinRate[b]; r >= 0 {
		g = uint64(r)
	}
	return bits.Mul64(g, p.Impact[j])
}

// WithLambda returns a copy of p with lambda set (a risk policy).
func (p Policy) WithLambda(lambdaQ32 uint64) Policy {
	p.LambdaQ32 = lambdaQ32
	return p
}

func (p Policy) String() string {
	switch p.Kind {
	case MinEntropy:
		return fmt.Sprintf("%s (keep when H >= %.4f bit)", MinEntropy, float64(p.MinEntropyQ16)/65536)
	case Risk:
		if p.LambdaQ32 == 0 {
			return "risk, lambda 0 (lossless codes)"
		}
		on := ""
		if p.Prior == PriorMix {
			on = ", on the mixed distribution"
		}
		return fmt.Sprintf("risk (keep when g(H) V >= %.4g H%s)", float64(p.LambdaQ32)/(1<<32), on)
	}
	return KeepAll + " (lossless codes)"
}
