package web

import (
	"math/rand/v2"
	"strings"
)

// Policy is the seeded exploration policy: it picks the next action from
// what it sees of the page. It is a pure function of its seed and the
// sequence of (Page, canGoBack) it is shown: the same seed and the same
// pages give the same actions, whatever the browser's timing.
type Policy struct {
	rng     *rand.Rand
	start   string            // the start page's path
	allowed func(string) bool // whether a link's href may be clicked
	known   []string          // paths seen, in order of first visit
	seen    map[string]bool   // the set of known
}

// NewPolicy returns the policy for seed. start is the start page's path on
// the site; allowed reports whether a link's absolute href may be followed
// (on the site, present, a page); it must be a function of the href alone.
func NewPolicy(seed uint64, start string, allowed func(href string) bool) *Policy {
	return &Policy{
		rng:     rand.New(rand.NewPCG(seed, 0x6d656d6f776d)), // "memowm"
		start:   start,
		allowed: allowed,
		seen:    map[string]bool{},
	}
}

// The policy's weights: how often each kind of action is taken when it can
// be. Each step draws among the kinds possible on the page.
const (
	wLink      = 45 // click a visible link
	wScroll    = 25 // wheel up or down
	wInput     = 6  // click a visible text input
	wType      = 60 // type words, when an input is focused and empty
	wTypeMore  = 15 // type more words into a focused input with text
	wEnter     = 30 // press Enter in a focused input with text
	wBack      = 10 // go back
	wGoto      = 5  // load a known page
	maxTyped   = 60 // an input with this many bytes gets no more text
	wNewPage   = 3  // a link to a page not yet seen is this many times as likely
	scrollStep = 4  // a scroll moves 1..scrollStep quarters of the viewport
)

// Next returns the action to take on page p. canGoBack reports whether the
// browser has a page to go back to.
func (pl *Policy) Next(p *Page, canGoBack bool) Action {
	pl.visit(p.Path)
	if p.NotFound {
		if canGoBack {
			return Action{Kind: Back}
		}
		return Action{Kind: Goto, Text: pl.start}
	}

	type option struct {
		w    int
		kind string
	}
	var opts []option
	links := pl.links(p)
	if len(links) > 0 {
		opts = append(opts, option{wLink, "link"})
	}
	if p.ScrollMax > 0 {
		opts = append(opts, option{wScroll, "scroll"})
	}
	if len(p.Inputs) > 0 && !p.Editable {
		opts = append(opts, option{wInput, "input"})
	}
	if p.Editable {
		switch {
		case p.Typed == "":
			opts = append(opts, option{wType, "type"})
		case len(p.Typed) < maxTyped:
			opts = append(opts, option{wTypeMore, "type"}, option{wEnter, "enter"})
		default:
			opts = append(opts, option{wEnter, "enter"})
		}
	}
	if canGoBack {
		opts = append(opts, option{wBack, "back"})
	}
	if len(pl.known) > 1 || p.Path != pl.start {
		opts = append(opts, option{wGoto, "goto"})
	}
	if len(opts) == 0 {
		return Action{Kind: Goto, Text: pl.start}
	}

	total := 0
	for _, o := range opts {
		total += o.w
	}
	r := pl.rng.IntN(total)
	kind := opts[len(opts)-1].kind
	for _, o := range opts {
		if r < o.w {
			kind = o.kind
			break
		}
		r -= o.w
	}

	switch kind {
	case "link":
		return pl.clickLink(links)
	case "scroll":
		return pl.scroll(p)
	case "input":
		b := p.Inputs[pl.rng.IntN(len(p.Inputs))]
		x, y := pl.pointIn(b)
		return Action{Kind: Click, X: x, Y: y, Aim: b.Desc}
	case "type":
		return Action{Kind: Type, Text: pl.words(p)}
	case "enter":
		return Action{Kind: PressEnter}
	case "back":
		return Action{Kind: Back}
	}
	return pl.gotoKnown(p)
}

// visit adds path to the known pages.
func (pl *Policy) visit(path string) {
	if path == "" || pl.seen[path] {
		return
	}
	pl.seen[path] = true
	pl.known = append(pl.known, path)
}

// links returns the links of p that the policy may click.
func (pl *Policy) links(p *Page) []Box {
	var out []Box
	for _, l := range p.Links {
		if l.Target != "" && l.Target != "_self" && l.Target != "_top" && l.Target != "_parent" {
			continue // opens a tab or a frame
		}
		if pl.allowed(l.Href) {
			out = append(out, l)
		}
	}
	return out
}

// clickLink clicks one of links, a link to an unseen page wNewPage times as
// likely as one to a known page.
func (pl *Policy) clickLink(links []Box) Action {
	total := 0
	weight := func(l Box) int {
		if pl.seen[hrefPath(l.Href)] {
			return 1
		}
		return wNewPage
	}
	for _, l := range links {
		total += weight(l)
	}
	r := pl.rng.IntN(total)
	b := links[len(links)-1]
	for _, l := range links {
		if r < weight(l) {
			b = l
			break
		}
		r -= weight(l)
	}
	x, y := pl.pointIn(b)
	return Action{Kind: Click, X: x, Y: y, Link: true, Aim: b.Href}
}

// pointIn returns a whole-pixel point inside b, away from its edges.
func (pl *Policy) pointIn(b Box) (x, y float64) {
	x = b.X + b.W*(0.25+0.5*pl.rng.Float64())
	y = b.Y + b.H/2
	return float64(int(x)), float64(int(y))
}

// scroll turns the wheel 1..scrollStep quarter screens, down three times in
// four, up when at the bottom, down when at the top.
func (pl *Policy) scroll(p *Page) Action {
	n := 1 + pl.rng.IntN(scrollStep)
	down := pl.rng.IntN(4) != 0
	switch {
	case p.ScrollY <= 0:
		down = true
	case p.AtBottom():
		down = false
	}
	dy := float64(n) * p.ViewH / 4
	if !down {
		dy = -dy
	}
	return Action{Kind: Scroll, DY: float64(int(dy))}
}

// words returns one or two words of the page's visible text to type, with
// a leading space when the input holds text already.
func (pl *Policy) words(p *Page) string {
	pool := p.Words
	if len(pool) == 0 {
		pool = fallbackWords
	}
	n := 1 + pl.rng.IntN(2)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = pool[pl.rng.IntN(len(pool))]
	}
	s := strings.Join(ws, " ")
	if p.Typed != "" && !strings.HasSuffix(p.Typed, " ") {
		s = " " + s
	}
	return truncate(s, MaxPayload)
}

var fallbackWords = []string{"index", "search", "list", "file", "time", "data", "string", "server"}

// gotoKnown loads a known page other than the current one, or the start.
func (pl *Policy) gotoKnown(p *Page) Action {
	var cands []string
	for _, k := range pl.known {
		if k != p.Path {
			cands = append(cands, k)
		}
	}
	if len(cands) == 0 {
		return Action{Kind: Goto, Text: pl.start}
	}
	return Action{Kind: Goto, Text: cands[pl.rng.IntN(len(cands))]}
}

// hrefPath returns the path and query of an absolute href, "" if it has none.
func hrefPath(href string) string {
	i := strings.Index(href, "://")
	if i < 0 {
		return ""
	}
	rest := href[i+3:]
	j := strings.IndexByte(rest, '/')
	if j < 0 {
		return "/"
	}
	rest = rest[j:]
	if k := strings.IndexByte(rest, '#'); k >= 0 {
		rest = rest[:k]
	}
	return rest
}
