package trajectory

import (
	"fmt"
	"math"
)

// Episode is one recorded trajectory: T+1 observations and T actions.
// Exactly one of States, Codes and Compact is set, as the file's Content
// says (Compact for codes).
type Episode struct {
	ID int64
	// States[t] is o_t as Slots*Dim float32 values, slot-major
	// (value c of slot s at index s*Dim+c).
	States [][]float32
	// Codes[t] is the OPQ code vector of o_t, Shape.Codes values.
	Codes [][]uint8
	// Compact holds the code vectors instead of Codes, in a fraction of its
	// memory for a long episode: a Reader after SetCompact returns episodes
	// this way, and Writer takes them (see CodesAt).
	Compact *CodeRows
	// Actions[t] is u_t, the action from o_t to o_{t+1}.
	Actions []Action
	// Facts[t], when Facts is not nil, is the ground truth of o_t as JSON
	// (written by sim; nil for recorded data).
	Facts [][]byte
}

// Len is the number of observations, T+1.
func (e *Episode) Len() int {
	switch {
	case e.States != nil:
		return len(e.States)
	case e.Compact != nil:
		return e.Compact.Len()
	}
	return len(e.Codes)
}

// CodesAt returns the code vector of o_t: Codes[t] (dst untouched), or for
// a Compact episode the codes written into dst (grown to their width when
// shorter). The result is read only: keep it as the next dst only for a
// Compact episode.
func (e *Episode) CodesAt(dst []uint8, t int) []uint8 {
	if e.Compact != nil {
		return e.Compact.RowTo(dst, t)
	}
	return e.Codes[t]
}

// ValidationError says what is wrong with a trajectory and where.
// Step is -1 when the problem is the episode as a whole.
type ValidationError struct {
	Episode int64
	Step    int
	Msg     string
}

func (e *ValidationError) Error() string {
	if e.Step < 0 {
		return fmt.Sprintf("trajectory: episode %d: %s", e.Episode, e.Msg)
	}
	return fmt.Sprintf("trajectory: episode %d step %d: %s", e.Episode, e.Step, e.Msg)
}

func invalid(ep int64, step int, format string, args ...any) error {
	return &ValidationError{Episode: ep, Step: step, Msg: fmt.Sprintf(format, args...)}
}

// Validate checks e against m: observation kind and widths, finite values,
// T actions for T+1 observations, and every action.
func (e *Episode) Validate(m Meta) error {
	switch m.Content {
	case States:
		if e.Codes != nil || e.Compact != nil {
			return invalid(e.ID, -1, "has codes, but the file holds states")
		}
	case Codes:
		if e.States != nil {
			return invalid(e.ID, -1, "has states, but the file holds codes")
		}
		if e.Codes != nil && e.Compact != nil {
			return invalid(e.ID, -1, "has both Codes and Compact codes")
		}
		if e.Compact != nil && e.Compact.Width() != m.Shape.Codes {
			return invalid(e.ID, -1, "compact code vectors have width %d, want %d", e.Compact.Width(), m.Shape.Codes)
		}
	}
	n := e.Len()
	if n == 0 {
		return invalid(e.ID, -1, "has no observations")
	}
	if len(e.Actions) != n-1 {
		return invalid(e.ID, -1, "action count %d does not match %d observations (want %d)", len(e.Actions), n, n-1)
	}
	if e.Facts != nil && len(e.Facts) != n {
		return invalid(e.ID, -1, "has %d facts for %d observations", len(e.Facts), n)
	}
	for t := 0; t < n && e.Compact == nil; t++ {
		if err := e.validateObs(m, t); err != nil {
			return err
		}
	}
	for t := range e.Actions {
		if err := e.Actions[t].Validate(); err != nil {
			// The action u_t sits on the row of step t+1.
			return invalid(e.ID, t+1, "%v", err)
		}
	}
	return nil
}

func (e *Episode) validateObs(m Meta, t int) error {
	if m.Content == Codes {
		return validCodes(m, e.ID, t, e.Codes[t])
	}
	return validState(m, e.ID, t, e.States[t])
}

// validCodes checks the code vector of step t of episode id.
func validCodes(m Meta, id int64, t int, z []uint8) error {
	if got := len(z); got != m.Shape.Codes {
		return invalid(id, t, "code vector has width %d, want %d", got, m.Shape.Codes)
	}
	return nil
}

// validState checks the state of step t of episode id: its width, and
// finite values.
func validState(m Meta, id int64, t int, s []float32) error {
	if got := len(s); got != m.Shape.StateLen() {
		return invalid(id, t, "state has width %d, want %d (%v)", got, m.Shape.StateLen(), m.Shape)
	}
	for i, v := range s {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return invalid(id, t, "state value %g at slot %d channel %d", v, i/m.Shape.Dim, i%m.Shape.Dim)
		}
	}
	return nil
}
