package recording

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"path/filepath"

	"github.com/memowm/memowm/internal/atomicfile"
	"github.com/memowm/memowm/screen"
)

// Writer writes a recording folder step by step, as a recorder observes:
// screen, action, screen, ..., screen. Every item is checked when it is
// added. recording.json is written last, by Close, so a folder without it is
// an unfinished recording that Read refuses.
type Writer struct {
	dir     string
	meta    Meta
	made    bool     // NewWriter created dir
	files   []string // what the writer created, for Abort
	screens *lineWriter
	actions *lineWriter
	facts   *lineWriter // opened at the first screen with facts
	timing  *lineWriter
	n, na   int   // screens and actions so far
	noFacts int   // screens added before the first with facts
	err     error // sticky: the writer is broken
	done    bool
}

// lineWriter is one JSON Lines file being written.
type lineWriter struct {
	f  *os.File
	bw *bufio.Writer
}

// NewWriter starts a recording folder at dir, which must not exist or be an
// empty directory. m.Format and m.Version may be left empty; the rest of m
// must be valid.
func NewWriter(dir string, m Meta) (*Writer, error) {
	if m.Format == "" && m.Version == 0 {
		m.Format, m.Version = FormatName, Version
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("recording: %s: %v", dir, err)
	}
	w := &Writer{dir: dir, meta: m}
	switch ents, err := os.ReadDir(dir); {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("recording: %w", err)
		}
		w.made = true
	case err != nil:
		return nil, fmt.Errorf("recording: %w", err)
	case len(ents) > 0:
		return nil, fmt.Errorf("recording: %s is not empty (a recording gets a folder of its own)", dir)
	}
	var err error
	if m.Screen == ScreenText {
		w.screens, err = w.create(ScreensFile)
	} else {
		err = os.Mkdir(filepath.Join(dir, FramesDir), 0o755)
		if err == nil {
			w.files = append(w.files, filepath.Join(dir, FramesDir))
		}
	}
	if err == nil {
		w.actions, err = w.create(ActionsFile)
	}
	if err != nil {
		w.Abort()
		return nil, fmt.Errorf("recording: %w", err)
	}
	return w, nil
}

// Dir is the folder being written.
func (w *Writer) Dir() string { return w.dir }

// Steps is the number of screens added so far.
func (w *Writer) Steps() int { return w.n }

func (w *Writer) create(name string) (*lineWriter, error) {
	p := filepath.Join(w.dir, name)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	w.files = append(w.files, p)
	return &lineWriter{f: f, bw: bufio.NewWriterSize(f, 256<<10)}, nil
}

func (l *lineWriter) line(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := l.bw.Write(buf.Bytes())
	return err
}

func (l *lineWriter) close() error {
	if l == nil {
		return nil
	}
	err := l.bw.Flush()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ready checks that the writer may take the next screen (want true) or
// action (want false).
func (w *Writer) ready(screenNext bool) error {
	switch {
	case w.done:
		return errors.New("recording: the writer is closed")
	case w.err != nil:
		return w.err
	case screenNext && w.n != w.na:
		return fmt.Errorf("recording: %s: screen %d added before the action after screen %d", w.dir, w.n, w.n-1)
	case !screenNext && w.n != w.na+1:
		if w.n == 0 {
			return fmt.Errorf("recording: %s: an action before the first screen", w.dir)
		}
		return fmt.Errorf("recording: %s: two actions after screen %d (one action between two screens)", w.dir, w.n-1)
	}
	return nil
}

// fail makes err sticky and returns it.
func (w *Writer) fail(err error) error {
	w.err = fmt.Errorf("recording: %s: %w", w.dir, err)
	return w.err
}

// textLine is one line of screens.jsonl.
type textLine struct {
	Rows   []string `json:"rows"`
	Cursor *cursor  `json:"cursor,omitempty"`
}

type cursor struct {
	X int `json:"x"`
	Y int `json:"y"`
}

// AddText adds the next screen of a text recording, with its facts (nil for
// none; values must be strings, numbers or booleans).
func (w *Writer) AddText(t screen.Text, facts map[string]any) error {
	if err := w.ready(true); err != nil {
		return err
	}
	if w.meta.Screen != ScreenText {
		return fmt.Errorf("recording: %s: AddText in a recording of %s screens", w.dir, w.meta.Screen)
	}
	if err := t.Check(w.meta.Width, w.meta.Height); err != nil {
		return fmt.Errorf("recording: %s: screen %d: %w", w.dir, w.n, err)
	}
	fb, err := w.checkFacts(facts)
	if err != nil {
		return err
	}
	l := textLine{Rows: t.Rows}
	if l.Rows == nil {
		l.Rows = []string{}
	}
	if t.HasCursor {
		l.Cursor = &cursor{X: t.CursorX, Y: t.CursorY}
	}
	if err := w.screens.line(l); err != nil {
		return w.fail(err)
	}
	return w.addFacts(fb)
}

// AddPNG adds the next screen of an image recording, an encoded PNG of the
// recording's width and height, with its facts (nil for none).
func (w *Writer) AddPNG(b []byte, facts map[string]any) error {
	if err := w.ready(true); err != nil {
		return err
	}
	if w.meta.Screen != ScreenImage {
		return fmt.Errorf("recording: %s: AddPNG in a recording of %s screens", w.dir, w.meta.Screen)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("recording: %s: screen %d: not a PNG: %v", w.dir, w.n, err)
	}
	if cfg.Width != w.meta.Width || cfg.Height != w.meta.Height {
		return fmt.Errorf("recording: %s: screen %d is %dx%d pixels, the recording is %dx%d", w.dir, w.n, cfg.Width, cfg.Height, w.meta.Width, w.meta.Height)
	}
	fb, err := w.checkFacts(facts)
	if err != nil {
		return err
	}
	p := filepath.Join(w.dir, FramesDir, FrameName(w.n))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return w.fail(err)
	}
	w.files = append(w.files, p)
	return w.addFacts(fb)
}

// FrameName is the file name of screen t in frames/: "%06d.png".
func FrameName(t int) string { return fmt.Sprintf("%06d.png", t) }

func (w *Writer) checkFacts(facts map[string]any) ([]byte, error) {
	if facts == nil {
		return nil, nil
	}
	b, err := canonicalFacts(facts)
	if err != nil {
		return nil, fmt.Errorf("recording: %s: screen %d: %w", w.dir, w.n, err)
	}
	return b, nil
}

// addFacts writes the facts of the screen just added and counts it.
func (w *Writer) addFacts(b []byte) error {
	w.n++
	if b == nil && w.facts == nil {
		w.noFacts++
		return nil
	}
	if w.facts == nil {
		var err error
		if w.facts, err = w.create(FactsFile); err != nil {
			return w.fail(err)
		}
		for i := 0; i < w.noFacts; i++ {
			w.facts.bw.WriteString("{}\n")
		}
	}
	if b == nil {
		b = []byte("{}")
	}
	w.facts.bw.Write(b)
	if err := w.facts.bw.WriteByte('\n'); err != nil {
		return w.fail(err)
	}
	return nil
}

// AddAction adds the action from the last screen to the next one.
func (w *Writer) AddAction(a Action) error {
	if err := w.ready(false); err != nil {
		return err
	}
	if _, err := a.Trajectory(); err != nil {
		return fmt.Errorf("recording: %s: action %d: %w", w.dir, w.na, err)
	}
	if err := w.actions.line(a); err != nil {
		return w.fail(err)
	}
	w.na++
	return nil
}

// AddTiming appends v as one line of timing.jsonl (recorder timings; import
// ignores them).
func (w *Writer) AddTiming(v map[string]any) error {
	if w.done {
		return errors.New("recording: the writer is closed")
	}
	if w.err != nil {
		return w.err
	}
	if w.timing == nil {
		var err error
		if w.timing, err = w.create(TimingFile); err != nil {
			return w.fail(err)
		}
	}
	if err := w.timing.line(v); err != nil {
		return fmt.Errorf("recording: %s: timing: %w", w.dir, err)
	}
	return nil
}

// Close checks that there are N >= 1 screens and N-1 actions, finishes the
// files and writes recording.json. A wrong count is returned without closing,
// so the missing screen can still be added; after any other error the folder
// is unfinished (no recording.json).
func (w *Writer) Close() error {
	if w.done {
		return nil
	}
	if w.err != nil {
		return w.err
	}
	if w.n == 0 {
		return fmt.Errorf("recording: %s: no screens", w.dir)
	}
	if w.na != w.n-1 {
		return fmt.Errorf("recording: %s: %d actions after %d screens: a recording ends with a screen", w.dir, w.na, w.n)
	}
	w.done = true
	var err error
	for _, l := range []*lineWriter{w.screens, w.actions, w.facts, w.timing} {
		if cerr := l.close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = atomicfile.Write(filepath.Join(w.dir, MetaFile), func(out io.Writer) error {
			b, err := json.MarshalIndent(w.meta, "", "  ")
			if err != nil {
				return err
			}
			_, err = out.Write(append(b, '\n'))
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("recording: %s: %w", w.dir, err)
	}
	return nil
}

// Abort closes the files and removes everything the writer created, the
// folder too if NewWriter made it.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	for _, l := range []*lineWriter{w.screens, w.actions, w.facts, w.timing} {
		if l != nil {
			l.f.Close()
		}
	}
	for i := len(w.files) - 1; i >= 0; i-- {
		os.Remove(w.files[i])
	}
	if w.made {
		os.Remove(w.dir)
	}
}
