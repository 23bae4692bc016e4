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
			// Eight directions, wait a turn; teleport now and then.
			p.keys = []string{"h", "j", "k", "l", "y", "u", "b", "n", "h", "j", "k", "l", "y", "u", "b", "n", ".", "t"}
		case "tetris-bsd", "tetris":
			// Left, rotate, right, drop.
			p.keys = []string{"j", "k", "l", "j", "k", "l", "Space"}
		default: // worm, snake: turning back bites the tail
			p.keys = []string{"h", "j", "k", "l"}
			p.reverse = map[string]string{"h": "l", "l": "h", "j": "k", "k": "j"}
		}
		return p
	},
	facts:  genericFacts,
	blocks: true, // tetris-bsd draws its well and pieces in reverse video
}

var bsdYes = regexp.MustCompile(`(?i)(another game|play again|\(y/n\)|\[yn\])\??\s*$`)

// bsdPolicy presses a game's movement keys, keeping a key for a few steps
// now and then, and answers "Another game?" with y. It never presses a
// game's quit key.
type bsdPolicy struct {
	base
	keys    []string
	last    string
	reverse map[string]string // a key's opposite, which a worm or snake must not press
}

func (p *bsdPolicy) Next(s Screen) Action {
	for _, r := range s.Rows {
		if bsdYes.MatchString(strings.TrimSpace(r)) {
			return Key("y")
		}
	}
	if strings.Contains(strings.ToLower(s.Bottom()), "press return") || s.Contains("Hit RETURN") {
		return Enter()
	}
	if p.last == "" || !p.chance(40) {
		k := p.oneOf(p.keys)
		for p.reverse != nil && p.last != "" && k == p.reverse[p.last] {
			k = p.oneOf(p.keys)
		}
		p.last = k
	}
	return Key(p.last)
}
