package tty

import (
	"regexp"
	"strings"
)

var bsdgamesProfile = profile{
	name:     "bsdgames",
	programs: []string{"worm", "snake", "robots", "tetris-bsd", "tetris"},
	install:  "apt-get install bsdgames",
	prepare: func(*launch, uint64, string) (func(int) error, error) {
		return nil, nil
	},
	newPolicy: func(seed uint64, program string) Policy {
		p := &bsdPolicy{base: newBase(seed, streamBSDGames)}
		switch program {
		case "robots":
			// Eight directions and wait a turn; teleport when stuck.
			p.keys = []string{"h", "j", "k", "l", "y", "u", "b", "n", "."}
			p.stuckKey = "t"
		case "tetris-bsd", "tetris":
			// Left, rotate, right, drop.
			p.keys = []string{"j", "k", "l", "j", "k", "l", "Space"}
		case "worm":
			// The worm crawls right from the start; turning back bites it.
			p.keys = []string{"h", "j", "k", "l"}
			p.reverse = map[string]string{"h": "l", "l": "h", "j": "k", "k": "j"}
			p.last = "l"
		default: // snake
			p.keys = []string{"h", "j", "k", "l"}
		}
		return p
	},
	facts:  bsdFacts,
	blocks: true, // tetris-bsd draws its well and pieces in reverse video
}

var (
	bsdYes   = regexp.MustCompile(`(?i)(another game|play again|\(y/n\)|\[yn\])\??\s*$`)
	bsdScore = regexp.MustCompile(`(?i)\bscore:?\s*(\d+)`)
)

// bsdFacts are genericFacts and the score, when a row shows "Score: N".
func bsdFacts(s Screen) map[string]any {
	f := genericFacts(s)
	for _, r := range s.Rows {
		if m := bsdScore.FindStringSubmatch(r); m != nil {
			f["score"] = m[1]
			break
		}
	}
	return f
}

// bsdPolicy presses a game's movement keys, keeping a key for a few steps
// now and then but changing it when it changed nothing, and answers
// "Another game?" with y. It never presses a game's quit key.
type bsdPolicy struct {
	base
	keys     []string
	last     string
	reverse  map[string]string // a key's opposite, which a worm must not press
	stuckKey string            // pressed after three steps that changed nothing
	prev     Screen
	stuck    int
}

func (p *bsdPolicy) Next(s Screen) Action {
	if p.prev.Rows != nil && s.Equal(p.prev) {
		p.stuck++
	} else {
		p.stuck = 0
	}
	p.prev = s
	for _, r := range s.Rows {
		if bsdYes.MatchString(strings.TrimSpace(r)) {
			return Key("y")
		}
	}
	if strings.Contains(strings.ToLower(s.Bottom()), "press return") || s.Contains("Hit RETURN") {
		return Enter()
	}
	if p.stuckKey != "" && p.stuck >= 3 {
		p.stuck = 0
		return Key(p.stuckKey)
	}
	if p.last == "" || p.stuck > 0 || !p.chance(40) {
		k := p.oneOf(p.keys)
		for (p.reverse != nil && k == p.reverse[p.last]) || (p.stuck > 0 && k == p.last) {
			k = p.oneOf(p.keys)
		}
		p.last = k
	}
	return Key(p.last)
}
