package sim

import (
	"math/rand/v2"

	"github.com/memowm/memowm/trajectory"
)

// cell is the latent content of one slot: what the screen shows there.
type cell struct {
	kind    Kind
	a, b    int32 // kind-specific content
	hovered bool
}

// pageState is one loaded page as the agent left it.
type pageState struct {
	page     int
	values   []int // per input: word index, -1 when empty
	checked  []bool
	order    []int // the list's items in their current order
	offset   int   // first visible list item
	selected int   // selected item id, -1 for none
	status   int32 // what the status line says
	hover    int   // hovered slot, -1 for none
	menu     bool  // a context menu is open
}

type tab struct {
	cur       *pageState
	back, fwd []*pageState
}

// browser is the whole latent state of the world.
type browser struct {
	site   *site
	tabs   []*tab
	active int
	clock  int32
	ad     int32
}

func (s *site) load(id int) *pageState {
	p := &s.pages[id]
	ps := &pageState{page: id, selected: -1, hover: -1,
		values: make([]int, len(p.inputs)), checked: make([]bool, len(p.boxes)),
		order: p.items}
	for i := range ps.values {
		ps.values[i] = -1
	}
	return ps
}

func (b *browser) tab() *tab         { return b.tabs[b.active] }
func (b *browser) state() *pageState { return b.tab().cur }
func (b *browser) page() *page       { return &b.site.pages[b.state().page] }

// navigate loads page id in the active tab, keeping history.
func (b *browser) navigate(id int) {
	t := b.tab()
	t.back = append(t.back, t.cur)
	t.fwd = nil
	t.cur = b.site.load(id)
}

// render is the screen: one cell per slot.
func (b *browser) render() [NumSlots]cell {
	var c [NumSlots]cell
	ps, p := b.state(), b.page()
	c[slotTitle] = cell{kind: KindTitle, a: int32(p.id)}
	for i := 0; i < numNav; i++ {
		c[slotNav0+i] = cell{kind: KindNav, a: int32(i)}
	}
	c[slotTabs] = cell{kind: KindTabs, a: int32(len(b.tabs)), b: int32(b.active)}
	c[slotClock] = cell{kind: KindClock, a: b.clock}
	c[slotAd] = cell{kind: KindAd, a: b.ad}
	for i, w := range p.body {
		slot := slotBody + i
		x := cell{kind: w.kind, a: int32(w.name)}
		switch w.kind {
		case KindText:
			x.a, x.b = int32(p.id), int32(i)
		case KindInput:
			x.b = int32(ps.values[w.ordinal])
		case KindCheckbox:
			if ps.checked[w.ordinal] {
				x.b = 1
			}
		case KindListRow:
			x.a, x.b = -1, 0
			if k := ps.offset + w.name; k < len(ps.order) {
				x.a = int32(ps.order[k])
				if ps.order[k] == ps.selected {
					x.b = 1
				}
			}
		case KindStatus:
			x.a = ps.status
		}
		x.hovered = ps.hover == slot
		c[slot] = x
	}
	if ps.menu {
		c[slotMenu] = cell{kind: KindMenu, a: int32(p.id)}
	}
	return c
}

// facts is the ground truth of one observation, stored as JSON beside it.
type facts struct {
	Page     string            `json:"page"`
	Tab      int               `json:"tab"`
	Tabs     int               `json:"tabs"`
	Inputs   map[string]string `json:"inputs"`
	Checked  map[string]bool   `json:"checked"`
	Items    []string          `json:"visible_items"`
	Selected string            `json:"selected"`
	Status   int32             `json:"status"`
}

func (b *browser) facts() facts {
	ps, p := b.state(), b.page()
	f := facts{Page: p.name, Tab: b.active, Tabs: len(b.tabs), Inputs: map[string]string{},
		Checked: map[string]bool{}, Selected: "none", Status: ps.status}
	for i, slot := range p.inputs {
		v := ""
		if ps.values[i] >= 0 {
			v = words[ps.values[i]]
		}
		f.Inputs[fieldNames[p.body[slot-slotBody].name]] = v
	}
	for i, slot := range p.boxes {
		f.Checked[boxNames[p.body[slot-slotBody].name]] = ps.checked[i]
	}
	for _, slot := range p.rows {
		if k := ps.offset + p.body[slot-slotBody].name; k < len(ps.order) {
			f.Items = append(f.Items, itemName(ps.order[k]))
		}
	}
	if ps.selected >= 0 {
		f.Selected = itemName(ps.selected)
	}
	return f
}

// agent picks actions and applies them to the browser.
type agent struct {
	cfg Config
	rng *rand.Rand
	b   *browser
	// pageLoad says whether the last action loaded or switched a page.
	pageLoad bool
}

func (g *agent) at(slot int) trajectory.Action {
	x, y := slotPos(slot)
	jx, jy := float32(float32(g.rng.Float64()-0.5)*0.02), float32(float32(g.rng.Float64()-0.5)*0.02) // no fused multiply-add
	return trajectory.Action{HasPos: true, X: clamp01(x + jx), Y: clamp01(y + jy)}
}

func clamp01(v float32) float32 { return min(max(v, 0), 1) }

// step chooses one action, applies it and lets time pass (clock, ad).
func (g *agent) step() trajectory.Action {
	g.pageLoad = false
	u := g.rng.Float64()
	var a trajectory.Action
	switch {
	case u < g.cfg.PageLoadRate:
		a = g.loadAction()
		g.pageLoad = true
	case u < g.cfg.PageLoadRate+g.cfg.IdleRate:
		a = g.idleAction()
	default:
		a = g.pageAction()
	}
	if g.rng.Float64() < g.cfg.ClockRate {
		g.b.clock = (g.b.clock + 1) % 1440
	}
	if g.rng.Float64() < g.cfg.AdRate {
		g.b.ad = int32(g.rng.IntN(64))
	}
	if a.Payload == nil {
		a.Payload = []byte{}
	}
	return a
}

func (g *agent) loadAction() trajectory.Action {
	b, t := g.b, g.b.tab()
	p := b.page()
	r := g.rng.IntN(100)
	switch {
	case r < 10 && len(t.back) > 0:
		t.fwd = append(t.fwd, t.cur)
		t.cur, t.back = t.back[len(t.back)-1], t.back[:len(t.back)-1]
		return trajectory.Action{Type: trajectory.Back}
	case r < 14 && len(t.fwd) > 0:
		t.back = append(t.back, t.cur)
		t.cur, t.fwd = t.fwd[len(t.fwd)-1], t.fwd[:len(t.fwd)-1]
		return trajectory.Action{Type: trajectory.Forward}
	case r < 26:
		id := g.rng.IntN(len(b.site.pages))
		b.navigate(id)
		return trajectory.Action{Type: trajectory.Goto, Payload: []byte("https://sim.example/" + b.site.pages[id].name)}
	case r < 31 && len(b.tabs) < 4:
		a := g.at(slotTabs)
		a.Type = trajectory.NewTab
		b.tabs = append(b.tabs, &tab{cur: b.site.load(g.rng.IntN(len(b.site.pages)))})
		b.active = len(b.tabs) - 1
		return a
	case r < 36 && len(b.tabs) > 1:
		a := g.at(slotTabs)
		a.Type = trajectory.SwitchTab
		b.active = (b.active + 1 + g.rng.IntN(len(b.tabs)-1)) % len(b.tabs)
		return a
	case r < 40 && len(b.tabs) > 1:
		a := g.at(slotTabs)
		a.Type = trajectory.CloseTab
		b.tabs = append(b.tabs[:b.active], b.tabs[b.active+1:]...)
		b.active = min(b.active, len(b.tabs)-1)
		return a
	}
	// Click a navigation or in-page link.
	slots := []int{slotNav0, slotNav0 + 1, slotNav0 + 2, slotNav0 + 3}
	slots = append(slots, p.links...)
	slot := slots[g.rng.IntN(len(slots))]
	target := slot - slotNav0
	if slot >= slotBody {
		target = p.body[slot-slotBody].name
	}
	a := g.at(slot)
	a.Type = trajectory.Click
	b.navigate(target)
	return a
}

func (g *agent) idleAction() trajectory.Action {
	if g.rng.IntN(2) == 0 {
		return trajectory.Action{Type: trajectory.Noop}
	}
	slot := slotBody + g.rng.IntN(numBody)
	g.b.state().hover = slot
	a := g.at(slot)
	a.Type = trajectory.Hover
	return a
}

// pageAction acts within the page: type, key, enter, check, button, scroll,
// select, double-click, right-click, drag.
func (g *agent) pageAction() trajectory.Action {
	ps, p := g.b.state(), g.b.page()
	if ps.menu { // a context menu is open: dismiss it first
		ps.menu = false
		return trajectory.Action{Type: trajectory.Key, Payload: []byte("Escape")}
	}
	for {
		switch g.rng.IntN(10) {
		case 0, 1: // type into an input: the agent's own, important values
			if len(p.inputs) == 0 {
				continue
			}
			i := g.rng.IntN(len(p.inputs))
			w := g.rng.IntN(numWords)
			ps.values[i] = w
			ps.hover = -1
			a := g.at(p.inputs[i])
			a.Type, a.Payload = trajectory.Type, []byte(words[w])
			return a
		case 2: // enter submits the form
			if len(p.inputs) == 0 {
				continue
			}
			h := int32(1000)
			for _, v := range ps.values {
				h = h*31 + int32(v+1)
			}
			ps.status = h & 0x7fff_ffff
			return trajectory.Action{Type: trajectory.PressEnter, Payload: []byte("Enter")}
		case 3: // toggle a checkbox
			if len(p.boxes) == 0 {
				continue
			}
			i := g.rng.IntN(len(p.boxes))
			ps.checked[i] = !ps.checked[i]
			a := g.at(p.boxes[i])
			a.Type = trajectory.Click
			return a
		case 4: // press a button
			i := g.rng.IntN(len(p.buttons))
			ps.status = int32(1 + p.body[p.buttons[i]-slotBody].name)
			a := g.at(p.buttons[i])
			a.Type = trajectory.Click
			return a
		case 5: // scroll the list
			if len(p.rows) == 0 {
				continue
			}
			d := 1 + g.rng.IntN(3)
			if g.rng.IntN(2) == 0 {
				d = -d
			}
			top := max(len(ps.order)-len(p.rows), 0)
			next := min(max(ps.offset+d, 0), top)
			a := g.at(p.rows[0])
			a.Type, a.HasDelta, a.DX, a.DY = trajectory.Scroll, true, 0, float32(next-ps.offset)
			ps.offset = next
			return a
		case 6, 7: // select (or open) a visible item
			if len(p.rows) == 0 {
				continue
			}
			r := g.rng.IntN(len(p.rows))
			k := ps.offset + r
			if k >= len(ps.order) {
				continue
			}
			ps.selected = ps.order[k]
			a := g.at(p.rows[r])
			a.Type = trajectory.Select
			if g.rng.IntN(3) == 0 {
				a.Type = trajectory.DoubleClick
				ps.status = int32(2000 + ps.selected)
			}
			return a
		case 8: // open a context menu
			ps.menu = true
			a := g.at(slotMenu)
			a.Type = trajectory.RightClick
			return a
		case 9: // drag one visible item onto another: they swap
			if len(p.rows) < 2 {
				continue
			}
			i, j := g.rng.IntN(len(p.rows)), g.rng.IntN(len(p.rows))
			ki, kj := ps.offset+i, ps.offset+j
			if i == j || ki >= len(ps.order) || kj >= len(ps.order) {
				continue
			}
			order := append([]int(nil), ps.order...)
			order[ki], order[kj] = order[kj], order[ki]
			ps.order = order
			a := g.at(p.rows[i])
			_, y := slotPos(p.rows[j])
			a.Type, a.HasDelta, a.DX, a.DY = trajectory.Drag, true, 0, y-a.Y
			return a
		}
	}
}
