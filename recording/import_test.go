package recording

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/memowm/memowm/trajectory"
)

func TestImportHandwritten(t *testing.T) {
	out := filepath.Join(t.TempDir(), "shell.arrow")
	sum, err := Import([]string{handwritten}, out, ImportOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Episodes != 1 || sum.Observations != 6 || sum.Questions != 4 || sum.Screens[ScreenText] != 1 || !reflect.DeepEqual(sum.Kinds, []string{"shell"}) {
		t.Fatalf("summary %+v", sum)
	}
	eps := readAll(t, out)
	if len(eps) != 1 {
		t.Fatalf("%d episodes", len(eps))
	}
	ep := eps[0]
	type act struct {
		typ     trajectory.ActionType
		payload string
	}
	want := []act{{trajectory.Type, "ls"}, {trajectory.PressEnter, ""}, {trajectory.Type, "cat todo.txt"}, {trajectory.PressEnter, ""}, {trajectory.Key, "C-l"}}
	for i, a := range ep.Actions {
		if a.Type != want[i].typ || string(a.Payload) != want[i].payload || a.HasPos || a.HasDelta {
			t.Errorf("action %d: %+v, want %+v", i, a, want[i])
		}
	}
	if got := string(ep.Facts[3]); got != `{"cwd":"/home/ann","input":"cat todo.txt","last_output":"notes.txt  todo.txt"}` {
		t.Errorf("facts 3: %s", got)
	}
	// The screen after C-l equals the first: same state. The others differ.
	if sameEpisode(&trajectory.Episode{States: ep.States[0:1]}, &trajectory.Episode{States: ep.States[5:6]}) != "" {
		t.Error("equal screens 0 and 5 gave different states")
	}
	if sameEpisode(&trajectory.Episode{States: ep.States[0:1]}, &trajectory.Episode{States: ep.States[1:2]}) == "" {
		t.Error("screens 0 and 1 gave equal states")
	}
	qs, err := trajectory.ReadQuestions(trajectory.QuestionsPath(out))
	if err != nil {
		t.Fatal(err)
	}
	inputs := []string{"", "cat todo.txt", "ls"}
	outputs := []string{"buy milk", "none", "notes.txt  todo.txt"}
	wantQ := []trajectory.Question{
		{Step: 0, Kind: "last_output", Subject: "last_output", Text: "What is last_output?", Answer: "none", Choices: outputs},
		{Step: 1, Kind: "input", Subject: "input", Text: "What is input?", Answer: "ls", Choices: inputs},
		{Step: 2, Kind: "last_output", Subject: "last_output", Text: "What is last_output?", Answer: "notes.txt  todo.txt", Choices: outputs},
		{Step: 4, Kind: "input", Subject: "input", Text: "What is input?", Answer: "", Choices: inputs},
	}
	if !reflect.DeepEqual(qs, wantQ) {
		t.Errorf("questions\n%+v\nwant\n%+v", qs, wantQ)
	}
	for _, q := range qs {
		vals, _ := FactValues(ep.Facts[q.Step])
		if vals[q.Kind] != q.Answer {
			t.Errorf("step %d %s: answer %q, facts say %q", q.Step, q.Kind, q.Answer, vals[q.Kind])
		}
	}
}

// The trajectory Import writes is what Read and Episode give, episode by
// episode, ids in folder order; the same input gives the same bytes.
func TestImportEqualsReadEpisode(t *testing.T) {
	img := filepath.Join(t.TempDir(), "img")
	w, err := NewWriter(img, Meta{Kind: "web", Screen: ScreenImage, Width: 40, Height: 24})
	if err != nil {
		t.Fatal(err)
	}
	// More frames than Import decodes at once (frameChunk): the chunks join.
	for i := 0; i < frameChunk+6; i++ {
		if i > 0 {
			w.AddAction(Action{Type: "scroll", DX: f64(0), DY: f64(0.5)})
		}
		if err := w.AddPNG(pngOf(t, 40, 24, i), map[string]any{"scrolled": i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	dirs := []string{handwritten, img, handwritten}
	for _, ext := range []string{".arrow", ".parquet"} {
		tmp := t.TempDir()
		a, b := filepath.Join(tmp, "a"+ext), filepath.Join(tmp, "b"+ext)
		var calls, last int
		sum, err := Import(dirs, a, ImportOptions{Seed: 9, Progress: func(done, total int) { calls++; last = done }})
		if err != nil {
			t.Fatal(err)
		}
		if want := 12 + frameChunk + 6; sum.Episodes != 3 || sum.Observations != want || calls != want || last != want || sum.Screens[ScreenImage] != 1 {
			t.Fatalf("summary %+v, progress %d calls up to %d", sum, calls, last)
		}
		eps := readAll(t, a)
		if len(eps) != len(dirs) {
			t.Fatalf("%d episodes", len(eps))
		}
		for i, d := range dirs {
			r, err := Read(d)
			if err != nil {
				t.Fatal(err)
			}
			want, err := r.Episode(int64(i))
			if err != nil {
				t.Fatal(err)
			}
			if diff := sameEpisode(eps[i], want); diff != "" {
				t.Errorf("%s episode %d: %s differ from Read+Episode", ext, i, diff)
			}
		}
		if _, err := Import(dirs, b, ImportOptions{Seed: 9}); err != nil {
			t.Fatal(err)
		}
		for _, p := range [][2]string{{a, b}, {trajectory.QuestionsPath(a), trajectory.QuestionsPath(b)}} {
			x, _ := os.ReadFile(p[0])
			y, _ := os.ReadFile(p[1])
			if !bytes.Equal(x, y) {
				t.Errorf("%s: two imports differ", filepath.Base(p[1]))
			}
		}
	}
}

// mutation edits a copy of the handwritten folder.
type mutation struct {
	name string
	edit func(t *testing.T, dir string)
	want []string // substrings of the error
}

func writeFile(name, content string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func replaceLine(name string, line int, content string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		lines[line-1] = content
		writeFile(name, strings.Join(lines, "\n")+"\n")(t, dir)
	}
}

func remove(name string) func(*testing.T, string) {
	return func(t *testing.T, dir string) { os.RemoveAll(filepath.Join(dir, name)) }
}

func TestImportErrors(t *testing.T) {
	long := strings.Repeat("x", 41)
	cases := []mutation{
		{"no recording.json", remove(MetaFile), []string{"has no recording.json", "unfinished recording"}},
		{"no actions", remove(ActionsFile), []string{"has no actions.jsonl"}},
		{"no screens", remove(ScreensFile), []string{"has no screens.jsonl"}},
		{"bad format", replaceLine(MetaFile, 1, `{"format": "memowm", "version": 1, "kind": "shell", "screen": "text",`), []string{"recording.json", `format is "memowm"`}},
		{"version 2", replaceLine(MetaFile, 1, `{"format": "memowm-recording", "version": 2, "kind": "shell", "screen": "text",`), []string{"version is 2"}},
		{"unknown meta field", writeFile(MetaFile, `{"format": "memowm-recording", "version": 1, "kind": "a", "screen": "text", "width": 40, "height": 5, "colour": true}`), []string{"recording.json", `unknown field "colour"`}},
		{"too few actions", replaceLine(ActionsFile, 5, ""), []string{"actions.jsonl has 4 actions for 6 screens (want 5"}},
		{"too many actions", replaceLine(ActionsFile, 5, `{"type": "noop"}`+"\n"+`{"type": "noop"}`), []string{"actions.jsonl has 6 actions for 6 screens"}},
		{"bad action type", replaceLine(ActionsFile, 2, `{"type": "teleport"}`), []string{"actions.jsonl line 2", `unknown action type "teleport"`}},
		{"position out of range", replaceLine(ActionsFile, 3, `{"type": "click", "x": 1.5, "y": 0.5}`), []string{"actions.jsonl line 3", "position (1.5, 0.5) is outside [0, 1]"}},
		{"negative position", replaceLine(ActionsFile, 3, `{"type": "click", "x": 0.5, "y": -0.1}`), []string{"line 3", "outside [0, 1]"}},
		{"x without y", replaceLine(ActionsFile, 1, `{"type": "hover", "x": 0.5}`), []string{"line 1", "only one of x and y"}},
		{"dx without dy", replaceLine(ActionsFile, 1, `{"type": "scroll", "dy": 0.5}`), []string{"line 1", "only one of dx and dy"}},
		{"long payload", replaceLine(ActionsFile, 1, `{"type": "type", "text": "`+long+`"}`), []string{"actions.jsonl line 1", "41 bytes, more than the 40 allowed"}},
		{"text and key", replaceLine(ActionsFile, 1, `{"type": "key", "text": "a", "key": "b"}`), []string{"both text and key"}},
		{"unknown action field", replaceLine(ActionsFile, 4, `{"type": "type", "txt": "ls"}`), []string{"actions.jsonl line 4", `unknown field "txt"`}},
		{"bad json", replaceLine(ActionsFile, 2, `{"type": "noop"`), []string{"actions.jsonl line 2", "JSON"}},
		{"wrong json type", replaceLine(ActionsFile, 2, `{"type": 3}`), []string{"actions.jsonl line 2", `field "type": JSON number where a string is expected`}},
		{"blank line", replaceLine(ActionsFile, 2, "\n"+`{"type": "noop"}`), []string{"actions.jsonl line 2 is empty"}},
		{"row too wide", replaceLine(ScreensFile, 3, `{"rows": ["`+strings.Repeat("y", 41)+`"]}`), []string{"screens.jsonl line 3", "row 0 is 41 characters, wider than the screen's 40"}},
		{"too many rows", replaceLine(ScreensFile, 2, `{"rows": ["1","2","3","4","5","6"]}`), []string{"screens.jsonl line 2", "6 rows for a screen of height 5"}},
		{"cursor outside", replaceLine(ScreensFile, 2, `{"rows": [], "cursor": {"x": 3, "y": 5}}`), []string{"screens.jsonl line 2", "cursor (3, 5) is outside"}},
		{"no rows", replaceLine(ScreensFile, 2, `{"cursor": {"x": 3, "y": 1}}`), []string{"screens.jsonl line 2", `no "rows"`}},
		{"facts count", replaceLine(FactsFile, 6, ""), []string{"facts.jsonl has 5 lines for 6 screens"}},
		{"nested facts", replaceLine(FactsFile, 4, `{"a": {"b": 1}}`), []string{"facts.jsonl line 4", `fact "a" is an object`}},
		{"null fact", replaceLine(FactsFile, 4, `{"a": null}`), []string{"facts.jsonl line 4", `fact "a" is null`}},
		{"facts not an object", replaceLine(FactsFile, 4, `[1, 2]`), []string{"facts.jsonl line 4", "JSON array"}},
		{"frames in a text recording", func(t *testing.T, d string) { os.Mkdir(filepath.Join(d, FramesDir), 0o755) }, []string{"has frames/ but recording.json says its screens are text"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir(t, handwritten)
			c.edit(t, dir)
			checkImportFails(t, []string{handwritten, dir}, c.want)
		})
	}
}

// checkImportFails imports dirs and checks the error and that nothing was
// written.
func checkImportFails(t *testing.T, dirs []string, want []string) {
	t.Helper()
	outDir := t.TempDir()
	out := filepath.Join(outDir, "out.arrow")
	_, err := Import(dirs, out, ImportOptions{})
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if !strings.HasPrefix(err.Error(), "recording: ") {
		t.Errorf("error %q lacks the package prefix", err)
	}
	if ents, _ := os.ReadDir(outDir); len(ents) != 0 {
		t.Errorf("a failed import left %v", ents)
	}
}

func TestImportImageErrors(t *testing.T) {
	build := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "img")
		w, err := NewWriter(dir, Meta{Kind: "web", Screen: ScreenImage, Width: 16, Height: 12})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			if i > 0 {
				w.AddAction(Action{Type: "back"})
			}
			w.AddPNG(pngOf(t, 16, 12, i), nil)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	frame := func(i int) string { return filepath.Join(FramesDir, FrameName(i)) }
	cases := []mutation{
		{"png size", func(t *testing.T, d string) { os.WriteFile(filepath.Join(d, frame(1)), pngOf(t, 16, 13, 1), 0o644) },
			[]string{"000001.png is 16x13 pixels, but recording.json says 16x12"}},
		{"not a png", writeFile(frame(2), "hello"), []string{"000002.png: not a PNG"}},
		{"gap", remove(frame(1)), []string{"000002.png follows 1 frames; want 000001.png"}},
		{"stray file", writeFile(filepath.Join(FramesDir, "notes.txt"), "x"), []string{"unexpected notes.txt"}},
		{"no frames", remove(FramesDir), []string{"has no frames/"}},
		{"screens in an image recording", writeFile(ScreensFile, `{"rows": []}`), []string{"has screens.jsonl but recording.json says its screens are images"}},
		{"actions count", writeFile(ActionsFile, `{"type": "back"}`+"\n"), []string{"1 actions for 3 screens (want 2"}},
		{"damaged png", func(t *testing.T, d string) {
			b := pngOf(t, 16, 12, 1)
			os.WriteFile(filepath.Join(d, frame(1)), b[:len(b)-30], 0o644)
		}, []string{"000001.png"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := build(t)
			c.edit(t, dir)
			checkImportFails(t, []string{dir}, c.want)
		})
	}
}

func TestImportUsage(t *testing.T) {
	if _, err := Import(nil, filepath.Join(t.TempDir(), "x.arrow"), ImportOptions{}); err == nil || !strings.Contains(err.Error(), "no recording folders") {
		t.Errorf("no folders: %v", err)
	}
	if _, err := Import([]string{handwritten}, filepath.Join(t.TempDir(), "x.csv"), ImportOptions{}); err == nil || !strings.Contains(err.Error(), "unknown extension") {
		t.Errorf("bad extension: %v", err)
	}
	if _, err := Import([]string{"testdata/missing"}, filepath.Join(t.TempDir(), "x.arrow"), ImportOptions{}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing folder: %v", err)
	}
	if _, err := Import([]string{filepath.Join(handwritten, MetaFile)}, filepath.Join(t.TempDir(), "x.arrow"), ImportOptions{}); err == nil || !strings.Contains(err.Error(), "is not a folder") {
		t.Errorf("a file: %v", err)
	}
}
