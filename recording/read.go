package recording

import (
	"errors"
	"fmt"
	"image/png"
	"os"
	"path/filepath"

	"github.com/memowm/memowm/screen"
	"github.com/memowm/memowm/trajectory"
)

// Recording is a recording folder read and checked by Read. Screens are held
// as text (Texts) or as the paths of their PNG files (Frames), which Episode
// decodes.
type Recording struct {
	Meta Meta
	Dir  string
	// Steps is the number of observations N (steps 0..N-1); there are N-1
	// actions.
	Steps   int
	Actions []Action      // Actions[t] leads from screen t to screen t+1
	Texts   []screen.Text // N text screens (Meta.Screen "text"), else nil
	Frames  []string      // N PNG paths (Meta.Screen "image"), else nil
	// Facts[t] is screen t's facts as canonical JSON (compact, keys sorted);
	// nil when the folder has no facts.jsonl.
	Facts [][]byte
	// TextEncoder names the encoder of text screens: screen.EncoderHash
	// (also "") or screen.EncoderCells. Read leaves it empty.
	TextEncoder string
}

// Read reads and checks the recording folder dir: recording.json, the
// screens (every text screen fits the size; every PNG has the size), N-1
// valid actions for N screens, and N flat facts objects if facts.jsonl is
// there. Errors name the file and line.
func Read(dir string) (*Recording, error) {
	r := &Recording{Dir: dir}
	if err := r.readMeta(); err != nil {
		return nil, err
	}
	var err error
	if r.Meta.Screen == ScreenText {
		err = r.readTexts()
	} else {
		err = r.readFrames()
	}
	if err != nil {
		return nil, err
	}
	if r.Steps == 0 {
		return nil, fmt.Errorf("recording: %s: no screens", dir)
	}
	if err := r.readActions(); err != nil {
		return nil, err
	}
	if err := r.readFacts(); err != nil {
		return nil, err
	}
	return r, nil
}

// ReadMeta reads and checks dir's recording.json alone (what Read checks
// first), without the screens.
func ReadMeta(dir string) (Meta, error) {
	r := &Recording{Dir: dir}
	err := r.readMeta()
	return r.Meta, err
}

func (r *Recording) path(name string) string { return filepath.Join(r.Dir, name) }

func (r *Recording) readMeta() error {
	if st, err := os.Stat(r.Dir); err != nil {
		return fmt.Errorf("recording: %w", err)
	} else if !st.IsDir() {
		return fmt.Errorf("recording: %s is not a folder (import reads recording folders, see docs/recording-format.md)", r.Dir)
	}
	p := r.path(MetaFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("recording: %s has no %s: not a recording folder, or an unfinished recording", r.Dir, MetaFile)
	}
	if err != nil {
		return fmt.Errorf("recording: %w", err)
	}
	if err := decodeStrict(b, &r.Meta); err != nil {
		return fmt.Errorf("recording: %s: %w", p, err)
	}
	if err := r.Meta.Validate(); err != nil {
		return fmt.Errorf("recording: %s: %w", p, err)
	}
	return nil
}

func (r *Recording) readTexts() error {
	if _, err := os.Stat(r.path(FramesDir)); err == nil {
		return fmt.Errorf("recording: %s has %s/ but %s says its screens are text", r.Dir, FramesDir, MetaFile)
	}
	p := r.path(ScreensFile)
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("recording: %s has no %s (its screens are text)", r.Dir, ScreensFile)
	}
	n, err := readLines(p, func(line int, b []byte) error {
		t, err := parseText(b, r.Meta.Width, r.Meta.Height)
		if err != nil {
			return err
		}
		r.Texts = append(r.Texts, t)
		return nil
	})
	r.Steps = n
	return err
}

func (r *Recording) readFrames() error {
	if _, err := os.Stat(r.path(ScreensFile)); err == nil {
		return fmt.Errorf("recording: %s has %s but %s says its screens are images", r.Dir, ScreensFile, MetaFile)
	}
	dir := r.path(FramesDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("recording: %s has no %s/ (its screens are images)", r.Dir, FramesDir)
	}
	if err != nil {
		return fmt.Errorf("recording: %w", err)
	}
	for i, e := range ents { // sorted by name
		if e.Name() != FrameName(i) {
			if len(e.Name()) == len(FrameName(i)) && filepath.Ext(e.Name()) == ".png" {
				return fmt.Errorf("recording: %s: %s follows %d frames; want %s (frames are numbered from %s without gaps)", dir, e.Name(), i, FrameName(i), FrameName(0))
			}
			return fmt.Errorf("recording: %s: unexpected %s (want only %s, %s, ...)", dir, e.Name(), FrameName(0), FrameName(1))
		}
		p := filepath.Join(dir, e.Name())
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("recording: %w", err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("recording: %s: not a PNG: %v", p, err)
		}
		if cfg.Width != r.Meta.Width || cfg.Height != r.Meta.Height {
			return fmt.Errorf("recording: %s is %dx%d pixels, but %s says %dx%d", p, cfg.Width, cfg.Height, MetaFile, r.Meta.Width, r.Meta.Height)
		}
		r.Frames = append(r.Frames, p)
	}
	r.Steps = len(r.Frames)
	return nil
}

func (r *Recording) readActions() error {
	p := r.path(ActionsFile)
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("recording: %s has no %s (required; empty for a single screen)", r.Dir, ActionsFile)
	}
	n, err := readLines(p, func(line int, b []byte) error {
		a, err := parseAction(b)
		if err != nil {
			return err
		}
		r.Actions = append(r.Actions, a)
		return nil
	})
	if err != nil {
		return err
	}
	if n != r.Steps-1 {
		return fmt.Errorf("recording: %s has %d actions for %d screens (want %d: one between each two screens)", p, n, r.Steps, r.Steps-1)
	}
	return nil
}

func (r *Recording) readFacts() error {
	p := r.path(FactsFile)
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	facts := make([][]byte, 0, r.Steps)
	n, err := readLines(p, func(line int, b []byte) error {
		c, err := parseFacts(b)
		if err != nil {
			return err
		}
		facts = append(facts, c)
		return nil
	})
	if err != nil {
		return err
	}
	if n != r.Steps {
		return fmt.Errorf("recording: %s has %d lines for %d screens (want one per screen)", p, n, r.Steps)
	}
	r.Facts = facts
	return nil
}

// TrajectoryActions converts the actions (already checked by Read).
func (r *Recording) TrajectoryActions() ([]trajectory.Action, error) {
	out := make([]trajectory.Action, len(r.Actions))
	for t, a := range r.Actions {
		ta, err := a.Trajectory()
		if err != nil {
			return nil, fmt.Errorf("recording: %s: action %d: %w", r.Dir, t, err)
		}
		out[t] = ta
	}
	return out, nil
}

// parseText decodes and checks one line of screens.jsonl.
func parseText(b []byte, width, height int) (screen.Text, error) {
	var l struct {
		Rows   *[]string `json:"rows"`
		Cursor *cursor   `json:"cursor"`
	}
	var t screen.Text
	if err := decodeStrict(b, &l); err != nil {
		return t, err
	}
	if l.Rows == nil {
		return t, errors.New(`no "rows"`)
	}
	t.Rows = *l.Rows
	if l.Cursor != nil {
		t.HasCursor, t.CursorX, t.CursorY = true, l.Cursor.X, l.Cursor.Y
	}
	if err := t.Check(width, height); err != nil {
		return t, fmt.Errorf("%w (%s: %dx%d)", err, MetaFile, width, height)
	}
	return t, nil
}

// parseAction decodes and checks one line of actions.jsonl.
func parseAction(b []byte) (Action, error) {
	var a Action
	if err := decodeStrict(b, &a); err != nil {
		return a, err
	}
	if _, err := a.Trajectory(); err != nil {
		return a, err
	}
	return a, nil
}
