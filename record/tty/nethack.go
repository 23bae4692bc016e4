package tty

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// NetHackPlayground is where Debian's nethack-console keeps save, lock and
// bones files (/var/games/nethack); the nethack profile removes its player's
// files there after a run.
var NetHackPlayground = "/var/games/nethack"

// NetHackOptions is the NETHACKOPTIONS of a recorded game: a fixed character
// (no startup questions), no pet, no autopickup, vi-keys, the turn counter
// and experience points on the status line, no bones files (a run neither
// leaves nor meets another run's ghost) and no end-of-game questions.
const NetHackOptions = "!autopickup,number_pad:0,pettype:none," +
	"role:valkyrie,race:human,gender:female,align:neutral," +
	"!legacy,!splash_screen,!mail,!bones,time,showexp," +
	"disclose:-i -a -v -g -c -o"

// NetHackPlayer is the player name of a recording with this seed.
func NetHackPlayer(seed uint64) string { return fmt.Sprintf("mw%d", seed) }

var nethackProfile = profile{
	name:     "nethack",
	programs: []string{"nethack", "nethack-console", "nethack-tty"},
	install:  "apt-get install nethack-console",
	prepare:  prepareNetHack,
	newPolicy: func(seed uint64, _ string) Policy {
		return &nethackPolicy{base: newBase(seed, streamNetHack), dir: -1, lastMove: -1, lastPos: [2]int{-1, -1}}
	},
	facts: NetHackFacts,
}

// prepareNetHack gives the game its options and, unless the arguments name
// one with -u, the seed's player name; it removes a save left under that
// name (the game would restore it instead of starting afresh) and returns
// the cleanup of the player's save and lock files.
func prepareNetHack(l *launch, seed uint64, _ string) (func(int) error, error) {
	player := ""
	for i, a := range l.args {
		if a == "-u" && i+1 < len(l.args) {
			player = l.args[i+1]
		} else if p, ok := strings.CutPrefix(a, "-u"); ok && p != "" {
			player = p
		}
	}
	if player == "" {
		player = NetHackPlayer(seed)
		l.args = append([]string{"-u", player}, l.args...)
	}
	l.env = append(l.env, "NETHACKOPTIONS="+NetHackOptions)
	if err := removeNetHackSave(player); err != nil {
		return nil, err
	}
	return func(pid int) error {
		return errors.Join(removeNetHackSave(player), removeNetHackLocks(pid))
	}, nil
}

// removeNetHackSave removes save/UIDPLAYER and its compressed forms.
func removeNetHackSave(player string) error {
	stem := filepath.Join(NetHackPlayground, "save", fmt.Sprintf("%d%s", os.Getuid(), player))
	var errs []error
	for _, ext := range []string{"", ".gz", ".bz2", ".Z"} {
		if err := os.Remove(stem + ext); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("record tty: nethack: %w", err))
		}
	}
	return errors.Join(errs...)
}

// removeNetHackLocks removes level files left by the game with process id
// pid (a game that saves or ends removes them itself; one killed hard does
// not). Level 0 of a game, LOCK.0, starts with the game's process id.
func removeNetHackLocks(pid int) error {
	if pid <= 0 {
		return nil
	}
	zeros, _ := filepath.Glob(filepath.Join(NetHackPlayground, "*.0"))
	var errs []error
	for _, z := range zeros {
		b, err := os.ReadFile(z)
		if err != nil || len(b) < 4 || int(int32(binary.NativeEndian.Uint32(b))) != pid {
			continue
		}
		stem := strings.TrimSuffix(z, ".0")
		levels, _ := filepath.Glob(stem + ".*")
		for _, f := range append(levels, stem) {
			if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("record tty: nethack: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// ---- facts ----

var (
	nhDlvl  = regexp.MustCompile(`^Dlvl:(\S+)`)
	nhGold  = regexp.MustCompile(`(?:^|\s)\$:(\d+)`)
	nhHP    = regexp.MustCompile(`(?:^|\s)HP:(-?\d+\(\d+\))`)
	nhPw    = regexp.MustCompile(`(?:^|\s)Pw:(\d+\(\d+\))`)
	nhAC    = regexp.MustCompile(`(?:^|\s)AC:(-?\d+)`)
	nhXp    = regexp.MustCompile(`(?:^|\s)Xp:(\d+(?:/\d+)?)`)
	nhHD    = regexp.MustCompile(`(?:^|\s)HD:(\d+)`)
	nhTurn  = regexp.MustCompile(`(?:^|\s)T:(\d+)`)
	nhStats = regexp.MustCompile(`\b(St|Dx|Co|In|Wi|Ch):(\d+(?:/(?:\d+|\*\*))?)`)
	nhAlign = regexp.MustCompile(`\b(Lawful|Neutral|Chaotic)\s*$`)
	nhTitle = regexp.MustCompile(`^(.*?)\s+St:`)
	// Status conditions NetHack 3.6 shows after the turn counter.
	nhConds = regexp.MustCompile(`\b(Satiated|Hungry|Weak|Fainting|Fainted|Burdened|Stressed|Strained|Overtaxed|Overloaded|Stone|Slime|Strngl|FoodPois|TermIll|Blind|Deaf|Stun|Conf|Hallu|Lev|Fly|Ride)\b`)
)

// NetHackFacts reads the two status lines (the bottom rows) and the message
// line of a NetHack tty screen into flat string facts: dlvl, gold, hp and pw
// as shown ("14(16)", current and maximum), ac, xp ("1/0", or hd when
// polymorphed), turn, the six attributes (st, dx, co, in, wi, ch), align,
// title, status (conditions separated by spaces, "" when none), message (the
// top line, when not blank) and more ("yes" when a --More-- is showing).
// Facts missing from the screen (a full-screen menu hides the status lines)
// are left out.
func NetHackFacts(s Screen) map[string]any {
	f := map[string]any{}
	h := len(s.Rows)
	if h >= 2 {
		parseNetHackStatus2(s.Rows[h-1], f)
		parseNetHackStatus1(s.Rows[h-2], f)
	}
	if m := strings.TrimSpace(s.Row(0)); m != "" {
		f["message"] = m
	}
	if s.Contains("--More--") {
		f["more"] = "yes"
	}
	f["cursor_x"] = strconv.Itoa(s.CursorX)
	f["cursor_y"] = strconv.Itoa(s.CursorY)
	return f
}

// parseNetHackStatus2 reads "Dlvl:1 $:0 HP:16(16) Pw:2(2) AC:6 Xp:1/0 T:1 Hungry".
func parseNetHackStatus2(r string, f map[string]any) {
	hp := nhHP.FindStringSubmatch(r)
	ac := nhAC.FindStringSubmatch(r)
	if hp == nil || ac == nil {
		return
	}
	f["hp"] = hp[1]
	f["ac"] = ac[1]
	if m := nhDlvl.FindStringSubmatch(r); m != nil {
		f["dlvl"] = m[1]
	} else if i := strings.Index(r, " $:"); i > 0 {
		// Special levels name themselves: "Home 1", "Fort Ludios".
		f["dlvl"] = strings.TrimSpace(r[:i])
	}
	if m := nhGold.FindStringSubmatch(r); m != nil {
		f["gold"] = m[1]
	}
	if m := nhPw.FindStringSubmatch(r); m != nil {
		f["pw"] = m[1]
	}
	if m := nhXp.FindStringSubmatch(r); m != nil {
		f["xp"] = m[1]
	}
	if m := nhHD.FindStringSubmatch(r); m != nil {
		f["hd"] = m[1]
	}
	if m := nhTurn.FindStringSubmatch(r); m != nil {
		f["turn"] = m[1]
	}
	var conds []string
	for _, m := range nhConds.FindAllStringSubmatch(r, -1) {
		conds = append(conds, m[1])
	}
	f["status"] = strings.Join(conds, " ")
}

// parseNetHackStatus1 reads "Mw1 the Stripling   St:18/02 Dx:14 ... Neutral".
func parseNetHackStatus1(r string, f map[string]any) {
	ms := nhStats.FindAllStringSubmatch(r, -1)
	if len(ms) < 6 {
		return
	}
	for _, m := range ms {
		f[strings.ToLower(m[1])] = m[2]
	}
	if m := nhAlign.FindStringSubmatch(r); m != nil {
		f["align"] = m[1]
	}
	if m := nhTitle.FindStringSubmatch(r); m != nil {
		f["title"] = strings.TrimSpace(m[1])
	}
}

// ---- policy ----

// nethackPolicy explores the dungeon: mostly walking or running, into
// corridors, doors, items and staircases more than back where it came from,
// searching, looking, picking up what it stands on, looking at the
// inventory, fighting monsters next to it, kicking locked doors, resting
// when wounded (and no monster is next to it), eating when hungry, travelling to a visible down staircase
// and going down stairs it stands on. It clears --More--, closes menus, answers yes/no questions
// (never yes to leaving the dungeon, quitting or saving) and escapes other
// prompts. It never quits or saves.
type nethackPolicy struct {
	base
	dir      int    // index into nhDirs of the current walking direction, -1 none
	lastMove int    // direction of the last walk or run, -1 when the last action was not one
	lastPos  [2]int // where '@' was before the last action
	blocked  [8]bool
	prev     Screen // the screen before the last action
}

var (
	nhDirs = []string{"h", "j", "k", "l", "y", "u", "b", "n"}
	// nhDelta[i] is the (dx, dy) of nhDirs[i]; nhDirs[i^1] is its opposite.
	nhDelta       = [][2]int{{-1, 0}, {0, 1}, {0, -1}, {1, 0}, {-1, -1}, {1, -1}, {-1, 1}, {1, 1}}
	nhOpp         = []int{3, 2, 1, 0, 7, 6, 5, 4}
	nhMenuEnd     = regexp.MustCompile(`\((end|\d+ of \d+)\)\s*$`)
	nhYN          = regexp.MustCompile(`\[[ynqa]+\](\s*\(\w\))?\s*$`)
	nhLetters     = regexp.MustCompile(`\[[^\]]*( or \?\*|\?\*)\]\s*$`)
	nhNo          = regexp.MustCompile(`(?i)quit|save|still climb|pray|beware|sure you want`)
	nhFirstLetter = regexp.MustCompile(`\[([a-zA-Z])`)
	nhHPNow       = regexp.MustCompile(`HP:(\d+)\((\d+)\)`)
	nhHere        = regexp.MustCompile(`You see here|There are (several|many) objects here|Things that are here`)
)

// nhWeight is how much the walker likes to step onto a glyph; 0: not at all.
func nhWeight(c byte) int {
	switch {
	case c == '>':
		return 8
	case c == '#', c == '+':
		return 4
	case strings.IndexByte("$%)[*!?/=\"(`", c) >= 0:
		return 4
	case c == '.', c == '<', c == '_', c == '{':
		return 2
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '@', c == '&', c == ':', c == ';', c == '\'':
		return 1 // a monster: fight it
	}
	return 0 // walls, rock, traps (^), dark or unknown places
}

func (p *nethackPolicy) Next(s Screen) Action {
	a := p.next(s)
	p.prev = s
	p.lastPos = nhPlayer(s)
	p.lastMove = -1
	if a.Kind == KindKey {
		for i, d := range nhDirs {
			if a.Key == d || a.Key == strings.ToUpper(d) {
				p.lastMove = i
			}
		}
	}
	return a
}

func (p *nethackPolicy) next(s Screen) Action {
	top := strings.TrimSpace(s.Row(0))
	switch {
	case s.Contains("--More--"):
		if p.chance(80) {
			return Key("Space")
		}
		return Enter()
	case menuOpen(s):
		p.queue = nil
		if strings.Contains(menuTitle(s), "Pick up what") && p.chance(50) {
			p.push(Enter())
			return Key("a")
		}
		if p.chance(75) {
			return Key("Space")
		}
		return Key("Escape")
	}
	// A planned command's next key answers its own prompt ("In what
	// direction?").
	if a, ok := p.pop(); ok {
		return a
	}
	switch {
	case nhYN.MatchString(top):
		if nhNo.MatchString(top) || !p.chance(50) {
			return Key("n")
		}
		return Key("y")
	case strings.HasPrefix(top, "What do you want to eat?"):
		if m := nhFirstLetter.FindStringSubmatch(top); m != nil {
			return Key(m[1])
		}
		return Key("Escape")
	case nhLetters.MatchString(top), s.CursorY == 0 && top != "" && (strings.HasSuffix(top, "?") || strings.HasSuffix(top, ":")):
		return Key("Escape")
	}
	return p.explore(s)
}

func (p *nethackPolicy) explore(s Screen) Action {
	pos := nhPlayer(s)
	if pos != p.lastPos {
		p.blocked = [8]bool{}
	} else if p.lastMove >= 0 && s.Equal(p.prev) {
		p.blocked[p.lastMove] = true // walked into something
	}
	// Standing where the last screen showed a '>': go down.
	if pos[0] >= 0 && p.prev.Rows != nil && pos != p.lastPos && charAt(p.prev, pos[0], pos[1]) == '>' && p.chance(80) {
		return Key(">")
	}
	top := s.Row(0)
	switch {
	case strings.Contains(top, "staircase down here") && p.chance(90):
		return Key(">")
	case nhHere.MatchString(top) && p.chance(50):
		return Key(",")
	}
	// A monster next to '@': fight it (walking into it attacks).
	if d := nhMonsterNear(s, pos); d >= 0 && p.chance(85) {
		p.dir = d
		return Key(nhDirs[d])
	}
	switch {
	case nhWounded(s) && nhMonsterNear(s, pos) < 0 && p.chance(50):
		return Type("20s") // rest: search 20 turns (a monster interrupts)
	case strings.Contains(s.Bottom(), "Hungry") && p.chance(30):
		return Key("e")
	case strings.Contains(top, "This door is locked") && p.lastMove >= 0 && p.chance(70):
		// Kick it open: ^D, then the direction just tried.
		p.push(Key(nhDirs[p.lastMove]))
		return Key("Ctrl+d")
	}
	switch p.pick(78, 6, 3, 3, 2, 1, 4, 2) {
	case 0: // walk, or now and then run
		d := p.walkDir(s, pos)
		if p.chance(15) {
			return Key(strings.ToUpper(nhDirs[d]))
		}
		return Key(nhDirs[d])
	case 1:
		return Key("s")
	case 2:
		return Key("i")
	case 3:
		return Key(":")
	case 4:
		return Key(",")
	case 5:
		return Key(">")
	case 6: // travel to a staircase down in sight, then go down
		if downStairsInSight(s) {
			p.push(Key(">"), Key("."), Key(">"))
			return Key("_")
		}
		return Key("s")
	default:
		return Key("Escape")
	}
}

// walkDir picks a direction: among the neighbours of '@' that can be
// entered and were not just found blocked, weighted by what they show,
// four times more on in the current direction, never straight back unless
// nothing else is open.
func (p *nethackPolicy) walkDir(s Screen, pos [2]int) int {
	if pos[0] < 0 {
		p.dir = p.rng.IntN(len(nhDirs))
		return p.dir
	}
	w := make([]int, len(nhDirs))
	total := 0
	for i, d := range nhDelta {
		if p.blocked[i] || (p.dir >= 0 && i == nhOpp[p.dir]) {
			continue
		}
		w[i] = nhWeight(charAt(s, pos[0]+d[0], pos[1]+d[1]))
		if i == p.dir {
			w[i] *= 4
		}
		total += w[i]
	}
	switch {
	case total > 0:
		p.dir = p.pick(w...)
	case p.dir >= 0 && !p.blocked[nhOpp[p.dir]] && nhWeight(charAt(s, pos[0]+nhDelta[nhOpp[p.dir]][0], pos[1]+nhDelta[nhOpp[p.dir]][1])) > 0:
		p.dir = nhOpp[p.dir] // a dead end: back
	default:
		p.dir = p.rng.IntN(len(nhDirs)) // nothing known is open: try anything
	}
	return p.dir
}

// nhMonsterNear returns the direction of a monster (a letter, '&', ':' or
// ';') next to '@' at pos, the first in nhDirs order; -1 when none.
func nhMonsterNear(s Screen, pos [2]int) int {
	if pos[0] < 0 {
		return -1
	}
	for i, d := range nhDelta {
		c := charAt(s, pos[0]+d[0], pos[1]+d[1])
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '&' || c == ':' || c == ';' {
			return i
		}
	}
	return -1
}

// nhWounded reports whether the status line shows HP below a third of the
// maximum.
func nhWounded(s Screen) bool {
	m := nhHPNow.FindStringSubmatch(s.Bottom())
	if m == nil {
		return false
	}
	hp, _ := strconv.Atoi(m[1])
	hpMax, _ := strconv.Atoi(m[2])
	return 3*hp < hpMax
}

// nhPlayer returns the position of '@': under the cursor, or the first on
// the map rows; (-1, -1) when none shows.
func nhPlayer(s Screen) [2]int {
	if charAt(s, s.CursorX, s.CursorY) == '@' && s.CursorY > 0 && s.CursorY < len(s.Rows)-2 {
		return [2]int{s.CursorX, s.CursorY}
	}
	for y := 1; y < len(s.Rows)-2; y++ {
		if x := strings.IndexByte(s.Rows[y], '@'); x >= 0 {
			return [2]int{x, y}
		}
	}
	return [2]int{-1, -1}
}

// charAt returns the byte at column x of row y, ' ' outside the screen.
func charAt(s Screen, x, y int) byte {
	r := s.Row(y)
	if x < 0 || x >= len(r) {
		return ' '
	}
	return r[x]
}

// menuOpen reports whether a NetHack menu or text window is showing: a row
// ending in "(end)" or "(N of M)".
func menuOpen(s Screen) bool {
	for _, r := range s.Rows {
		if nhMenuEnd.MatchString(r) {
			return true
		}
	}
	return false
}

// menuTitle returns the first non-blank row of the menu's column: the text
// of the first row that is not blank in the column where "(end)" starts.
func menuTitle(s Screen) string {
	col := -1
	for _, r := range s.Rows {
		if loc := nhMenuEnd.FindStringIndex(r); loc != nil {
			col = loc[0]
		}
	}
	if col < 0 {
		return ""
	}
	for _, r := range s.Rows {
		if len(r) > col && strings.TrimSpace(r[col:]) != "" {
			return strings.TrimSpace(r[col:])
		}
	}
	return ""
}

// downStairsInSight reports whether a '>' shows on the map rows (not the
// message line or the status lines).
func downStairsInSight(s Screen) bool {
	for y := 1; y < len(s.Rows)-2; y++ {
		if strings.Contains(s.Rows[y], ">") {
			return true
		}
	}
	return false
}
