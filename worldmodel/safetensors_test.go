package worldmodel

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memowm/memowm/internal/fuzzdamage"
)

// nanoConfig is the smallest configuration: 363 parameters.
func nanoConfig() Config {
	return Config{Profile: ProfileF32, MaxHistory: 1, Slots: 1, Subspaces: 2, Codewords: 2, CodeDim: 1,
		Layers: 1, Heads: 1, MLP: 1, ActionTypes: 1, CoordBins: 1, ActionDim: 1, ByteDim: 1,
		PayloadHidden: 1, MaxPayload: 1, Tasks: 1}
}

func nanoModel(t testing.TB) *Model {
	t.Helper()
	m, err := New(nanoConfig(), 13)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func exportST(t testing.TB, m *Model) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := m.WriteSafetensors(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteSafetensors: %d bytes, %v (buffer %d)", n, err, buf.Len())
	}
	return buf.Bytes()
}

// stSplit parses a safetensors file into its header (as generic JSON) and
// its buffer.
func stSplit(t testing.TB, file []byte) (map[string]any, []byte) {
	t.Helper()
	n := binary.LittleEndian.Uint64(file)
	var h map[string]any
	if err := json.Unmarshal(file[8:8+n], &h); err != nil {
		t.Fatal(err)
	}
	return h, file[8+n:]
}

// stJoin writes a safetensors file from a header and a buffer.
func stJoin(t testing.TB, h any, buf []byte) []byte {
	t.Helper()
	js, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return stRaw(string(js), buf)
}

// stRaw writes a safetensors file from header text and a buffer.
func stRaw(hdr string, buf []byte) []byte {
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	return append(append(out, hdr...), buf...)
}

func sameData(a, b *Model) bool {
	return a.cfg == b.cfg && diffAt(a.p.Data, b.p.Data) < 0
}

func TestSafetensorsName(t *testing.T) {
	for in, want := range map[string]string{
		"code_embedding":     "code_embedding",
		"valid/w":            "valid.w",
		"action/gru_wx":      "action.gru_wx",
		"layer0/qkv_w":       "layers.0.qkv_w",
		"layer11/mlp_b2":     "layers.11.mlp_b2",
		"copy_head/b":        "copy_head.b",
		"layerx/foo":         "layerx.foo",
		"layer/foo":          "layer.foo",
		"final_norm_scale":   "final_norm_scale",
		"time_embedding/abc": "time_embedding.abc",
	} {
		if got := SafetensorsName(in); got != want {
			t.Errorf("SafetensorsName(%q) = %q, want %q", in, got, want)
		}
	}
	for _, preset := range PresetNames() {
		cfg, _ := Preset(preset)
		seen := map[string]bool{}
		for _, ts := range cfg.layout() {
			n := SafetensorsName(ts.Name)
			if seen[n] || n == "__metadata__" {
				t.Fatalf("%s: name %q twice", preset, n)
			}
			seen[n] = true
		}
	}
}

func TestSafetensorsRoundTrip(t *testing.T) {
	m := tinyModel(t, 21)
	file := exportST(t, m)
	n := binary.LittleEndian.Uint64(file)
	if (8+n)%8 != 0 {
		t.Errorf("the buffer starts at byte %d, not a multiple of 8", 8+n)
	}
	// The buffer is Params.Data, little-endian, in layout order.
	buf := file[8+n:]
	if len(buf) != 4*len(m.p.Data) {
		t.Fatalf("buffer of %d bytes for %d parameters", len(buf), len(m.p.Data))
	}
	for i, v := range m.p.Data {
		if binary.LittleEndian.Uint32(buf[4*i:]) != math.Float32bits(v) {
			t.Fatalf("buffer value %d differs", i)
		}
	}
	got, info, err := ReadSafetensors(bytes.NewReader(file), int64(len(file)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !sameData(got, m) {
		t.Fatal("round trip changed the model")
	}
	if info.Tensors != len(m.p.Tensors) || info.Dtypes["F32"] != info.Tensors || !info.ConfigInFile ||
		info.Metadata[SafetensorsVersionKey] != "1" || info.HeaderBytes != int64(n) {
		t.Fatalf("info %+v", info)
	}
	if again := exportST(t, got); !bytes.Equal(again, file) {
		t.Fatal("re-exporting changed the bytes")
	}
	// The file's config is checked against the caller's; a matching one
	// (dropout and preset name aside) reads the same model.
	want := m.Config()
	want.Preset, want.Dropout = "", 0.5
	if g, _, err := ReadSafetensors(bytes.NewReader(file), int64(len(file)), &want); err != nil || !sameData(g, m) {
		t.Fatalf("with a matching configuration: %v", err)
	}
	// Predictions: the same bits.
	rng := rand.New(rand.NewPCG(3, 4))
	hs := []History{randomHistory(rng, &m.cfg, 3), randomHistory(rng, &m.cfg, m.cfg.MaxHistory)}
	a, err := newCPU(t, m).Predict(nil, hs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newCPU(t, got).Predict(nil, hs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if !slices.Equal(a[i].Freq, b[i].Freq) || !slices.Equal(a[i].Mode, b[i].Mode) || !slices.Equal(a[i].Entropy, b[i].Entropy) {
			t.Fatalf("history %d: predictions differ", i)
		}
	}
	// Save and Load; a trailing byte is an error.
	dir := t.TempDir()
	path := filepath.Join(dir, "w.safetensors")
	if err := m.SaveSafetensors(path); err != nil {
		t.Fatal(err)
	}
	if l, _, err := LoadSafetensors(path, nil); err != nil || !sameData(l, m) {
		t.Fatalf("LoadSafetensors: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("SaveSafetensors left %d files", len(entries))
	}
	os.WriteFile(path, append(bytes.Clone(file), 0), 0o644)
	if _, _, err := LoadSafetensors(path, nil); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "the file has") {
		t.Errorf("trailing byte: %v", err)
	}
	if _, _, err := LoadSafetensors(filepath.Join(dir, "missing"), nil); err == nil || !strings.HasPrefix(err.Error(), "worldmodel: ") {
		t.Errorf("missing file: %v", err)
	}
}

// TestSafetensorsAnyOrder: tensors in another order, with other metadata
// and no memowm config (the caller gives it), read to the same model; a
// stream of unknown size is read to the end of the tensors only.
func TestSafetensorsAnyOrder(t *testing.T) {
	m := tinyModel(t, 22)
	h, buf := stSplit(t, exportST(t, m))
	delete(h, "__metadata__")
	h["__metadata__"] = map[string]string{"format": "pt"}
	// Reverse the data: the last tensor first.
	var out []byte
	names := make([]string, 0, len(m.p.Tensors))
	for _, ts := range m.p.Tensors {
		names = append(names, SafetensorsName(ts.Name))
	}
	slices.Reverse(names)
	for _, name := range names {
		e := h[name].(map[string]any)
		off := e["data_offsets"].([]any)
		b, en := int(off[0].(float64)), int(off[1].(float64))
		e["data_offsets"] = []int{len(out), len(out) + en - b}
		out = append(out, buf[b:en]...)
	}
	file := stJoin(t, h, out)
	if _, _, err := ReadSafetensors(bytes.NewReader(file), int64(len(file)), nil); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "memowm.config") {
		t.Fatalf("no config: %v", err)
	}
	cfg, _ := Preset("tiny")
	got, info, err := ReadSafetensors(bytes.NewReader(file), int64(len(file)), &cfg)
	if err != nil || !sameData(got, m) {
		t.Fatalf("reversed: %v", err)
	}
	if info.ConfigInFile || info.Metadata["format"] != "pt" {
		t.Fatalf("info %+v", info)
	}
	// A stream whose size is unknown: ReadSafetensors stops at the end.
	r := io.MultiReader(bytes.NewReader(file), strings.NewReader("TRAILER"))
	if got, _, err := ReadSafetensors(r, -1, &cfg); err != nil || !sameData(got, m) {
		t.Fatalf("stream: %v", err)
	}
	if rest, _ := io.ReadAll(r); string(rest) != "TRAILER" {
		t.Fatalf("the stream's rest is %q", rest)
	}
	// The same stream cut short.
	if _, _, err := ReadSafetensors(io.MultiReader(bytes.NewReader(file[:len(file)-5])), -1, &cfg); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short stream: %v", err)
	}
}

// TestSafetensorsDtypes: F64, BF16 and F16 tensors are converted to float32
// as documented.
func TestSafetensorsDtypes(t *testing.T) {
	m := nanoModel(t)
	cfg := m.Config()
	h, _ := stSplit(t, exportST(t, m))
	enc := map[string]func(float32) []byte{
		"F64": func(v float32) []byte {
			return binary.LittleEndian.AppendUint64(nil, math.Float64bits(float64(v)))
		},
		"BF16": func(v float32) []byte {
			return binary.LittleEndian.AppendUint16(nil, uint16(math.Float32bits(v)>>16))
		},
	}
	for dtype, f := range enc {
		var buf []byte
		want := newParams(&cfg)
		for _, ts := range m.p.Tensors {
			e := h[SafetensorsName(ts.Name)].(map[string]any)
			e["dtype"] = dtype
			e["data_offsets"] = []int{len(buf), len(buf) + len(f(0))*ts.Size()}
			for i, v := range m.p.Data[ts.Off : ts.Off+ts.Size()] {
				buf = append(buf, f(v)...)
				if dtype == "BF16" {
					v = math.Float32frombits(math.Float32bits(v) &^ 0xffff)
				}
				want.Data[ts.Off+i] = v
			}
		}
		file := stJoin(t, h, buf)
		got, info, err := ReadSafetensors(bytes.NewReader(file), int64(len(file)), nil)
		if err != nil {
			t.Fatalf("%s: %v", dtype, err)
		}
		if i := diffAt(got.p.Data, want.Data); i >= 0 || info.Dtypes[dtype] != len(m.p.Tensors) {
			t.Fatalf("%s: value %d differs (%+v)", dtype, i, info)
		}
	}
	// F64 rounds to the nearest float32 and refuses what overflows it.
	for _, c := range []struct {
		in   float64
		want float32
	}{{1 + 0x1p-24, 1}, {1 + 0x1p-23 + 0x1p-25, 1 + 0x1p-23}, {-0x1p-150 * 3, -0x1p-148}, {1e-50, 0}} {
		if v, _ := stValue("F64", binary.LittleEndian.AppendUint64(nil, math.Float64bits(c.in))); math.Float32bits(v) != math.Float32bits(c.want) {
			t.Errorf("F64 %g: %g, want %g", c.in, v, c.want)
		}
	}
	// Every half-precision value, against its definition.
	for h := 0; h < 1<<16; h++ {
		got := f16to32(uint16(h))
		s, e, f := h>>15, (h>>10)&0x1f, h&0x3ff
		var want float64
		switch {
		case e == 0x1f && f == 0:
			want = math.Inf(1)
		case e == 0x1f:
			want = math.NaN()
		case e == 0:
			want = math.Ldexp(float64(f), -24)
		default:
			want = math.Ldexp(float64(1024+f), e-25)
		}
		if s == 1 {
			want = -want
		}
		if math.IsNaN(want) {
			if !math.IsNaN(float64(got)) || math.Float32bits(got)>>13&0x3ff != uint32(f) {
				t.Fatalf("F16 %#04x: %g, want a NaN with the same payload", h, got)
			}
			continue
		}
		if float64(got) != want || math.Signbit(float64(got)) != (s == 1) {
			t.Fatalf("F16 %#04x: %g, want %g", h, got, want)
		}
	}
}

// TestSafetensorsErrors: every kind of bad file is refused with an error
// that starts with "worldmodel: ", wraps the right sentinel and names what
// is wrong.
func TestSafetensorsErrors(t *testing.T) {
	m := nanoModel(t)
	file := exportST(t, m)
	cfg := m.Config()
	edit := func(f func(h map[string]any, buf []byte) []byte) []byte {
		h, buf := stSplit(t, file)
		buf = bytes.Clone(buf)
		if b := f(h, buf); b != nil {
			buf = b
		}
		return stJoin(t, h, buf)
	}
	entry := func(h map[string]any, name string) map[string]any { return h[name].(map[string]any) }
	length := func(n uint64) []byte {
		d := bytes.Clone(file)
		binary.LittleEndian.PutUint64(d, n)
		return d
	}
	nan := binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(math.NaN())))
	other := cfg
	other.MLP = 2
	bad := cfg
	bad.Layers = 0
	badJS, _ := json.Marshal(&bad)
	hdrLen := int(binary.LittleEndian.Uint64(file))
	cases := []struct {
		name string
		data []byte
		want *Config
		is   []error
		msg  string
	}{
		{"empty", nil, nil, []error{ErrFormat, io.ErrUnexpectedEOF}, "header length"},
		{"header over the limit", length(100<<20 + 1), nil, []error{ErrFormat}, "more than the limit of 104857600"},
		{"header past the end", length(uint64(len(file))), nil, []error{ErrFormat, io.ErrUnexpectedEOF}, "only"},
		{"header length 2^64-1", length(math.MaxUint64), nil, []error{ErrFormat}, "limit"},
		{"not an object", stRaw(`["a"]`, nil), nil, []error{ErrFormat}, "start with '{'"},
		{"not json", stRaw(`{"a":`, nil), nil, []error{ErrFormat}, "header"},
		{"after the object", stRaw(`{}x`, nil), nil, []error{ErrFormat}, "after the JSON object"},
		{"not utf-8", stRaw("{\"\xff\":1}", nil), nil, []error{ErrFormat}, "UTF-8"},
		{"duplicate tensor", stRaw(`{"a":{},"a":{}}`, nil), nil, []error{ErrFormat}, `"a" appears twice`},
		{"duplicate field", stRaw(`{"a":{"dtype":"F32","dtype":"F32"}}`, nil), nil, []error{ErrFormat}, `"dtype" appears twice`},
		{"metadata not strings", stRaw(`{"__metadata__":{"a":1}}`, nil), nil, []error{ErrFormat}, `"a": the value is not a string`},
		{"metadata null", stRaw(`{"__metadata__":{"a":null}}`, nil), nil, []error{ErrFormat}, `not a string`},
		{"unknown field", stRaw(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}}`, nil), nil, []error{ErrFormat}, `unknown field "x"`},
		{"negative offset", stRaw(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}}`, nil), nil, []error{ErrFormat}, `data_offsets`},
		{"offsets reversed", stRaw(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}}`, nil), nil, []error{ErrFormat}, `end before they begin`},
		{"three offsets", stRaw(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}`, nil), nil, []error{ErrFormat}, `3 numbers`},
		{"no shape", stRaw(`{"a":{"dtype":"F32","data_offsets":[0,4]}}`, nil), nil, []error{ErrFormat}, `has no shape`},
		{"no config", edit(func(h map[string]any, _ []byte) []byte { delete(h, "__metadata__"); return nil }), nil, []error{ErrConfig}, "memowm.config"},
		{"version 2", edit(func(h map[string]any, _ []byte) []byte {
			h["__metadata__"].(map[string]any)[SafetensorsVersionKey] = "2"
			return nil
		}), nil, []error{ErrVersion}, `"2"`},
		{"config not json", edit(func(h map[string]any, _ []byte) []byte {
			h["__metadata__"].(map[string]any)[SafetensorsConfigKey] = "{"
			return nil
		}), nil, []error{ErrFormat}, "memowm.config"},
		{"config invalid", edit(func(h map[string]any, _ []byte) []byte {
			h["__metadata__"].(map[string]any)[SafetensorsConfigKey] = string(badJS)
			return nil
		}), nil, []error{ErrFormat, ErrConfig}, "layers = 0"},
		{"config unknown field", edit(func(h map[string]any, _ []byte) []byte {
			h["__metadata__"].(map[string]any)[SafetensorsConfigKey] = `{"layerz":1}`
			return nil
		}), nil, []error{ErrFormat}, "layerz"},
		{"config mismatch", file, &other, []error{ErrConfig}, "mlp 1, expected 2"},
		{"missing tensor", edit(func(h map[string]any, _ []byte) []byte { delete(h, "copy_head.b"); return nil }), nil, []error{ErrFormat}, `tensor "copy_head.b" of the configuration is missing`},
		{"extra tensor", edit(func(h map[string]any, _ []byte) []byte {
			h["extra"] = map[string]any{"dtype": "F32", "shape": []int{0}, "data_offsets": []int{0, 0}}
			return nil
		}), nil, []error{ErrFormat}, `tensor "extra" is not in the layout`},
		{"dtype", edit(func(h map[string]any, _ []byte) []byte { entry(h, "valid.b")["dtype"] = "I32"; return nil }), nil, []error{ErrFormat}, `"valid.b" has dtype "I32"`},
		{"shape", edit(func(h map[string]any, _ []byte) []byte { entry(h, "valid.w")["shape"] = []int{2, 1}; return nil }), nil, []error{ErrFormat}, `"valid.w" has shape [2 1], the configuration has [1 2]`},
		{"rank", edit(func(h map[string]any, _ []byte) []byte { entry(h, "valid.b")["shape"] = []int{2, 1}; return nil }), nil, []error{ErrFormat}, `"valid.b" has shape`},
		{"byte length", edit(func(h map[string]any, _ []byte) []byte {
			e := entry(h, "copy_head.b")
			e["data_offsets"].([]any)[1] = e["data_offsets"].([]any)[1].(float64) + 4
			return nil
		}), nil, []error{ErrFormat}, `"copy_head.b": data_offsets`},
		{"overlap", edit(func(h map[string]any, _ []byte) []byte {
			e := entry(h, "copy_head.b")
			e["data_offsets"] = []any{e["data_offsets"].([]any)[0].(float64) - 4, e["data_offsets"].([]any)[1].(float64) - 4}
			return nil
		}), nil, []error{ErrFormat}, `overlaps tensor "copy_head.w"`},
		{"hole", edit(func(h map[string]any, buf []byte) []byte {
			e := entry(h, "copy_head.b")
			e["data_offsets"] = []any{e["data_offsets"].([]any)[0].(float64) + 4, e["data_offsets"].([]any)[1].(float64) + 4}
			return append(buf, 0, 0, 0, 0)
		}), nil, []error{ErrFormat}, `belong to no tensor`},
		{"truncated buffer", file[:len(file)-1], nil, []error{ErrFormat, io.ErrUnexpectedEOF}, "the file has"},
		{"trailing bytes", append(bytes.Clone(file), 0), nil, []error{ErrFormat}, "the file has"},
		{"nan", edit(func(h map[string]any, buf []byte) []byte {
			copy(buf[4*m.p.Tensors[2].Off:], nan)
			return nil
		}), nil, []error{ErrFormat}, `"time_embedding": value 0 is NaN`},
		{"f64 overflow", edit(func(h map[string]any, buf []byte) []byte {
			for _, ts := range m.p.Tensors {
				if ts.Name == "copy_head/b" {
					e := entry(h, "copy_head.b")
					e["dtype"] = "F64"
					e["data_offsets"] = []int{4 * ts.Off, 4*ts.Off + 8*ts.Size()}
					buf = buf[:4*ts.Off]
					for range ts.Size() {
						buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(1e300))
					}
				}
			}
			return buf
		}), nil, []error{ErrFormat}, `value 0 is 1e+300 (beyond float32)`},
	}
	for _, c := range cases {
		_, _, err := ReadSafetensors(bytes.NewReader(c.data), int64(len(c.data)), c.want)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		for _, is := range c.is {
			if !errors.Is(err, is) {
				t.Errorf("%s: %v does not wrap %v", c.name, err, is)
			}
		}
		if !strings.HasPrefix(err.Error(), "worldmodel: ") || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want a message with %q", c.name, err, c.msg)
		}
	}
	if hdrLen%8 != 0 {
		t.Errorf("header of %d bytes is not padded", hdrLen)
	}
}

// TestArchDiffCoversConfig: ArchDiff compares every field of Config but
// the preset name and the dropout rate, so a field added to Config is not
// silently left out of the check against the caller's configuration.
func TestArchDiffCoversConfig(t *testing.T) {
	base := nanoConfig()
	typ := reflect.TypeOf(base)
	for i := 0; i < typ.NumField(); i++ {
		c := base
		v := reflect.ValueOf(&c).Elem().Field(i)
		switch v.Kind() {
		case reflect.Int:
			v.SetInt(v.Int() + 1)
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Float64:
			v.SetFloat(v.Float() + 0.5)
		default:
			t.Fatalf("field %s: kind %v", typ.Field(i).Name, v.Kind())
		}
		d := c.ArchDiff(&base)
		ignored := typ.Field(i).Name == "Preset" || typ.Field(i).Name == "Dropout"
		if ignored != (len(d) == 0) {
			t.Errorf("field %s: ArchDiff %q", typ.Field(i).Name, d)
		}
	}
}

// TestSafetensorsDocTable: the tensor table of docs/world-model.md names
// every tensor of the layout, in layout order ("layers.L." for each layer).
func TestSafetensorsDocTable(t *testing.T) {
	doc, err := os.ReadFile("../docs/world-model.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "## Weights in and out (safetensors)")
	if i < 0 {
		t.Fatal("docs/world-model.md has no safetensors section")
	}
	s = s[i:]
	if j := strings.Index(s[3:], "\n## "); j >= 0 {
		s = s[:j+3]
	}
	var got []string
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.Split(line, "|")[1]
		for _, f := range strings.Split(cell, ",") {
			got = append(got, strings.Trim(strings.TrimSpace(f), "`"))
		}
	}
	cfg, _ := Preset("tiny")
	var want []string
	for _, ts := range cfg.layout() {
		n := SafetensorsName(ts.Name)
		if strings.HasPrefix(n, "layers.") {
			n = "layers.L." + strings.SplitN(n, ".", 3)[2]
		}
		if !slices.Contains(want, n) {
			want = append(want, n)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("docs/world-model.md's table names\n%q\nthe layout has\n%q", got, want)
	}
}

// checkReadST reads data as a safetensors file (with the configuration
// want, if not nil): an error must start with "worldmodel: " and wrap one
// of the package's errors; a model that reads must export and read back to
// the same values, and export to the same bytes twice.
func checkReadST(t *testing.T, data []byte, want *Config) *Model {
	m, _, err := ReadSafetensors(bytes.NewReader(data), int64(len(data)), want)
	if err != nil {
		if !strings.HasPrefix(err.Error(), "worldmodel: ") {
			t.Fatalf("error %q does not start with worldmodel: ", err)
		}
		for _, e := range []error{ErrFormat, ErrVersion, ErrConfig, ErrProfile} {
			if errors.Is(err, e) {
				return nil
			}
		}
		t.Fatalf("error %v wraps none of ErrFormat, ErrVersion, ErrConfig, ErrProfile", err)
	}
	var a, b bytes.Buffer
	m.WriteSafetensors(&a)
	m.WriteSafetensors(&b)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("exporting twice gave different bytes")
	}
	again, _, err := ReadSafetensors(bytes.NewReader(a.Bytes()), int64(a.Len()), nil)
	if err != nil || !sameData(again, m) {
		t.Fatalf("an accepted file does not export and read back: %v", err)
	}
	return m
}

// FuzzReadSafetensors: ReadSafetensors never panics, errors are the
// package's, and an accepted file exports and reads back to the same
// model. which picks the caller's configuration: none, the 363-parameter
// one or the tiny preset. The seeds are short, so that the fuzzer's
// minimisation of new inputs (quadratic in their length) stays cheap;
// FuzzSafetensorsDamaged covers whole files.
func FuzzReadSafetensors(f *testing.F) {
	f.Add(exportST(f, nanoModel(f))[:120], uint8(0))
	f.Add(stRaw(`{"__metadata__":{"a":"b"},"x":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}}`, []byte{0, 60}), uint8(1))
	f.Add(stRaw(`{"valid.b":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}}  `, []byte{0, 60, 1, 2}), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) { fuzzST(t, data, which) })
}

// FuzzSafetensorsDamaged damages a whole exported file as its input says:
// edits is a list of (offset uint16, xor byte) triples and cut (when not
// zero) truncates. which picks the file and the caller's configuration:
// a 363-parameter model's export (none), the same without its config
// metadata (its configuration), and a tiny-preset model's export (the tiny
// preset).
func FuzzSafetensorsDamaged(f *testing.F) {
	nano := exportST(f, nanoModel(f))
	h, buf := stSplit(f, nano)
	delete(h, "__metadata__")
	files := [][]byte{nano, stJoin(f, h, buf), exportST(f, tinyModel(f, 5))}
	f.Add([]byte{}, uint16(0), uint8(0))
	f.Add([]byte{}, uint16(0), uint8(1))
	f.Add([]byte{}, uint16(0), uint8(2))
	f.Add([]byte{20, 0, 0x10}, uint16(0), uint8(0))
	f.Add([]byte{0, 0, 1}, uint16(300), uint8(1))
	f.Fuzz(func(t *testing.T, edits []byte, cut uint16, which uint8) {
		fuzzST(t, fuzzdamage.Damage(files[int(which)%len(files)], edits, cut, false), which)
	})
}

// fuzzST reads data with the configuration which picks (none, the
// 363-parameter one, the tiny preset) through checkReadST; what reads
// with the file's own configuration reads the same when it is given.
func fuzzST(t *testing.T, data []byte, which uint8) {
	var want *Config
	switch which % 3 {
	case 1:
		c := nanoConfig()
		want = &c
	case 2:
		c, _ := Preset("tiny")
		want = &c
	}
	m := checkReadST(t, data, want)
	if m != nil && want == nil {
		cfg := m.Config()
		if m2 := checkReadST(t, data, &cfg); m2 == nil || !sameData(m, m2) {
			t.Fatal("giving the file's own configuration changed the result")
		}
	}
}
