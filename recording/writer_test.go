package recording

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/memowm/memowm/screen"
	"github.com/memowm/memowm/trajectory"
)

func TestWriterReadTextRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	m := Meta{Kind: "tty", Screen: ScreenText, Width: 20, Height: 4, Command: "vim", Seed: 3}
	w, err := NewWriter(dir, m)
	if err != nil {
		t.Fatal(err)
	}
	texts := []screen.Text{
		{Rows: []string{"~", "~"}, HasCursor: true},
		{Rows: []string{"hello <b> & é", "~", "", "-- INSERT --"}, HasCursor: true, CursorX: 20, CursorY: 0},
		{},
		{Rows: []string{"hello"}},
	}
	acts := []Action{
		{Type: "key", Key: "i"},
		{Type: "click", X: f64(0.25), Y: f64(1)},
		{Type: "scroll", DX: f64(0), DY: f64(-2.5)},
	}
	facts := []map[string]any{nil, {"mode": "insert", "n": 2, "ok": true}, {"mode": "normal", "x": 1.5}, {"big": "12345678901234567890"}}
	for i, tx := range texts {
		if i > 0 {
			if err := w.AddAction(acts[i-1]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.AddText(tx, facts[i]); err != nil {
			t.Fatal(err)
		}
		if err := w.AddTiming(map[string]any{"step": i, "ms": 1.5}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Format, m.Version = FormatName, Version
	if r.Meta != m || r.Steps != 4 || r.Frames != nil {
		t.Fatalf("meta %+v steps %d", r.Meta, r.Steps)
	}
	for i := range texts {
		want := texts[i]
		if want.Rows == nil {
			want.Rows = []string{}
		}
		if !reflect.DeepEqual(r.Texts[i], want) {
			t.Errorf("screen %d: %+v, want %+v", i, r.Texts[i], want)
		}
	}
	if !reflect.DeepEqual(r.Actions, acts) {
		t.Errorf("actions %+v", r.Actions)
	}
	wantFacts := []string{`{}`, `{"mode":"insert","n":2,"ok":true}`, `{"mode":"normal","x":1.5}`, `{"big":"12345678901234567890"}`}
	for i, f := range r.Facts {
		if string(f) != wantFacts[i] {
			t.Errorf("facts %d: %s, want %s", i, f, wantFacts[i])
		}
	}
	ep, err := r.Episode(7)
	if err != nil {
		t.Fatal(err)
	}
	if err := ep.Validate(TrajectoryMeta()); err != nil {
		t.Fatal(err)
	}
	for i, tx := range texts {
		s, _ := screen.EncodeText(nil, tx, 20, 4)
		if sameEpisode(&trajectory.Episode{States: [][]float32{s}}, &trajectory.Episode{States: ep.States[i : i+1]}) != "" {
			t.Errorf("state %d is not EncodeText of screen %d", i, i)
		}
	}
	a := ep.Actions
	if ep.ID != 7 || a[0].Type != trajectory.Key || string(a[0].Payload) != "i" || !a[1].HasPos || a[1].X != 0.25 || a[1].Y != 1 ||
		a[2].Type != trajectory.Scroll || !a[2].HasDelta || a[2].DY != -2.5 || a[2].HasPos {
		t.Errorf("episode actions %+v", a)
	}
	if _, err := os.Stat(filepath.Join(dir, TimingFile)); err != nil {
		t.Error("no timing.jsonl")
	}
}

func TestWriterReadImageRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	w, err := NewWriter(dir, Meta{Kind: "web", Screen: ScreenImage, Width: 48, Height: 30})
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	for i := 0; i < n; i++ {
		if i > 0 {
			if err := w.AddAction(Action{Type: "click", X: f64(0.5), Y: f64(0.5)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.AddPNG(pngOf(t, 48, 30, i), map[string]any{"url": "http://x/" + string(rune('a'+i%2))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AddPNG(pngOf(t, 48, 30, 0), nil); err == nil || !strings.Contains(err.Error(), "before the action") {
		t.Errorf("screen without an action between: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Steps != n || len(r.Frames) != n || r.Texts != nil || len(r.Facts) != n {
		t.Fatalf("steps %d frames %d facts %d", r.Steps, len(r.Frames), len(r.Facts))
	}
	a, err := r.Episode(0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Episode(0) // decoded on other goroutines in another order: same bits
	if err != nil {
		t.Fatal(err)
	}
	if d := sameEpisode(a, b); d != "" {
		t.Fatalf("two Episode calls differ in %s", d)
	}
	if sameEpisode(&trajectory.Episode{States: a.States[:1]}, &trajectory.Episode{States: a.States[1:2]}) == "" {
		t.Error("different frames gave equal states")
	}
}

func TestWriterOrderAndChecks(t *testing.T) {
	base := t.TempDir()
	m := Meta{Kind: "tty", Screen: ScreenText, Width: 10, Height: 2}
	if _, err := NewWriter(base, Meta{Kind: "tty", Screen: "video", Width: 1, Height: 1}); err == nil || !strings.Contains(err.Error(), `screen is "video"`) {
		t.Errorf("bad screen kind: %v", err)
	}
	os.WriteFile(filepath.Join(base, "x"), nil, 0o644)
	if _, err := NewWriter(base, m); err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("non-empty folder: %v", err)
	}
	dir := filepath.Join(base, "rec")
	w, err := NewWriter(dir, m)
	if err != nil {
		t.Fatal(err)
	}
	check := func(err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "recording: ") {
			t.Errorf("error %v, want %q", err, want)
		}
	}
	check(w.AddAction(Action{Type: "noop"}), "an action before the first screen")
	check(w.Close(), "no screens")
	check(w.AddText(screen.Text{Rows: []string{"01234567890"}}, nil), "wider than the screen")
	check(w.AddPNG(nil, nil), "AddPNG in a recording of text screens")
	check(w.AddText(screen.Text{}, map[string]any{"a": []int{1}}), `fact "a" is an array`)
	if err := w.AddText(screen.Text{}, nil); err != nil {
		t.Fatal(err)
	}
	check(w.AddAction(Action{Type: "jump"}), `unknown action type "jump"`)
	if err := w.AddAction(Action{Type: "noop"}); err != nil {
		t.Fatal(err)
	}
	check(w.AddAction(Action{Type: "noop"}), "two actions after screen 0")
	check(w.Close(), "1 actions after 1 screens")
	if err := w.AddText(screen.Text{Rows: []string{"ok"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir); err != nil {
		t.Fatal(err)
	}

	// Abort removes what the writer made; a folder without recording.json is refused.
	dir2 := filepath.Join(base, "aborted")
	w2, _ := NewWriter(dir2, m)
	w2.AddText(screen.Text{}, map[string]any{"k": 1})
	w2.AddTiming(map[string]any{"t": 1})
	w2.Abort()
	if _, err := os.Stat(dir2); !os.IsNotExist(err) {
		t.Errorf("Abort left %s: %v", dir2, err)
	}
	dir3 := filepath.Join(base, "unfinished")
	w3, _ := NewWriter(dir3, m)
	w3.AddText(screen.Text{}, nil)
	if _, err := Read(dir3); err == nil || !strings.Contains(err.Error(), "unfinished recording") {
		t.Errorf("unfinished folder: %v", err)
	}
	w3.Abort()
}

func TestWriterImageSize(t *testing.T) {
	w, err := NewWriter(filepath.Join(t.TempDir(), "r"), Meta{Kind: "web", Screen: ScreenImage, Width: 8, Height: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.AddPNG(pngOf(t, 8, 9, 1), nil); err == nil || !strings.Contains(err.Error(), "screen 0 is 8x9 pixels, the recording is 8x8") {
		t.Errorf("wrong size: %v", err)
	}
	if err := w.AddPNG([]byte("GIF89a"), nil); err == nil || !strings.Contains(err.Error(), "not a PNG") {
		t.Errorf("not a PNG: %v", err)
	}
}

func TestEpisodeOfHandBuiltRecording(t *testing.T) {
	r := &Recording{Meta: Meta{Screen: ScreenText, Width: 10, Height: 2}, Dir: "mem", Steps: 2,
		Texts: []screen.Text{{}, {Rows: []string{"a"}}}}
	if _, err := r.Episode(0); err == nil || !strings.Contains(err.Error(), "0 actions for 2 screens") {
		t.Errorf("missing action: %v", err)
	}
	r.Actions = []Action{{Type: "noop"}}
	r.Steps = 3
	if _, err := r.Episode(0); err == nil || !strings.Contains(err.Error(), "2 screens for 3 steps") {
		t.Errorf("wrong steps: %v", err)
	}
	r.Steps = 2
	if ep, err := r.Episode(0); err != nil || ep.Len() != 2 {
		t.Errorf("valid hand-built recording: %v", err)
	}
}
