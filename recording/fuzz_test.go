package recording

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/memowm/memowm/screen"
	"github.com/memowm/memowm/trajectory"
)

// FuzzRead writes arbitrary bytes as one file of a valid recording folder and
// checks that Read never panics, and that whatever it accepts gives a valid
// episode. The first byte picks the file: a(ctions), s(creens), r(ecording.json),
// anything else facts.
func FuzzRead(f *testing.F) {
	for _, name := range []string{ActionsFile, ScreensFile, FactsFile, MetaFile} {
		b, err := os.ReadFile(filepath.Join(handwritten, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(name[0], b)
	}
	f.Add(byte('a'), []byte(`{"type":"click","x":1e400,"y":0}`+"\n"))
	f.Add(byte('s'), []byte(`{"rows":["\u0000\ud800"],"cursor":{"x":-1,"y":99999999999}}`+"\n"))
	f.Add(byte('f'), []byte(`{"a":1e999999,"b":"\xff"}`+"\n"))
	f.Add(byte('r'), []byte(`{"format":"memowm-recording","version":1,"kind":"x","screen":"text","width":1,"height":1024}`))
	// One folder, rewritten by every input: a fresh t.TempDir per input makes
	// the fuzzer several times slower. Inputs run one at a time per process.
	dir := filepath.Join(f.TempDir(), "rec")
	if err := os.Mkdir(dir, 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		var target string
		for _, name := range []string{MetaFile, ScreensFile, ActionsFile, FactsFile} {
			b, _ := os.ReadFile(filepath.Join(handwritten, name))
			if name[0] == which || (target == "" && name == FactsFile) {
				target, b = name, data
			}
			os.WriteFile(filepath.Join(dir, name), b, 0o644)
		}
		r, err := Read(dir)
		if err != nil {
			return
		}
		ep, err := r.Episode(0)
		if err != nil {
			t.Fatalf("Read accepted %s but Episode failed: %v", target, err)
		}
		if err := ep.Validate(TrajectoryMeta()); err != nil {
			t.Fatalf("Read accepted %s but the episode is invalid: %v", target, err)
		}
		EpisodeQuestions(ep, 1)
	})
}

// FuzzLines feeds arbitrary lines to the three line parsers: none panics,
// and what they accept converts and encodes cleanly.
func FuzzLines(f *testing.F) {
	for _, name := range []string{ActionsFile, ScreensFile, FactsFile} {
		b, err := os.ReadFile(filepath.Join(handwritten, name))
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			f.Add(uint8(3), uint8(2), line)
		}
	}
	f.Add(uint8(0), uint8(0), []byte(`{"type":"drag","x":0,"y":1,"dx":-1e39,"dy":0}`))
	f.Add(uint8(200), uint8(1), []byte(`{"rows":["\u0000\ud800 \t"],"cursor":{"x":200,"y":0}}`))
	f.Fuzz(func(t *testing.T, w, h uint8, line []byte) {
		if a, err := parseAction(line); err == nil {
			ta, err := a.Trajectory()
			if err != nil {
				t.Fatalf("parseAction accepted %q, Trajectory refused it: %v", line, err)
			}
			if err := ta.Validate(); err != nil {
				t.Fatalf("accepted action %q is invalid: %v", line, err)
			}
		}
		if tx, err := parseText(line, int(w), int(h)); err == nil {
			s, err := screen.EncodeText(nil, tx, int(w), int(h))
			if err != nil || len(s) != screen.Slots*screen.Dim {
				t.Fatalf("parseText accepted %q, EncodeText: %v", line, err)
			}
		}
		if c, err := parseFacts(line); err == nil {
			c2, err := parseFacts(c)
			if err != nil || !bytes.Equal(c, c2) {
				t.Fatalf("canonical facts %q do not parse to themselves: %q, %v", c, c2, err)
			}
			EpisodeQuestions(&trajectory.Episode{Facts: [][]byte{c, c}}, 1)
		}
	})
}
