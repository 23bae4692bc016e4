package model

import (
	"fmt"
)

// Policy is the retention rule: which coordinates of a predicted state the
// writer stores. It decides from integers alone, so the decoder recomputes
// every decision. The zero Policy keeps everything (lossless).
//
// Kinds:
//   - "keep-all" (or ""): every coordinate is kept; the paper's lambda = 0.
//   - "min-entropy": keep coordinate j iff its predictive entropy H_j (Q16
//     bits) is at least MinEntropyQ16; omitted coordinates take the model's
//     mode. This is the Uncertainty gating baseline (entropy alone), used
//     until the task-aware rule g(H) V_j >= lambda H is calibrated.
type Policy struct {
	Kind          string `json:"kind"`
	MinEntropyQ16 uint32 `json:"min_entropy_q16,omitempty"`
}

// Policy kinds.
const (
	KeepAll    = "keep-all"
	MinEntropy = "min-entropy"
)

// Validate reports whether p is a known policy.
func (p Policy) Validate() error {
	switch p.Kind {
	case "", KeepAll:
		if p.MinEntropyQ16 != 0 {
			return fmt.Errorf("model: policy %q takes no threshold", KeepAll)
		}
		return nil
	case MinEntropy:
		return nil
	}
	return fmt.Errorf("model: unknown retention policy %q (want %s or %s)", p.Kind, KeepAll, MinEntropy)
}

// Lossless reports whether the policy keeps every coordinate.
func (p Policy) Lossless() bool {
	return p.Kind == "" || p.Kind == KeepAll || (p.Kind == MinEntropy && p.MinEntropyQ16 == 0)
}

// Keep reports whether coordinate j, whose predictive distribution has
// entropy hQ16 (Q16 bits), is stored.
func (p Policy) Keep(j int, hQ16 uint32) bool {
	if p.Kind == MinEntropy {
		return hQ16 >= p.MinEntropyQ16
	}
	return true
}

func (p Policy) String() string {
	switch p.Kind {
	case MinEntropy:
		return fmt.Sprintf("%s (keep when H >= %.4f bit)", MinEntropy, float64(p.MinEntropyQ16)/65536)
	}
	return KeepAll + " (lossless)"
}
