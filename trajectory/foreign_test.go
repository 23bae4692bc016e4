package trajectory

import (
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Files as other tools write them, built with arrow-go in the test: DuckDB's
// COPY ... TO 'x.parquet' writes every column nullable, the observation
// column as list<element: float> and no Arrow schema; pandas through pyarrow
// writes list<item: float> (or large_list) and its own Arrow schema, and
// integers as int64.

// foreign describes how a test file is written.
type foreign struct {
	list     string         // "list", "large_list" or "fixed"
	elemName string         // the list element's name
	elem     arrow.DataType // the element type
	nullable bool           // every column and element nullable (DuckDB)
	schema   bool           // store the Arrow schema (pyarrow)
	memowm   bool           // carry memowm's schema metadata
	// row, when set, may change the values of observation t of episode e
	// (states or codes, as float64) or make the row null.
	row func(e, t int, vals []float64) (out []float64, null bool)
}

var (
	duckdbStates = foreign{list: "list", elemName: "element", elem: arrow.PrimitiveTypes.Float32, nullable: true}
	pandasStates = foreign{list: "large_list", elemName: "item", elem: arrow.PrimitiveTypes.Float32, nullable: true, schema: true, memowm: true}
)

func (f foreign) schemaFor(m Meta) *arrow.Schema {
	base := Schema(m)
	fields := base.Fields()
	elem := arrow.Field{Name: f.elemName, Type: f.elem, Nullable: f.nullable}
	switch f.list {
	case "list":
		fields[2].Type = arrow.ListOfField(elem)
	case "large_list":
		fields[2].Type = arrow.LargeListOfField(elem)
	default:
		width := m.Shape.StateLen()
		if m.Content == Codes {
			width = m.Shape.Codes
		}
		fields[2].Type = arrow.FixedSizeListOfField(int32(width), elem)
	}
	for i := range fields {
		fields[i].Nullable = fields[i].Nullable || f.nullable
	}
	if !f.memowm {
		return arrow.NewSchema(fields, nil)
	}
	md := base.Metadata()
	return arrow.NewSchema(fields, &md)
}

// obsValues returns observation t of ep as float64 values.
func obsValues(m Meta, ep *Episode, t int) []float64 {
	var out []float64
	if m.Content == States {
		for _, v := range ep.States[t] {
			out = append(out, float64(v))
		}
	} else {
		for _, v := range ep.Codes[t] {
			out = append(out, float64(v))
		}
	}
	return out
}

// write writes eps to path (.parquet or .arrow), one record batch (and row
// group) per episode, without memowm's checksums.
func (f foreign) write(t testing.TB, path string, m Meta, eps []*Episode) {
	t.Helper()
	schema := f.schemaFor(m)
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var write func(arrow.RecordBatch) error
	var close func() error
	if strings.HasSuffix(path, ".arrow") {
		w, err := ipc.NewFileWriter(out, ipc.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		write, close = w.Write, w.Close
	} else {
		props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
		aprops := pqarrow.NewArrowWriterProperties()
		if f.schema {
			aprops = pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
		}
		w, err := pqarrow.NewFileWriter(schema, out, props, aprops)
		if err != nil {
			t.Fatal(err)
		}
		write, close = w.Write, w.Close
	}
	for e, ep := range eps {
		rec := f.record(schema, m, e, ep)
		err := write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := close(); err != nil {
		t.Fatal(err)
	}
}

func (f foreign) record(schema *arrow.Schema, m Meta, e int, ep *Episode) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	obs := b.Field(2).(array.ListLikeBuilder)
	for t := 0; t < ep.Len(); t++ {
		b.Field(0).(*array.Int64Builder).Append(ep.ID)
		b.Field(1).(*array.Int32Builder).Append(int32(t))
		vals, null := obsValues(m, ep, t), false
		if f.row != nil {
			vals, null = f.row(e, t, vals)
		}
		obs.Append(!null)
		if !null {
			appendValues(obs.ValueBuilder(), vals)
		}
		if ep.Facts != nil && ep.Facts[t] != nil {
			b.Field(9).(*array.StringBuilder).BinaryBuilder.Append(ep.Facts[t])
		} else {
			b.Field(9).(*array.StringBuilder).AppendNull()
		}
		if t == 0 {
			for _, i := range []int{3, 4, 5, 6, 7, 8} {
				b.Field(i).AppendNull()
			}
			continue
		}
		a := &ep.Actions[t-1]
		b.Field(3).(*array.Uint8Builder).Append(uint8(a.Type))
		appendOpt(b.Field(4).(*array.Float32Builder), a.HasPos, a.X)
		appendOpt(b.Field(5).(*array.Float32Builder), a.HasPos, a.Y)
		appendOpt(b.Field(6).(*array.Float32Builder), a.HasDelta, a.DX)
		appendOpt(b.Field(7).(*array.Float32Builder), a.HasDelta, a.DY)
		b.Field(8).(*array.BinaryBuilder).Append(a.Payload)
	}
	return b.NewRecordBatch()
}

// appendValues appends vals to an element builder; NaN stands for a null
// element in integer columns.
func appendValues(b array.Builder, vals []float64) {
	for _, v := range vals {
		switch eb := b.(type) {
		case *array.Float32Builder:
			eb.Append(float32(v))
		case *array.Float64Builder:
			eb.Append(v)
		case *array.Uint8Builder:
			if math.IsNaN(v) {
				eb.AppendNull()
			} else {
				eb.Append(uint8(v))
			}
		case *array.Int64Builder:
			if math.IsNaN(v) {
				eb.AppendNull()
			} else {
				eb.Append(int64(v))
			}
		case *array.Int32Builder:
			eb.Append(int32(v))
		default:
			panic("appendValues: " + b.Type().String())
		}
	}
}

// readPath reads a whole file, episodes and meta, through Open and Next.
func readPath(path string, opts ...Option) (Meta, []*Episode, error) {
	r, err := Open(path, opts...)
	if err != nil {
		return Meta{}, nil, err
	}
	defer r.Close()
	var eps []*Episode
	for {
		ep, err := r.Next()
		if err == io.EOF {
			return r.Meta(), eps, nil
		}
		if err != nil {
			return r.Meta(), eps, err
		}
		eps = append(eps, ep)
	}
}

// TestForeignListColumns reads files whose observation column is a list or
// large_list (of float32, float64, uint8 or int64), from Parquet with and
// without an Arrow schema and from Arrow IPC, and gets the episodes a memowm
// file of the same content gives.
func TestForeignListColumns(t *testing.T) {
	states := Meta{Shape: smallShape, Content: States}
	codes := Meta{Shape: smallShape, Content: Codes}
	// Without memowm metadata a states file has the default slot count, and
	// a codes file the default shape but for its width.
	bare := Meta{Shape: Shape{Slots: DefaultShape.Slots, Dim: smallShape.StateLen() / DefaultShape.Slots, Codes: DefaultShape.Codes}, Content: States}
	bareCodes := Meta{Shape: Shape{Slots: DefaultShape.Slots, Dim: DefaultShape.Dim, Codes: smallShape.Codes}, Content: Codes}
	f64 := foreign{list: "list", elemName: "element", elem: arrow.PrimitiveTypes.Float64, nullable: true}
	u8 := foreign{list: "list", elemName: "element", elem: arrow.PrimitiveTypes.Uint8, nullable: true}
	i64 := foreign{list: "list", elemName: "item", elem: arrow.PrimitiveTypes.Int64, nullable: true, schema: true, memowm: true}
	withMeta := duckdbStates
	withMeta.memowm = true
	cases := []struct {
		name string
		f    foreign
		m    Meta // the file's content
		want Meta // what the reader sees
		ext  string
	}{
		{"duckdb", duckdbStates, states, bare, ".parquet"},
		{"duckdb with memowm metadata", withMeta, states, states, ".parquet"},
		{"pandas large_list", pandasStates, states, states, ".parquet"},
		{"float64", f64, states, bare, ".parquet"},
		{"duckdb codes", u8, codes, bareCodes, ".parquet"},
		{"pandas int64 codes", i64, codes, codes, ".parquet"},
		{"arrow list", duckdbStates, states, bare, ".arrow"},
		{"arrow large_list int64 codes", foreign{list: "large_list", elemName: "item", elem: arrow.PrimitiveTypes.Int64, memowm: true}, codes, codes, ".arrow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eps := testEpisodes(c.m, 6, 11)
			dir := t.TempDir()
			ours := filepath.Join(dir, "ours"+c.ext)
			writeFile(t, ours, c.m, eps)
			_, want, err := readPath(ours)
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "theirs"+c.ext)
			c.f.write(t, p, c.m, eps)
			meta, got, err := readPath(p)
			if err != nil {
				t.Fatal(err)
			}
			if meta != c.want {
				t.Errorf("meta %+v, want %+v", meta, c.want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%d episodes differ from the %d of memowm's own file", len(got), len(want))
			}
			sum, err := Summarize(p)
			if err != nil || sum.Episodes != len(eps) || sum.Checksummed {
				t.Fatalf("summary %+v, %v", sum, err)
			}
			if c.m.Content != States {
				return
			}
			// Quantizing on read, batch by batch, gives the codes of the states.
			_, q, err := readPath(p, WithQuantize(c.m.Shape.StateLen(), sign))
			if err != nil {
				t.Fatal(err)
			}
			z := make([]uint8, c.m.Shape.StateLen())
			for e := range want {
				for s := range want[e].States {
					sign(z, want[e].States[s])
					if string(z) != string(q[e].Codes[s]) {
						t.Fatalf("episode %d step %d: quantized codes differ", want[e].ID, s)
					}
				}
			}
		})
	}
}

// TestForeignListErrors: a row of the wrong length, a null row or value, a
// float64 that float32 does not hold and a code outside 0..255 are errors
// naming the episode and step of the row; a column of another type is an
// error when the file is opened.
func TestForeignListErrors(t *testing.T) {
	states := Meta{Shape: smallShape, Content: States}
	codes := Meta{Shape: smallShape, Content: Codes}
	at := func(e, step int, change func([]float64) ([]float64, bool)) func(int, int, []float64) ([]float64, bool) {
		return func(ee, tt int, v []float64) ([]float64, bool) {
			if ee == e && tt == step {
				return change(v)
			}
			return v, false
		}
	}
	with := func(f foreign, row func(int, int, []float64) ([]float64, bool)) foreign {
		f.row = row
		return f
	}
	f64 := foreign{list: "list", elemName: "element", elem: arrow.PrimitiveTypes.Float64, nullable: true}
	i64 := foreign{list: "list", elemName: "item", elem: arrow.PrimitiveTypes.Int64, nullable: true, schema: true}
	cases := []struct {
		name   string
		f      foreign
		m      Meta
		ep     int // the index of the episode named; -1: an error on Open
		step   int
		substr string
	}{
		{"short row", with(duckdbStates, at(2, 1, func(v []float64) ([]float64, bool) { return v[1:], false })), states, 2, 1, "state has width 31, want 32"},
		{"long row", with(pandasStates, at(3, 0, func(v []float64) ([]float64, bool) { return append(v, 1), false })), states, 3, 0, "state has width 33, want 32"},
		{"null row", with(duckdbStates, at(1, 1, func(v []float64) ([]float64, bool) { return v, true })), states, 1, 1, "observation is null"},
		{"inexact float64", with(f64, at(4, 1, func(v []float64) ([]float64, bool) { v[5] = 0.1; return v, false })), states, 4, 1, "state value 5 is 0.1, which float32 does not hold exactly"},
		{"code out of range", with(i64, at(2, 1, func(v []float64) ([]float64, bool) { v[3] = 300; return v, false })), codes, 2, 1, "code 3 is 300, outside 0..255"},
		{"negative code", with(i64, at(0, 0, func(v []float64) ([]float64, bool) { v[0] = -1; return v, false })), codes, 0, 0, "code 0 is -1, outside 0..255"},
		{"null code", with(i64, at(5, 1, func(v []float64) ([]float64, bool) { v[2] = math.NaN(); return v, false })), codes, 5, 1, "observation value 2 of 16 is null"},
		{"short first row", with(duckdbStates, at(0, 0, func(v []float64) ([]float64, bool) { return v[1:], false })), states, -1, 0, "state column width 31 does not match shape"},
		{"int32 states", foreign{list: "list", elemName: "element", elem: arrow.PrimitiveTypes.Int32, nullable: true}, states, -1, 0, `column "state" has type list<element: int32, nullable>, want a fixed_size_list, list or large_list of float32`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eps := testEpisodes(c.m, 6, 11) // every episode has steps 0 and 1
			for _, ext := range []string{".parquet", ".arrow"} {
				p := filepath.Join(t.TempDir(), "x"+ext)
				c.f.write(t, p, c.m, eps)
				_, got, err := readPath(p)
				if err == nil {
					t.Fatalf("%s: read %d episodes without error", ext, len(got))
				}
				if errors.Is(err, io.EOF) || !strings.HasPrefix(err.Error(), "trajectory: "+p+": ") {
					t.Fatalf("%s: error %q", ext, err)
				}
				if c.ep < 0 {
					if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.substr) {
						t.Fatalf("%s: error %q, want ErrFormat and %q", ext, err, c.substr)
					}
					continue
				}
				wantValidation(t, err, eps[c.ep].ID, c.step, c.substr)
				if len(got) != c.ep {
					t.Fatalf("%s: %d episodes before the error, want %d", ext, len(got), c.ep)
				}
			}
		})
	}
}
