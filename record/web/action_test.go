package web

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestActionRecord(t *testing.T) {
	long := "/library/" + strings.Repeat("x", 50) + ".html"
	utf := strings.Repeat("é", 25) // 50 bytes of 2-byte runes
	for _, c := range []struct {
		a    Action
		want string
	}{
		{Action{Kind: Click, X: 320, Y: 100, Link: true}, `{"type":"click","x":0.5,"y":0.25}`},
		{Action{Kind: Click, X: 639, Y: 399}, `{"type":"click","x":0.9984,"y":0.9975}`},
		{Action{Kind: Click, X: -3, Y: 500}, `{"type":"click","x":0,"y":1}`},
		{Action{Kind: Scroll, DY: 100}, `{"type":"scroll","dx":0,"dy":0.25}`},
		{Action{Kind: Scroll, DY: -400}, `{"type":"scroll","dx":0,"dy":-1}`},
		{Action{Kind: Type, Text: "alpha bravo"}, `{"type":"type","text":"alpha bravo"}`},
		{Action{Kind: Type, Text: utf}, `{"type":"type","text":"` + strings.Repeat("é", 20) + `"}`},
		{Action{Kind: PressEnter}, `{"type":"press-enter"}`},
		{Action{Kind: Back}, `{"type":"back"}`},
		{Action{Kind: Goto, Text: "/index.html"}, `{"type":"goto","text":"/index.html"}`},
		{Action{Kind: Goto, Text: long}, `{"type":"goto","text":"` + long[:40] + `"}`},
	} {
		r := c.a.Record(640, 400)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%+v: got %s, want %s", c.a, b, c.want)
		}
		if _, err := r.Trajectory(); err != nil {
			t.Errorf("%+v: not a valid recording action: %v", c.a, err)
		}
	}
}

func TestTruncate(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abcdef", 3, "abc"},
		{"aé", 2, "a"},
		{"日本語", 4, "日"},
		{"", 0, ""},
	} {
		if got := truncate(c.s, c.n); got != c.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

func TestFacts(t *testing.T) {
	p := &Page{
		Path: "/library/os.html", Title: "os — Miscellaneous", Focused: "input[name=q][type=text]",
		Editable: true, Typed: "walk", Headings: []string{"os.path", "Files"}, Section: "Process Parameters",
		ScrollY: 1000, ScrollMax: 4000, ViewH: 400, Links: make([]Box, 7),
	}
	got, _ := json.Marshal(p.Facts())
	want := `{"focused":"input[name=q][type=text]","heading":"os.path","heading2":"Files","links":7,` +
		`"scroll":2,"scroll_pct":20,"section":"Process Parameters","title":"os — Miscellaneous","typed":"walk","url":"/library/os.html"}`
	if string(got) != want {
		t.Errorf("facts:\n got %s\nwant %s", got, want)
	}
	for _, c := range []struct {
		y, max      float64
		screens, pc int
	}{
		{0, 0, 0, 0},
		{0, 5000, 0, 0},
		{399, 5000, 0, 0},
		{400, 5000, 1, 0},
		{2500, 5000, 6, 50},
		{4999, 5000, 12, 90},
		{5000, 5000, 12, 100},
	} {
		p := &Page{ScrollY: c.y, ScrollMax: c.max, ViewH: 400}
		if p.ScrollScreens() != c.screens || p.ScrollPct() != c.pc {
			t.Errorf("scroll %g of %g: screens %d pct %d, want %d %d", c.y, c.max, p.ScrollScreens(), p.ScrollPct(), c.screens, c.pc)
		}
	}
}

func TestTimingJSON(t *testing.T) {
	tm := Timing{Act: 12345 * time.Microsecond, Settle: 50 * time.Millisecond, Screenshot: 40 * time.Millisecond, Facts: 3 * time.Millisecond}
	b, _ := json.Marshal(tm.JSON(4))
	want := `{"act":12.35,"facts":3,"screenshot":40,"settle":50,"step":4,"total":105.35}`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}
