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
	return WriteFileWith(path, cfg, WriteOptions{Progress: progress})
}

// WriteOptions configure WriteFileWith.
type WriteOptions struct {
	// Progress, if not nil, is called after each episode.
	Progress func(done, total int)
	// Quantize, if not nil, turns each generated episode's states into
	// codes before it is written (an episode is never held longer than
	// that), and Meta is then the file's metadata (Content Codes, the
	// quantizer's digest): a corpus of many episodes costs its codes on
	// disk, not its states.
	Quantize func(ep *trajectory.Episode) error
	Meta     trajectory.Meta
}

// WriteFileWith is WriteFile with options: progress and quantization as
// the episodes are generated.
func WriteFileWith(path string, cfg Config, opt WriteOptions) (Result, error) {
	var res Result
	w, err := New(cfg)
	if err != nil {
		return res, err
	}
	meta := w.Meta()
	if opt.Quantize != nil {
		meta = opt.Meta
	}
	out, err := trajectory.Create(path, meta)
	if err != nil {
		return res, err
	}
	var qs []trajectory.Question
	for i := 0; i < cfg.Episodes; i++ {
		ep, q, st := w.Episode(i)
		if opt.Quantize != nil {
			if err := opt.Quantize(ep); err != nil {
				out.Abort()
				return res, err
			}
		}
		if err := out.Write(ep); err != nil {
			out.Abort()
			return res, err
		}
		qs = append(qs, q...)
		res.Stats.Merge(st)
		res.Episodes++
		if opt.Progress != nil {
			opt.Progress(i+1, cfg.Episodes)
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
