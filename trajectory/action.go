package trajectory

import (
	"fmt"
	"math"
)

// ActionType is one of the NumActionTypes kinds of action.
type ActionType uint8

// The 17 action kinds. Their numbers are stored in files: never reorder them.
const (
	Click ActionType = iota
	DoubleClick
	RightClick
	Hover
	Type
	Key
	PressEnter
	Scroll
	Drag
	Select
	Goto
	Back
	Forward
	NewTab
	SwitchTab
	CloseTab
	Noop
	NumActionTypes = 17
)

// MaxPayload is the longest payload an action may carry, in bytes.
const MaxPayload = 40

var actionNames = [NumActionTypes]string{
	"click", "double-click", "right-click", "hover", "type", "key", "press-enter",
	"scroll", "drag", "select", "goto", "back", "forward", "new-tab", "switch-tab",
	"close-tab", "noop",
}

// String returns the kind's name as the files and the CLI spell it.
func (a ActionType) String() string {
	if a.Valid() {
		return actionNames[a]
	}
	return fmt.Sprintf("action-type(%d)", uint8(a))
}

// Valid reports whether a is one of the known kinds.
func (a ActionType) Valid() bool { return a < NumActionTypes }

// ParseActionType is the inverse of ActionType.String.
func ParseActionType(s string) (ActionType, error) {
	for i, n := range actionNames {
		if n == s {
			return ActionType(i), nil
		}
	}
	return 0, fmt.Errorf("trajectory: unknown action type %q", s)
}

// ActionTypeNames lists the kinds' names in number order.
func ActionTypeNames() []string { return append([]string(nil), actionNames[:]...) }

// Action is one step of the agent between two observations.
type Action struct {
	Type ActionType
	// HasPos says whether X, Y hold an absolute position in [0, 1].
	HasPos bool
	X, Y   float32
	// HasDelta says whether DX, DY hold a relative displacement.
	HasDelta bool
	DX, DY   float32
	// Payload is typed text, a key name, a URL...: at most MaxPayload bytes.
	Payload []byte
}

// Validate checks the action alone; the error has no episode or step, which the
// caller adds.
func (a *Action) Validate() error {
	if !a.Type.Valid() {
		return fmt.Errorf("unknown action type %d (want 0..%d)", uint8(a.Type), NumActionTypes-1)
	}
	if a.HasPos {
		if !(a.X >= 0 && a.X <= 1) || !(a.Y >= 0 && a.Y <= 1) {
			return fmt.Errorf("%v position (%g, %g) is outside [0, 1]", a.Type, a.X, a.Y)
		}
	}
	if a.HasDelta && !(finite(a.DX) && finite(a.DY)) {
		return fmt.Errorf("%v displacement (%g, %g) is not finite", a.Type, a.DX, a.DY)
	}
	if len(a.Payload) > MaxPayload {
		return fmt.Errorf("%v payload is %d bytes, more than the %d allowed", a.Type, len(a.Payload), MaxPayload)
	}
	return nil
}

func finite(f float32) bool {
	return !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0)
}
