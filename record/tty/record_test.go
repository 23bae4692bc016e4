package tty

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// memSink keeps a recording in memory.
type memSink struct {
	screens []Screen
	facts   []map[string]any
	actions []Action
	timings []map[string]any
}

func (m *memSink) Observe(s Screen, f map[string]any) error {
	m.screens = append(m.screens, s)
	m.facts = append(m.facts, f)
	return nil
}
func (m *memSink) Act(a Action) error            { m.actions = append(m.actions, a); return nil }
func (m *memSink) Timing(t map[string]any) error { m.timings = append(m.timings, t); return nil }
func (m *memSink) last() Screen                  { return m.screens[len(m.screens)-1] }

// strictTools is MEMOWM_RECORDERS=1 (set by .ci/run, which installs the
// programs these tests run): then a missing program fails the test instead
// of skipping it.
var strictTools = os.Getenv("MEMOWM_RECORDERS") == "1"

func needTmux(t *testing.T, program string) {
	t.Helper()
	for _, p := range []string{"tmux", program} {
		if _, err := FindProgram(p); err != nil {
			if strictTools {
				t.Fatalf("%s is not installed (%v); MEMOWM_RECORDERS=1 makes this a failure (.ci/run installs it)", p, err)
			}
			t.Skipf("skipped: %s is not installed (MEMOWM_RECORDERS=1 makes this a failure)", p)
		}
	}
}

// checkRecording checks the sink's shape: steps+1 observations of exactly
// height rows, steps actions, steps timings.
func checkRecording(t *testing.T, m *memSink, res *Result, steps int) {
	t.Helper()
	if res.Steps != steps || len(m.actions) != steps || len(m.screens) != steps+1 || len(m.timings) != steps || len(res.Timings) != steps {
		t.Fatalf("steps %d, actions %d, screens %d, timings %d, want %d steps", res.Steps, len(m.actions), len(m.screens), len(m.timings), steps)
	}
	for i, s := range m.screens {
		if len(s.Rows) != 24 {
			t.Fatalf("screen %d has %d rows", i, len(s.Rows))
		}
		if s.CursorX < 0 || s.CursorX > 80 || s.CursorY < 0 || s.CursorY >= 24 {
			t.Fatalf("screen %d cursor (%d, %d)", i, s.CursorX, s.CursorY)
		}
	}
	for i, a := range m.actions {
		if err := a.Check(); err != nil {
			t.Fatalf("action %d: %v", i, err)
		}
	}
}

func TestRecordCat(t *testing.T) {
	needTmux(t, "cat")
	m := &memSink{}
	res, err := Record(context.Background(), Config{Program: "cat", Steps: 20, Seed: 3}, m)
	if err != nil {
		t.Fatal(err)
	}
	checkRecording(t, m, res, 20)
	if res.Profile != "generic" || res.Exited {
		t.Fatalf("profile %q exited %v", res.Profile, res.Exited)
	}
	// cat echoes what was typed: some typed phrase shows on the screen.
	typed := false
	for _, a := range m.actions {
		if a.Kind == KindType && strings.Contains(strings.Join(m.last().Rows, "\n"), strings.TrimSpace(a.Text)) {
			typed = true
		}
	}
	if !typed {
		t.Errorf("no typed text on cat's last screen:\n%s", strings.Join(m.last().Rows, "\n"))
	}
	st := Summarize(res.Timings)
	for _, l := range st.Lines() {
		t.Log(l)
	}
}

func TestRecordVim(t *testing.T) {
	needTmux(t, "vim")
	m := &memSink{}
	res, err := Record(context.Background(), Config{Program: "vim", Steps: 25, Seed: 1}, m)
	if err != nil {
		t.Fatal(err)
	}
	checkRecording(t, m, res, 25)
	if res.Profile != "vim" {
		t.Fatalf("profile %q", res.Profile)
	}
	modes := map[any]int{}
	for _, f := range m.facts {
		modes[f["mode"]]++
	}
	if modes["insert"] == 0 || modes["normal"] == 0 {
		t.Errorf("modes seen: %v", modes)
	}
	for _, l := range Summarize(res.Timings).Lines() {
		t.Log(l)
	}
}

// TestRecordExit: a program that exits ends the episode cleanly.
func TestRecordExit(t *testing.T) {
	needTmux(t, "sh")
	m := &memSink{}
	// Each Enter reads one line; the third ends the shell script.
	res, err := Record(context.Background(), Config{Program: "sh", Args: []string{"-c", "echo ready; read a; read b; read c; echo bye; exit 7"},
		Steps: 50, Seed: 1, Profile: "generic"}, m)
	if err != nil {
		t.Fatal(err)
	}
	// tmux can mark the pane dead without ever reporting the status
	// (seen on a loaded CI machine): "unknown" is an honest answer, a wrong
	// status is not.
	if !res.Exited || (res.ExitStatus != 7 && res.ExitString() != "exited (status unknown)") || res.Steps >= 50 {
		t.Fatalf("exited %v status %d after %d steps", res.Exited, res.ExitStatus, res.Steps)
	}
	if len(m.screens) != res.Steps+1 || len(m.actions) != res.Steps {
		t.Fatalf("%d screens, %d actions for %d steps", len(m.screens), len(m.actions), res.Steps)
	}
	if !strings.Contains(strings.Join(m.last().Rows, "\n"), "bye") {
		t.Errorf("last screen does not show the exit:\n%s", strings.Join(m.last().Rows, "\n"))
	}
}

func TestRecordMissing(t *testing.T) {
	_, err := Record(context.Background(), Config{Program: "no-such-program-memowm", Steps: 5}, &memSink{})
	if err == nil || !strings.Contains(err.Error(), `record tty: program "no-such-program-memowm" not found`) {
		t.Fatalf("err = %v", err)
	}
	_, err = Record(context.Background(), Config{Program: "cat", Steps: 5, Tmux: "no-such-tmux-memowm"}, &memSink{})
	if err == nil || err.Error() != "record tty: tmux not found: apt-get install tmux" {
		t.Fatalf("err = %v", err)
	}
}

// TestRecordCancel: cancelling stops the recording and kills the session.
func TestRecordCancel(t *testing.T) {
	needTmux(t, "cat")
	ctx, cancel := context.WithCancel(context.Background())
	m := &memSink{}
	cfg := Config{Program: "cat", Steps: 1000, Seed: 1, Progress: func(step, _ int) {
		if step == 5 {
			cancel()
		}
	}}
	start := time.Now()
	res, err := Record(ctx, cfg, m)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted after") {
		t.Fatalf("err = %v", err)
	}
	if res == nil || res.Steps != 5 {
		t.Fatalf("result %+v", res)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("cancel took %v", time.Since(start))
	}
}
