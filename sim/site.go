package sim

import (
	"fmt"
	"math/rand/v2"
)

// NumSlots is the number of widget slots on every page.
const NumSlots = 32

// Slot layout: a header of 8 slots shared by every page, then the body.
const (
	slotTitle  = 0
	slotNav0   = 1 // slots 1..4: site-wide navigation links to pages 0..3
	numNav     = 4
	slotTabs   = 5
	slotClock  = 6
	slotAd     = 7
	slotBody   = 8
	numBody    = NumSlots - slotBody
	slotMenu   = NumSlots - 1 // a context menu covers the last body slot
	numWords   = 48
	numItems   = 200
	listLength = 30
)

// Kind is a widget kind.
type Kind uint8

const (
	KindEmpty Kind = iota
	KindTitle
	KindNav
	KindTabs
	KindClock
	KindAd
	KindText
	KindInput
	KindCheckbox
	KindButton
	KindListRow
	KindLink
	KindStatus
	KindMenu
	numKinds
)

var (
	fieldNames  = []string{"email", "name", "search", "city", "code", "comment", "phone", "zip"}
	boxNames    = []string{"newsletter", "terms", "remember", "express", "gift", "private"}
	buttonNames = []string{"save", "submit", "cancel", "refresh", "apply", "next"}
	words       = func() []string {
		stems := []string{"kiwi", "plum", "fig", "lime", "pear", "date", "sage", "mint",
			"teal", "rose", "jade", "ruby", "opal", "onyx", "amber", "coral"}
		out := make([]string, 0, numWords)
		for _, suffix := range []string{"", "7", "42"} {
			for _, s := range stems {
				out = append(out, s+suffix)
			}
		}
		return out
	}()
)

// widget is one body slot of a page template.
type widget struct {
	kind    Kind
	name    int // field, box or button name index; row number for list rows; target page for links
	ordinal int // index among the page's widgets of this kind
}

// page is a page template of the site.
type page struct {
	id      int
	name    string
	body    [numBody]widget
	inputs  []int // body slots of inputs, in order
	boxes   []int
	buttons []int
	rows    []int // body slots of list rows, top to bottom
	links   []int
	status  int   // body slot of the status line
	items   []int // the list's item ids, before any reordering
}

// site is the world: its pages, fixed by WorldSeed.
type site struct {
	pages []page
}

func newSite(cfg Config) *site {
	rng := rand.New(rand.NewPCG(cfg.WorldSeed, 0x51_7e))
	s := &site{}
	for id := 0; id < cfg.Pages; id++ {
		p := page{id: id, name: fmt.Sprintf("page-%02d", id)}
		var kinds []widget
		add := func(k Kind, n int, name func(i int) int) {
			for i := 0; i < n; i++ {
				kinds = append(kinds, widget{kind: k, name: name(i), ordinal: i})
			}
		}
		nIn, nBox, nBtn := rng.IntN(4), rng.IntN(4), 1+rng.IntN(2)
		nRows := 0
		if rng.IntN(3) > 0 {
			nRows = 4 + rng.IntN(5)
		}
		nLinks := 1 + rng.IntN(3)
		fields, boxes, buttons := rng.Perm(len(fieldNames)), rng.Perm(len(boxNames)), rng.Perm(len(buttonNames))
		add(KindInput, nIn, func(i int) int { return fields[i] })
		add(KindCheckbox, nBox, func(i int) int { return boxes[i] })
		add(KindButton, nBtn, func(i int) int { return buttons[i] })
		add(KindListRow, nRows, func(i int) int { return i })
		add(KindLink, nLinks, func(int) int { return rng.IntN(cfg.Pages) })
		add(KindStatus, 1, func(int) int { return 0 })
		for len(kinds) < numBody {
			kinds = append(kinds, widget{kind: KindText, name: len(kinds)})
		}
		// Rows stay together and in order; everything else is shuffled around them.
		var others []widget
		var rows []widget
		for _, w := range kinds {
			if w.kind == KindListRow {
				rows = append(rows, w)
			} else {
				others = append(others, w)
			}
		}
		rng.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
		at := rng.IntN(len(others) - len(rows) + 1)
		layout := append(append(append([]widget{}, others[:at]...), rows...), others[at:]...)
		for i, w := range layout {
			p.body[i] = w
			slot := slotBody + i
			switch w.kind {
			case KindInput:
				p.inputs = append(p.inputs, slot)
			case KindCheckbox:
				p.boxes = append(p.boxes, slot)
			case KindButton:
				p.buttons = append(p.buttons, slot)
			case KindListRow:
				p.rows = append(p.rows, slot)
			case KindLink:
				p.links = append(p.links, slot)
			case KindStatus:
				p.status = slot
			}
		}
		if nRows > 0 {
			for _, it := range rng.Perm(numItems)[:listLength] {
				p.items = append(p.items, it)
			}
		}
		s.pages = append(s.pages, p)
	}
	return s
}

func itemName(id int) string { return fmt.Sprintf("item-%03d", id) }

// slotPos is the centre of a slot on the screen, in [0, 1]^2: the header is one
// row of 8 slots, the body 8 rows of 3 columns.
func slotPos(slot int) (x, y float32) {
	if slot < slotBody {
		return (float32(slot) + 0.5) / slotBody, 0.04
	}
	i := slot - slotBody
	return (float32(i%3) + 0.5) / 3, 0.15 + float32(float32(i/3)*0.105) + 0.05 // no fused multiply-add
}
