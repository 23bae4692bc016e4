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

// WriteQuestions writes qs to path as JSON Lines, one question a line, through
// a temporary file renamed on success.
func WriteQuestions(path string, qs []Question) error {
	tmp, err := createTemp(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(tmp)
	enc := json.NewEncoder(bw)
	for i := range qs {
		if err := qs[i].Validate(); err != nil {
			tmp.abort()
			return fmt.Errorf("trajectory: question %d (episode %d step %d): %w", i, qs[i].Episode, qs[i].Step, err)
		}
		if err := enc.Encode(&qs[i]); err != nil {
			tmp.abort()
			return fmt.Errorf("trajectory: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		tmp.abort()
		return fmt.Errorf("trajectory: %w", err)
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

// DecodeQuestions reads JSON Lines questions from r; name is used in errors.
func DecodeQuestions(r io.Reader, name string) ([]Question, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var qs []Question
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var q Question
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q); err != nil {
			return nil, fmt.Errorf("trajectory: %s line %d: %w", name, line, err)
		}
		if err := q.Validate(); err != nil {
			return nil, fmt.Errorf("trajectory: %s line %d: %w", name, line, err)
		}
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("trajectory: %s: %w", name, err)
	}
	return qs, nil
}
