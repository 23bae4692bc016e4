package tty

import (
	"strings"
	"testing"
)

func TestParseCapture(t *testing.T) {
	rows := make([]string, 24)
	rows[0] = "hello   "
	rows[3] = "tab\there"
	rows[5] = strings.Repeat("x", 85) // a wide character can make a line longer
	out := strings.Join(rows, "\n") + "\n12 3 0 s g\n"
	c, err := parseCapture([]byte(out), 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) != 24 || c.Rows[0] != "hello" || c.Rows[3] != "tab here" || len(c.Rows[5]) != 80 {
		t.Fatalf("rows %q", c.Rows[:6])
	}
	if c.CursorX != 12 || c.CursorY != 3 || c.dead {
		t.Fatalf("cursor (%d, %d), dead %v", c.CursorX, c.CursorY, c.dead)
	}

	c, err = parseCapture([]byte(strings.Join(rows, "\n")+"\n0 2 1 s7 g\n"), 80, 24)
	if err != nil || !c.dead || c.status != 7 {
		t.Fatalf("dead pane: %+v, %v", c, err)
	}
	c, err = parseCapture([]byte(strings.Join(rows, "\n")+"\n0 2 1 s g9\n"), 80, 24)
	if err != nil || !c.dead || c.status != -1 || c.signal != 9 {
		t.Fatalf("killed pane: status %d, %v", c.status, err)
	}
	// The cursor may wait past the last column; never outside the screen.
	c, _ = parseCapture([]byte(strings.Join(rows, "\n")+"\n95 30 0 s g\n"), 80, 24)
	if c.CursorX != 80 || c.CursorY != 23 {
		t.Fatalf("cursor not clamped: (%d, %d)", c.CursorX, c.CursorY)
	}
	if _, err := parseCapture([]byte("a\nb\n0 0 0 s g\n"), 80, 24); err == nil || !strings.HasPrefix(err.Error(), "record tty: ") {
		t.Fatalf("short capture: %v", err)
	}
}

func TestSolidBlocks(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text", "plain text"},
		// tetris-bsd: reverse video spaces, the attribute carried over the line end.
		{"Score: 0  \x1b[7m  \x1b[0m\x1b[39m\x1b[49m    \x1b[7m  \n\x1b[0m\x1b[39m\x1b[49m  x", "Score: 0  ##    ##\n  x"},
		// Coloured background (plain and 256 colours), then default.
		{"\x1b[41m  \x1b[49m \x1b[48;5;21m \x1b[0m ", "## # "},
		// A 256-colour foreground does not make blocks.
		{"\x1b[38;5;200m a\x1b[0m", " a"},
		// Reverse video text stays text.
		{"\x1b[7mab c\x1b[27m d", "ab#c d"},
		// worm: line drawing shifted in with SO/SI and ESC ( 0.
		{"\x0elqk\x0f*x\x1b(0mqj\x1b(Bq", "+-+*x+-+q"},
	} {
		if got := solidBlocks(c.in); got != c.want {
			t.Errorf("solidBlocks(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestScreenEqual(t *testing.T) {
	a := Screen{Rows: []string{"ab", ""}, CursorX: 1}
	b := Screen{Rows: []string{"ab", ""}, CursorX: 1}
	if !a.Equal(b) {
		t.Fatal("equal screens differ")
	}
	b.CursorY = 1
	if a.Equal(b) {
		t.Fatal("a cursor move is no change")
	}
	b = Screen{Rows: []string{"ab", "c"}, CursorX: 1}
	if a.Equal(b) {
		t.Fatal("a changed row is no change")
	}
}
