package web

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// testPages returns n synthetic pages drawn from rng: links (some
// off-site, some opening tabs), inputs, focus and typed text, scroll.
func testPages(rng *rand.Rand, n int) ([]*Page, []bool) {
	pages := make([]*Page, n)
	back := make([]bool, n)
	for i := range pages {
		p := &Page{
			Path:      fmt.Sprintf("/p%d.html", rng.IntN(6)),
			ViewW:     640,
			ViewH:     400,
			ScrollMax: float64(rng.IntN(3)) * 800,
			Words:     []string{"alpha", "bravo", "charlie", "delta"},
		}
		if p.ScrollMax > 0 {
			p.ScrollY = float64(rng.IntN(int(p.ScrollMax) + 1))
		}
		for j := range rng.IntN(8) {
			href := fmt.Sprintf("http://127.0.0.1:1/p%d.html", rng.IntN(10))
			target := ""
			switch rng.IntN(6) {
			case 0:
				href = "https://example.com/x.html"
			case 1:
				target = "_blank"
			}
			p.Links = append(p.Links, Box{X: 10, Y: float64(20 * j), W: 100, H: 16, Href: href, Target: target})
		}
		if rng.IntN(3) == 0 {
			p.Inputs = []Box{{X: 300, Y: 5, W: 200, H: 24, Desc: "input#q"}}
			if rng.IntN(2) == 0 {
				p.Editable = true
				p.Focused = "input#q"
				if rng.IntN(2) == 0 {
					p.Typed = "alpha"
				}
			}
		}
		p.NotFound = rng.IntN(20) == 0
		back[i] = rng.IntN(2) == 0
		pages[i] = p
	}
	return pages, back
}

// onSite allows the links of testPages that lie on the site, except p9.
func onSite(href string) bool {
	return strings.HasPrefix(href, "http://127.0.0.1:1/") && !strings.HasSuffix(href, "/p9.html")
}

func run(seed uint64, pages []*Page, back []bool) []Action {
	pl := NewPolicy(seed, "/", onSite)
	out := make([]Action, len(pages))
	for i, p := range pages {
		out[i] = pl.Next(p, back[i])
	}
	return out
}

func TestPolicyDeterministic(t *testing.T) {
	pages, back := testPages(rand.New(rand.NewPCG(1, 1)), 500)
	a := run(7, pages, back)
	b := run(7, pages, back)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed and pages gave different actions")
	}
	c := run(8, pages, back)
	if reflect.DeepEqual(a, c) {
		t.Fatal("seeds 7 and 8 gave the same 500 actions")
	}
	kinds := map[Kind]int{}
	for _, x := range a {
		kinds[x.Kind]++
	}
	for _, k := range []Kind{Click, Scroll, Type, PressEnter, Back, Goto} {
		if kinds[k] == 0 {
			t.Errorf("no %s in 500 steps: %v", k, kinds)
		}
	}
}

func TestPolicyRules(t *testing.T) {
	pages, back := testPages(rand.New(rand.NewPCG(2, 2)), 2000)
	acts := run(3, pages, back)
	for i, a := range acts {
		p := pages[i]
		if p.NotFound {
			if back[i] && a.Kind != Back || !back[i] && (a.Kind != Goto || a.Text != "/") {
				t.Fatalf("step %d: on a missing page (back %v) the policy did %+v", i, back[i], a)
			}
			continue
		}
		switch a.Kind {
		case Click:
			var box *Box
			for j, b := range append(p.Links, p.Inputs...) {
				if a.X >= b.X && a.X < b.X+b.W && a.Y >= b.Y && a.Y < b.Y+b.H {
					box = &append(p.Links, p.Inputs...)[j]
					break
				}
			}
			if box == nil {
				t.Fatalf("step %d: click at (%g, %g) hits no link or input", i, a.X, a.Y)
			}
			if a.Link && (!onSite(box.Href) || box.Target == "_blank") {
				t.Fatalf("step %d: clicked a link the policy must skip: %+v", i, *box)
			}
		case Scroll:
			if p.ScrollMax == 0 || a.DY == 0 {
				t.Fatalf("step %d: scroll %g on a page with scrollMax %g", i, a.DY, p.ScrollMax)
			}
			if p.ScrollY <= 0 && a.DY < 0 || p.AtBottom() && a.DY > 0 {
				t.Fatalf("step %d: scroll %g at %g of %g", i, a.DY, p.ScrollY, p.ScrollMax)
			}
		case Type:
			if !p.Editable || len(a.Text) == 0 || len(a.Text) > MaxPayload {
				t.Fatalf("step %d: type %q (editable %v)", i, a.Text, p.Editable)
			}
			if p.Typed != "" && !strings.HasPrefix(a.Text, " ") {
				t.Fatalf("step %d: typed %q after %q without a space", i, a.Text, p.Typed)
			}
		case PressEnter:
			if !p.Editable || p.Typed == "" {
				t.Fatalf("step %d: Enter in an empty or unfocused input", i)
			}
		case Back:
			if !back[i] {
				t.Fatalf("step %d: back with nothing to go back to", i)
			}
		case Goto:
			if a.Text == p.Path {
				t.Fatalf("step %d: goto the page it is on", i)
			}
		}
	}
}

func TestHrefPath(t *testing.T) {
	for _, c := range [][2]string{
		{"http://127.0.0.1:8080/a/b.html#x", "/a/b.html"},
		{"http://h/search.html?q=a#r", "/search.html?q=a"},
		{"http://h", "/"},
		{"mailto:x@y", ""},
	} {
		if got := hrefPath(c[0]); got != c[1] {
			t.Errorf("hrefPath(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}
