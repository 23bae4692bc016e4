package sim

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/memowm/memowm/trajectory"
)

// World generates episodes of one Config. It is not safe for concurrent use.
type World struct {
	cfg  Config
	site *site
	enc  *encoder
}

// New checks cfg and builds the site and the encoder.
func New(cfg Config) (*World, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &World{cfg: cfg, site: newSite(cfg), enc: newEncoder(cfg.WorldSeed, cfg.Shape.Dim)}, nil
}

// Config returns the world's configuration.
func (w *World) Config() Config { return w.cfg }

// Meta is the trajectory meta of the world's episodes.
func (w *World) Meta() trajectory.Meta {
	return trajectory.Meta{Shape: w.cfg.Shape, Content: trajectory.States}
}

// Episode generates episode i (id i) with its questions and its change
// statistics. It depends only on the Config and i. The episode holds its
// states; EpisodeRows makes the same episode without holding them.
func (w *World) Episode(i int) (*trajectory.Episode, []trajectory.Question, Stats) {
	r := w.begin(i)
	ep := &trajectory.Episode{ID: int64(i)}
	var st Stats
	observe := func() {
		s := make([]float32, w.cfg.Shape.StateLen())
		r.encode(s)
		ep.States = append(ep.States, s)
		ep.Facts = append(ep.Facts, r.facts())
	}
	observe()
	for t := 0; t < w.cfg.Steps; t++ {
		ep.Actions = append(ep.Actions, r.step(&st))
		observe()
	}
	return ep, w.questions(ep.ID, ep.Facts, r.rng), st
}

// episodeRun is one episode being generated, one observation at a time:
// the agent's random stream, the browser and the screen of the current
// observation. An observation's state draws its jitter from the stream
// before the next action does, so the states, actions and facts of an
// episode come out only in this order: encode (or skip), facts, step.
type episodeRun struct {
	w      *World
	rng    *rand.Rand
	b      *browser
	g      *agent
	screen [NumSlots]cell
}

// begin starts episode i at its first observation.
func (w *World) begin(i int) *episodeRun {
	rng := rand.New(rand.NewPCG(w.cfg.Seed, mix(uint64(i))))
	b := &browser{site: w.site, clock: int32(rng.IntN(1440)), ad: int32(rng.IntN(64))}
	b.tabs = []*tab{{cur: w.site.load(rng.IntN(len(w.site.pages)))}}
	return &episodeRun{w: w, rng: rng, b: b, g: &agent{cfg: w.cfg, rng: rng, b: b}, screen: b.render()}
}

// encode writes the current observation's state into dst (StateLen
// values), drawing its jitter; dst nil draws the jitter only.
func (r *episodeRun) encode(dst []float32) {
	if dst == nil {
		r.w.enc.skip(r.w.cfg.Noise, r.rng)
		return
	}
	r.w.enc.encode(dst, &r.screen, r.w.cfg.Noise, r.rng)
}

// facts is the current observation's facts as JSON.
func (r *episodeRun) facts() []byte {
	js, err := json.Marshal(r.b.facts())
	if err != nil {
		panic(fmt.Sprintf("sim: facts do not marshal: %v", err)) // a bug, never input
	}
	return js
}

// step takes one action and moves to the next observation, counting the
// slots it changed into st (when not nil).
func (r *episodeRun) step(st *Stats) trajectory.Action {
	a := r.g.step()
	next := r.b.render()
	if st != nil {
		st.add(&r.screen, &next, r.g.pageLoad)
	}
	r.screen = next
	return a
}

// questions asks about the important facts: the open page, a typed value, a
// checkbox, the selection. Each kind is asked once per episode at a random
// step where it applies.
//
// all is every observation's facts as JSON; only the observations asked
// about are decoded, so a long episode is never held as decoded facts.
func (w *World) questions(id int64, all [][]byte, rng *rand.Rand) []trajectory.Question {
	pageNames := make([]string, len(w.site.pages))
	for i, p := range w.site.pages {
		pageNames[i] = p.name
	}
	var qs []trajectory.Question
	ask := func(step int, kind, subject, text, answer string, choices []string) {
		qs = append(qs, trajectory.Question{Episode: id, Step: step, Kind: kind, Subject: subject,
			Text: text, Answer: answer, Choices: choices})
	}
	at := func(t int) facts {
		var f facts
		if err := json.Unmarshal(all[t], &f); err != nil {
			panic(fmt.Sprintf("sim: facts do not unmarshal: %v", err)) // a bug: they were just marshalled
		}
		return f
	}
	for r := range max(w.cfg.Questions, 1) {
		w.askAll(r, len(all), at, rng, pageNames, ask)
	}
	return qs
}

// askAll asks one question of each kind: round r = 0 asks about the page at
// the last step, later rounds at a random step.
func (w *World) askAll(r, n int, at func(t int) facts, rng *rand.Rand, pageNames []string, ask func(step int, kind, subject, text, answer string, choices []string)) {
	last := n - 1
	if r > 0 {
		last = rng.IntN(n)
	}
	ask(last, "page", "page", "Which page is open?", at(last).Page, pageNames)
	const tries = 8
	for try := 0; try < tries; try++ {
		t := rng.IntN(n)
		ft := at(t)
		var typed []string
		for name, v := range sortedKeys(ft.Inputs) {
			if v != "" {
				typed = append(typed, name)
			}
		}
		if len(typed) > 0 {
			f := typed[rng.IntN(len(typed))]
			ask(t, "typed", "field:"+f, fmt.Sprintf("What was typed into the %s field?", f), ft.Inputs[f], words)
			break
		}
	}
	for try := 0; try < tries; try++ {
		t := rng.IntN(n)
		ft := at(t)
		var boxes []string
		for name := range sortedKeys(ft.Checked) {
			boxes = append(boxes, name)
		}
		if len(boxes) > 0 {
			bx := boxes[rng.IntN(len(boxes))]
			ans := "no"
			if ft.Checked[bx] {
				ans = "yes"
			}
			ask(t, "checked", "box:"+bx, fmt.Sprintf("Is the %s box checked?", bx), ans, []string{"no", "yes"})
			break
		}
	}
	for try := 0; try < tries; try++ {
		t := rng.IntN(n)
		ft := at(t)
		p := w.site.pageNamed(ft.Page)
		if len(p.items) == 0 {
			continue
		}
		choices := []string{"none"}
		for _, it := range p.items {
			choices = append(choices, itemName(it))
		}
		ask(t, "selected", "list:"+p.name, "Which list item is selected?", ft.Selected, choices)
		break
	}
}

func (s *site) pageNamed(name string) *page {
	for i := range s.pages {
		if s.pages[i].name == name {
			return &s.pages[i]
		}
	}
	panic("sim: unknown page " + name) // facts only name pages of the site
}
