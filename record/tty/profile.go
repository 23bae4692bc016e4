package tty

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Policy chooses the next action from the current screen. Implementations
// are deterministic: the same seed and the same screens give the same
// actions.
type Policy interface {
	Next(s Screen) Action
}

// profile is what is specific to a kind of program.
type profile struct {
	name     string
	programs []string // program base names that select this profile
	install  string   // how to install the usual program, for error messages
	// prepare adjusts the launch (arguments, environment, working
	// directory) for a run with this seed; work is a private scratch
	// directory removed after the run. The returned cleanup, if any, runs
	// after the program has gone, with the program's process id.
	prepare   func(l *launch, seed uint64, work string) (cleanup func(pid int) error, err error)
	newPolicy func(seed uint64, program string) Policy
	facts     func(s Screen) map[string]any
	// blocks: the programs draw with reverse-video or coloured spaces,
	// which the capture shows as '#'.
	blocks bool
}

var profiles = []profile{genericProfile, nethackProfile, vimProfile, bsdgamesProfile}

// Profiles returns the profile names, generic first.
func Profiles() []string {
	out := make([]string, len(profiles))
	for i, p := range profiles {
		out[i] = p.name
	}
	return out
}

// ProfileFor returns the profile for a program, chosen by its base name:
// nethack for nethack, vim for vim, vi and vim.basic, bsdgames for worm,
// snake, robots and tetris-bsd, generic otherwise.
func ProfileFor(program string) string {
	base := filepath.Base(program)
	for _, p := range profiles {
		if slices.Contains(p.programs, base) {
			return p.name
		}
	}
	return genericProfile.name
}

func lookupProfile(name string) (profile, error) {
	for _, p := range profiles {
		if p.name == name {
			return p, nil
		}
	}
	return profile{}, fmt.Errorf("record tty: unknown profile %q (want %s)", name, strings.Join(Profiles(), ", "))
}

// NewPolicy returns the exploration policy of a profile for a seed; program
// (its base name matters) refines the bsdgames profile's keys.
func NewPolicy(profileName string, seed uint64, program string) (Policy, error) {
	p, err := lookupProfile(profileName)
	if err != nil {
		return nil, err
	}
	return p.newPolicy(seed, filepath.Base(program)), nil
}

// Facts returns the facts a profile reads off a screen: flat string values.
func Facts(profileName string, s Screen) (map[string]any, error) {
	p, err := lookupProfile(profileName)
	if err != nil {
		return nil, err
	}
	return p.facts(s), nil
}

// Policy streams: one PCG stream per profile, so the profiles' choices for
// one seed are unrelated.
const (
	streamGeneric  = 0x7474792d67656e31
	streamNetHack  = 0x7474792d6e657468
	streamVim      = 0x7474792d76696d31
	streamBSDGames = 0x7474792d62736467
)

// base holds what every policy has: its random numbers and a queue of
// planned actions (a multi-key command is one action per step).
type base struct {
	rng   *rand.Rand
	queue []Action
}

func newBase(seed, stream uint64) base {
	return base{rng: rand.New(rand.NewPCG(seed, stream))}
}

func (b *base) push(a ...Action) { b.queue = append(b.queue, a...) }

func (b *base) pop() (Action, bool) {
	if len(b.queue) == 0 {
		return Action{}, false
	}
	a := b.queue[0]
	b.queue = b.queue[1:]
	return a, true
}

// pick returns i with probability weights[i] / sum(weights).
func (b *base) pick(weights ...int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	r := b.rng.IntN(total)
	for i, w := range weights {
		if r < w {
			return i
		}
		r -= w
	}
	return len(weights) - 1
}

func (b *base) oneOf(s []string) string { return s[b.rng.IntN(len(s))] }

// chance returns true with probability p/100.
func (b *base) chance(p int) bool { return b.rng.IntN(100) < p }

var words = []string{"hello", "world", "memory", "agent", "the", "quick", "brown", "fox",
	"jumps", "over", "lazy", "dog", "terminal", "screen", "cursor", "model", "state",
	"trajectory", "compress", "episode", "step", "key", "note", "todo", "fix", "test"}

// phrase returns one to four words and a trailing space, at most MaxText bytes.
func (b *base) phrase() string {
	n := 1 + b.rng.IntN(4)
	var sb strings.Builder
	for range n {
		w := b.oneOf(words)
		if sb.Len()+len(w)+1 > MaxText {
			break
		}
		sb.WriteString(w)
		sb.WriteByte(' ')
	}
	return sb.String()
}

var arrows = []string{"ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight"}

// ---- generic ----

var genericProfile = profile{
	name: "generic",
	prepare: func(*launch, uint64, string) (func(int) error, error) {
		return nil, nil
	},
	newPolicy: func(seed uint64, _ string) Policy {
		return &genericPolicy{base: newBase(seed, streamGeneric)}
	},
	facts: genericFacts,
}

// genericPolicy presses arrows, letters, Enter, Escape and Space and types
// short phrases, for any program.
type genericPolicy struct{ base }

func (p *genericPolicy) Next(s Screen) Action {
	switch p.pick(30, 20, 10, 5, 10, 15, 10) {
	case 0:
		return Key(string(rune('a' + p.rng.IntN(26))))
	case 1:
		return Key(p.oneOf(arrows))
	case 2:
		return Enter()
	case 3:
		return Key("Escape")
	case 4:
		return Key("Space")
	case 5:
		return Type(p.phrase())
	default:
		return Key("Backspace")
	}
}

// genericFacts are the cursor and the bottom line, and the last line that
// is not blank (a shell's prompt, a pager's status).
func genericFacts(s Screen) map[string]any {
	f := map[string]any{
		"cursor_x": strconv.Itoa(s.CursorX),
		"cursor_y": strconv.Itoa(s.CursorY),
		"bottom":   strings.TrimSpace(s.Bottom()),
	}
	for y := len(s.Rows) - 1; y >= 0; y-- {
		if t := strings.TrimSpace(s.Rows[y]); t != "" {
			f["last_line"] = t
			break
		}
	}
	return f
}
