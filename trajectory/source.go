package trajectory

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
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
// Arrow schema stored in its metadata (checkSchemaStream).
type parquetSource struct {
	pf  *file.Reader
	rr  pqarrow.RecordReader
	sch *arrow.Schema
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
	s := &parquetSource{pf: pf, sch: sch}
	if pf.NumRows() > 0 {
		if s.rr, err = fr.GetRecordReader(context.Background(), nil, nil); err != nil {
			return nil, nil, err
		}
	}
	return s, sums, nil
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
