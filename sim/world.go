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
// statistics. It depends only on the Config and i.
func (w *World) Episode(i int) (*trajectory.Episode, []trajectory.Question, Stats) {
	rng := rand.New(rand.NewPCG(w.cfg.Seed, mix(uint64(i))))
	b := &browser{site: w.site, clock: int32(rng.IntN(1440)), ad: int32(rng.IntN(64))}
	b.tabs = []*tab{{cur: w.site.load(rng.IntN(len(w.site.pages)))}}
	g := &agent{cfg: w.cfg, rng: rng, b: b}
	ep := &trajectory.Episode{ID: int64(i)}
	var st Stats
	var all []facts
	screen := b.render()
	observe := func() {
		s := make([]float32, w.cfg.Shape.StateLen())
		w.enc.encode(s, &screen, w.cfg.Noise, rng)
		ep.States = append(ep.States, s)
		f := b.facts()
		js, err := json.Marshal(f)
		if err != nil {
			panic(fmt.Sprintf("sim: facts do not marshal: %v", err)) // a bug, never input
		}
		ep.Facts = append(ep.Facts, js)
		all = append(all, f)
	}
	observe()
	for t := 0; t < w.cfg.Steps; t++ {
		a := g.step()
		ep.Actions = append(ep.Actions, a)
		next := b.render()
		st.add(&screen, &next, g.pageLoad)
		screen = next
		observe()
	}
	return ep, w.questions(ep.ID, all, rng), st
}

// questions asks about the important facts: the open page, a typed value, a
// checkbox, the selection. Each kind is asked once per episode at a random
// step where it applies.
func (w *World) questions(id int64, all []facts, rng *rand.Rand) []trajectory.Question {
	pageNames := make([]string, len(w.site.pages))
	for i, p := range w.site.pages {
		pageNames[i] = p.name
	}
	var qs []trajectory.Question
	ask := func(step int, kind, subject, text, answer string, choices []string) {
		qs = append(qs, trajectory.Question{Episode: id, Step: step, Kind: kind, Subject: subject,
			Text: text, Answer: answer, Choices: choices})
	}
	for r := range max(w.cfg.Questions, 1) {
		w.askAll(r, all, rng, pageNames, ask)
	}
	return qs
}

// askAll asks one question of each kind: round r = 0 asks about the page at
// the last step, later rounds at a random step.
func (w *World) askAll(r int, all []facts, rng *rand.Rand, pageNames []string, ask func(step int, kind, subject, text, answer string, choices []string)) {
	last := len(all) - 1
	if r > 0 {
		last = rng.IntN(len(all))
	}
	ask(last, "page", "page", "Which page is open?", all[last].Page, pageNames)
	const tries = 8
	for try := 0; try < tries; try++ {
		t := rng.IntN(len(all))
		var typed []string
		for name, v := range sortedKeys(all[t].Inputs) {
			if v != "" {
				typed = append(typed, name)
			}
		}
		if len(typed) > 0 {
			f := typed[rng.IntN(len(typed))]
			ask(t, "typed", "field:"+f, fmt.Sprintf("What was typed into the %s field?", f), all[t].Inputs[f], words)
			break
		}
	}
	for try := 0; try < tries; try++ {
		t := rng.IntN(len(all))
		var boxes []string
		for name := range sortedKeys(all[t].Checked) {
			boxes = append(boxes, name)
		}
		if len(boxes) > 0 {
			bx := boxes[rng.IntN(len(boxes))]
			ans := "no"
			if all[t].Checked[bx] {
				ans = "yes"
			}
			ask(t, "checked", "box:"+bx, fmt.Sprintf("Is the %s box checked?", bx), ans, []string{"no", "yes"})
			break
		}
	}
	for try := 0; try < tries; try++ {
		t := rng.IntN(len(all))
		p := w.site.pageNamed(all[t].Page)
		if len(p.items) == 0 {
			continue
		}
		choices := []string{"none"}
		for _, it := range p.items {
			choices = append(choices, itemName(it))
		}
		ask(t, "selected", "list:"+p.name, "Which list item is selected?", all[t].Selected, choices)
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
