package tty

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Screen is one captured terminal screen: Rows[y] is row y (trailing spaces
// trimmed), CursorX and CursorY the cursor's column and row from 0.
type Screen struct {
	Rows             []string
	CursorX, CursorY int
}

// Equal reports whether s and o show the same characters and cursor.
func (s Screen) Equal(o Screen) bool {
	if s.CursorX != o.CursorX || s.CursorY != o.CursorY || len(s.Rows) != len(o.Rows) {
		return false
	}
	for i := range s.Rows {
		if s.Rows[i] != o.Rows[i] {
			return false
		}
	}
	return true
}

// Row returns row y, or "" when y is outside the screen.
func (s Screen) Row(y int) string {
	if y < 0 || y >= len(s.Rows) {
		return ""
	}
	return s.Rows[y]
}

// Bottom returns the last row.
func (s Screen) Bottom() string { return s.Row(len(s.Rows) - 1) }

// Contains reports whether any row contains sub.
func (s Screen) Contains(sub string) bool {
	for _, r := range s.Rows {
		if strings.Contains(r, sub) {
			return true
		}
	}
	return false
}

// capture is a screen and the state of the program behind it.
type capture struct {
	Screen
	dead   bool // the program has exited
	status int  // its exit status when dead, -1 when unknown or killed by a signal
	signal int  // the signal that killed it, 0 for none
}

// session is a program running in a private tmux server.
type session struct {
	tmux   string // path of the tmux binary
	dir    string // private directory: socket and configuration
	sock   string
	name   string
	width  int
	height int
	pid    int // the pane's process: the program
	// blocks: capture with attributes and show a space in reverse video
	// or on a coloured background as '#' (games that draw with them).
	blocks bool
}

// launch is how to start a program.
type launch struct {
	path string   // resolved program path
	args []string // its arguments
	env  []string // extra environment, KEY=VALUE
	dir  string   // working directory ("" = current)
}

// tmuxConf is the private server's configuration: no status line (all
// height rows are the program's), keep the pane of an exited program with
// its last screen and no "Pane is dead" line, no escape delay.
const tmuxConf = `set -g status off
set -g remain-on-exit on
set -g remain-on-exit-format ""
set -g escape-time 0
set -g history-limit 0
`

// startSession starts l in a detached session of a private tmux server.
func startSession(ctx context.Context, tmuxPath, name string, width, height int, blocks bool, l launch) (*session, error) {
	dir, err := os.MkdirTemp("", "memowm-tty-")
	if err != nil {
		return nil, fmt.Errorf("record tty: %w", err)
	}
	s := &session{tmux: tmuxPath, dir: dir, sock: filepath.Join(dir, "sock"), name: name, width: width, height: height, blocks: blocks}
	conf := filepath.Join(dir, "tmux.conf")
	if err := os.WriteFile(conf, []byte(tmuxConf), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("record tty: %w", err)
	}
	args := []string{"-f", conf, "new-session", "-d", "-s", name,
		"-x", strconv.Itoa(width), "-y", strconv.Itoa(height)}
	if l.dir != "" {
		args = append(args, "-c", l.dir)
	}
	for _, e := range l.env {
		args = append(args, "-e", e)
	}
	args = append(args, "--", l.path)
	args = append(args, l.args...)
	if _, err := s.run(ctx, args...); err != nil {
		s.close()
		return nil, err
	}
	out, err := s.run(ctx, "display", "-p", "-t", s.target(), "#{pane_pid} #{pane_width} #{pane_height}")
	if err != nil {
		s.close()
		return nil, err
	}
	var pw, ph int
	if _, err := fmt.Sscanf(string(out), "%d %d %d", &s.pid, &pw, &ph); err != nil {
		s.close()
		return nil, fmt.Errorf("record tty: tmux display: unexpected output %q", out)
	}
	if pw != width || ph != height {
		s.close()
		return nil, fmt.Errorf("record tty: tmux made a %dx%d pane, want %dx%d", pw, ph, width, height)
	}
	return s, nil
}

// target names the session's only pane; "=" asks tmux for an exact match.
func (s *session) target() string { return "=" + s.name + ":" }

// run runs tmux on the private socket and returns its standard output.
func (s *session) run(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, s.tmux, append([]string{"-S", s.sock}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Not the caller's terminal: tmux must not attach or read it.
	cmd.Stdin = nil
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("record tty: tmux %s: %s", args[0], msg)
	}
	return stdout.Bytes(), nil
}

// send presses a.
func (s *session) send(ctx context.Context, a Action) error {
	keys, err := a.sendArgs()
	if err != nil {
		return err
	}
	_, err = s.run(ctx, append([]string{"send-keys", "-t", s.target()}, keys...)...)
	return err
}

// capture reads the screen, the cursor and whether the program has exited,
// in one tmux call.
func (s *session) capture(ctx context.Context) (capture, error) {
	args := []string{"capture-pane", "-p", "-t", s.target()}
	if s.blocks {
		args = append(args, "-e", "-N")
	}
	args = append(args, ";", "display", "-p", "-t", s.target(),
		captureFormat)
	out, err := s.run(ctx, args...)
	if err != nil {
		return capture{}, err
	}
	if s.blocks {
		out = []byte(solidBlocks(string(out)))
	}
	return parseCapture(out, s.width, s.height)
}

// solidBlocks removes the escape sequences of capture-pane -e, turns every
// space drawn in reverse video or on a non-default background into '#', and
// draws the line-drawing characters of the alternate character set (shifted
// in with SO or ESC ( 0) as ASCII: corners and tees '+', lines '-' and '|'.
// The attributes carry over line ends, as tmux writes them.
func solidBlocks(in string) string {
	var b strings.Builder
	reverse, bg, acs := false, false, false
	for i := 0; i < len(in); i++ {
		c := in[i]
		switch {
		case c == 0x0e: // SO
			acs = true
			continue
		case c == 0x0f: // SI
			acs = false
			continue
		case c != 0x1b:
			if c == ' ' && (reverse || bg) {
				c = '#'
			} else if acs {
				if r, ok := acsASCII[c]; ok {
					c = r
				}
			}
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(in) {
			break
		}
		if in[i+1] == '(' && i+2 < len(in) { // designate G0: ESC ( 0 or ESC ( B
			acs = in[i+2] == '0'
			i += 2
			continue
		}
		if in[i+1] != '[' {
			i++ // another two-byte escape: drop it
			continue
		}
		j := i + 2
		for j < len(in) && (in[j] < 0x40 || in[j] > 0x7e) {
			j++
		}
		if j >= len(in) {
			break
		}
		if in[j] == 'm' {
			reverse, bg = applySGR(in[i+2:j], reverse, bg)
		}
		i = j
	}
	return b.String()
}

// acsASCII draws the VT100 line-drawing set in ASCII.
var acsASCII = map[byte]byte{
	'j': '+', 'k': '+', 'l': '+', 'm': '+', 'n': '+', 't': '+', 'u': '+', 'v': '+', 'w': '+',
	'q': '-', 'x': '|', 'a': '#', '`': '+', '~': 'o', '0': '#', 'h': '#', 'f': 'o',
}

// applySGR applies the parameters of one SGR sequence to the reverse and
// background state.
func applySGR(params string, reverse, bg bool) (bool, bool) {
	ps := strings.Split(params, ";")
	for k := 0; k < len(ps); k++ {
		n, _ := strconv.Atoi(ps[k]) // "" is 0, a reset
		switch {
		case n == 0:
			reverse, bg = false, false
		case n == 7:
			reverse = true
		case n == 27:
			reverse = false
		case n >= 40 && n <= 47, n >= 100 && n <= 107:
			bg = true
		case n == 49:
			bg = false
		case n == 48:
			bg = true
			if k+1 < len(ps) && ps[k+1] == "5" {
				k += 2
			} else if k+1 < len(ps) && ps[k+1] == "2" {
				k += 4
			}
		case n == 38:
			if k+1 < len(ps) && ps[k+1] == "5" {
				k += 2
			} else if k+1 < len(ps) && ps[k+1] == "2" {
				k += 4
			}
		}
	}
	return reverse, bg
}

// captureFormat is display's line after the screen: the cursor, whether
// the program has exited, and its exit status or the signal that killed it
// (each may be empty, hence the prefixes).
const captureFormat = "#{cursor_x} #{cursor_y} #{pane_dead} s#{pane_dead_status} g#{pane_dead_signal}"

// parseCapture splits capture-pane's height rows from display's last line.
func parseCapture(out []byte, width, height int) (capture, error) {
	text := strings.TrimSuffix(string(out), "\n")
	lines := strings.Split(text, "\n")
	if len(lines) != height+1 {
		return capture{}, fmt.Errorf("record tty: capture-pane gave %d lines, want %d and the cursor", len(lines)-1, height)
	}
	var c capture
	f := strings.Fields(lines[height])
	if len(f) != 5 {
		return capture{}, fmt.Errorf("record tty: tmux display: unexpected output %q", lines[height])
	}
	c.CursorX, _ = strconv.Atoi(f[0])
	c.CursorY, _ = strconv.Atoi(f[1])
	c.dead = f[2] == "1"
	c.status, c.signal = -1, 0
	if n, err := strconv.Atoi(strings.TrimPrefix(f[3], "s")); err == nil {
		c.status = n
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(f[4], "g")); err == nil {
		c.signal = n
	}
	c.Rows = make([]string, height)
	for y := range height {
		c.Rows[y] = fitRow(lines[y], width)
	}
	c.CursorX = min(max(c.CursorX, 0), width)
	c.CursorY = min(max(c.CursorY, 0), height-1)
	return c, nil
}

// fitRow trims trailing spaces, replaces control characters and cuts the row
// to width runes (a wide character can make tmux's line longer).
func fitRow(r string, width int) string {
	r = strings.TrimRight(r, " ")
	if !utf8.ValidString(r) {
		r = strings.ToValidUTF8(r, "?")
	}
	if strings.ContainsFunc(r, func(c rune) bool { return c < ' ' || c == 0x7f }) {
		r = strings.Map(func(c rune) rune {
			if c < ' ' || c == 0x7f {
				return ' '
			}
			return c
		}, r)
	}
	if utf8.RuneCountInString(r) > width {
		r = string([]rune(r)[:width])
	}
	return r
}

// settled is the result of waiting for the screen to settle.
type settled struct {
	capture
	polls       int           // captures taken
	settled     bool          // false when maxWait ran out first
	captureTime time.Duration // the last capture's duration
}

// exitGrace is how long settle keeps polling past its cap for the exit
// status of a program whose pane is already dead.
const exitGrace = 2 * time.Second

// deadQuiet is how long a dead pane's screen must stay unchanged before its
// last screen is taken.
const deadQuiet = 300 * time.Millisecond

// settle polls the screen every poll until it and the cursor have been
// unchanged for quiet since their last change (for idle, longer, while
// nothing has changed since the action), at most maxWait. prev is the
// screen before the action.
func (s *session) settle(ctx context.Context, prev Screen, quiet, idle, poll, maxWait time.Duration) (settled, error) {
	start := time.Now()
	var r settled
	last := prev
	lastChange := start
	changed := false
	for {
		t0 := time.Now()
		c, err := s.capture(ctx)
		if err != nil {
			return r, err
		}
		now := time.Now()
		r.capture, r.captureTime = c, now.Sub(t0)
		r.polls++
		if !c.Equal(last) {
			last, lastChange, changed = c.Screen, now, true
		}
		wait := idle
		if changed {
			wait = quiet
		}
		if c.dead {
			// A dead pane may still show output that tmux reads after the
			// exit (a loaded machine lags): nothing more can be typed, so
			// wait a little longer for it to be quiet.
			wait = max(quiet, deadQuiet)
		}
		// tmux marks a pane dead when its terminal closes, and learns the
		// exit status a moment later, when the process is reaped.
		exiting := c.dead && c.status < 0 && c.signal == 0
		switch {
		case now.Sub(lastChange) >= wait && !exiting:
			r.settled = true
			return r, nil
		case now.Sub(start) >= maxWait && !(exiting && now.Sub(start) < maxWait+exitGrace):
			// Past the cap; an exit status still unknown gets exitGrace
			// more (a loaded machine can be slow to reap the program).
			return r, nil
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// close kills the tmux server and with it the program (SIGHUP), waits a
// little for the program to go, and removes the private directory. It is
// safe to call more than once.
func (s *session) close() error {
	if s.dir == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := s.run(ctx, "kill-server")
	if err != nil && strings.Contains(err.Error(), "no server running") {
		err = nil
	}
	if s.pid > 0 {
		waitExit(s.pid, 5*time.Second)
	}
	os.RemoveAll(s.dir)
	s.dir = ""
	return err
}

// waitExit waits up to d for process pid to exit (or become a zombie).
func waitExit(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if !alive(pid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether pid is a running process, not a zombie (a game
// whose tmux server went is nobody's child, and may stay a zombie). Without
// /proc it reports false.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] != 'Z' && b[i+2] != 'X'
}
