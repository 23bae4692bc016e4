package tty

import (
	"maps"
	"testing"
)

// vimScreen is a 24-row screen with the given first rows, bottom line and
// cursor; the rows between are "~".
func vimScreen(top []string, bottom string, x, y int) Screen {
	rows := make([]string, 24)
	copy(rows, top)
	for i := len(top); i < 23; i++ {
		rows[i] = "~"
	}
	rows[23] = bottom
	return Screen{Rows: rows, CursorX: x, CursorY: y}
}

// The bottom lines are vim 9.0's, captured through tmux.
func TestVimMode(t *testing.T) {
	for _, c := range []struct {
		bottom string
		x, y   int
		want   string
	}{
		{`"notes.txt" [New]                                             0,0-1         All`, 0, 0, "normal"},
		{`-- INSERT --                                                  1,22          All`, 21, 0, "insert"},
		{`-- (insert) --                                                1,22          All`, 21, 0, "insert"},
		{`-- REPLACE --                                                 1,3           All`, 2, 0, "replace"},
		{`-- VISUAL --                                                  1   1,21      All`, 20, 0, "visual"},
		{`-- VISUAL LINE --                                             1,21          All`, 20, 0, "visual line"},
		{`-- VISUAL BLOCK --                                            2x3 2,4       All`, 3, 1, "visual block"},
		{`:w`, 2, 23, "command"},
		{`/fox`, 4, 23, "command"},
		{`:w`, 0, 3, "normal"}, // the command ran; the cursor is back in the text
		{`Press ENTER or type command to continue`, 39, 23, "hit-enter"},
		{``, 0, 0, "normal"},
	} {
		if got := VimMode(vimScreen([]string{"hello"}, c.bottom, c.x, c.y)); got != c.want {
			t.Errorf("VimMode(%q, cursor %d,%d) = %q, want %q", c.bottom, c.x, c.y, got, c.want)
		}
	}
}

func TestVimFacts(t *testing.T) {
	for _, c := range []struct {
		s    Screen
		want map[string]any
	}{
		{vimScreen([]string{"agent model fix test", "", "step state"}, `"notes.txt" 3L, 239B written                                  3,1           All`, 0, 2),
			map[string]any{"mode": "normal", "cursor_row": "2", "cursor_col": "0", "bottom": `"notes.txt" 3L, 239B written`,
				"line": "3", "col": "1", "scroll": "All", "screen_lines": "3", "lines": "3", "bytes": "239"}},
		{vimScreen([]string{""}, `"notes.txt" [New] 1L, 22B written                             4,0-1         All`, 0, 0),
			map[string]any{"mode": "normal", "cursor_row": "0", "cursor_col": "0", "bottom": `"notes.txt" [New] 1L, 22B written`,
				"line": "4", "col": "1", "scroll": "All", "screen_lines": "1", "lines": "1", "bytes": "22"}},
		{vimScreen([]string{"hello"}, `-- INSERT --                                                  1,6           All`, 5, 0),
			map[string]any{"mode": "insert", "cursor_row": "0", "cursor_col": "5", "bottom": "-- INSERT --",
				"line": "1", "col": "6", "scroll": "All", "screen_lines": "1"}},
		{vimScreen([]string{"hello"}, `:w`, 2, 23),
			map[string]any{"mode": "command", "cursor_row": "23", "cursor_col": "2", "bottom": ":w", "screen_lines": "1"}},
	} {
		if got := VimFacts(c.s); !maps.Equal(got, c.want) {
			t.Errorf("VimFacts(%q):\n got  %v\n want %v", c.s.Bottom(), got, c.want)
		}
	}
}
