package tty

import (
	"bufio"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// randomScreens makes n screens of random text and cursors.
func randomScreens(n int) []Screen {
	r := rand.New(rand.NewPCG(1, 1))
	out := make([]Screen, n)
	for i := range out {
		rows := make([]string, 24)
		for y := range rows {
			b := make([]byte, r.IntN(80))
			for x := range b {
				b[x] = " .#-|@>$ab:"[r.IntN(11)]
			}
			rows[y] = string(b)
		}
		out[i] = Screen{Rows: rows, CursorX: r.IntN(80), CursorY: r.IntN(24)}
	}
	return out
}

func actionsFor(t *testing.T, profile string, seed uint64, program string, screens []Screen) []Action {
	t.Helper()
	p, err := NewPolicy(profile, seed, program)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Action, len(screens))
	for i, s := range screens {
		out[i] = p.Next(s)
		if err := out[i].Check(); err != nil {
			t.Fatalf("%s seed %d step %d: %v", profile, seed, i, err)
		}
	}
	return out
}

// TestPolicyDeterminism: the same seed and screens give the same actions;
// another seed gives others.
func TestPolicyDeterminism(t *testing.T) {
	screens := randomScreens(300)
	for _, c := range []struct{ profile, program string }{
		{"generic", "cat"}, {"nethack", "nethack"}, {"vim", "vim"},
		{"bsdgames", "robots"}, {"bsdgames", "worm"}, {"bsdgames", "tetris-bsd"},
	} {
		a := actionsFor(t, c.profile, 42, c.program, screens)
		b := actionsFor(t, c.profile, 42, c.program, screens)
		if !slices.Equal(a, b) {
			t.Errorf("%s/%s: seed 42 twice gives different actions", c.profile, c.program)
		}
		if o := actionsFor(t, c.profile, 43, c.program, screens); slices.Equal(a, o) {
			t.Errorf("%s/%s: seeds 42 and 43 give the same actions", c.profile, c.program)
		}
	}
}

// TestPolicyNeverQuits: the policies never press a key that ends the
// program: NetHack's Q (quit), S (save), #, ^C; vim's :q; bsdgames' q and x.
func TestPolicyNeverQuits(t *testing.T) {
	screens := randomScreens(2000)
	for seed := range uint64(3) {
		for _, a := range actionsFor(t, "nethack", seed, "nethack", screens) {
			if a.Key == "Q" || a.Key == "S" || a.Key == "#" || a.Key == "Ctrl+c" || strings.ContainsAny(a.Text, "QS#") {
				t.Fatalf("nethack: %v", a)
			}
		}
		for _, a := range actionsFor(t, "vim", seed, "vim", screens) {
			if a.Key == "Z" || a.Key == "Ctrl+c" || strings.HasPrefix(a.Text, "q") {
				t.Fatalf("vim: %v", a)
			}
		}
		for _, prog := range []string{"worm", "snake", "robots", "tetris-bsd"} {
			for _, a := range actionsFor(t, "bsdgames", seed, prog, screens) {
				if a.Key == "q" || a.Key == "x" || a.Key == "Ctrl+c" {
					t.Fatalf("%s: %v", prog, a)
				}
			}
		}
	}
}

func TestProfileFor(t *testing.T) {
	for prog, want := range map[string]string{
		"nethack": "nethack", "/usr/games/nethack": "nethack", "vim": "vim", "/usr/bin/vi": "vim",
		"worm": "bsdgames", "tetris-bsd": "bsdgames", "robots": "bsdgames", "bash": "generic", "cat": "generic",
	} {
		if got := ProfileFor(prog); got != want {
			t.Errorf("ProfileFor(%q) = %q, want %q", prog, got, want)
		}
	}
	if _, err := NewPolicy("emacs", 1, "emacs"); err == nil || !strings.HasPrefix(err.Error(), "record tty: unknown profile") {
		t.Errorf("unknown profile: %v", err)
	}
}

// readJSONL decodes every line of a file into a new T.
func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFixtureReplay replays the committed recordings (testdata/*/, made by
// memowm record tty, see testdata/README.md): a fresh policy with the
// recording's seed, shown the recorded screens, must press the recorded
// keys, and the fact parsers must give the recorded facts.
func TestFixtureReplay(t *testing.T) {
	for _, c := range []struct{ dir, profile, program string }{
		{"nethack-300", "nethack", "nethack"},
		{"vim-100", "vim", "vim"},
	} {
		t.Run(c.dir, func(t *testing.T) {
			dir := filepath.Join("testdata", c.dir)
			var meta struct {
				Seed          uint64
				Width, Height int
			}
			b, err := os.ReadFile(filepath.Join(dir, "recording.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &meta); err != nil {
				t.Fatal(err)
			}
			type line struct {
				Rows   []string
				Cursor struct{ X, Y int }
			}
			lines := readJSONL[line](t, filepath.Join(dir, "screens.jsonl"))
			type action struct{ Type, Key, Text string }
			acts := readJSONL[action](t, filepath.Join(dir, "actions.jsonl"))
			facts := readJSONL[map[string]any](t, filepath.Join(dir, "facts.jsonl"))
			if len(acts) != len(lines)-1 || len(facts) != len(lines) || len(acts) < 100 {
				t.Fatalf("%d screens, %d actions, %d facts", len(lines), len(acts), len(facts))
			}
			p, err := NewPolicy(c.profile, meta.Seed, c.program)
			if err != nil {
				t.Fatal(err)
			}
			for i, l := range lines {
				s := Screen{Rows: l.Rows, CursorX: l.Cursor.X, CursorY: l.Cursor.Y}
				if len(s.Rows) != meta.Height {
					t.Fatalf("screen %d has %d rows", i, len(s.Rows))
				}
				got, _ := Facts(c.profile, s)
				if !maps.Equal(got, facts[i]) {
					t.Fatalf("screen %d facts:\n got  %v\n want %v", i, got, facts[i])
				}
				if i == len(acts) {
					break
				}
				a := p.Next(s)
				want := Action{Kind: acts[i].Type, Key: acts[i].Key, Text: acts[i].Text}
				if a != want {
					t.Fatalf("step %d: policy pressed %v, the recording %v", i, a, want)
				}
			}
		})
	}
}
