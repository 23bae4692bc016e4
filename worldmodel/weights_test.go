package worldmodel

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/memowm/memowm/internal/fuzzdamage"
)

func TestWeightsRoundTrip(t *testing.T) {
	m := tinyModel(t, 11)
	var buf bytes.Buffer
	n, err := m.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo: %d bytes, %v (buffer %d)", n, err, buf.Len())
	}
	// Read consumes exactly the file: what follows stays in the reader.
	buf.WriteString("TRAILER")
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if rest := buf.String(); rest != "TRAILER" {
		t.Fatalf("Read left %q", rest)
	}
	if got.Config() != m.Config() || diffAt(got.p.Data, m.p.Data) >= 0 {
		t.Fatal("round trip changed the model")
	}
	// Writing twice gives identical bytes.
	var a, b bytes.Buffer
	m.WriteTo(&a)
	got.WriteTo(&b)
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("rewriting changed the bytes")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "wm.bin")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	l, err := Load(path)
	if err != nil || diffAt(l.p.Data, m.p.Data) >= 0 {
		t.Fatalf("Load: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("Save left %d files", len(entries))
	}
	os.WriteFile(path, append(a.Bytes(), 0), 0o644)
	if _, err := Load(path); !errors.Is(err, ErrFormat) {
		t.Errorf("trailing byte: %v", err)
	}
}

func TestWeightsDamage(t *testing.T) {
	m := tinyModel(t, 12)
	var buf bytes.Buffer
	m.WriteTo(&buf)
	file := buf.Bytes()
	for _, cut := range []int{0, 3, 8, 15, 16, 40, 400, len(file) / 2, len(file) - 1} {
		_, err := Read(bytes.NewReader(file[:cut]))
		if !errors.Is(err, ErrFormat) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("truncated at %d: %v", cut, err)
		}
	}
	flip := func(i int, mask byte) []byte {
		d := append([]byte(nil), file...)
		d[i] ^= mask
		return d
	}
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"magic", flip(0, 1), ErrFormat},
		{"version", flip(8, 2), ErrVersion},
		{"config length", flip(13, 0x10), ErrFormat},
		{"config json", flip(17, 0x40), ErrFormat},
		{"tensor bit", flip(len(file)-100, 0x01), ErrChecksum},
		{"crc", flip(len(file)-1, 0x80), ErrChecksum},
	}
	for _, tc := range cases {
		if _, err := Read(bytes.NewReader(tc.data)); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing file loaded")
	}
}

// nanoWeights is the smallest weights file: 363 parameters, 1.8 KB.
func nanoWeights(t testing.TB) []byte {
	t.Helper()
	cfg := Config{Profile: ProfileF32, MaxHistory: 1, Slots: 1, Subspaces: 2, Codewords: 2, CodeDim: 1,
		Layers: 1, Heads: 1, MLP: 1, ActionTypes: 1, CoordBins: 1, ActionDim: 1, ByteDim: 1,
		PayloadHidden: 1, MaxPayload: 1, Tasks: 1}
	m, err := New(cfg, 13)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	m.WriteTo(&buf)
	return buf.Bytes()
}

// checkRead reads data: an error must wrap one of the package's format
// errors, and a model that reads must write back to the bytes it consumed.
func checkRead(t *testing.T, data []byte) (accepted bool) {
	r := bytes.NewReader(data)
	got, err := Read(r)
	if err != nil {
		if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrVersion) && !errors.Is(err, ErrChecksum) {
			t.Fatalf("error %v wraps none of ErrFormat, ErrVersion, ErrChecksum", err)
		}
		return false
	}
	var out bytes.Buffer
	got.WriteTo(&out)
	if !bytes.Equal(out.Bytes(), data[:len(data)-r.Len()]) {
		t.Fatal("accepted file does not write back to itself")
	}
	return true
}

// FuzzRead: Read never panics and either fails or returns a model that
// writes back to the bytes it consumed. Its seeds are short, so the
// fuzzer's minimisation of new inputs (quadratic in their length) stays
// cheap; FuzzReadDamaged covers whole files.
func FuzzRead(f *testing.F) {
	f.Add(nanoWeights(f)[:100])
	f.Add([]byte("MEMOWMWM\x01\x00\x00\x00\x02\x00\x00\x00{}"))
	f.Fuzz(func(t *testing.T, data []byte) { checkRead(t, data) })
}

// FuzzReadDamaged damages a whole 363-parameter weights file as its input
// says: edits is a list of (offset uint16, xor byte) triples, cut (when not
// zero) truncates, and reseal recomputes the checksum so that the damage
// reaches the checks behind it. Without reseal any damage must be an error.
func FuzzReadDamaged(f *testing.F) {
	file := nanoWeights(f)
	f.Add([]byte{0, 0, 1}, uint16(0), false)
	f.Add([]byte{20, 0, 0x10}, uint16(0), true)
	f.Add([]byte{}, uint16(len(file)-3), true)
	f.Fuzz(func(t *testing.T, edits []byte, cut uint16, reseal bool) {
		d := fuzzdamage.Damage(file, edits, cut, reseal)
		if checkRead(t, d) && !reseal && !bytes.Equal(d, file) {
			t.Fatal("a damaged file was accepted")
		}
	})
}
