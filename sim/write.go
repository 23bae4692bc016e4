package sim

import (
	"github.com/memowm/memowm/trajectory"
)

// Result is what WriteFile produced.
type Result struct {
	Episodes  int
	Questions int
	Stats     Stats
}

// WriteFile generates cfg.Episodes episodes into path (format by extension)
// and their questions into trajectory.QuestionsPath(path). progress, if not
// nil, is called after each episode. On error nothing is left under either
// name.
func WriteFile(path string, cfg Config, progress func(done, total int)) (Result, error) {
	var res Result
	w, err := New(cfg)
	if err != nil {
		return res, err
	}
	out, err := trajectory.Create(path, w.Meta())
	if err != nil {
		return res, err
	}
	var qs []trajectory.Question
	for i := 0; i < cfg.Episodes; i++ {
		ep, q, st := w.Episode(i)
		if err := out.Write(ep); err != nil {
			return res, err
		}
		qs = append(qs, q...)
		res.Stats.Merge(st)
		res.Episodes++
		if progress != nil {
			progress(i+1, cfg.Episodes)
		}
	}
	// The questions are renamed into place with the trajectory.
	if err := out.SetQuestions(qs); err != nil {
		out.Abort()
		return res, err
	}
	if err := out.Close(); err != nil {
		return res, err
	}
	res.Questions = len(qs)
	return res, nil
}
