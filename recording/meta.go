package recording

import (
	"fmt"
	"math"

	"github.com/memowm/memowm/screen"
	"github.com/memowm/memowm/trajectory"
)

// FormatName and Version are recording.json's "format" and "version".
const (
	FormatName = "memowm-recording"
	Version    = 1
)

// The two kinds of screen (Meta.Screen).
const (
	ScreenText  = "text"  // screens.jsonl
	ScreenImage = "image" // frames/NNNNNN.png
)

// File names inside a recording folder.
const (
	MetaFile    = "recording.json"
	ScreensFile = "screens.jsonl"
	FramesDir   = "frames"
	ActionsFile = "actions.jsonl"
	FactsFile   = "facts.jsonl"
	TimingFile  = "timing.jsonl"
)

// Meta is recording.json: what was recorded.
type Meta struct {
	Format  string `json:"format"`  // FormatName
	Version int    `json:"version"` // Version
	Kind    string `json:"kind"`    // the source, free text: web, tty, vim...
	Screen  string `json:"screen"`  // ScreenText or ScreenImage
	Width   int    `json:"width"`   // columns of a text screen, pixels of an image
	Height  int    `json:"height"`  // rows of a text screen, pixels of an image
	Command string `json:"command,omitempty"`
	Seed    uint64 `json:"seed,omitempty"`
}

// Validate checks the format, version, screen kind and size. A Meta with
// Format and Version left empty is completed by NewWriter, not here.
func (m *Meta) Validate() error {
	if m.Format != FormatName {
		return fmt.Errorf("format is %q, want %q", m.Format, FormatName)
	}
	if m.Version != Version {
		return fmt.Errorf("version is %d, this memowm reads version %d", m.Version, Version)
	}
	if m.Kind == "" {
		return fmt.Errorf("kind is empty (name the source: web, tty, ...)")
	}
	limit := 0
	switch m.Screen {
	case ScreenText:
		limit = screen.MaxTextSize
	case ScreenImage:
		limit = screen.MaxImageSize
	default:
		return fmt.Errorf("screen is %q, want %q or %q", m.Screen, ScreenText, ScreenImage)
	}
	if m.Width < 1 || m.Height < 1 || m.Width > limit || m.Height > limit {
		return fmt.Errorf("%s screen size %dx%d is outside 1x1..%dx%d", m.Screen, m.Width, m.Height, limit, limit)
	}
	return nil
}

// Action is one line of actions.jsonl: the action from one screen to the
// next. Positions and displacements are fractions of the screen's width and
// height.
type Action struct {
	Type string   `json:"type"` // one of trajectory.ActionTypeNames
	X    *float64 `json:"x,omitempty"`
	Y    *float64 `json:"y,omitempty"`
	DX   *float64 `json:"dx,omitempty"`
	DY   *float64 `json:"dy,omitempty"`
	Text string   `json:"text,omitempty"` // typed text, a URL...
	Key  string   `json:"key,omitempty"`  // a key name
}

// Pos returns x, y as an Action's position fields.
func Pos(x, y float64) (*float64, *float64) { return &x, &y }

// Trajectory checks a and converts it: a known type; x and y both or
// neither, each in [0, 1]; dx and dy both or neither, finite; text or key,
// not both, at most trajectory.MaxPayload bytes.
func (a Action) Trajectory() (trajectory.Action, error) {
	var t trajectory.Action
	typ, err := trajectory.ParseActionType(a.Type)
	if err != nil {
		return t, fmt.Errorf("unknown action type %q (want one of %v)", a.Type, trajectory.ActionTypeNames())
	}
	t.Type = typ
	if (a.X == nil) != (a.Y == nil) {
		return t, fmt.Errorf("%s has only one of x and y (give both or neither)", a.Type)
	}
	if a.X != nil {
		if !(*a.X >= 0 && *a.X <= 1) || !(*a.Y >= 0 && *a.Y <= 1) {
			return t, fmt.Errorf("%s position (%g, %g) is outside [0, 1] (x and y are fractions of the width and height)", a.Type, *a.X, *a.Y)
		}
		t.HasPos, t.X, t.Y = true, float32(*a.X), float32(*a.Y)
	}
	if (a.DX == nil) != (a.DY == nil) {
		return t, fmt.Errorf("%s has only one of dx and dy (give both or neither)", a.Type)
	}
	if a.DX != nil {
		dx, dy := float32(*a.DX), float32(*a.DY)
		if math.IsNaN(float64(dx)) || math.IsInf(float64(dx), 0) || math.IsNaN(float64(dy)) || math.IsInf(float64(dy), 0) {
			return t, fmt.Errorf("%s displacement (%g, %g) is not finite in float32", a.Type, *a.DX, *a.DY)
		}
		t.HasDelta, t.DX, t.DY = true, dx, dy
	}
	if a.Text != "" && a.Key != "" {
		return t, fmt.Errorf("%s has both text and key (give one payload)", a.Type)
	}
	p := a.Text + a.Key
	if len(p) > trajectory.MaxPayload {
		return t, fmt.Errorf("%s payload %q is %d bytes, more than the %d allowed", a.Type, clip(p), len(p), trajectory.MaxPayload)
	}
	if p != "" {
		t.Payload = []byte(p)
	}
	return t, nil
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) <= 48 {
		return s
	}
	return s[:45] + "..."
}
