package recording

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/memowm/memowm/screen"
	"github.com/memowm/memowm/trajectory"
)

// Shape is the geometry of the states the screen encoders give.
var Shape = trajectory.Shape{Slots: screen.Slots, Dim: screen.Dim, Codes: trajectory.DefaultShape.Codes}

// TrajectoryMeta is the trajectory.Meta of an imported file: states of Shape.
func TrajectoryMeta() trajectory.Meta {
	return trajectory.Meta{Shape: Shape, Content: trajectory.States}
}

// Episode builds the episode of the recording with the given id: every
// screen through the screen encoders (EncodeText or EncodeImage), the
// actions converted, and the facts as canonical JSON (nil without
// facts.jsonl).
func (r *Recording) Episode(id int64) (*trajectory.Episode, error) {
	ep, _, err := r.episode(id, nil)
	return ep, err
}

// episode is Episode with a progress call after each screen (from the
// calling goroutine) and the time spent reading and encoding screens.
func (r *Recording) episode(id int64, tick func()) (*trajectory.Episode, time.Duration, error) {
	if err := r.consistent(); err != nil {
		return nil, 0, err
	}
	acts, err := r.TrajectoryActions()
	if err != nil {
		return nil, 0, err
	}
	ep := &trajectory.Episode{ID: id, Actions: acts, Facts: r.Facts, States: make([][]float32, r.Steps)}
	buf := make([]float32, r.Steps*screen.Slots*screen.Dim)
	n := screen.Slots * screen.Dim
	start := time.Now()
	if r.Meta.Screen == ScreenText {
		for t := range r.Texts {
			s, err := r.encodeText(buf[t*n:t*n:(t+1)*n], r.Texts[t])
			if err != nil {
				return nil, 0, fmt.Errorf("recording: %s: %s line %d: %w", r.Dir, ScreensFile, t+1, err)
			}
			ep.States[t] = s
			if tick != nil {
				tick()
			}
		}
	} else if err := r.encodeFrames(r.Frames, ep.States, buf, tick); err != nil {
		return nil, 0, err
	}
	return ep, time.Since(start), nil
}

// CheckTextEncoder reports an unknown text encoder name.
func CheckTextEncoder(name string) error {
	switch name {
	case "", screen.EncoderHash, screen.EncoderCells:
		return nil
	}
	return fmt.Errorf("recording: unknown text encoder %q (want %s or %s)", name, screen.EncoderHash, screen.EncoderCells)
}

// encodeText encodes one text screen with r.TextEncoder.
func (r *Recording) encodeText(dst []float32, t screen.Text) ([]float32, error) {
	switch r.TextEncoder {
	case "", screen.EncoderHash:
		return screen.EncodeText(dst, t, r.Meta.Width, r.Meta.Height)
	case screen.EncoderCells:
		return screen.EncodeCells(dst, t, r.Meta.Width, r.Meta.Height)
	}
	return dst, CheckTextEncoder(r.TextEncoder)
}

// frameChunk is how many PNG frames writeTo decodes at once (in parallel):
// 4 MiB of states.
const frameChunk = 64

// writeTo writes the recording to w as episode id, one screen's state at a
// time (trajectory.Writer.WriteRows), so the episode is never held as states:
// text screens are encoded row by row, PNG frames frameChunk at a time on
// up to GOMAXPROCS goroutines. tick is called after each screen; it returns
// the episode (without states) and the time spent reading and encoding
// screens. On error w is aborted.
func (r *Recording) writeTo(w *trajectory.Writer, id int64, tick func()) (*trajectory.Episode, time.Duration, error) {
	if err := r.consistent(); err != nil {
		w.Abort()
		return nil, 0, err
	}
	acts, err := r.TrajectoryActions()
	if err != nil {
		w.Abort()
		return nil, 0, err
	}
	ep := &trajectory.Episode{ID: id, Actions: acts, Facts: r.Facts}
	n := screen.Slots * screen.Dim
	var spent time.Duration
	var chunk [][]float32
	var chunkBuf []float32
	chunkLo := 0
	state := func(t int, dst []float32) error {
		start := time.Now()
		defer func() {
			spent += time.Since(start)
			if tick != nil {
				tick()
			}
		}()
		if r.Meta.Screen == ScreenText {
			if _, err := r.encodeText(dst[:0:n], r.Texts[t]); err != nil {
				return fmt.Errorf("recording: %s: %s line %d: %w", r.Dir, ScreensFile, t+1, err)
			}
			return nil
		}
		if chunk == nil || t >= chunkLo+len(chunk) {
			hi := min(len(r.Frames), t+frameChunk)
			if chunkBuf == nil {
				chunkBuf = make([]float32, frameChunk*n)
			}
			chunk, chunkLo = make([][]float32, hi-t), t
			if err := r.encodeFrames(r.Frames[t:hi], chunk, chunkBuf, nil); err != nil {
				return err
			}
		}
		copy(dst, chunk[t-chunkLo])
		return nil
	}
	if err := w.WriteRows(ep, r.Steps, state); err != nil { // WriteRows aborts w on error
		return nil, 0, fmt.Errorf("recording: %s: %w", r.Dir, err)
	}
	return ep, spent, nil
}

// encodeFrames decodes and encodes the PNG frames (into states, backed by
// buf) on up to GOMAXPROCS
// goroutines. Each frame's state depends only on its file, so the result does
// not depend on the number of goroutines. The error is that of the first
// failing frame.
func (r *Recording) encodeFrames(frames []string, states [][]float32, buf []float32, tick func()) error {
	n := screen.Slots * screen.Dim
	errs := make([]error, len(frames))
	next := make(chan int)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(frames)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range next {
				s, err := r.decodeFrame(frames[t], buf[t*n:t*n:(t+1)*n])
				states[t], errs[t] = s, err
				done <- struct{}{}
			}
		}()
	}
	go func() {
		for t := range frames {
			next <- t
		}
		close(next)
	}()
	for range frames {
		<-done
		if tick != nil {
			tick()
		}
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeFrame reads and decodes the PNG at p and checks its size.
func (r *Recording) decodeFrame(p string, dst []float32) ([]float32, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("recording: %s: %v", p, err)
	}
	if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w != r.Meta.Width || h != r.Meta.Height {
		return nil, fmt.Errorf("recording: %s is %dx%d pixels, but %s says %dx%d", p, w, h, MetaFile, r.Meta.Width, r.Meta.Height)
	}
	s, err := screen.EncodeImage(dst, img)
	if err != nil {
		return nil, fmt.Errorf("recording: %s: %w", p, err)
	}
	return s, nil
}

// consistent checks the counts of a Recording that may have been built by
// hand rather than by Read.
func (r *Recording) consistent() error {
	screens := len(r.Texts)
	if r.Meta.Screen == ScreenImage {
		screens = len(r.Frames)
	}
	switch {
	case r.Meta.Screen != ScreenText && r.Meta.Screen != ScreenImage:
		return fmt.Errorf("recording: %s: screen kind %q, want %q or %q", r.Dir, r.Meta.Screen, ScreenText, ScreenImage)
	case r.Steps < 1 || screens != r.Steps:
		return fmt.Errorf("recording: %s: %d screens for %d steps", r.Dir, screens, r.Steps)
	case len(r.Actions) != r.Steps-1:
		return fmt.Errorf("recording: %s: %d actions for %d screens (want %d)", r.Dir, len(r.Actions), r.Steps, r.Steps-1)
	case r.Facts != nil && len(r.Facts) != r.Steps:
		return fmt.Errorf("recording: %s: %d facts for %d screens", r.Dir, len(r.Facts), r.Steps)
	}
	return nil
}
