package trajectory

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// Summary is what inspect reports about a trajectory file.
type Summary struct {
	Path         string           `json:"path"`
	Format       string           `json:"format"`
	SizeBytes    int64            `json:"size_bytes"`
	Content      string           `json:"content"`
	Shape        Shape            `json:"shape"`
	Episodes     int              `json:"episodes"`
	Observations int64            `json:"observations"`
	Transitions  int64            `json:"transitions"`
	MinObs       int              `json:"min_observations_per_episode"`
	MaxObs       int              `json:"max_observations_per_episode"`
	WithFacts    int64            `json:"observations_with_facts"`
	Actions      map[string]int64 `json:"actions"`   // count per action type, all 17 listed
	Questions    int              `json:"questions"` // -1: no question file beside it
}

// Summarize reads path once, streaming, and validates every episode on the way.
// A .npy export is summarised from its header and its index file.
func Summarize(path string) (*Summary, error) {
	format, err := FormatOf(path)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("trajectory: %w", err)
	}
	s := &Summary{Path: path, Format: format.String(), SizeBytes: st.Size(), Questions: -1, Actions: map[string]int64{}}
	for _, n := range ActionTypeNames() {
		s.Actions[n] = 0
	}
	if format == NumPy {
		err = s.npy(path)
	} else {
		err = s.stream(path)
	}
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(QuestionsPath(path)); err == nil {
		qs, err := ReadQuestions(QuestionsPath(path))
		if err != nil {
			return nil, err
		}
		s.Questions = len(qs)
	}
	return s, nil
}

func (s *Summary) stream(path string) error {
	r, err := Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	s.Content, s.Shape = r.Meta().Content.String(), r.Meta().Shape
	for {
		ep, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		s.record(ep.Len())
		s.Observations += int64(ep.Len())
		s.Transitions += int64(len(ep.Actions))
		for _, a := range ep.Actions {
			s.Actions[a.Type.String()]++
		}
		for _, f := range ep.Facts {
			if f != nil {
				s.WithFacts++
			}
		}
	}
}

func (s *Summary) npy(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("trajectory: %w", err)
	}
	defer f.Close()
	h, err := ReadNPYHeader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case h.Descr == "<f4" && len(h.Shape) == 3:
		s.Content, s.Shape = States.String(), Shape{Slots: h.Shape[1], Dim: h.Shape[2]}
	case h.Descr == "|u1" && len(h.Shape) == 2:
		s.Content, s.Shape = Codes.String(), Shape{Codes: h.Shape[1]}
	default:
		return fmt.Errorf("trajectory: %s: %w: npy array %s %v is neither states (N,S,D) <f4 nor codes (N,J) |u1", path, ErrFormat, h.Descr, h.Shape)
	}
	s.Observations = int64(h.Shape[0])
	// Episodes come from the index file, when it is there.
	idx, err := os.Open(IndexPath(path))
	if err != nil {
		return nil
	}
	defer idx.Close()
	ih, err := ReadNPYHeader(idx)
	if err != nil || ih.Descr != "<i8" || len(ih.Shape) != 2 || ih.Shape[1] != 2 {
		return fmt.Errorf("trajectory: %s: %w: bad index file", IndexPath(path), ErrFormat)
	}
	var pair [16]byte
	var last int64
	n := 0
	for i := 0; i < ih.Shape[0]; i++ {
		if _, err := io.ReadFull(idx, pair[:]); err != nil {
			return fmt.Errorf("trajectory: %s: %w: %w", IndexPath(path), ErrFormat, err)
		}
		ep, step := int64(binary.LittleEndian.Uint64(pair[:8])), int64(binary.LittleEndian.Uint64(pair[8:]))
		if i == 0 || ep != last {
			if step != 0 {
				return invalid(ep, int(step), "index: episode does not start at step 0")
			}
			if i > 0 {
				s.record(n)
			}
			last, n = ep, 0
		}
		n++
	}
	if n > 0 {
		s.record(n)
	}
	s.Transitions = s.Observations - int64(s.Episodes)
	return nil
}

func (s *Summary) record(n int) {
	if s.Episodes == 0 || n < s.MinObs {
		s.MinObs = n
	}
	s.MaxObs = max(s.MaxObs, n)
	s.Episodes++
}
