package sim

import (
	"fmt"

	"github.com/memowm/memowm/trajectory"
)

// Rows is an episode generated without its states: its actions, facts,
// questions and change statistics, and State, which renders the state of
// any observation on demand. It holds no state, so an episode of any
// length costs its actions and facts (a few hundred bytes an observation),
// not its states (64 KiB a default observation). A Rows belongs to the
// World that made it and, like it, is not safe for concurrent use.
type Rows struct {
	// Episode holds the ID, the actions and the facts; no States or Codes.
	Episode   *trajectory.Episode
	Questions []trajectory.Question
	Stats     Stats

	w     *World
	i     int
	run   *episodeRun // a replay of the episode, at observation obs
	obs   int
	drawn bool // the jitter of observation obs is drawn (its state is made)
}

// EpisodeRows generates episode i as Episode does, without its states:
// Episode(i)'s States[t] is what State(t, dst) writes, bit for bit, and
// the actions, facts, questions and statistics are Episode(i)'s.
func (w *World) EpisodeRows(i int) *Rows {
	r := w.begin(i)
	ep := &trajectory.Episode{ID: int64(i),
		Actions: make([]trajectory.Action, 0, w.cfg.Steps), Facts: make([][]byte, 0, w.cfg.Steps+1)}
	var st Stats
	// The jitter is drawn (and thrown away) to keep the random stream where
	// Episode has it: the actions and questions that follow depend on it.
	r.encode(nil)
	ep.Facts = append(ep.Facts, r.facts())
	for t := 0; t < w.cfg.Steps; t++ {
		ep.Actions = append(ep.Actions, r.step(&st))
		r.encode(nil)
		ep.Facts = append(ep.Facts, r.facts())
	}
	return &Rows{Episode: ep, Questions: w.questions(ep.ID, ep.Facts, r.rng), Stats: st, w: w, i: i}
}

// Len is the number of observations, Steps+1.
func (r *Rows) Len() int { return len(r.Episode.Facts) }

// State writes the state of observation t into dst (StateLen values). It
// replays the episode: asked in increasing order of t, as a trajectory
// Writer asks (WriteRows), each state costs one observation's work; asking
// for an earlier observation replays the episode from its start.
func (r *Rows) State(t int, dst []float32) error {
	if t < 0 || t >= r.Len() {
		return fmt.Errorf("sim: episode %d has no observation %d (it has %d)", r.i, t, r.Len())
	}
	if sl := r.w.cfg.Shape.StateLen(); len(dst) != sl {
		return fmt.Errorf("sim: a state of %v has %d values, not %d", r.w.cfg.Shape, sl, len(dst))
	}
	if r.run == nil || t < r.obs || (t == r.obs && r.drawn) {
		r.run, r.obs, r.drawn = r.w.begin(r.i), 0, false
	}
	for r.obs < t {
		if !r.drawn {
			r.run.encode(nil)
		}
		r.run.step(nil)
		r.obs, r.drawn = r.obs+1, false
	}
	r.run.encode(dst)
	r.drawn = true
	return nil
}
