package trajectory

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// Summary is what inspect reports about a trajectory file.
type Summary struct {
	Path         string           `json:"in"`
	Format       string           `json:"format"`
	SizeBytes    int64            `json:"file_bytes"`
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
	// Checksummed says every episode was checked against the checksum its
	// writer stored; false for files from other tools, from memowm before
	// checksums, and for .npy exports.
	Checksummed bool `json:"checksummed"`
	// NPYActions says a .npy export has its actions beside it (ActionsPath),
	// counted in Actions; exports from before it have none.
	NPYActions bool `json:"npy_actions,omitempty"`
}

// Summarize reads path once, streaming, and validates every episode on the way.
// A .npy export is summarised from its header and its index file.
func Summarize(path string, opts ...Option) (*Summary, error) {
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
		err = s.stream(path, opts)
	}
	if err != nil {
		return nil, notEOF(err)
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

func (s *Summary) stream(path string, opts []Option) error {
	r, err := Open(path, opts...)
	if err != nil {
		return err
	}
	defer r.Close()
	s.Content, s.Shape = r.Meta().Content.String(), r.Meta().Shape
	s.Checksummed = r.Checksummed()
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
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("trajectory: %w", err)
	}
	// Episodes come from the index file, when it is there.
	idx, err := os.Open(IndexPath(path))
	if err != nil {
		return s.npyFrom(f, st.Size(), nil, 0, path)
	}
	defer idx.Close()
	ist, err := idx.Stat()
	if err != nil {
		return fmt.Errorf("trajectory: %w", err)
	}
	if err := s.npyFrom(f, st.Size(), idx, ist.Size(), path); err != nil {
		return err
	}
	return s.npyActions(ActionsPath(path))
}

// npyActions counts the actions of a .npy export's actions file, when there
// is one, checking its shape against the transitions the index counted.
func (s *Summary) npyActions(apath string) error {
	f, err := os.Open(apath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("trajectory: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("trajectory: %w", err)
	}
	sr := io.NewSectionReader(f, 0, st.Size())
	h, off, err := readNPYHeader(sr)
	if err != nil || h.Descr != "<f8" || len(h.Shape) != 2 || h.Shape[1] != ActionColumns || int64(h.Shape[0]) != s.Transitions {
		return fmt.Errorf("trajectory: %s: %w: bad actions file (%v %v for %d transitions)", apath, ErrFormat, h.Descr, h.Shape, s.Transitions)
	}
	if err := checkNPYSize(h, st.Size()-off); err != nil {
		return fmt.Errorf("trajectory: %s: %w", apath, err)
	}
	names := ActionTypeNames()
	br := bufio.NewReader(sr)
	row := make([]byte, 8*ActionColumns)
	for i := 0; i < h.Shape[0]; i++ {
		if _, err := io.ReadFull(br, row); err != nil {
			return fmt.Errorf("trajectory: %s: %w: action %d of %d: %w", apath, ErrFormat, i, h.Shape[0], unexpected(err))
		}
		typ := math.Float64frombits(binary.LittleEndian.Uint64(row[16:]))
		if !(typ >= 0 && int(typ) < len(names) && float64(int(typ)) == typ) {
			return fmt.Errorf("trajectory: %s: %w: action %d has type %g", apath, ErrFormat, i, typ)
		}
		s.Actions[names[int(typ)]]++
	}
	s.NPYActions = true
	return nil
}

// npyFrom summarises a .npy export of obsSize bytes and its index file (nil
// when there is none); name is the export's path, for errors.
func (s *Summary) npyFrom(obs io.ReaderAt, obsSize int64, idx io.ReaderAt, idxSize int64, name string) error {
	h, off, err := readNPYHeader(io.NewSectionReader(obs, 0, obsSize))
	if err != nil {
		return fmt.Errorf("trajectory: %s: %w", name, err)
	}
	switch {
	case h.Descr == "<f4" && len(h.Shape) == 3:
		s.Content, s.Shape = States.String(), Shape{Slots: h.Shape[1], Dim: h.Shape[2]}
	case h.Descr == "|u1" && len(h.Shape) == 2:
		s.Content, s.Shape = Codes.String(), Shape{Codes: h.Shape[1]}
	default:
		return fmt.Errorf("trajectory: %s: %w: npy array %s %v is neither states (N,S,D) <f4 nor codes (N,J) |u1", name, ErrFormat, h.Descr, h.Shape)
	}
	if err := checkNPYSize(h, obsSize-off); err != nil {
		return fmt.Errorf("trajectory: %s: %w", name, err)
	}
	s.Observations = int64(h.Shape[0])
	if idx == nil {
		return nil
	}
	iname := IndexPath(name)
	sr := io.NewSectionReader(idx, 0, idxSize)
	ih, ioff, err := readNPYHeader(sr)
	if err != nil || ih.Descr != "<i8" || len(ih.Shape) != 2 || ih.Shape[1] != 2 || ih.Shape[0] != h.Shape[0] {
		return fmt.Errorf("trajectory: %s: %w: bad index file (%v %v for %d observations)", iname, ErrFormat, ih.Descr, ih.Shape, h.Shape[0])
	}
	if err := checkNPYSize(ih, idxSize-ioff); err != nil {
		return fmt.Errorf("trajectory: %s: %w", iname, err)
	}
	br := bufio.NewReader(sr)
	var pair [16]byte
	var last, want int64
	n := 0
	for i := 0; i < ih.Shape[0]; i++ {
		if _, err := io.ReadFull(br, pair[:]); err != nil {
			return fmt.Errorf("trajectory: %s: %w: row %d of %d: %w", iname, ErrFormat, i, ih.Shape[0], unexpected(err))
		}
		ep, step := int64(binary.LittleEndian.Uint64(pair[:8])), int64(binary.LittleEndian.Uint64(pair[8:]))
		if i == 0 || ep != last {
			if step != 0 {
				return invalid(ep, int(step), "index: episode does not start at step 0")
			}
			if i > 0 {
				s.record(n)
			}
			last, n, want = ep, 0, 0
		}
		if step != want {
			return invalid(ep, int(step), "index: step %d follows step %d", step, want-1)
		}
		want++
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
