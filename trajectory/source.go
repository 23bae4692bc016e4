package trajectory

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// arrowSource reads the record batches of an Arrow IPC file, checking each
// block's message (checkArrowMessage) before arrow-go decodes it.
type arrowSource struct {
	ra  io.ReaderAt
	r   *ipc.FileReader
	lay *arrowLayout
	n   int // data batches: the checksum batch, when there is one, is not data
	i   int
	max int64
	cur arrow.RecordBatch // the batch next returned last, released by the next call (at the end too)
}

func openArrow(ra io.ReaderAt, size int64, alloc *cappedAllocator) (*arrowSource, []uint32, error) {
	lay, err := checkArrowFile(ra, size)
	if err != nil {
		return nil, nil, err
	}
	if err := checkArrowStream(ra, lay); err != nil {
		return nil, nil, err
	}
	for i, d := range lay.dicts {
		if err := checkArrowMessage(ra, d, msgDictionaryBatch, alloc.max); err != nil {
			return nil, nil, fmt.Errorf("dictionary %d: %w", i, err)
		}
	}
	r, err := ipc.NewFileReader(io.NewSectionReader(ra, 0, size), ipc.WithAllocator(alloc))
	if err != nil {
		return nil, nil, err
	}
	s := &arrowSource{ra: ra, r: r, lay: lay, n: len(lay.batches), max: alloc.max}
	if r.NumRecords() != s.n {
		r.Close()
		return nil, nil, fmt.Errorf("footer lists %d record batches, arrow-go sees %d", s.n, r.NumRecords())
	}
	sums, err := s.trailer()
	if err != nil {
		r.Close()
		return nil, nil, err
	}
	return s, sums, nil
}

// trailer reads the episode checksums from the last record batch, when it is
// the row-less batch that carries them.
func (s *arrowSource) trailer() ([]uint32, error) {
	if s.n == 0 {
		return nil, nil
	}
	if err := checkArrowMessage(s.ra, s.lay.batches[s.n-1], msgRecordBatch, s.max); err != nil {
		return nil, fmt.Errorf("record batch %d: %w", s.n-1, err)
	}
	rec, err := s.r.RecordBatchAt(s.n - 1)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	rm, ok := rec.(arrow.RecordBatchWithMetadata)
	if !ok || rec.NumRows() != 0 {
		return nil, nil
	}
	md := rm.Metadata()
	v, ok := md.GetValue(metaEpisodeSums)
	if !ok {
		return nil, nil
	}
	s.n--
	return decodeSums(v)
}

func (s *arrowSource) next() (arrow.RecordBatch, error) {
	s.release()
	if s.i >= s.n {
		return nil, io.EOF
	}
	i := s.i
	s.i++
	if err := checkArrowMessage(s.ra, s.lay.batches[i], msgRecordBatch, s.max); err != nil {
		return nil, fmt.Errorf("record batch %d: %w", i, err)
	}
	rec, err := s.r.RecordBatchAt(i)
	s.cur = rec
	return rec, err
}

// release lets the last batch go, so that the end of the file holds none.
func (s *arrowSource) release() {
	if s.cur != nil {
		s.cur.Release()
		s.cur = nil
	}
}

func (s *arrowSource) schema() *arrow.Schema { return s.r.Schema() }

func (s *arrowSource) close() error {
	s.release()
	return s.r.Close()
}

// parquetSource reads a Parquet file through pqarrow, after checking the
// Arrow schema stored in its metadata (checkSchemaStream). It counts the rows
// it delivers: pqarrow's record reader ends quietly when a column chunk runs
// out of values early, so the end of the data is the end of the file only
// when the rows delivered are the rows the file's metadata counts.
type parquetSource struct {
	pf   *file.Reader
	rr   pqarrow.RecordReader
	sch  *arrow.Schema
	rows int64 // rows delivered so far
}

func openParquet(ra io.ReaderAt, size int64, alloc *cappedAllocator) (_ *parquetSource, _ []uint32, err error) {
	pf, err := file.NewParquetReader(io.NewSectionReader(ra, 0, size), file.WithReadProps(parquet.NewReaderProperties(alloc)))
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			pf.Close()
		}
	}()
	if err := checkParquetFooter(ra, size); err != nil {
		return nil, nil, err
	}
	kv := pf.MetaData().KeyValueMetadata()
	if v := kv.FindValue("ARROW:schema"); v != nil {
		b, err := base64.StdEncoding.DecodeString(*v)
		if err != nil {
			b, err = base64.RawStdEncoding.DecodeString(*v)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("stored Arrow schema: %w", err)
		}
		if err := checkSchemaStream(b); err != nil {
			return nil, nil, err
		}
	} else if pf.MetaData().GetCreatedBy() == parquetCreatedBy {
		// memowm has always stored its Arrow schema: without it, damage
		// dropped the key-value metadata (the checksums with it), and the
		// file would read as another tool's, unchecked (listWidth).
		return nil, nil, fmt.Errorf("written by memowm, but its stored Arrow schema is missing (the footer is damaged)")
	}
	var sums []uint32
	if v := kv.FindValue(metaEpisodeSums); v != nil {
		if sums, err = decodeSums(*v); err != nil {
			return nil, nil, err
		}
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: rowsPerBatch}, alloc)
	if err != nil {
		return nil, nil, err
	}
	sch, err := fr.Schema()
	if err != nil {
		return nil, nil, err
	}
	if kv.FindValue("ARROW:schema") == nil {
		sch = withFileMetadata(sch, kv)
	}
	s := &parquetSource{pf: pf, sch: sch}
	if pf.NumRows() > 0 {
		if s.rr, err = fr.GetRecordReader(context.Background(), nil, nil); err != nil {
			return nil, nil, err
		}
	}
	return s, sums, nil
}

// withFileMetadata adds the memowm.* keys of a Parquet file's key-value
// metadata to sch: pqarrow takes schema metadata only from a stored Arrow
// schema, and files from other tools (DuckDB's COPY ... (KV_METADATA {...}))
// may carry memowm's keys without one.
func withFileMetadata(sch *arrow.Schema, kv metadata.KeyValueMetadata) *arrow.Schema {
	md := sch.Metadata()
	keys, vals := append([]string(nil), md.Keys()...), append([]string(nil), md.Values()...)
	for i, k := range kv.Keys() {
		if strings.HasPrefix(k, "memowm.") && md.FindKey(k) < 0 {
			keys, vals = append(keys, k), append(vals, kv.Values()[i])
		}
	}
	if len(keys) == md.Len() {
		return sch
	}
	out := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema(sch.Fields(), &out)
}

func (s *parquetSource) next() (arrow.RecordBatch, error) {
	if s.rr == nil {
		return nil, s.end()
	}
	if s.rr.Next() {
		rec := s.rr.RecordBatch()
		s.rows += rec.NumRows()
		return rec, nil
	}
	if err := s.rr.Err(); err != nil {
		// Whatever the error wraps (arrow-go reports a column chunk cut
		// short as "got error: EOF"), it is damage, not the end.
		return nil, fmt.Errorf("after %d of the file's %d rows: %w", s.rows, s.pf.NumRows(), notEOF(err))
	}
	return nil, s.end()
}

// end returns io.EOF when the rows delivered are the rows the file's
// metadata counts, in all and in its row groups, and an error naming both
// counts when they are not.
func (s *parquetSource) end() error {
	md := s.pf.MetaData()
	var groups int64
	for i := range s.pf.NumRowGroups() {
		groups += md.RowGroup(i).NumRows()
	}
	if want := s.pf.NumRows(); s.rows != want || groups != want {
		return fmt.Errorf("the data ends after %d rows, but the file's metadata counts %d rows (its %d row groups %d)", s.rows, want, s.pf.NumRowGroups(), groups)
	}
	return io.EOF
}

func (s *parquetSource) schema() *arrow.Schema { return s.sch }

func (s *parquetSource) close() error {
	if s.rr != nil {
		s.rr.Release()
		s.rr = nil
	}
	return s.pf.Close()
}
