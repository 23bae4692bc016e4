package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/memowm/memowm/codec"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/trajectory"
)

// stateQuality is what encode says of the states a memory file gives back:
// measured on this input, against the states it read (or, for a codes file,
// against the states its codes decode to), in the file's reconstruction
// (every kept code, and the model's fill where a code was omitted).
type stateQuality struct {
	opq.Quality
	// Against is what the decoded states were compared with: "input
	// states" or "input codes' states" (a codes file has no states).
	Against string
}

// quantizeMetered returns a trajectory.WithQuantize function that encodes
// states through enc (q's encoder) and, with meter, adds every state and
// its reconstruction to meter, decoding a few states at a time so that its
// buffer stays small. encoded, when not nil, adds up the time spent
// encoding (not measuring).
func quantizeMetered(q *opq.Quantizer, enc *opq.Encoder, meter *opq.QualityMeter, encoded *time.Duration) func(dst []uint8, states []float32) error {
	sl, nc := q.Shape().StateLen(), q.Shape().Codes
	var rec []float32
	return func(dst []uint8, states []float32) error {
		if len(states)%sl != 0 || len(dst) != len(states)/sl*nc {
			return fmt.Errorf("%d values are not states of %v", len(states), q.Shape())
		}
		t0 := time.Now()
		err := enc.EncodeBatch(dst, states)
		if encoded != nil {
			*encoded += time.Since(t0)
		}
		if err != nil || meter == nil {
			return err
		}
		const per = 16
		for lo := 0; lo < len(states); lo += per * sl {
			hi := min(len(states), lo+per*sl)
			rec = slices.Grow(rec[:0], hi-lo)[:hi-lo]
			if err := enc.DecodeBatch(rec, dst[lo/sl*nc:hi/sl*nc]); err != nil {
				return err
			}
			for i := 0; i < len(rec); i += sl {
				meter.Add(states[lo+i:lo+i+sl], rec[i:i+sl])
			}
		}
		return nil
	}
}

// reconSpill keeps a lossy encode's reconstructed codes (one byte per code,
// in the order the episodes were written) in a temporary file, so that
// their quality is measured after the encode in bounded memory, whatever
// the file's length.
type reconSpill struct {
	f     *os.File
	w     *bufio.Writer
	rows  int
	nc    int
	named string // the file's name while it has one (see newReconSpill)
}

func newReconSpill(dir string, codes int) (*reconSpill, error) {
	f, err := os.CreateTemp(dir, ".memowm-recon-*")
	if err != nil {
		f, err = os.CreateTemp("", ".memowm-recon-*")
	}
	if err != nil {
		return nil, fmt.Errorf("measuring the decoded states: %w", err)
	}
	s := &reconSpill{f: f, w: bufio.NewWriterSize(f, 1<<20), nc: codes}
	// Unnamed at once where the system allows it, as codec's coder streams
	// are, so that an interrupted encode leaves nothing behind.
	if os.Remove(f.Name()) != nil {
		s.named = f.Name()
	}
	return s, nil
}

// add appends the reconstructions of written episodes.
func (s *reconSpill) add(st []codec.EpisodeStats) error {
	for _, e := range st {
		for _, row := range e.Recon {
			if len(row) != s.nc {
				return fmt.Errorf("measuring the decoded states: episode %d has %d codes per state, want %d", e.ID, len(row), s.nc)
			}
			if _, err := s.w.Write(row); err != nil {
				return fmt.Errorf("measuring the decoded states: %w", err)
			}
			s.rows++
		}
	}
	return nil
}

func (s *reconSpill) close() {
	s.f.Close()
	if s.named != "" {
		os.Remove(s.named)
	}
}

// measure reads the input trajectories in again and compares every state
// with its reconstruction in the spill, decoded through q. The episodes
// must come in the order they were written.
func (s *reconSpill) measure(q *opq.Quantizer, in string) (stateQuality, error) {
	if err := s.w.Flush(); err != nil {
		return stateQuality{}, fmt.Errorf("measuring the decoded states: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return stateQuality{}, fmt.Errorf("measuring the decoded states: %w", err)
	}
	rd := bufio.NewReaderSize(s.f, 1<<20)
	sl, nc := q.Shape().StateLen(), q.Shape().Codes
	enc := q.NewEncoder()
	meter := opq.NewQualityMeter(sl)
	var codes []uint8
	var rec, ref []float32
	read := 0
	// next decodes the next n reconstructions into rec.
	next := func(n int) error {
		if read+n > s.rows {
			return fmt.Errorf("measuring the decoded states: %s holds more states than were encoded (%d)", in, s.rows)
		}
		codes = slices.Grow(codes[:0], n*nc)[:n*nc]
		if _, err := io.ReadFull(rd, codes); err != nil {
			return fmt.Errorf("measuring the decoded states: %w", err)
		}
		read += n
		rec = slices.Grow(rec[:0], n*sl)[:n*sl]
		return enc.DecodeBatch(rec, codes)
	}
	sq := stateQuality{Against: "input states"}
	// States are compared as the reader meets them (WithQuantize), so no
	// episode is ever held as states; the codes it makes are not needed.
	r, err := trajectory.Open(in, append(trajOpts(), trajectory.WithQuantize(nc, func(_ []uint8, states []float32) error {
		n := len(states) / sl
		if err := next(n); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			meter.Add(states[i*sl:(i+1)*sl], rec[i*sl:(i+1)*sl])
		}
		return nil
	}))...)
	if err != nil {
		return stateQuality{}, err
	}
	defer r.Close()
	codesIn := r.Meta().Content == trajectory.Codes
	if codesIn {
		sq.Against = "input codes' states"
	}
	r.SetCompact(true)
	r.SetFacts(false)
	var row []uint8
	for {
		ep, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return stateQuality{}, err
		}
		if !codesIn {
			continue
		}
		for t := 0; t < ep.Len(); t++ {
			row = ep.CodesAt(row, t)
			ref = slices.Grow(ref[:0], sl)[:sl]
			if err := enc.DecodeBatch(ref, row); err != nil {
				return stateQuality{}, err
			}
			if err := next(1); err != nil {
				return stateQuality{}, err
			}
			meter.Add(ref, rec)
		}
	}
	if read != s.rows {
		return stateQuality{}, fmt.Errorf("measuring the decoded states: %s holds %d states, %d were encoded", in, read, s.rows)
	}
	sq.Quality = meter.Quality()
	return sq, nil
}
