package worldmodel

import (
	"fmt"
	"math"

	"github.com/memowm/memowm/internal/f32"
	"github.com/memowm/memowm/trajectory"
)

// Step is one block of a history: a reconstructed state and the action taken
// from it (the action that drives the transition to the next state).
type Step struct {
	// Codes are the state's codes, (S*G) slot-major: coordinate j = s*G + g.
	Codes []uint8
	// Action is the action taken from this state. In the last step it is
	// u_{t-1}, the action whose outcome the model predicts.
	Action trajectory.Action
	// SlotValid marks which slots the state has; nil means all of them (the
	// paper's interface, where every slot is always valid).
	SlotValid []bool
}

// History is a reconstructed history, oldest state first: at least one and at
// most MaxHistory steps. The model predicts the state that follows the last
// step's action.
type History []Step

// checkHistories validates a batch of histories; the error names the
// first bad one ("history %d: ...").
func (c *Config) checkHistories(hs []History) error {
	for b, h := range hs {
		if err := c.checkHistory(h); err != nil {
			return fmt.Errorf("history %d: %w", b, err)
		}
	}
	return nil
}

// checkHistory validates a history against the configuration.
func (c *Config) checkHistory(h History) error {
	if len(h) == 0 {
		return fmt.Errorf("%w: empty history", ErrHistory)
	}
	if len(h) > c.MaxHistory {
		return fmt.Errorf("%w: %d states, more than the window of %d", ErrHistory, len(h), c.MaxHistory)
	}
	J := c.Coords()
	for k := range h {
		st := &h[k]
		if len(st.Codes) != J {
			return fmt.Errorf("%w: state %d has %d codes, want %d", ErrHistory, k, len(st.Codes), J)
		}
		if st.SlotValid != nil && len(st.SlotValid) != c.Slots {
			return fmt.Errorf("%w: state %d has %d slot-validity flags, want %d", ErrHistory, k, len(st.SlotValid), c.Slots)
		}
		for j, z := range st.Codes {
			if int(z) >= c.Codewords {
				return fmt.Errorf("%w: state %d coordinate %d is %d, want < %d", ErrCode, k, j, z, c.Codewords)
			}
		}
		if err := c.checkAction(&st.Action); err != nil {
			return fmt.Errorf("%w (state %d)", err, k)
		}
	}
	return nil
}

// CheckAction reports whether the world model's encoder can represent a
// (the check every history's actions pass); the error wraps ErrAction.
func (c *Config) CheckAction(a *trajectory.Action) error { return c.checkAction(a) }

func (c *Config) checkAction(a *trajectory.Action) error {
	if int(a.Type) >= c.ActionTypes {
		return fmt.Errorf("%w: type %d, want < %d", ErrAction, a.Type, c.ActionTypes)
	}
	if a.HasPos && !(a.X >= 0 && a.X <= 1 && a.Y >= 0 && a.Y <= 1) {
		return fmt.Errorf("%w: position (%g, %g) outside [0, 1]", ErrAction, a.X, a.Y)
	}
	if a.HasDelta && (isNonFinite(a.DX) || isNonFinite(a.DY)) {
		return fmt.Errorf("%w: displacement (%g, %g) is not finite", ErrAction, a.DX, a.DY)
	}
	if len(a.Payload) > c.MaxPayload {
		return fmt.Errorf("%w: payload of %d bytes, more than %d", ErrAction, len(a.Payload), c.MaxPayload)
	}
	return nil
}

func isNonFinite(v float32) bool { return math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) }

// coordBin is the bin of an absolute coordinate in [0, 1]: floor(v*bins)
// clipped to bins-1, or bins (the "missing" bin) when there is no position.
func coordBin(v float32, has bool, bins int) int {
	if !has {
		return bins
	}
	b := int(float32(v * float32(bins)))
	return min(max(b, 0), bins-1)
}

// actionEmbedTo writes the action's embedding (W) into out, using feat
// (4A+P) and gru scratch (see gruTo).
//
//	feat = [typeEmb[type] | xEmb[xbin] | yEmb[ybin] | delta | gru(payload)]
//	delta = [slog dx, slog dy, has-delta] deltaW + deltaB
//	out  = feat actW + actB
func (m *Model) actionEmbedTo(out, feat, scratch []float32, a *trajectory.Action) {
	c, p := &m.cfg, m.p
	A := c.ActionDim
	copy(feat[0:A], p.typeEmb[int(a.Type)*A:][:A])
	xb := coordBin(a.X, a.HasPos, c.CoordBins)
	yb := coordBin(a.Y, a.HasPos, c.CoordBins)
	copy(feat[A:2*A], p.xEmb[xb*A:][:A])
	copy(feat[2*A:3*A], p.yEmb[yb*A:][:A])
	var in [3]float32
	if a.HasDelta {
		in = [3]float32{slogf(a.DX), slogf(a.DY), 1}
	}
	f32.MulTo(feat[3*A:4*A], A, in[:], 3, p.deltaW, A, 1, 3, A)
	for i := 0; i < A; i++ {
		feat[3*A+i] += p.deltaB[i]
	}
	m.gruTo(feat[4*A:4*A+c.PayloadHidden], scratch, a.Payload)
	W := c.Width()
	f32.MulTo(out[:W], W, feat, len(feat), p.actW, W, 1, c.ActionWidth(), W)
	for i := 0; i < W; i++ {
		out[i] += p.actB[i]
	}
}
