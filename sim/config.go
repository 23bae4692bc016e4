package sim

import (
	"fmt"

	"github.com/memowm/memowm/trajectory"
)

// Config sets the world and the agent. The zero value is not valid; start from
// DefaultConfig.
type Config struct {
	Episodes int    // episodes to generate
	Steps    int    // actions per episode, T (each episode has T+1 observations)
	Seed     uint64 // seeds the agent's episodes
	// WorldSeed seeds the site and the encoder; keep it fixed so that data
	// made with different Seeds comes from the same world and encoder.
	WorldSeed uint64
	Shape     trajectory.Shape // Slots must be 32
	Pages     int              // pages in the site (default 12)

	// Change rates, per step. Together they set how much of the screen
	// changes from one observation to the next (see Stats).
	PageLoadRate float64 // an action loads a page: link, goto, back, forward, new tab (default 0.15)
	IdleRate     float64 // an action changes nothing on the page: noop or hover (default 0.10)
	ClockRate    float64 // the clock ticks (default 0.6)
	AdRate       float64 // the ad banner rotates (default 0.2)

	Noise float64 // std of the encoder's per-observation jitter (default 0.05)

	// Questions is how many questions of each kind an episode gets, each at
	// its own random step (0 or 1: one of each kind, the page asked at the
	// last step). More questions make the distortion of a calibration or
	// evaluation set less noisy.
	Questions int
}

// DefaultConfig is a small web-browsing world: on the order of one in six
// slots changes per step, page loads change most of the screen.
func DefaultConfig() Config {
	return Config{
		Episodes: 8, Steps: 20, Seed: 1, WorldSeed: 0x6d656d6f776d,
		Shape: trajectory.DefaultShape, Pages: 12,
		PageLoadRate: 0.15, IdleRate: 0.10, ClockRate: 0.6, AdRate: 0.2,
		Noise: 0.05, Questions: 1,
	}
}

// Validate reports the first setting that is out of range.
func (c Config) Validate() error {
	if err := c.Shape.Validate(); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	switch {
	case c.Episodes < 0:
		return fmt.Errorf("sim: episodes %d must not be negative", c.Episodes)
	case c.Steps < 1 || c.Steps > 1_000_000:
		return fmt.Errorf("sim: steps %d must be in 1..1000000", c.Steps)
	case c.Shape.Slots != NumSlots:
		return fmt.Errorf("sim: the world has %d slots per page, not %d", NumSlots, c.Shape.Slots)
	case c.Pages < 2 || c.Pages > 1000:
		return fmt.Errorf("sim: pages %d must be in 2..1000", c.Pages)
	case c.Noise < 0 || c.Noise > 10:
		return fmt.Errorf("sim: noise %g must be in [0, 10]", c.Noise)
	case c.Questions < 0 || c.Questions > 1000:
		return fmt.Errorf("sim: questions %d per kind must be in 0..1000", c.Questions)
	case c.PageLoadRate+c.IdleRate > 1:
		return fmt.Errorf("sim: page-load rate %g + idle rate %g exceed 1", c.PageLoadRate, c.IdleRate)
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"page-load", c.PageLoadRate}, {"idle", c.IdleRate}, {"clock", c.ClockRate}, {"ad", c.AdRate}} {
		if !(r.v >= 0 && r.v <= 1) {
			return fmt.Errorf("sim: %s rate %g must be in [0, 1]", r.name, r.v)
		}
	}
	return nil
}
