package tty

import (
	"regexp"
	"strconv"
	"strings"
)

// VimFile is the file a vim recording edits, in the run's scratch directory.
const VimFile = "notes.txt"

var vimProfile = profile{
	name:     "vim",
	programs: []string{"vim", "vi", "vim.basic", "vim.tiny", "vim.nox", "nvim"},
	install:  "apt-get install vim",
	prepare:  prepareVim,
	newPolicy: func(seed uint64, _ string) Policy {
		return &vimPolicy{base: newBase(seed, streamVim)}
	},
	facts: VimFacts,
}

// prepareVim runs vim in the scratch directory; without arguments it gets a
// clean configuration (no vimrc, no viminfo, no swap file; showmode and the
// ruler on) and a new file there, VimFile.
func prepareVim(l *launch, _ uint64, work string) (func(int) error, error) {
	l.dir = work
	if len(l.args) == 0 {
		l.args = []string{"-u", "NONE", "-N", "-i", "NONE", "-n",
			"--cmd", "set showmode ruler laststatus=1 shortmess+=I belloff=all",
			VimFile}
	}
	return nil, nil
}

// ---- facts ----

var (
	// The ruler at the bottom right: "12,7", "3,0-1", "1,5-9", then All, Top, Bot or N%.
	vimRuler   = regexp.MustCompile(`(\d+),(\d+)(?:-(\d+))?\s+(All|Top|Bot|\d+%)\s*$`)
	vimWritten = regexp.MustCompile(`"[^"]*"\s+(?:\[New\]\s+)?(\d+)L, (\d+)B`)
)

// VimMode returns vim's mode as shown on the screen: "insert", "replace",
// "visual", "visual line", "visual block", "command" (typing on the command
// line), "hit-enter" (waiting for Enter after a message) or "normal".
func VimMode(s Screen) string {
	b := strings.TrimSpace(s.Bottom())
	switch {
	case strings.Contains(b, "Press ENTER or type command"), s.Contains("Press ENTER or type command to continue"):
		return "hit-enter"
	case strings.HasPrefix(b, "-- INSERT --"), strings.HasPrefix(b, "-- (insert)"):
		return "insert"
	case strings.HasPrefix(b, "-- REPLACE --"):
		return "replace"
	case strings.HasPrefix(b, "-- VISUAL LINE --"):
		return "visual line"
	case strings.HasPrefix(b, "-- VISUAL BLOCK --"):
		return "visual block"
	case strings.HasPrefix(b, "-- VISUAL --"):
		return "visual"
	case s.CursorY == len(s.Rows)-1 && b != "" && strings.ContainsAny(b[:1], ":/?"):
		return "command"
	}
	return "normal"
}

// VimFacts reads vim's screen: mode (VimMode), the cursor's screen row and
// column (cursor_row, cursor_col), the ruler's line and col when it shows,
// the buffer's screen lines (rows before the first "~" row, when one shows),
// lines and bytes from a write message ("notes.txt" 3L, 20B written) and the
// bottom line without the ruler.
func VimFacts(s Screen) map[string]any {
	f := map[string]any{
		"mode":       VimMode(s),
		"cursor_row": strconv.Itoa(s.CursorY),
		"cursor_col": strconv.Itoa(s.CursorX),
	}
	b := s.Bottom()
	f["bottom"] = strings.TrimSpace(b)
	if m := vimRuler.FindStringSubmatchIndex(b); m != nil {
		f["bottom"] = strings.TrimSpace(b[:m[0]])
	}
	if m := vimRuler.FindStringSubmatch(b); m != nil {
		f["line"] = m[1]
		col := m[2]
		if m[3] != "" {
			col = m[3] // the screen column after the byte index
		}
		f["col"] = col
		f["scroll"] = m[4]
	}
	for y := 0; y < len(s.Rows)-1; y++ {
		if s.Rows[y] == "~" {
			f["screen_lines"] = strconv.Itoa(y)
			break
		}
	}
	if m := vimWritten.FindStringSubmatch(b); m != nil {
		f["lines"] = m[1]
		f["bytes"] = m[2]
	}
	return f
}

// ---- policy ----

// vimPolicy edits a file: enters insert mode (i, a, o, O, A) and types
// phrases and Enter, leaves it with Escape, moves (h j k l w b 0 $ gg G),
// deletes (x, dd), undoes and redoes, visual selections, yank and put, and
// writes the file with :w. It never quits.
type vimPolicy struct{ base }

func (p *vimPolicy) Next(s Screen) Action {
	mode := VimMode(s)
	if mode == "hit-enter" {
		p.queue = nil
		return Enter()
	}
	if a, ok := p.pop(); ok {
		return a
	}
	switch mode {
	case "insert", "replace":
		switch p.pick(45, 15, 20, 10, 5, 5) {
		case 0:
			return Type(p.phrase())
		case 1:
			return Enter()
		case 2:
			return Key("Escape")
		case 3:
			return Key(p.oneOf(arrows))
		case 4:
			return Key("Backspace")
		default:
			return Key("Tab")
		}
	case "command":
		if p.chance(70) {
			return Enter()
		}
		return Key("Escape")
	case "visual", "visual line", "visual block":
		switch p.pick(50, 15, 15, 20) {
		case 0:
			return Key(p.oneOf([]string{"h", "j", "k", "l", "w", "b", "$", "0"}))
		case 1:
			return Key("d")
		case 2:
			return Key("y")
		default:
			return Key("Escape")
		}
	}
	// normal
	switch p.pick(22, 30, 8, 6, 7, 3, 6, 4, 5, 4, 3, 2) {
	case 0:
		return Key(p.oneOf([]string{"i", "a", "o", "O", "A", "I"}))
	case 1:
		return Key(p.oneOf([]string{"h", "j", "k", "l", "h", "j", "k", "l", "w", "b", "0", "$", "e"}))
	case 2:
		return Key("x")
	case 3:
		p.push(Key("d"))
		return Key("d")
	case 4:
		return Key("u")
	case 5:
		return Key("Ctrl+r")
	case 6:
		p.push(Type("w"), Enter())
		return Key(":")
	case 7:
		return Key(p.oneOf([]string{"v", "V"}))
	case 8:
		return Key(p.oneOf([]string{"p", "P"}))
	case 9:
		p.push(Key("y"))
		return Key("y")
	case 10:
		if p.chance(50) {
			p.push(Key("g"))
			return Key("g")
		}
		return Key("G")
	default:
		return Key("Escape")
	}
}
