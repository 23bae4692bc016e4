package sim

import (
	"fmt"

	"github.com/memowm/memowm/trajectory"
)

// Result is what WriteFile produced.
type Result struct {
	Episodes     int
	Observations int64
	Questions    int
	Stats        Stats
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
	// Quantize, if not nil, turns states into codes: n consecutive states
	// (n*StateLen values) into n*Meta.Shape.Codes codes in dst (an
	// opq.Encoder's EncodeBatch). The file then holds codes, and Meta is its
	// metadata (Content Codes, the quantizer's digest): a corpus of many
	// episodes costs its codes on disk, not its states. States are made and
	// quantized QuantizeBatch at a time; an episode is held as codes only
	// (trajectory.CodeRows).
	Quantize func(dst []uint8, states []float32) error
	Meta     trajectory.Meta
}

// QuantizeBatch is the number of states WriteFileWith hands to
// WriteOptions.Quantize at once (fewer at the end of an episode).
const QuantizeBatch = 64

// WriteFileWith is WriteFile with options: progress and quantization as
// the episodes are generated. No episode is ever held as states: each
// observation's state is made as its row is written (or as its batch is
// quantized), so memory does not grow with the episodes' length beyond
// their actions, facts and codes.
func WriteFileWith(path string, cfg Config, opt WriteOptions) (Result, error) {
	var res Result
	w, err := New(cfg)
	if err != nil {
		return res, err
	}
	meta := w.Meta()
	if opt.Quantize != nil {
		meta = opt.Meta
		if meta.Content != trajectory.Codes || meta.Shape.Slots != cfg.Shape.Slots || meta.Shape.Dim != cfg.Shape.Dim {
			return res, fmt.Errorf("sim: quantizing %v states into a file of %s of %v", cfg.Shape, meta.Content, meta.Shape)
		}
	}
	out, err := trajectory.Create(path, meta)
	if err != nil {
		return res, err
	}
	qs, err := writeEpisodes(out, w, opt, &res)
	if err != nil {
		out.Abort()
		return res, err
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

// episodeWriter is where writeEpisodes puts episodes: a trajectory.Writer.
type episodeWriter interface {
	Write(ep *trajectory.Episode) error
	WriteRows(ep *trajectory.Episode, n int, state func(t int, dst []float32) error) error
}

// writeEpisodes generates w's episodes into out, states row by row (or
// codes batch by batch), and returns their questions.
func writeEpisodes(out episodeWriter, w *World, opt WriteOptions, res *Result) ([]trajectory.Question, error) {
	var q *quantizer
	if opt.Quantize != nil {
		q = newQuantizer(opt.Meta.Shape, opt.Quantize)
	}
	var qs []trajectory.Question
	for i := 0; i < w.cfg.Episodes; i++ {
		rows := w.EpisodeRows(i)
		var err error
		if q != nil {
			err = q.write(out, rows)
		} else {
			err = out.WriteRows(rows.Episode, rows.Len(), rows.State)
		}
		if err != nil {
			return nil, err
		}
		qs = append(qs, rows.Questions...)
		res.Stats.Merge(rows.Stats)
		res.Episodes++
		res.Observations += int64(rows.Len())
		if opt.Progress != nil {
			opt.Progress(i+1, w.cfg.Episodes)
		}
	}
	return qs, nil
}

// quantizer makes an episode's codes QuantizeBatch states at a time, in
// buffers reused across episodes.
type quantizer struct {
	shape  trajectory.Shape
	f      func(dst []uint8, states []float32) error
	states []float32
	codes  []uint8
}

func newQuantizer(shape trajectory.Shape, f func(dst []uint8, states []float32) error) *quantizer {
	return &quantizer{shape: shape, f: f,
		states: make([]float32, QuantizeBatch*shape.StateLen()), codes: make([]uint8, QuantizeBatch*shape.Codes)}
}

// write quantizes rows's states and writes the episode as compact codes.
func (q *quantizer) write(out episodeWriter, rows *Rows) error {
	sl, nc, n := q.shape.StateLen(), q.shape.Codes, rows.Len()
	cr := trajectory.NewCodeRows(nc, q.shape.Slots)
	for lo := 0; lo < n; lo += QuantizeBatch {
		k := min(QuantizeBatch, n-lo)
		for j := range k {
			if err := rows.State(lo+j, q.states[j*sl:(j+1)*sl]); err != nil {
				return err
			}
		}
		if err := q.f(q.codes[:k*nc], q.states[:k*sl]); err != nil {
			return fmt.Errorf("sim: episode %d: %w", rows.Episode.ID, err)
		}
		for j := range k {
			cr.Append(q.codes[j*nc : (j+1)*nc])
		}
	}
	ep := *rows.Episode
	ep.Compact = cr
	return out.Write(&ep)
}
