package worldmodel

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"time"

	"github.com/memowm/memowm/internal/atomicfile"
)

// A checkpoint is everything a Trainer needs to continue a run as if it had
// not stopped:
//
//	magic     [8]byte "MWMCKPT\n"
//	version   uint32 (2; version 1, without early stopping, is still read)
//	header    uint32 length + JSON: steps done, the TrainConfig, the
//	          training data's fingerprint and example count, and (version 2)
//	          the early-stopping state of a run with patience
//	weights   uint64 length + a weights file (Model.WriteTo)
//	moments   uint64 count P, then AdamW's m and v (P float32 each, little endian)
//	best      (version 2, when the header's early_stop has a step) the
//	          weights of the lowest evaluation so far, P float32
//	crc       uint32, CRC-32C of every byte before it
//
// The data order and the dropout masks are functions of the seed and the
// step, so they need no state. A run with patience or RunConfig.KeepBest
// resumed from a checkpoint keeps its lowest evaluation, its weights and the
// count of evaluations without a gain, so it stops where and with what the
// uninterrupted run would (a checkpoint written when the run stopped resumes
// as stopped; resumed with neither, the state is dropped). The weights are
// always the checkpoint's step's, which the moments go with (checkpoints
// written before KeepBest held the best weights there at the run's end); the
// best ones are their own section.
//
// A checkpoint records the wall-clock time spent training (header
// "seconds"); it is a record of the run, not part of any model's identity.

const (
	ckptMagic   = "MWMCKPT\n"
	ckptVersion = 2
)

// ErrCheckpoint: a file that is not a valid checkpoint, or one that does not
// belong to the training data it is resumed on.
var ErrCheckpoint = errors.New("worldmodel: invalid checkpoint")

type ckptHeader struct {
	Step        int         `json:"step"`
	Train       TrainConfig `json:"train"`
	Fingerprint uint32      `json:"data_crc32c"`
	Examples    int         `json:"examples"`
	// Seconds is the wall-clock time the run had spent in training when
	// the checkpoint was written (absent in checkpoints written before).
	Seconds float64 `json:"seconds,omitempty"`
	// EarlyStop is the early-stopping state (nil before a run's first
	// evaluation with patience).
	EarlyStop *ckptEarlyStop `json:"early_stop,omitempty"`
}

// ckptEarlyStop is earlyStop without its weights (which follow the moments).
type ckptEarlyStop struct {
	Step int       `json:"best_step"`
	Eval EvalStats `json:"best"`
	Ref  float64   `json:"ref_bits"`
	Bad  int       `json:"evals_without_gain"`
	// Stopped: the run had stopped on its plateau (the checkpoint's
	// weights are the best evaluation's); a resumed Run does nothing.
	Stopped bool `json:"stopped,omitempty"`
	// NoRef: only the starting weights of a continuation were evaluated
	// (Step 0); patience counts from the run's first evaluation.
	NoRef bool `json:"no_ref,omitempty"`
}

// WriteCheckpoint writes the trainer's state to w.
func (t *Trainer) WriteCheckpoint(w io.Writer) error {
	crc := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
	h := ckptHeader{Step: t.step, Train: t.tc, Fingerprint: t.fp, Examples: len(t.ex), Seconds: t.Elapsed().Seconds()}
	if t.es.has {
		h.EarlyStop = &ckptEarlyStop{Step: t.es.step, Eval: t.es.ev, Ref: t.es.ref, Bad: t.es.bad, Stopped: t.es.stopped, NoRef: t.es.noRef}
	}
	hdr, err := json.Marshal(h)
	if err != nil {
		return err
	}
	var b [8]byte
	bw.WriteString(ckptMagic)
	binary.LittleEndian.PutUint32(b[:4], ckptVersion)
	bw.Write(b[:4])
	binary.LittleEndian.PutUint32(b[:4], uint32(len(hdr)))
	bw.Write(b[:4])
	bw.Write(hdr)
	var wb bytes.Buffer
	if _, err := t.m.WriteTo(&wb); err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(b[:], uint64(wb.Len()))
	bw.Write(b[:])
	bw.Write(wb.Bytes())
	P := len(t.m.p.Data)
	binary.LittleEndian.PutUint64(b[:], uint64(P))
	bw.Write(b[:])
	m, v := t.opt.m, t.opt.v
	if m == nil {
		m, v = make([]float32, P), make([]float32, P)
	}
	sections := [][]float32{m, v}
	if h.EarlyStop != nil {
		sections = append(sections, t.es.w)
	}
	for _, s := range sections {
		for _, x := range s {
			binary.LittleEndian.PutUint32(b[:4], math.Float32bits(x))
			bw.Write(b[:4])
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(b[:4], crc.Sum32())
	_, err = w.Write(b[:4])
	return err
}

// SaveCheckpoint writes the checkpoint to path through a synced temporary
// file renamed over it (internal/atomicfile).
func (t *Trainer) SaveCheckpoint(path string) error {
	return atomicfile.Write(path, t.WriteCheckpoint)
}

// Checkpoint is a checkpoint read back: the model at Step steps and the
// state to continue.
type Checkpoint struct {
	Model *Model
	Step  int
	Train TrainConfig
	fp    uint32
	m, v  []float32
	es    *earlyStop // nil: none recorded
	// Elapsed is the wall-clock time the run had spent in training (0 in
	// checkpoints written before it was recorded).
	Elapsed time.Duration
}

// ReadCheckpoint reads a checkpoint. Damaged input gives an error wrapping
// ErrCheckpoint (and the weights file's errors), never a panic.
func ReadCheckpoint(r io.Reader) (*Checkpoint, error) {
	crc := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	br := bufio.NewReaderSize(r, 1<<20)
	tr := io.TeeReader(br, crc)
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrCheckpoint, fmt.Sprintf(format, args...))
	}
	short := func(err error) error {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: truncated: %w", ErrCheckpoint, io.ErrUnexpectedEOF)
		}
		return err
	}
	var b [16]byte
	if _, err := io.ReadFull(tr, b[:16]); err != nil {
		return nil, short(err)
	}
	if string(b[:8]) != ckptMagic {
		return nil, bad("bad magic")
	}
	if v := binary.LittleEndian.Uint32(b[8:12]); v != 1 && v != ckptVersion {
		return nil, bad("version %d (this build reads 1 and %d)", v, ckptVersion)
	}
	hl := binary.LittleEndian.Uint32(b[12:16])
	if hl > 1<<20 {
		return nil, bad("header of %d bytes", hl)
	}
	hdr := make([]byte, hl)
	if _, err := io.ReadFull(tr, hdr); err != nil {
		return nil, short(err)
	}
	var h ckptHeader
	if err := json.Unmarshal(hdr, &h); err != nil {
		return nil, bad("header: %v", err)
	}
	if _, err := io.ReadFull(tr, b[:8]); err != nil {
		return nil, short(err)
	}
	wl := binary.LittleEndian.Uint64(b[:8])
	lr := &io.LimitedReader{R: tr, N: int64(min(wl, 1<<40))}
	m, err := Read(lr)
	if err != nil {
		return nil, fmt.Errorf("%w: weights: %w", ErrCheckpoint, err)
	}
	if lr.N != 0 {
		return nil, bad("weights length %d does not match the weights file", wl)
	}
	if _, err := io.ReadFull(tr, b[:8]); err != nil {
		return nil, short(err)
	}
	P := len(m.p.Data)
	if n := binary.LittleEndian.Uint64(b[:8]); n != uint64(P) {
		return nil, bad("%d optimizer moments for %d parameters", n, P)
	}
	if !(h.Seconds >= 0 && h.Seconds < 1e12) {
		return nil, bad("training time %g s", h.Seconds)
	}
	ck := &Checkpoint{Model: m, Step: h.Step, Train: h.Train, fp: h.Fingerprint, Elapsed: time.Duration(h.Seconds * float64(time.Second))}
	ck.m, ck.v = make([]float32, P), make([]float32, P)
	sections := [][]float32{ck.m, ck.v}
	if e := h.EarlyStop; e != nil {
		if binary.LittleEndian.Uint32(b[8:12]) == 1 {
			return nil, bad("early stopping state in a version 1 checkpoint")
		}
		// Step 0 is the evaluation of trained starting weights (a run
		// with PriorSteps > 0).
		if e.Step < 0 || (e.Step == 0 && h.Train.PriorSteps == 0) || e.Step > h.Step || e.Bad < 0 || e.NoRef && e.Step != 0 {
			return nil, bad("early stopping at step %d (%d evaluations without a gain) in a checkpoint at step %d", e.Step, e.Bad, h.Step)
		}
		ck.es = &earlyStop{has: true, step: e.Step, ev: e.Eval, ref: e.Ref, bad: e.Bad, stopped: e.Stopped, noRef: e.NoRef, w: make([]float32, P)}
		sections = append(sections, ck.es.w)
	}
	raw := make([]byte, 4*P)
	for _, s := range sections {
		if _, err := io.ReadFull(tr, raw); err != nil {
			return nil, short(err)
		}
		for i := range s {
			s[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	sum := crc.Sum32()
	if _, err := io.ReadFull(br, b[:4]); err != nil {
		return nil, short(err)
	}
	if binary.LittleEndian.Uint32(b[:4]) != sum {
		return nil, bad("checksum mismatch")
	}
	if h.Step < 0 || h.Step > h.Train.Steps {
		return nil, bad("step %d of %d", h.Step, h.Train.Steps)
	}
	return ck, nil
}

// LoadCheckpoint reads the checkpoint at path.
func LoadCheckpoint(path string) (*Checkpoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ck, err := ReadCheckpoint(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ck, nil
}

// Resume returns a trainer that continues the checkpoint's run on seqs,
// which must be the data it was trained on (ErrCheckpoint otherwise). steps
// > 0 changes the run's length (and so its learning-rate schedule from here
// on); threads > 0 sets the goroutines.
func (ck *Checkpoint) Resume(seqs []Sequence, steps, threads int) (*Trainer, error) {
	return ck.ResumeOn(Seqs(seqs), steps, threads)
}

// ResumeOn is Resume on any corpus: the same data in memory or in a file
// have the same fingerprint.
func (ck *Checkpoint) ResumeOn(data Corpus, steps, threads int) (*Trainer, error) {
	tc := ck.Train
	if steps > 0 {
		if steps < ck.Step {
			return nil, fmt.Errorf("%w: the checkpoint is at step %d, past %d steps", ErrCheckpoint, ck.Step, steps)
		}
		tc.Steps = steps
	}
	tc.Threads = threads
	t, err := NewTrainerOn(ck.Model, data, tc)
	if err != nil {
		return nil, err
	}
	if t.fp != ck.fp {
		return nil, fmt.Errorf("%w: it was trained on other data (CRC-32C %08x, this data %08x)", ErrCheckpoint, ck.fp, t.fp)
	}
	t.step, t.elapsed = ck.Step, ck.Elapsed
	t.opt.m, t.opt.v = ck.m, ck.v
	if ck.es != nil {
		t.es, t.keepES = *ck.es, true
	}
	return t, nil
}
