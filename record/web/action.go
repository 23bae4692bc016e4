package web

import (
	"math"

	"github.com/memowm/memowm/recording"
	"github.com/memowm/memowm/trajectory"
)

// Kind is the kind of a policy action; the names are memowm's action kinds.
type Kind string

// The kinds of action the policy takes.
const (
	Click      Kind = "click"       // a mouse click at (X, Y)
	Scroll     Kind = "scroll"      // a mouse wheel turn of DY pixels at the viewport's centre
	Type       Kind = "type"        // typing Text into the focused input
	PressEnter Kind = "press-enter" // the Enter key (submits a search box)
	Back       Kind = "back"        // the browser's back button
	Goto       Kind = "goto"        // loading the site page Text
)

// MaxPayload is the most bytes a recorded action's text may hold.
const MaxPayload = trajectory.MaxPayload

// Action is one step of the policy, in CSS pixels of the viewport.
type Action struct {
	Kind Kind
	X, Y float64 // Click: the point clicked
	DY   float64 // Scroll: wheel delta, positive scrolls down
	// Text is the typed text for Type (at most MaxPayload bytes) and the
	// page's path on the site for Goto ("/library/os.html", any length).
	Text string
	// Link tells a click on a link (a navigation may follow) from a click
	// on an input.
	Link bool
	// Aim is what the action aims at, for logs: a link's href, an input's
	// description. It is not recorded.
	Aim string
}

// Record returns a in memowm's action schema (docs/recording-format.md) for
// a width x height viewport.
// Click positions become fractions in [0, 1] rounded to 4 decimals; a
// scroll's DY becomes a fraction of the height (0.25 is a quarter screen
// down); Goto's path is truncated to MaxPayload bytes.
func (a Action) Record(width, height int) recording.Action {
	r := recording.Action{Type: string(a.Kind)}
	switch a.Kind {
	case Click:
		x := frac(a.X, width)
		y := frac(a.Y, height)
		r.X, r.Y = &x, &y
	case Scroll:
		dx := 0.0
		dy := round4(a.DY / float64(height))
		r.DX, r.DY = &dx, &dy
	case Type, Goto:
		r.Text = truncate(a.Text, MaxPayload)
	}
	return r
}

// frac returns v/n clamped to [0, 1], rounded to 4 decimals.
func frac(v float64, n int) float64 {
	return round4(min(1, max(0, v/float64(n))))
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }
