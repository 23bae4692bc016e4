package trajectory

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func wantValidation(t *testing.T, err error, ep int64, step int, substr string) {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v is not a *ValidationError (want %q)", err, substr)
	}
	if ve.Episode != ep || ve.Step != step || !strings.Contains(ve.Error(), substr) {
		t.Fatalf("got %q (episode %d step %d), want episode %d step %d and %q", ve.Error(), ve.Episode, ve.Step, ep, step, substr)
	}
}

func TestWriteRejectsInvalidEpisodes(t *testing.T) {
	m := Meta{Shape: smallShape, Content: States}
	cases := []struct {
		name   string
		mutate func(e *Episode)
		step   int
		substr string
	}{
		{"nan", func(e *Episode) { e.States[2][9] = float32(math.NaN()) }, 2, "slot 1 channel 1"},
		{"inf", func(e *Episode) { e.States[1][0] = float32(math.Inf(1)) }, 1, "+Inf"},
		{"width", func(e *Episode) { e.States[1] = e.States[1][:5] }, 1, "width 5"},
		{"action count", func(e *Episode) { e.Actions = e.Actions[1:] }, -1, "action count"},
		{"unknown type", func(e *Episode) { e.Actions[0].Type = 17 }, 1, "unknown action type 17"},
		{"payload", func(e *Episode) { e.Actions[1].Payload = make([]byte, 41) }, 2, "41 bytes"},
		{"position", func(e *Episode) { e.Actions[0].HasPos, e.Actions[0].X = true, 1.5 }, 1, "outside [0, 1]"},
		{"delta", func(e *Episode) { e.Actions[0].HasDelta, e.Actions[0].DX = true, float32(math.NaN()) }, 1, "not finite"},
		{"codes in a states file", func(e *Episode) { e.Codes = [][]uint8{{1}} }, -1, "has codes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "x.arrow")
			ep := testEpisodes(m, 1, 5)[0]
			for len(ep.Actions) < 2 {
				ep = testEpisodes(m, 1, uint64(len(ep.Actions)+9))[0]
			}
			c.mutate(ep)
			w, err := Create(path, m)
			if err != nil {
				t.Fatal(err)
			}
			wantValidation(t, w.Write(ep), ep.ID, c.step, c.substr)
			w.Close()
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Fatalf("a failed write left %d files behind", len(left))
			}
		})
	}
	// 40 bytes of payload is fine; duplicate ids are not.
	ep := testEpisodes(m, 1, 5)[0]
	ep.Actions[0].Payload = make([]byte, MaxPayload)
	w, _ := Create(filepath.Join(t.TempDir(), "y.parquet"), m)
	if err := w.Write(ep); err != nil {
		t.Fatal(err)
	}
	wantValidation(t, w.Write(ep), ep.ID, -1, "written twice")
}

// row is one hand-made row of a hostile file.
type row struct {
	ep      int64
	step    int32
	action  int // -1: null
	x, y    float32
	xy      [2]bool // pos_x, pos_y present
	payload int
	value   float32
}

// writeRaw writes rows straight through arrow-go, bypassing the Writer's checks.
func writeRaw(t *testing.T, path string, rows []row) {
	t.Helper()
	m := Meta{Shape: smallShape, Content: States}
	schema := Schema(m)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.ep)
		b.Field(1).(*array.Int32Builder).Append(r.step)
		obs := b.Field(2).(*array.FixedSizeListBuilder)
		obs.Append(true)
		vals := make([]float32, m.Shape.StateLen())
		vals[3] = r.value
		obs.ValueBuilder().(*array.Float32Builder).AppendValues(vals, nil)
		if r.action < 0 {
			b.Field(3).(*array.Uint8Builder).AppendNull()
			b.Field(8).(*array.BinaryBuilder).AppendNull()
		} else {
			b.Field(3).(*array.Uint8Builder).Append(uint8(r.action))
			b.Field(8).(*array.BinaryBuilder).Append(make([]byte, r.payload))
		}
		appendOpt(b.Field(4).(*array.Float32Builder), r.xy[0], r.x)
		appendOpt(b.Field(5).(*array.Float32Builder), r.xy[1], r.y)
		b.Field(6).(*array.Float32Builder).AppendNull()
		b.Field(7).(*array.Float32Builder).AppendNull()
		b.Field(9).(*array.StringBuilder).AppendNull()
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if strings.HasSuffix(path, ".arrow") {
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return
	}
	w, err := pqarrow.NewFileWriter(schema, f, nil, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestReaderRejectsInvalidFiles(t *testing.T) {
	ok := func(ep int64, step int32) row { return row{ep: ep, step: step, action: 16} }
	first := func(ep int64) row { return row{ep: ep, action: -1} }
	cases := []struct {
		name   string
		rows   []row
		ep     int64
		step   int
		substr string
	}{
		{"missing step", []row{first(1), ok(1, 1), ok(1, 3)}, 1, 3, "missing steps"},
		{"out of order", []row{first(1), ok(1, 2), ok(1, 1)}, 1, 2, "missing steps"},
		{"backwards", []row{first(1), ok(1, 1), ok(1, 1)}, 1, 1, "out of order"},
		{"late start", []row{ok(4, 2)}, 4, 2, "steps 0..1 are missing"},
		{"action on step 0", []row{ok(1, 0)}, 1, 0, "step 0 carries an action"},
		{"null action", []row{first(1), {ep: 1, step: 1, action: -1}}, 1, 1, "action count does not match"},
		{"unknown action", []row{first(1), {ep: 1, step: 1, action: 200}}, 1, 1, "unknown action type 200"},
		{"long payload", []row{first(1), {ep: 1, step: 1, action: 4, payload: 41}}, 1, 1, "41 bytes"},
		{"nan", []row{first(1), {ep: 1, step: 1, action: 0, value: float32(math.NaN())}}, 1, 1, "NaN"},
		{"not contiguous", []row{first(1), first(2), first(1)}, 1, 0, "not contiguous"},
		{"half position", []row{first(1), {ep: 1, step: 1, action: 0, xy: [2]bool{true, false}}}, 1, 1, "only one of pos_x"},
	}
	for _, ext := range []string{".arrow", ".parquet"} {
		for _, c := range cases {
			t.Run(ext+"/"+c.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "bad"+ext)
				writeRaw(t, path, c.rows)
				_, _, err := readAll(path)
				wantValidation(t, err, c.ep, c.step, c.substr)
			})
		}
	}
}

func TestSchemaErrors(t *testing.T) {
	m := Meta{Shape: smallShape, Content: States}
	good := Schema(m)
	var fields []arrow.Field
	for _, f := range good.Fields() {
		if f.Name != ColStep {
			fields = append(fields, f)
		}
	}
	md := good.Metadata()
	noStep := arrow.NewSchema(fields, &md)
	if _, _, err := metaFromSchema(noStep); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), `"step" is missing`) {
		t.Fatalf("missing step column: %v", err)
	}
	wide := Schema(Meta{Shape: Shape{Slots: 4, Dim: 9, Codes: 16}, Content: States})
	mdWrong := arrow.NewMetadata([]string{metaSlots, metaDim}, []string{"4", "8"})
	wrong := arrow.NewSchema(wide.Fields(), &mdWrong)
	if _, _, err := metaFromSchema(wrong); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "width 36") {
		t.Fatalf("wrong width: %v", err)
	}
}

func TestNPYHeader(t *testing.T) {
	m := Meta{Shape: smallShape, Content: States}
	dir := t.TempDir()
	path := filepath.Join(dir, "x.npy")
	eps := testEpisodes(m, 3, 2)
	writeFile(t, path, m, eps)
	data, _ := os.ReadFile(path)
	n := 0
	for _, e := range eps {
		n += e.Len()
	}
	// What numpy.lib.format.read_array_header_1_0 checks.
	if string(data[:6]) != "\x93NUMPY" || data[6] != 1 || data[7] != 0 {
		t.Fatalf("bad magic/version %q", data[:8])
	}
	hlen := int(data[8]) | int(data[9])<<8
	if (10+hlen)%64 != 0 || data[10+hlen-1] != '\n' {
		t.Fatalf("header length %d not 64-aligned or not newline-terminated", hlen)
	}
	want := "{'descr': '<f4', 'fortran_order': False, 'shape': (" + strconv.Itoa(n) + ", 4, 8), }"
	if got := strings.TrimRight(string(data[10:10+hlen]), " \n"); got != want {
		t.Fatalf("header %q, want %q", got, want)
	}
	if len(data) != 10+hlen+n*m.Shape.StateLen()*4 {
		t.Fatalf("file is %d bytes, want %d", len(data), 10+hlen+n*m.Shape.StateLen()*4)
	}
	h, err := ReadNPYHeader(bytes.NewReader(data))
	if err != nil || h.Descr != "<f4" || h.FortranOrder || len(h.Shape) != 3 || h.Shape[0] != n {
		t.Fatalf("ReadNPYHeader: %+v %v", h, err)
	}
	sum, err := Summarize(path)
	if err != nil || sum.Episodes != 3 || sum.Observations != int64(n) {
		t.Fatalf("Summarize: %+v %v", sum, err)
	}
	if _, err := ReadNPYHeader(strings.NewReader("garbage garbage")); !errors.Is(err, ErrFormat) {
		t.Fatalf("garbage header: %v", err)
	}
}
