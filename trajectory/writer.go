package trajectory

import (
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// parquetCreatedBy is the created_by of every Parquet file memowm writes; the
// reader takes a file that says it and lacks a stored Arrow schema for damaged.
const parquetCreatedBy = "memowm"

// rowsPerBatch bounds the rows of one record batch (and Parquet row group):
// 64 rows of default states are 4 MiB.
const rowsPerBatch = 64

// Writer writes episodes to a trajectory file. Close must be called for the
// file to appear under its name; Abort (or a failed Write or Close) leaves
// nothing behind.
type Writer struct {
	meta Meta
	tmp  *tempFile
	sink sink
	rows int64
	done bool
	ids  map[int64]bool
	sums []uint32   // episodeSum of every episode written, in order
	qs   []Question // written beside the file on Close; see SetQuestions
	hasQ bool
	deq  func(dst []float32, codes []uint8) error // SetStatesFrom
	buf  []float32                                // one state, for deq
	cbuf []uint8                                  // one row of a Compact episode
}

// rowFn gives observation t of the episode being written: its state (a
// states file) or its codes. Sinks call it once per step, in order; the
// Writer checksums each row as it hands it out. A returned state is valid
// until the next call.
type rowFn func(t int) (state []float32, codes []uint8, err error)

type sink interface {
	writeEpisode(ep *Episode, row rowFn) error
	close(sums []uint32) error // finish the file (storing sums) and anything beside it
	abort()                    // discard anything beside the file
}

// Create starts a trajectory file at path in the format its extension names.
func Create(path string, m Meta) (*Writer, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	format, err := FormatOf(path)
	if err != nil {
		return nil, err
	}
	tmp, err := createTemp(path)
	if err != nil {
		return nil, err
	}
	w := &Writer{meta: m, tmp: tmp, ids: map[int64]bool{}}
	switch format {
	case Arrow:
		w.sink, err = newArrowSink(tmp, m)
	case Parquet:
		w.sink, err = newParquetSink(tmp, m)
	case NumPy:
		w.sink, err = newNPYSink(tmp, m)
	}
	if err != nil {
		tmp.abort()
		return nil, fmt.Errorf("trajectory: %s: %w", path, err)
	}
	return w, nil
}

// Write validates ep and appends it. Episode ids must be unique in a file.
// After an error the Writer is aborted.
func (w *Writer) Write(ep *Episode) error {
	if w.done {
		return fmt.Errorf("trajectory: write to a closed writer")
	}
	// An episode of codes goes into a states file through SetStatesFrom,
	// one state at a time.
	var fill func(t int, dst []float32) error
	if w.deq != nil && w.meta.Content == States && ep.States == nil && (ep.Codes != nil || ep.Compact != nil) {
		fill = func(t int, dst []float32) error { return w.deq(dst, w.codesAt(ep, t)) }
	}
	return w.write(ep, fill)
}

// WriteRows appends episode ep of n observations to a states file without
// holding its states: ep carries the ID, actions and facts (no States or
// Codes), and state fills observation t's state into dst (every value) as
// its row is written, in order. Validation and checksums are those of Write.
func (w *Writer) WriteRows(ep *Episode, n int, state func(t int, dst []float32) error) error {
	if w.done {
		return fmt.Errorf("trajectory: write to a closed writer")
	}
	if w.meta.Content != States || ep.States != nil || ep.Codes != nil || ep.Compact != nil || n < 1 || state == nil {
		w.Abort()
		return fmt.Errorf("trajectory: WriteRows takes an episode without observations, their count and a state function, for a states file")
	}
	// The rows stand in as codes of the right width for validation and the
	// sinks' counts; their states come from state.
	v := *ep
	zeros := make([]uint8, w.meta.Shape.Codes)
	v.Codes = make([][]uint8, n)
	for t := range v.Codes {
		v.Codes[t] = zeros
	}
	return w.write(&v, state)
}

// write appends ep; fill, when set, makes each state of a states file (ep
// then holds stand-in codes).
func (w *Writer) write(ep *Episode, fill func(t int, dst []float32) error) error {
	lazy := fill != nil
	check := w.meta
	if lazy {
		check.Content = Codes
	}
	if err := ep.Validate(check); err != nil {
		w.Abort()
		return err
	}
	if w.ids[ep.ID] {
		w.Abort()
		return invalid(ep.ID, -1, "written twice (episode ids must be unique)")
	}
	w.ids[ep.ID] = true
	var sum sumState
	row := func(t int) ([]float32, []uint8, error) {
		var state []float32
		var codes []uint8
		switch {
		case w.meta.Content == Codes:
			codes = w.codesAt(ep, t)
		case lazy:
			if n := w.meta.Shape.StateLen(); cap(w.buf) < n {
				w.buf = make([]float32, n)
			} else {
				w.buf = w.buf[:n]
			}
			if err := fill(t, w.buf); err != nil {
				return nil, nil, fmt.Errorf("step %d: %w", t, err)
			}
			if err := validState(w.meta, ep.ID, t, w.buf); err != nil {
				return nil, nil, err
			}
			state = w.buf
		default:
			state = ep.States[t]
		}
		var fact []byte
		if ep.Facts != nil {
			fact = ep.Facts[t]
		}
		var a *Action
		if t > 0 {
			a = &ep.Actions[t-1]
		}
		sum.row(state, codes, fact, a)
		return state, codes, nil
	}
	if err := w.sink.writeEpisode(ep, row); err != nil {
		w.Abort()
		return fmt.Errorf("trajectory: %s: episode %d: %w", w.tmp.final, ep.ID, err)
	}
	w.sums = append(w.sums, sum.final(w.meta, ep.ID, ep.Len()))
	w.rows += int64(ep.Len())
	return nil
}

// codesAt is ep's codes of o_t, a Compact row in w's buffer.
func (w *Writer) codesAt(ep *Episode, t int) []uint8 {
	if ep.Compact == nil {
		return ep.Codes[t]
	}
	w.cbuf = ep.Compact.RowTo(w.cbuf, t)
	return w.cbuf
}

// SetStatesFrom lets a states file take episodes of codes: deq turns each
// observation's codes into its state as the row is written, so an episode
// is never held as states (a decoder writing states holds codes only).
// Episodes with States are written as before.
func (w *Writer) SetStatesFrom(deq func(dst []float32, codes []uint8) error) {
	w.deq = deq
}

// Close finishes the file and moves it to its final name, together with its
// questions (see SetQuestions).
func (w *Writer) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	if err := w.sink.close(w.sums); err != nil {
		w.tmp.abort()
		return fmt.Errorf("trajectory: %s: %w", w.tmp.final, err)
	}
	return w.commitWithQuestions()
}

// Abort discards everything written; the final name is left as it was.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.sink.abort()
	w.tmp.abort()
}

// buildRecords turns ep into record batches of at most rowsPerBatch rows and
// hands each to emit.
func buildRecords(schema *arrow.Schema, m Meta, ep *Episode, row rowFn, emit func(arrow.RecordBatch) error) error {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	epB := b.Field(0).(*array.Int64Builder)
	stepB := b.Field(1).(*array.Int32Builder)
	obsB := b.Field(2).(*array.FixedSizeListBuilder)
	actB := b.Field(3).(*array.Uint8Builder)
	xB := b.Field(4).(*array.Float32Builder)
	yB := b.Field(5).(*array.Float32Builder)
	dxB := b.Field(6).(*array.Float32Builder)
	dyB := b.Field(7).(*array.Float32Builder)
	payB := b.Field(8).(*array.BinaryBuilder)
	factB := b.Field(9).(*array.StringBuilder)

	n := ep.Len()
	for start := 0; start < n; start += rowsPerBatch {
		end := min(start+rowsPerBatch, n)
		for t := start; t < end; t++ {
			epB.Append(ep.ID)
			stepB.Append(int32(t))
			obsB.Append(true)
			state, codes, err := row(t)
			if err != nil {
				return err
			}
			if m.Content == States {
				obsB.ValueBuilder().(*array.Float32Builder).AppendValues(state, nil)
			} else {
				obsB.ValueBuilder().(*array.Uint8Builder).AppendValues(codes, nil)
			}
			if ep.Facts != nil && ep.Facts[t] != nil {
				factB.BinaryBuilder.Append(ep.Facts[t])
			} else {
				factB.AppendNull()
			}
			if t == 0 {
				actB.AppendNull()
				xB.AppendNull()
				yB.AppendNull()
				dxB.AppendNull()
				dyB.AppendNull()
				payB.AppendNull()
				continue
			}
			a := &ep.Actions[t-1]
			actB.Append(uint8(a.Type))
			appendOpt(xB, a.HasPos, a.X)
			appendOpt(yB, a.HasPos, a.Y)
			appendOpt(dxB, a.HasDelta, a.DX)
			appendOpt(dyB, a.HasDelta, a.DY)
			payB.Append(a.Payload)
		}
		rec := b.NewRecordBatch()
		err := emit(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

func appendOpt(b *array.Float32Builder, ok bool, v float32) {
	if ok {
		b.Append(v)
	} else {
		b.AppendNull()
	}
}

type arrowSink struct {
	schema *arrow.Schema
	meta   Meta
	w      *ipc.FileWriter
}

func newArrowSink(f *tempFile, m Meta) (*arrowSink, error) {
	s := writtenSchema(m)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(s), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return nil, err
	}
	return &arrowSink{schema: s, meta: m, w: w}, nil
}

func (s *arrowSink) writeEpisode(ep *Episode, row rowFn) error {
	return buildRecords(s.schema, s.meta, ep, row, s.w.Write)
}

// close appends the row-less record batch that carries the episode sums.
func (s *arrowSink) close(sums []uint32) error {
	b := array.NewRecordBuilder(memory.DefaultAllocator, s.schema)
	defer b.Release()
	empty := b.NewRecordBatch()
	defer empty.Release()
	trailer := array.NewRecordBatchWithMetadata(s.schema, empty.Columns(), 0,
		arrow.NewMetadata([]string{metaEpisodeSums}, []string{encodeSums(sums)}))
	defer trailer.Release()
	if err := s.w.Write(trailer); err != nil {
		s.w.Close()
		return err
	}
	return s.w.Close()
}

func (s *arrowSink) abort() { s.w.Close() }

type parquetSink struct {
	schema *arrow.Schema
	meta   Meta
	w      *pqarrow.FileWriter
}

func newParquetSink(f *tempFile, m Meta) (*parquetSink, error) {
	s := writtenSchema(m)
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithDictionaryDefault(false),
		parquet.WithCreatedBy(parquetCreatedBy),
		parquet.WithMaxRowGroupLength(rowsPerBatch),
	)
	// pqarrow closes a writer that is an io.Closer; the tempFile must stay open
	// until commit, so it is handed over as a plain io.Writer.
	w, err := pqarrow.NewFileWriter(s, struct{ io.Writer }{f}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, err
	}
	return &parquetSink{schema: s, meta: m, w: w}, nil
}

func (s *parquetSink) writeEpisode(ep *Episode, row rowFn) error {
	return buildRecords(s.schema, s.meta, ep, row, s.w.Write)
}

// close stores the episode sums in the file's key-value metadata.
func (s *parquetSink) close(sums []uint32) error {
	if err := s.w.AppendKeyValueMetadata(metaEpisodeSums, encodeSums(sums)); err != nil {
		s.w.Close()
		return err
	}
	return s.w.Close()
}

func (s *parquetSink) abort() { s.w.Close() }

// writtenSchema is Schema(m) with the key that says the file carries episode
// checksums.
func writtenSchema(m Meta) *arrow.Schema {
	s := Schema(m)
	md := s.Metadata()
	keys := append(append([]string(nil), md.Keys()...), metaChecksum)
	vals := append(append([]string(nil), md.Values()...), checksumKind)
	out := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema(s.Fields(), &out)
}
