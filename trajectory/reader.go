package trajectory

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Reader streams the episodes of an Arrow IPC or Parquet trajectory file,
// validating every row. It holds one record batch and one episode at a time.
type Reader struct {
	name   string // the path, or the name given to NewReader, for errors
	format Format
	meta   Meta
	cols   columns
	file   io.Closer // the file Open opened; nil for NewReader
	src    batchSource

	sums []uint32 // episode checksums, in file order; nil when the file has none
	nEp  int      // episodes returned so far

	quant   func(dst []uint8, state []float32) error // WithQuantize; nil: keep states
	codes   int                                      // codes per state for quant
	compact bool                                     // SetCompact
	noFacts bool                                     // SetFacts(false)
	zbuf    []uint8                                  // one row's codes, for quant into Compact
	fconv   []float32                                // one row's state, converted from a float64 column
	cconv   []uint8                                  // one row's codes, converted from another integer column
	qcodes  []uint8                                  // the codes of the current batch's first qn rows (prequantize)
	qn      int

	rec     arrow.RecordBatch // current batch, owned by src
	row     int               // next row of rec
	cur     *Episode          // episode being assembled
	curSum  sumState          // cur's checksum so far
	doneSum uint32            // the checksum of the episode addRow just completed
	seen    map[int64]bool    // ids of completed episodes
	err     error             // sticky
}

// batchSource yields record batches until io.EOF. A batch is valid until the
// next call.
type batchSource interface {
	next() (arrow.RecordBatch, error)
	schema() *arrow.Schema
	close() error
}

// Open opens the trajectory file at path (.arrow or .parquet) and checks its
// structure and schema. The Reader must be closed.
func Open(path string, opts ...Option) (*Reader, error) {
	format, err := FormatOf(path)
	if err != nil {
		return nil, err
	}
	if format == NumPy {
		return nil, fmt.Errorf("trajectory: %s: .npy files are an export without actions and cannot be read as trajectories", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("trajectory: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("trajectory: %w", err)
	}
	r, err := NewReader(f, st.Size(), format, path, opts...)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	return r, nil
}

// NewReader reads a trajectory file of the given format (Arrow or Parquet)
// and size from ra; name is used in errors. Closing the Reader does not
// close ra.
func NewReader(ra io.ReaderAt, size int64, format Format, name string, opts ...Option) (r *Reader, err error) {
	o, err := newReadOptions(size, opts)
	if err != nil {
		return nil, err
	}
	if format != Arrow && format != Parquet {
		return nil, fmt.Errorf("trajectory: %s: %v files cannot be read as trajectories", name, format)
	}
	var src batchSource
	defer func() {
		if p := recover(); p != nil {
			err = damaged(name, p)
		}
		if err != nil && src != nil {
			src.close()
		}
		if err != nil {
			r, err = nil, notEOF(err)
		}
	}()
	alloc := &cappedAllocator{Allocator: memory.DefaultAllocator, max: o.maxAlloc}
	var sums []uint32
	switch format {
	case Arrow:
		var s *arrowSource
		if s, sums, err = openArrow(ra, size, alloc); err == nil {
			src = s
		}
	case Parquet:
		var s *parquetSource
		if s, sums, err = openParquet(ra, size, alloc); err == nil {
			src = s
		}
	}
	if err != nil {
		return nil, fmt.Errorf("trajectory: %s: %w: %w", name, ErrFormat, err)
	}
	schema := src.schema()
	meta, cols, err := metaFromSchema(schema)
	if err != nil {
		return nil, inFile(name, err)
	}
	if v, ok := schema.Metadata().GetValue(metaChecksum); ok && v != checksumKind {
		return nil, fmt.Errorf("trajectory: %s: %w: checksum kind %q is not %q", name, ErrFormat, v, checksumKind)
	} else if ok && sums == nil {
		return nil, fmt.Errorf("trajectory: %s: %w: %w: the schema says the file carries episode checksums, but they are missing (the file is damaged or truncated)", name, ErrFormat, ErrChecksum)
	}
	var first arrow.RecordBatch // read to learn a list column's width; Next starts with it
	if cols.peek {
		if first, meta, err = peekWidth(src, cols, meta, schema.Metadata()); err != nil {
			if errors.Is(err, ErrFormat) {
				return nil, inFile(name, err)
			}
			return nil, fmt.Errorf("trajectory: %s: %w: %w", name, ErrFormat, err)
		}
	}
	r = &Reader{name: name, format: format, meta: meta, cols: cols, src: src, sums: sums, seen: map[int64]bool{}}
	if meta.Content == States {
		r.quant, r.codes = o.quant, o.codes
	}
	if first != nil {
		r.rec = first
		r.prequantize()
	}
	return r, nil
}

// peekWidth reads the first record batch of a file whose observation column
// is a list without a width in the metadata, and completes meta's shape from
// the first row's width (fitWidth); every row is then checked against it.
// A file without rows keeps the default shape. The batch is returned for
// Next to start with.
func peekWidth(src batchSource, cols columns, meta Meta, md arrow.Metadata) (arrow.RecordBatch, Meta, error) {
	rec, err := src.next()
	if err == io.EOF {
		return nil, meta, nil
	}
	if err != nil {
		return nil, meta, err
	}
	if !rec.Schema().Equal(src.schema()) {
		return nil, meta, errors.New("record batch schema differs from the file's")
	}
	if width, id, step, ok := firstWidth(rec, cols); ok {
		if err := fitWidth(&meta, md, width); err != nil {
			return nil, meta, fmt.Errorf("%w: the width comes from the first row, episode %d step %d (the file has no memowm metadata)", err, id, step)
		}
		if err := meta.Validate(); err != nil {
			return nil, meta, fmt.Errorf("%w (%w)", err, ErrFormat)
		}
	}
	return rec, meta, nil
}

// damaged turns a recovered panic into an error naming the file.
func damaged(name string, p any) error {
	if e, ok := p.(error); ok && errors.Is(e, ErrLimit) {
		// Not necessarily damage: a buffer the cap refuses, which an intact
		// file of that size may need. It wraps ErrFormat as every limit does,
		// but its message does not call the file damaged.
		return &limitFileError{name, e}
	}
	if e, ok := p.(error); ok {
		return fmt.Errorf("trajectory: %s: %w: damaged file: %w", name, ErrFormat, e)
	}
	return fmt.Errorf("trajectory: %s: %w: damaged file (%v)", name, ErrFormat, p)
}

// limitFileError is a cap's refusal of a file's buffer: ErrFormat and the
// limit's error in its chain, only the limit's message in its text.
type limitFileError struct {
	name string
	err  error
}

func (e *limitFileError) Error() string { return "trajectory: " + e.name + ": " + e.err.Error() }

func (e *limitFileError) Unwrap() []error { return []error{ErrFormat, e.err} }

// Meta returns the file's shape and content.
func (r *Reader) Meta() Meta { return r.meta }

// Format returns the file's format.
func (r *Reader) Format() Format { return r.format }

// Checksummed reports whether the file carries episode checksums (every file
// memowm writes does). Without them, damage that still decodes is not
// detected: files from other tools and from memowm before checksums are read
// unchecked.
func (r *Reader) Checksummed() bool { return r.sums != nil }

// EpisodeCount returns how many episodes the file holds, when it records
// that (every file with checksums does: one per episode), for progress and
// time estimates; ok is false otherwise. Next still checks the count.
func (r *Reader) EpisodeCount() (n int, ok bool) { return len(r.sums), r.sums != nil }

// SetCompact makes the episodes that Next returns from now on hold their
// codes as Compact instead of Codes (on a codes file, or a states file
// with WithQuantize): a long episode then takes a fraction of the memory
// (CodeRows). Episodes of states are not changed.
func (r *Reader) SetCompact(on bool) { r.compact = on }

// SetFacts says whether the episodes that Next returns from now on carry
// their facts (the default); without, they are checked and not held.
func (r *Reader) SetFacts(on bool) { r.noFacts = !on }

// Close releases the file.
func (r *Reader) Close() error {
	err := r.src.close()
	if r.file != nil {
		if cerr := r.file.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Next returns the next episode, or the bare io.EOF after the last: only
// when the file ended where its metadata says it ends (every row its Parquet
// metadata counts, every record batch its Arrow footer lists, and as many
// episodes as it has checksums). Any other error is sticky and never
// satisfies errors.Is(err, io.EOF), even when a library reported the damage
// as an EOF (its chain then holds io.ErrUnexpectedEOF instead), so a loop
// that stops on errors.Is(err, io.EOF) never takes a damaged file for a
// short one: a *ValidationError for bad content, or an error wrapping
// ErrFormat for a damaged file.
func (r *Reader) Next() (ep *Episode, err error) {
	if r.err != nil {
		return nil, r.err
	}
	defer func() {
		if p := recover(); p != nil {
			err = damaged(r.name, p)
		}
		var ve *ValidationError
		if errors.As(err, &ve) && err == error(ve) {
			err = inFile(r.name, err) // name the file
		}
		if err != nil && err != io.EOF {
			err = notEOF(err)
			r.err = err
		}
	}()
	for {
		if r.rec == nil || r.row >= int(r.rec.NumRows()) {
			rec, err := r.src.next()
			if err == io.EOF {
				r.rec = nil // released by the source
				return r.finish()
			}
			if err != nil {
				return nil, fmt.Errorf("trajectory: %s: %w: %w", r.name, ErrFormat, err)
			}
			if !rec.Schema().Equal(r.src.schema()) {
				return nil, fmt.Errorf("trajectory: %s: %w: record batch schema differs from the file's", r.name, ErrFormat)
			}
			r.rec, r.row = rec, 0
			r.prequantize()
			continue
		}
		done, err := r.addRow()
		if err != nil {
			return nil, err
		}
		if done != nil {
			return r.complete(done, r.doneSum)
		}
	}
}

// finish completes the last episode at the end of the file, and checks that
// the file held as many episodes as it has checksums.
func (r *Reader) finish() (*Episode, error) {
	if r.cur != nil {
		ep := r.cur
		r.cur = nil
		return r.complete(ep, r.curSum.final(r.meta, ep.ID, ep.Len()))
	}
	if r.sums != nil && r.nEp != len(r.sums) {
		return nil, fmt.Errorf("trajectory: %s: %w: %w: the file ends after %d of its %d episodes", r.name, ErrFormat, ErrChecksum, r.nEp, len(r.sums))
	}
	return nil, io.EOF
}

// complete checks a finished episode, whose content gave the checksum got,
// against the checksum its writer stored.
func (r *Reader) complete(ep *Episode, got uint32) (*Episode, error) {
	ep = padFacts(ep)
	if r.sums != nil {
		if r.nEp >= len(r.sums) {
			return nil, fmt.Errorf("trajectory: %s: episode %d: %w: %w: the file has checksums for %d episodes, and this is episode %d", r.name, ep.ID, ErrFormat, ErrChecksum, len(r.sums), r.nEp+1)
		}
		if want := r.sums[r.nEp]; got != want {
			return nil, fmt.Errorf("trajectory: %s: episode %d (episode %d in the file): %w: %w: content gives CRC-32C %08x, the writer stored %08x (the file is damaged)", r.name, ep.ID, r.nEp+1, ErrFormat, ErrChecksum, got, want)
		}
	}
	r.nEp++
	return ep, nil
}

// padFacts gives every observation a (possibly nil) fact once any has one.
func padFacts(ep *Episode) *Episode {
	for ep.Facts != nil && len(ep.Facts) < ep.Len() {
		ep.Facts = append(ep.Facts, nil)
	}
	return ep
}

// prequantize quantizes the states of the new record batch's rows at once
// (the quantizer then works on a matrix, in parallel), as far as they are
// contiguous valid states: the first row that is not, and every row after,
// are left to addRow, which reports the error where the row is reached.
// A quantizer's error, too, is left to addRow to attribute to its row.
func (r *Reader) prequantize() {
	r.qn = 0
	if r.quant == nil || r.meta.Content != States {
		return
	}
	obs, ok := r.rec.Column(r.cols.obs).(array.ListLike)
	if !ok {
		return
	}
	vals, ok := obs.ListValues().(*array.Float32)
	if !ok || vals.NullN() > 0 {
		return // float64 values, or nulls: row by row
	}
	v := vals.Float32Values()
	sl := r.meta.Shape.StateLen()
	n := int(r.rec.NumRows())
	if n == 0 {
		return
	}
	first, _ := obs.ValueOffsets(0)
	k := 0
	for ; k < n; k++ {
		s, e := obs.ValueOffsets(k)
		if obs.IsNull(k) || first < 0 || s != first+int64(k*sl) || e < s || e > int64(len(v)) || validState(r.meta, 0, 0, v[s:e]) != nil {
			break
		}
	}
	if k == 0 {
		return
	}
	if cap(r.qcodes) < k*r.codes {
		r.qcodes = make([]uint8, k*r.codes)
	}
	r.qcodes = r.qcodes[:k*r.codes]
	if r.quant(r.qcodes, v[first:first+int64(k*sl)]) == nil {
		r.qn = k
	}
}

// addRow consumes row r.row of r.rec. It returns the previous episode when the
// row starts a new one (and then does not consume the row).
func (r *Reader) addRow() (*Episode, error) {
	c, rec, i := r.cols, r.rec, r.row
	epCol := rec.Column(c.episode).(*array.Int64)
	stepCol := rec.Column(c.step).(*array.Int32)
	if epCol.IsNull(i) {
		return nil, fmt.Errorf("trajectory: %s: %w: null episode id", r.name, ErrFormat)
	}
	id := epCol.Value(i)
	if stepCol.IsNull(i) {
		return nil, invalid(id, -1, "a row has no step")
	}
	step := int(stepCol.Value(i))

	if r.cur != nil && r.cur.ID != id {
		done := r.cur
		r.seen[done.ID] = true
		r.cur = nil
		r.doneSum = r.curSum.final(r.meta, done.ID, done.Len())
		return padFacts(done), nil
	}
	if r.cur == nil {
		if r.seen[id] {
			return nil, invalid(id, step, "rows of the episode are not contiguous (it appears again after other episodes)")
		}
		if step != 0 {
			return nil, invalid(id, step, "episode starts at step %d: steps 0..%d are missing", step, step-1)
		}
		r.cur = &Episode{ID: id}
	} else {
		prev := r.cur.Len() - 1
		switch {
		case step <= prev:
			return nil, invalid(id, step, "steps out of order: step %d follows step %d", step, prev)
		case step > prev+1:
			return nil, invalid(id, step, "missing steps: step %d follows step %d", step, prev)
		}
	}
	ep := r.cur

	obs := rec.Column(c.obs).(array.ListLike)
	start, end, err := rowValues(obs, i, id, step)
	if err != nil {
		return nil, err
	}
	var state []float32
	var codes []uint8
	switch r.meta.Content {
	case States:
		if state, err = stateRow(obs.ListValues(), start, end, &r.fconv, id, step); err != nil {
			return nil, err
		}
		if err := validState(r.meta, id, step, state); err != nil {
			return nil, err
		}
	case Codes:
		if codes, err = codesRow(obs.ListValues(), start, end, &r.cconv, id, step); err != nil {
			return nil, err
		}
		if err := validCodes(r.meta, id, step, codes); err != nil {
			return nil, err
		}
	}

	var fact []byte
	if c.facts >= 0 {
		fc := rec.Column(c.facts).(*array.String)
		if !fc.IsNull(i) {
			fact = []byte(fc.Value(i))
		}
	}

	act := rec.Column(c.action).(*array.Uint8)
	var a *Action
	if step == 0 && act.IsValid(i) {
		return nil, invalid(id, 0, "step 0 carries an action: the action count does not match (an action sits on the row of the state it leads to)")
	}
	if step > 0 {
		if act.IsNull(i) {
			return nil, invalid(id, step, "no action leads to this observation: the action count does not match")
		}
		ra, err := readAction(rec, c, i)
		if err != nil {
			return nil, invalid(id, step, "%v", err)
		}
		a = &ra
	}

	// The row is valid: checksum it and keep it.
	r.curSum.row(state, codes, fact, a)
	if step == 0 && r.compact && (codes != nil || r.quant != nil) {
		width := r.codes
		if codes != nil {
			width = len(codes)
		}
		ep.Compact = NewCodeRows(width, r.meta.Shape.Slots)
	}
	switch {
	case codes != nil && ep.Compact != nil:
		ep.Compact.Append(codes)
	case codes != nil:
		ep.Codes = append(ep.Codes, append([]uint8(nil), codes...))
	case r.quant != nil:
		var z []uint8
		if r.row < r.qn {
			// Quantized with its batch (prequantize).
			z = r.qcodes[r.row*r.codes : (r.row+1)*r.codes]
			if ep.Compact != nil {
				ep.Compact.Append(z)
			} else {
				ep.Codes = append(ep.Codes, append([]uint8(nil), z...))
			}
			break
		}
		if ep.Compact != nil {
			if cap(r.zbuf) < r.codes {
				r.zbuf = make([]uint8, r.codes)
			}
			z = r.zbuf[:r.codes]
		} else {
			z = make([]uint8, r.codes)
		}
		if err := r.quant(z, state); err != nil {
			return nil, fmt.Errorf("trajectory: %s: episode %d step %d: %w", r.name, id, step, err)
		}
		if ep.Compact != nil {
			ep.Compact.Append(z)
		} else {
			ep.Codes = append(ep.Codes, z)
		}
	default:
		ep.States = append(ep.States, append([]float32(nil), state...))
	}
	if fact != nil && !r.noFacts {
		for len(ep.Facts) < step {
			ep.Facts = append(ep.Facts, nil)
		}
		ep.Facts = append(ep.Facts, fact)
	}
	if a != nil {
		ep.Actions = append(ep.Actions, *a)
	}
	r.row++
	return nil, nil
}

func readAction(rec arrow.RecordBatch, c columns, i int) (Action, error) {
	var a Action
	a.Type = ActionType(rec.Column(c.action).(*array.Uint8).Value(i))
	x, y := rec.Column(c.x).(*array.Float32), rec.Column(c.y).(*array.Float32)
	if x.IsValid(i) != y.IsValid(i) {
		return a, errors.New("position has only one of pos_x and pos_y")
	}
	if x.IsValid(i) {
		a.HasPos, a.X, a.Y = true, x.Value(i), y.Value(i)
	}
	dx, dy := rec.Column(c.dx).(*array.Float32), rec.Column(c.dy).(*array.Float32)
	if dx.IsValid(i) != dy.IsValid(i) {
		return a, errors.New("displacement has only one of dx and dy")
	}
	if dx.IsValid(i) {
		a.HasDelta, a.DX, a.DY = true, dx.Value(i), dy.Value(i)
	}
	if p := rec.Column(c.payload).(*array.Binary); p.IsValid(i) {
		a.Payload = append([]byte{}, p.Value(i)...)
	}
	return a, a.Validate()
}
