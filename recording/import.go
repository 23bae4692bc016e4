package recording

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/memowm/memowm/screen"
	"github.com/memowm/memowm/trajectory"
)

// ImportOptions configures Import.
type ImportOptions struct {
	// Seed draws the question steps and choices (EpisodeQuestions). Default 0.
	Seed uint64
	// TextEncoder encodes text screens: screen.EncoderHash (the default,
	// also "") or screen.EncoderCells. Image screens ignore it.
	TextEncoder string
	// Progress, if not nil, is called from Import's goroutine after each
	// encoded observation with the count so far and the total over all
	// folders.
	Progress func(done, total int)
}

// ImportSummary says what Import wrote.
type ImportSummary struct {
	Episodes     int
	Observations int
	Questions    int
	// Screens counts the episodes by screen kind ("text", "image").
	Screens map[string]int
	// Kinds lists the recordings' sources (Meta.Kind), sorted, once each.
	Kinds []string
	// Encode is the time spent reading and encoding screens; Elapsed the
	// whole import.
	Encode, Elapsed time.Duration
}

// ScreensPerSecond is the encoding speed: observations over Encode.
func (s *ImportSummary) ScreensPerSecond() float64 {
	if s.Encode <= 0 {
		return 0
	}
	return float64(s.Observations) / s.Encode.Seconds()
}

// Import reads every folder in dirs (Read) and writes one episode per folder,
// ids 0..len(dirs)-1 in order, into the trajectory file out (format from its
// extension) and their questions (EpisodeQuestions) into
// trajectory.QuestionsPath(out). Every folder is checked before anything is
// written; on error neither file is left under its name.
func Import(dirs []string, out string, opt ImportOptions) (*ImportSummary, error) {
	start := time.Now()
	if len(dirs) == 0 {
		return nil, errors.New("recording: no recording folders to import")
	}
	if _, err := trajectory.FormatOf(out); err != nil {
		return nil, err
	}
	if err := CheckTextEncoder(opt.TextEncoder); err != nil {
		return nil, err
	}
	sum := &ImportSummary{Screens: map[string]int{}}
	recs := make([]*Recording, len(dirs))
	kinds := map[string]bool{}
	for i, d := range dirs {
		r, err := Read(d)
		if err != nil {
			return nil, err
		}
		r.TextEncoder = opt.TextEncoder
		if r.TextEncoder == screen.EncoderCells && r.Meta.Screen == ScreenText {
			if _, err := screen.NewCellLayout(r.Meta.Width, r.Meta.Height); err != nil {
				return nil, fmt.Errorf("recording: %s: %w", d, err)
			}
		}
		recs[i] = r
		sum.Observations += r.Steps
		sum.Screens[r.Meta.Screen]++
		kinds[r.Meta.Kind] = true
	}
	for k := range kinds {
		sum.Kinds = append(sum.Kinds, k)
	}
	sort.Strings(sum.Kinds)
	w, err := trajectory.Create(out, TrajectoryMeta())
	if err != nil {
		return nil, err
	}
	var qs []trajectory.Question
	done := 0
	tick := func() {
		done++
		if opt.Progress != nil {
			opt.Progress(done, sum.Observations)
		}
	}
	for i, r := range recs {
		// Row by row: an episode is never held as states.
		ep, dt, err := r.writeTo(w, int64(i), tick)
		if err != nil {
			return nil, err
		}
		sum.Encode += dt
		qs = append(qs, EpisodeQuestions(ep, opt.Seed)...)
		sum.Episodes++
	}
	// The questions are renamed into place with the trajectory.
	if err := w.SetQuestions(qs); err != nil {
		w.Abort()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	sum.Questions = len(qs)
	sum.Elapsed = time.Since(start)
	return sum, nil
}
