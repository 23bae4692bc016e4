package trajectory

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Question asks about the ground truth of one observation. A reader answers it
// from the (reconstructed) states of the episode up to and including Step.
type Question struct {
	Episode int64    `json:"episode"`
	Step    int      `json:"step"`     // the observation o_Step whose facts it asks about
	Kind    string   `json:"kind"`     // what is asked: typed, selected, checked, page...
	Subject string   `json:"subject"`  // which widget, e.g. "field:email"
	Text    string   `json:"question"` // the question in words
	Answer  string   `json:"answer"`
	Choices []string `json:"choices"` // the candidate answers; Answer is one of them
}

// Validate checks that the question is complete and its answer among its choices.
func (q *Question) Validate() error {
	if q.Step < 0 || q.Kind == "" || q.Text == "" {
		return errors.New("question lacks a step, kind or text")
	}
	for _, c := range q.Choices {
		if c == q.Answer {
			return nil
		}
	}
	return fmt.Errorf("answer %q is not among the %d choices", q.Answer, len(q.Choices))
}

// SetQuestions gives the questions to write beside the file, at
// QuestionsPath, when Close succeeds. They are validated now. Close writes them
// under a temporary name first and renames the pair only when both are
// complete; if the questions cannot be renamed into place, the trajectory is
// removed again, so a trajectory never stands without its questions.
// Without SetQuestions, Close removes a questions file left beside the final
// name by an earlier file, which would describe other episodes.
func (w *Writer) SetQuestions(qs []Question) error {
	for i := range qs {
		if err := qs[i].Validate(); err != nil {
			return fmt.Errorf("trajectory: question %d (episode %d step %d): %w", i, qs[i].Episode, qs[i].Step, err)
		}
	}
	w.qs, w.hasQ = qs, true
	return nil
}

// commitWithQuestions renames the finished trajectory into place with its
// questions (or removes stale ones).
func (w *Writer) commitWithQuestions() error {
	qpath := QuestionsPath(w.tmp.final)
	if !w.hasQ {
		if err := w.tmp.commit(); err != nil {
			return err
		}
		if err := os.Remove(qpath); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("trajectory: %s: removing the stale questions file: %w", w.tmp.final, err)
		}
		return nil
	}
	qtmp, err := createTemp(qpath)
	if err != nil {
		w.tmp.abort()
		return err
	}
	if err := encodeQuestions(qtmp, w.qs); err != nil {
		qtmp.abort()
		w.tmp.abort()
		return err
	}
	if err := qtmp.Sync(); err != nil {
		qtmp.abort()
		w.tmp.abort()
		return fmt.Errorf("trajectory: %w", err)
	}
	if err := w.tmp.commit(); err != nil {
		qtmp.abort()
		return err
	}
	if err := qtmp.commit(); err != nil {
		os.Remove(w.tmp.final)
		os.Remove(qpath)
		return fmt.Errorf("%w (the trajectory was removed again: it would have stood without its questions)", err)
	}
	return nil
}

// encodeQuestions writes qs as JSON Lines.
func encodeQuestions(f io.Writer, qs []Question) error {
	bw := bufio.NewWriter(f)
	enc := json.NewEncoder(bw)
	for i := range qs {
		if err := qs[i].Validate(); err != nil {
			return fmt.Errorf("trajectory: question %d (episode %d step %d): %w", i, qs[i].Episode, qs[i].Step, err)
		}
		if err := enc.Encode(&qs[i]); err != nil {
			return fmt.Errorf("trajectory: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("trajectory: %w", err)
	}
	return nil
}

// WriteQuestions writes qs to path as JSON Lines, one question a line, through
// a temporary file renamed on success.
func WriteQuestions(path string, qs []Question) error {
	tmp, err := createTemp(path)
	if err != nil {
		return err
	}
	if err := encodeQuestions(tmp, qs); err != nil {
		tmp.abort()
		return err
	}
	return tmp.commit()
}

// ReadQuestions reads a JSON Lines question file. Errors name the line.
func ReadQuestions(path string) ([]Question, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trajectory: %w", err)
	}
	defer f.Close()
	return DecodeQuestions(f, path)
}

// MaxQuestionLine is the longest line DecodeQuestions accepts, in bytes; a
// longer line is an error wrapping ErrLimit.
const MaxQuestionLine = 1 << 20

// DecodeQuestions reads JSON Lines questions from r; name is used in errors,
// which name the line.
func DecodeQuestions(r io.Reader, name string) ([]Question, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxQuestionLine+1)
	var qs []Question
	line := 1
	for ; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var q Question
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q); err != nil {
			return nil, fmt.Errorf("trajectory: %s line %d: %w: %w", name, line, ErrFormat, unexpected(err))
		}
		if dec.More() {
			return nil, fmt.Errorf("trajectory: %s line %d: %w: more than one JSON value on the line", name, line, ErrFormat)
		}
		if err := q.Validate(); err != nil {
			return nil, fmt.Errorf("trajectory: %s line %d: %w: %w", name, line, ErrFormat, err)
		}
		qs = append(qs, q)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("trajectory: %s line %d: %w: %w: longer than %d bytes", name, line, ErrFormat, ErrLimit, MaxQuestionLine)
	} else if err != nil {
		return nil, notEOF(fmt.Errorf("trajectory: %s: %w", name, err))
	}
	return qs, nil
}
