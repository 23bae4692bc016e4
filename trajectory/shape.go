package trajectory

import "fmt"

// Shape is the geometry of one observation. It is the one place where the
// 32 x 512 state and the 1,024 codes are configured.
type Shape struct {
	Slots int `json:"slots"` // encoder slots per observation (32)
	Dim   int `json:"dim"`   // float32 channels per slot (512)
	Codes int `json:"codes"` // OPQ coordinates per observation (1,024)
}

// DefaultShape is the paper's geometry: 32 slots of 512 channels, 1,024 codes.
var DefaultShape = Shape{Slots: 32, Dim: 512, Codes: 1024}

// StateLen is the number of float32 values in one state.
func (s Shape) StateLen() int { return s.Slots * s.Dim }

// Validate reports whether every dimension is positive and not absurdly large.
func (s Shape) Validate() error {
	const limit = 1 << 20
	if s.Slots <= 0 || s.Dim <= 0 || s.Codes <= 0 {
		return fmt.Errorf("trajectory: shape %v: every dimension must be positive", s)
	}
	if s.Slots > limit || s.Dim > limit || s.Codes > limit || s.StateLen() > limit {
		return fmt.Errorf("trajectory: shape %v is too large (at most %d values per observation)", s, limit)
	}
	return nil
}

func (s Shape) String() string {
	return fmt.Sprintf("%dx%d (%d codes)", s.Slots, s.Dim, s.Codes)
}

// Content says what a file's observations are.
type Content uint8

const (
	// States are float32 encoder outputs, Slots x Dim per observation.
	States Content = iota + 1
	// Codes are quantised states, Codes uint8 values per observation.
	Codes
)

func (c Content) String() string {
	switch c {
	case States:
		return "states"
	case Codes:
		return "codes"
	}
	return fmt.Sprintf("content(%d)", uint8(c))
}

// ParseContent is the inverse of Content.String.
func ParseContent(s string) (Content, error) {
	switch s {
	case "states":
		return States, nil
	case "codes":
		return Codes, nil
	}
	return 0, fmt.Errorf("trajectory: unknown content %q (want states or codes)", s)
}

// Meta describes a trajectory file as a whole.
type Meta struct {
	Shape   Shape
	Content Content
	// Quantizer names the quantizer that made a codes file's codes (its
	// Digest, hex); "" when unknown (states files, files from other tools or
	// from memowm before it was recorded). Stored as memowm.quantizer.
	Quantizer string
}

// Validate checks the shape and the content kind.
func (m Meta) Validate() error {
	if err := m.Shape.Validate(); err != nil {
		return err
	}
	if m.Content != States && m.Content != Codes {
		return fmt.Errorf("trajectory: %v is not a valid content kind", m.Content)
	}
	if m.Quantizer != "" && m.Content != Codes {
		return fmt.Errorf("trajectory: a %v file names a quantizer: only codes come from one", m.Content)
	}
	if len(m.Quantizer) > 128 {
		return fmt.Errorf("trajectory: quantizer name of %d bytes, at most 128", len(m.Quantizer))
	}
	return nil
}
