package web

import (
	_ "embed"
	"math"
	"unicode/utf8"
)

//go:embed observe.js
var observeJS string

// Page is what the recorder reads of the page after every step: the facts
// of the observation and what the policy may act on. observe.js fills it;
// positions are CSS pixels of the viewport.
type Page struct {
	URL       string   `json:"url"`       // location.href
	Path      string   `json:"path"`      // location.pathname + location.search
	Title     string   `json:"title"`     // document.title, at most 120 characters
	Focused   string   `json:"focused"`   // the focused element, "input#q[name=q][type=search]"; "" for the body
	Editable  bool     `json:"editable"`  // the focused element takes typed text
	Typed     string   `json:"typed"`     // the value of the focused input, "" when none is focused
	Headings  []string `json:"headings"`  // the first (at most 2) headings inside the viewport
	Section   string   `json:"section"`   // the last heading above the viewport's top edge
	ScrollY   float64  `json:"scrollY"`   // vertical scroll offset
	ScrollMax float64  `json:"scrollMax"` // largest vertical scroll offset, 0 when the page fits
	ViewW     float64  `json:"viewW"`     // viewport width
	ViewH     float64  `json:"viewH"`     // viewport height
	Links     []Box    `json:"links"`     // links a click at their centre reaches, in document order
	Inputs    []Box    `json:"inputs"`    // text inputs a click reaches
	Words     []string `json:"words"`     // lower-case words of the visible text, for typing

	// NotFound is set by the recorder, not the page: the site has nothing
	// at Path (a 404).
	NotFound bool `json:"-"`
}

// Box is a clickable element: its rectangle clipped to the viewport.
type Box struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	W      float64 `json:"w"`
	H      float64 `json:"h"`
	Href   string  `json:"href,omitempty"`   // links: the absolute target
	Text   string  `json:"text,omitempty"`   // links: the text, at most 40 characters
	Target string  `json:"target,omitempty"` // links: the target attribute ("_blank" opens a tab)
	Desc   string  `json:"desc,omitempty"`   // inputs: "input#q[name=q][type=search]"
}

// Facts returns the ground truth of the observation as the flat object of
// facts.jsonl: strings and numbers only.
//
//	url         path and query of the page ("/library/os.html")
//	title       document title
//	focused     the focused element ("" for the page body)
//	typed       text in the focused input so far
//	heading     the first heading inside the viewport ("" if none)
//	heading2    the second one
//	section     the last heading above the viewport (the section being read)
//	scroll      screens scrolled: floor(scrollY / viewport height)
//	scroll_pct  scroll position in tenths of the page: 0, 10, ..., 100
//	links       clickable links in the viewport
func (p *Page) Facts() map[string]any {
	f := map[string]any{
		"url":        p.Path,
		"title":      p.Title,
		"focused":    p.Focused,
		"typed":      p.Typed,
		"heading":    "",
		"heading2":   "",
		"section":    p.Section,
		"scroll":     p.ScrollScreens(),
		"scroll_pct": p.ScrollPct(),
		"links":      len(p.Links),
	}
	if len(p.Headings) > 0 {
		f["heading"] = p.Headings[0]
	}
	if len(p.Headings) > 1 {
		f["heading2"] = p.Headings[1]
	}
	return f
}

// ScrollScreens is the scroll position in whole viewport heights.
func (p *Page) ScrollScreens() int {
	if p.ViewH <= 0 || p.ScrollY <= 0 {
		return 0
	}
	return int(math.Floor(p.ScrollY/p.ViewH + 1e-9))
}

// ScrollPct is the scroll position as a share of the scrollable range,
// rounded down to a multiple of 10 (100 only at the very bottom).
func (p *Page) ScrollPct() int {
	if p.ScrollMax <= 0 || p.ScrollY <= 0 {
		return 0
	}
	if p.ScrollY >= p.ScrollMax-0.5 {
		return 100
	}
	return min(90, 10*int(math.Floor(10*p.ScrollY/p.ScrollMax)))
}

// AtBottom reports whether the page cannot scroll further down.
func (p *Page) AtBottom() bool { return p.ScrollY >= p.ScrollMax-1 }

// truncate returns s cut to at most n bytes on a UTF-8 boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
