package trajectory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Reader streams the episodes of an Arrow IPC or Parquet trajectory file,
// validating every row. It holds one record batch and one episode at a time.
type Reader struct {
	path   string
	format Format
	meta   Meta
	cols   columns
	f      *os.File
	src    batchSource

	rec  arrow.RecordBatch // current batch, owned by src
	row  int               // next row of rec
	cur  *Episode          // episode being assembled
	seen map[int64]bool    // ids of completed episodes
	err  error             // sticky
}

// batchSource yields record batches until io.EOF. A batch is valid until the
// next call.
type batchSource interface {
	next() (arrow.RecordBatch, error)
	schema() *arrow.Schema
	close() error
}

// Open opens the trajectory file at path (.arrow or .parquet) and checks its
// schema. The Reader must be closed.
func Open(path string) (r *Reader, err error) {
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
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("trajectory: %s: %w: damaged file (%v)", path, ErrFormat, p)
		}
		if err != nil {
			f.Close()
			r = nil
		}
	}()
	var src batchSource
	var schema *arrow.Schema
	switch format {
	case Arrow:
		src, schema, err = openArrow(f)
	case Parquet:
		src, schema, err = openParquet(f)
	}
	if err != nil {
		return nil, fmt.Errorf("trajectory: %s: %w: %w", path, ErrFormat, err)
	}
	meta, cols, err := metaFromSchema(schema)
	if err != nil {
		src.close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Reader{path: path, format: format, meta: meta, cols: cols, f: f, src: src, seen: map[int64]bool{}}, nil
}

// Meta returns the file's shape and content.
func (r *Reader) Meta() Meta { return r.meta }

// Format returns the file's format.
func (r *Reader) Format() Format { return r.format }

// Close releases the file.
func (r *Reader) Close() error {
	err := r.src.close()
	if cerr := r.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Next returns the next episode, or io.EOF after the last. Any other error is
// sticky: a *ValidationError for bad content, or an error wrapping ErrFormat
// for a damaged file.
func (r *Reader) Next() (ep *Episode, err error) {
	if r.err != nil {
		return nil, r.err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("trajectory: %s: %w: damaged file (%v)", r.path, ErrFormat, p)
		}
		if err != nil {
			r.err = err
		}
	}()
	for {
		if r.rec == nil || r.row >= int(r.rec.NumRows()) {
			rec, err := r.src.next()
			if err == io.EOF {
				return r.finish()
			}
			if err != nil {
				return nil, fmt.Errorf("trajectory: %s: %w: %w", r.path, ErrFormat, err)
			}
			if !rec.Schema().Equal(r.src.schema()) {
				return nil, fmt.Errorf("trajectory: %s: %w: record batch schema differs from the file's", r.path, ErrFormat)
			}
			r.rec, r.row = rec, 0
			continue
		}
		done, err := r.addRow()
		if err != nil {
			return nil, err
		}
		if done != nil {
			return done, nil
		}
	}
}

// finish completes the last episode at the end of the file.
func (r *Reader) finish() (*Episode, error) {
	if r.cur == nil {
		return nil, io.EOF
	}
	ep := r.cur
	r.cur = nil
	return padFacts(ep), nil
}

// padFacts gives every observation a (possibly nil) fact once any has one.
func padFacts(ep *Episode) *Episode {
	for ep.Facts != nil && len(ep.Facts) < ep.Len() {
		ep.Facts = append(ep.Facts, nil)
	}
	return ep
}

// addRow consumes row r.row of r.rec. It returns the previous episode when the
// row starts a new one (and then does not consume the row).
func (r *Reader) addRow() (*Episode, error) {
	c, rec, i := r.cols, r.rec, r.row
	epCol := rec.Column(c.episode).(*array.Int64)
	stepCol := rec.Column(c.step).(*array.Int32)
	if epCol.IsNull(i) {
		return nil, fmt.Errorf("trajectory: %s: %w: null episode id", r.path, ErrFormat)
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

	obs := rec.Column(c.obs).(*array.FixedSizeList)
	if obs.IsNull(i) {
		return nil, invalid(id, step, "observation is null")
	}
	start, end := obs.ValueOffsets(i)
	switch r.meta.Content {
	case States:
		vals := obs.ListValues().(*array.Float32).Float32Values()
		ep.States = append(ep.States, append([]float32(nil), vals[start:end]...))
	case Codes:
		vals := obs.ListValues().(*array.Uint8).Uint8Values()
		ep.Codes = append(ep.Codes, append([]uint8(nil), vals[start:end]...))
	}
	if err := ep.validateObs(r.meta, step); err != nil {
		return nil, err
	}

	if c.facts >= 0 {
		fc := rec.Column(c.facts).(*array.String)
		if !fc.IsNull(i) {
			for len(ep.Facts) < step {
				ep.Facts = append(ep.Facts, nil)
			}
			ep.Facts = append(ep.Facts, []byte(fc.Value(i)))
		}
	}

	act := rec.Column(c.action).(*array.Uint8)
	if step == 0 {
		if act.IsValid(i) {
			return nil, invalid(id, 0, "step 0 carries an action: the action count does not match (an action sits on the row of the state it leads to)")
		}
		r.row++
		return nil, nil
	}
	if act.IsNull(i) {
		return nil, invalid(id, step, "no action leads to this observation: the action count does not match")
	}
	a, err := readAction(rec, c, i)
	if err != nil {
		return nil, invalid(id, step, "%v", err)
	}
	ep.Actions = append(ep.Actions, a)
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

type arrowSource struct {
	r *ipc.FileReader
	i int
}

func openArrow(f *os.File) (batchSource, *arrow.Schema, error) {
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return nil, nil, err
	}
	return &arrowSource{r: r}, r.Schema(), nil
}

func (s *arrowSource) next() (arrow.RecordBatch, error) {
	if s.i >= s.r.NumRecords() {
		return nil, io.EOF
	}
	rec, err := s.r.RecordBatch(s.i)
	s.i++
	return rec, err
}

func (s *arrowSource) schema() *arrow.Schema { return s.r.Schema() }
func (s *arrowSource) close() error          { return s.r.Close() }

type parquetSource struct {
	pf  *file.Reader
	rr  pqarrow.RecordReader
	sch *arrow.Schema
}

func openParquet(f *os.File) (batchSource, *arrow.Schema, error) {
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return nil, nil, err
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: rowsPerBatch}, memory.DefaultAllocator)
	if err != nil {
		pf.Close()
		return nil, nil, err
	}
	sch, err := fr.Schema()
	if err != nil {
		pf.Close()
		return nil, nil, err
	}
	s := &parquetSource{pf: pf, sch: sch}
	if pf.NumRows() > 0 {
		if s.rr, err = fr.GetRecordReader(context.Background(), nil, nil); err != nil {
			pf.Close()
			return nil, nil, err
		}
	}
	return s, sch, nil
}

func (s *parquetSource) next() (arrow.RecordBatch, error) {
	if s.rr == nil {
		return nil, io.EOF
	}
	if s.rr.Next() {
		return s.rr.RecordBatch(), nil
	}
	if err := s.rr.Err(); err != nil && err != io.EOF {
		return nil, err
	}
	return nil, io.EOF
}

func (s *parquetSource) schema() *arrow.Schema { return s.sch }

func (s *parquetSource) close() error {
	if s.rr != nil {
		s.rr.Release()
		s.rr = nil
	}
	return s.pf.Close()
}
