package tty

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// loadScreen reads testdata/screens/NAME.txt, a screen captured by the
// recorder (rows, trailing spaces trimmed), with the cursor at (x, y).
func loadScreen(t *testing.T, name string, x, y int) Screen {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "screens", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(rows) != 24 {
		t.Fatalf("%s: %d rows", name, len(rows))
	}
	return Screen{Rows: rows, CursorX: x, CursorY: y}
}

// status1 is the first status line of the captured games.
func status1(name, st, dx, co, in, wi, ch string) map[string]any {
	return map[string]any{"title": name + " the Stripling", "st": st, "dx": dx, "co": co, "in": in, "wi": wi, "ch": ch, "align": "Neutral"}
}

func with(a map[string]any, b map[string]any) map[string]any {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

// TestNetHackFacts reads real NetHack 3.6.6 screens captured by the recorder.
func TestNetHackFacts(t *testing.T) {
	mw1 := status1("Mw1", "18/03", "11", "18", "7", "10", "8")
	mw3 := status1("Mw3", "18", "13", "18", "9", "8", "9")
	for _, c := range []struct {
		name string
		x, y int
		want map[string]any
	}{
		{"nethack-start", 57, 14, with(mw1, map[string]any{"dlvl": "1", "gold": "0", "hp": "16(16)", "pw": "2(2)", "ac": "6", "xp": "1/0", "turn": "1", "status": "",
			"message": "Velkommen mw1, welcome to NetHack!  You are a neutral human Valkyrie.", "cursor_x": "57", "cursor_y": "14"})},
		{"nethack-dlvl2", 36, 18, with(mw1, map[string]any{"dlvl": "2", "gold": "3", "hp": "16(16)", "pw": "2(2)", "ac": "6", "xp": "1/0", "turn": "113", "status": "",
			"cursor_x": "36", "cursor_y": "18"})},
		{"nethack-more", 31, 0, with(mw1, map[string]any{"dlvl": "1", "gold": "3", "hp": "16(16)", "pw": "2(2)", "ac": "6", "xp": "1/0", "turn": "112", "status": "",
			"message": "You descend the stairs.--More--", "more": "yes", "cursor_x": "31", "cursor_y": "0"})},
		{"nethack-menu", 37, 7, with(mw1, map[string]any{"dlvl": "1", "gold": "0", "hp": "15(16)", "pw": "2(2)", "ac": "6", "xp": "1/0", "turn": "11", "status": "",
			"message": "Weapons", "cursor_x": "37", "cursor_y": "7"})},
		{"nethack-die", 18, 0, with(mw3, map[string]any{"dlvl": "1", "gold": "4", "hp": "0(16)", "pw": "2(2)", "ac": "6", "xp": "1/0", "turn": "290", "status": "",
			"message": "You die...--More--", "more": "yes", "cursor_x": "18", "cursor_y": "0"})},
		// The tombstone hides the status lines: no status facts.
		{"nethack-tombstone", 8, 23, map[string]any{"more": "yes", "cursor_x": "8", "cursor_y": "23"}},
	} {
		got := NetHackFacts(loadScreen(t, c.name, c.x, c.y))
		if !maps.Equal(got, c.want) {
			t.Errorf("%s:\n got  %v\n want %v", c.name, got, c.want)
		}
	}
}

// TestNetHackStatusVariants: status lines the captured games did not show,
// written in NetHack 3.6's tty layout.
func TestNetHackStatusVariants(t *testing.T) {
	for _, c := range []struct {
		line string
		want map[string]any
	}{
		{"Dlvl:3 $:120 HP:7(31) Pw:0(5) AC:-2 Xp:5/180 T:2345 Hungry Burdened",
			map[string]any{"dlvl": "3", "gold": "120", "hp": "7(31)", "pw": "0(5)", "ac": "-2", "xp": "5/180", "turn": "2345", "status": "Hungry Burdened"}},
		{"Home 1 $:0 HP:40(40) Pw:12(12) AC:4 Xp:14/20000 T:9001 Conf Stun",
			map[string]any{"dlvl": "Home 1", "gold": "0", "hp": "40(40)", "pw": "12(12)", "ac": "4", "xp": "14/20000", "turn": "9001", "status": "Conf Stun"}},
		{"Dlvl:5 $:9 HP:22(22) Pw:3(3) AC:3 HD:4 T:777 Blind",
			map[string]any{"dlvl": "5", "gold": "9", "hp": "22(22)", "pw": "3(3)", "ac": "3", "hd": "4", "turn": "777", "status": "Blind"}},
		{"Dlvl:1 $:0 HP:16(16) Pw:2(2) AC:6 Xp:1",
			map[string]any{"dlvl": "1", "gold": "0", "hp": "16(16)", "pw": "2(2)", "ac": "6", "xp": "1", "status": ""}},
		{"             ---------", map[string]any{}}, // a map row: nothing
	} {
		got := map[string]any{}
		parseNetHackStatus2(c.line, got)
		if !maps.Equal(got, c.want) {
			t.Errorf("%q:\n got  %v\n want %v", c.line, got, c.want)
		}
	}
}

func TestNetHackPolicyPrompts(t *testing.T) {
	blank := func(top string, cx, cy int) Screen {
		s := loadScreen(t, "nethack-dlvl2", cx, cy)
		s.Rows = append([]string(nil), s.Rows...)
		s.Rows[0] = top
		return s
	}
	for seed := range uint64(50) {
		p, _ := NewPolicy("nethack", seed, "nethack")
		if a := p.Next(loadScreen(t, "nethack-more", 31, 0)); a != Key("Space") && a != Enter() {
			t.Fatalf("--More--: %v", a)
		}
		if a := p.Next(loadScreen(t, "nethack-menu", 37, 7)); a != Key("Space") && a != Key("Escape") {
			t.Fatalf("menu: %v", a)
		}
		for _, q := range []string{"Beware, there will be no return!  Still climb? [yn] (n)", "Really quit? [yn] (n)", "Do you want to save? [ynq] (n)"} {
			if a := p.Next(blank(q, len(q)+1, 0)); a != Key("n") {
				t.Fatalf("%q: %v", q, a)
			}
		}
		if a := p.Next(blank("What do you want to eat? [d or ?*]", 36, 0)); a != Key("d") {
			t.Fatalf("eat: %v", a)
		}
		if a := p.Next(blank("What do you want to read? [gh or ?*]", 37, 0)); a != Key("Escape") {
			t.Fatalf("read: %v", a)
		}
		if a := p.Next(blank("Call a yellow potion:", 22, 0)); a != Key("Escape") {
			t.Fatalf("call: %v", a)
		}
	}
}

// TestNetHackWalk: on a map the walker enters open squares, not walls.
func TestNetHackWalk(t *testing.T) {
	s := loadScreen(t, "nethack-dlvl2", 36, 18)
	if nhPlayer(s) != [2]int{36, 18} {
		t.Fatalf("player at %v", nhPlayer(s))
	}
	for seed := range uint64(200) {
		p := &nethackPolicy{base: newBase(seed, streamNetHack), dir: -1, lastMove: -1, lastPos: [2]int{-1, -1}}
		d := p.walkDir(s, nhPlayer(s))
		dx, dy := nhDelta[d][0], nhDelta[d][1]
		if w := nhWeight(charAt(s, 36+dx, 18+dy)); w == 0 {
			t.Fatalf("seed %d walks %s into %q", seed, nhDirs[d], charAt(s, 36+dx, 18+dy))
		}
	}
}
