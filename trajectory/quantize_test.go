package trajectory

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// sign is a stand-in quantizer: one code per value, 1 when it is positive.
func sign(dst []uint8, s []float32) error {
	for i := range dst {
		dst[i] = 0
		if s[i] > 0 {
			dst[i] = 1
		}
	}
	return nil
}

// TestWithQuantize reads a states file twice, with and without quantizing on
// read: the quantized episodes carry the codes of the states, no states, and
// the same actions and facts; their checksums are verified on the way, so a
// damaged state is still an error; an error from the quantizer names the
// episode and step.
func TestWithQuantize(t *testing.T) {
	m := Meta{Shape: smallShape, Content: States}
	n := smallShape.StateLen()
	eps := testEpisodes(m, 24, 70)
	// One episode longer than a record batch (rowsPerBatch rows).
	long := &Episode{ID: 7}
	for _, ep := range eps[3:] {
		long.States = append(long.States, ep.States...)
	}
	for len(long.Actions) < long.Len()-1 {
		long.Actions = append(long.Actions, eps[0].Actions[0])
	}
	if long.Len() <= rowsPerBatch {
		t.Fatalf("the long episode has %d observations", long.Len())
	}
	eps = append([]*Episode{long}, eps[:3]...)
	for _, ext := range []string{".arrow", ".parquet"} {
		p := filepath.Join(t.TempDir(), "x"+ext)
		writeFile(t, p, m, eps)
		plain := readEpisodes(t, p)
		r, err := Open(p, WithQuantize(n, sign))
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; ; k++ {
			ep, err := r.Next()
			if errors.Is(err, io.EOF) {
				if k != len(plain) {
					t.Fatalf("%s: %d episodes, want %d", ext, k, len(plain))
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			want := plain[k]
			if ep.States != nil || len(ep.Codes) != want.Len() || len(ep.Actions) != len(want.Actions) || len(ep.Facts) != len(want.Facts) {
				t.Fatalf("%s: episode %d: %d states, %d codes, want %d codes", ext, ep.ID, len(ep.States), len(ep.Codes), want.Len())
			}
			z := make([]uint8, n)
			for s := range want.States {
				sign(z, want.States[s])
				if string(z) != string(ep.Codes[s]) {
					t.Fatalf("%s: episode %d step %d: codes differ from the states'", ext, ep.ID, s)
				}
			}
		}
		r.Close()
		// The quantizer's error names where it happened.
		r, _ = Open(p, WithQuantize(n, func([]uint8, []float32) error { return errors.New("no codebook") }))
		if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), "step 0: no codebook") || !strings.Contains(err.Error(), p) {
			t.Fatalf("%s: quantizer error: %v", ext, err)
		}
		r.Close()
	}
	if _, err := Open("x.arrow", WithQuantize(0, sign)); err == nil {
		t.Fatal("WithQuantize(0) accepted")
	}
}

func readEpisodes(t *testing.T, p string, opts ...Option) []*Episode {
	t.Helper()
	r, err := Open(p, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []*Episode
	for {
		ep, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ep)
	}
}

// unsign is the stand-in dequantizer of sign: code c gives 2c - 1.
func unsign(dst []float32, z []uint8) error {
	for i := range dst {
		dst[i] = float32(2*int(z[i%len(z)]) - 1)
	}
	return nil
}

// TestSetStatesFrom writes episodes of codes into a states file through a
// dequantizer, one state per row: the file reads back (checksums verified)
// as the states of those codes, in every format; an episode with states is
// written as before.
func TestSetStatesFrom(t *testing.T) {
	m := Meta{Shape: smallShape, Content: States}
	cm := Meta{Shape: smallShape, Content: Codes}
	coded := testEpisodes(cm, 3, 71)
	plain := testEpisodes(m, 1, 72)
	plain[0].ID = 999
	for _, ext := range []string{".arrow", ".parquet", ".npy"} {
		p := filepath.Join(t.TempDir(), "x"+ext)
		w, err := Create(p, m)
		if err != nil {
			t.Fatal(err)
		}
		w.SetStatesFrom(unsign)
		for _, ep := range append(coded, plain...) {
			if err := w.Write(ep); err != nil {
				t.Fatalf("%s: %v", ext, err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if ext == ".npy" {
			continue // read back through Summarize elsewhere; no Reader for .npy
		}
		got := readEpisodes(t, p)
		if len(got) != 4 {
			t.Fatalf("%s: %d episodes", ext, len(got))
		}
		for k, ep := range coded {
			s := make([]float32, smallShape.StateLen())
			for step := range ep.Codes {
				unsign(s, ep.Codes[step])
				for i := range s {
					if got[k].States[step][i] != s[i] {
						t.Fatalf("%s: episode %d step %d value %d: %g, want %g", ext, ep.ID, step, i, got[k].States[step][i], s[i])
					}
				}
			}
		}
		if got[3].States[2][5] != plain[0].States[2][5] {
			t.Fatalf("%s: the episode with states changed", ext)
		}
	}
}

// TestWriteRows writes episodes row by row from a state function: the file
// is byte-identical to one written from the same episodes with their states,
// in every format; misuse is refused.
func TestWriteRows(t *testing.T) {
	m := Meta{Shape: smallShape, Content: States}
	eps := testEpisodes(m, 4, 73)
	for _, ext := range []string{".arrow", ".parquet", ".npy"} {
		dir := t.TempDir()
		a, b := filepath.Join(dir, "a"+ext), filepath.Join(dir, "b"+ext)
		writeFile(t, a, m, eps)
		w, err := Create(b, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, ep := range eps {
			bare := *ep
			bare.States = nil
			if err := w.WriteRows(&bare, ep.Len(), func(t int, dst []float32) error {
				copy(dst, ep.States[t])
				return nil
			}); err != nil {
				t.Fatalf("%s: %v", ext, err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		da, _ := os.ReadFile(a)
		db, _ := os.ReadFile(b)
		if !bytes.Equal(da, db) {
			t.Fatalf("%s: WriteRows wrote other bytes than Write", ext)
		}
	}
	w, err := Create(filepath.Join(t.TempDir(), "c.arrow"), m)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRows(eps[0], eps[0].Len(), func(int, []float32) error { return nil }); err == nil {
		t.Fatal("WriteRows took an episode with states")
	}
}

// TestNPYActions: a NumPy export writes its actions beside it, one float64
// row per action that gives back every field exactly; Summarize counts them
// and refuses an actions file that does not fit the index.
func TestNPYActions(t *testing.T) {
	m := Meta{Shape: smallShape, Content: Codes}
	eps := testEpisodes(m, 3, 74)
	eps[0].Actions[0].Payload = []byte("hello, world")
	p := filepath.Join(t.TempDir(), "x.npy")
	writeFile(t, p, m, eps)
	data, err := os.ReadFile(ActionsPath(p))
	if err != nil {
		t.Fatal(err)
	}
	h, off, err := readNPYHeader(bytes.NewReader(data))
	if err != nil || h.Descr != "<f8" || h.Shape[1] != ActionColumns {
		t.Fatalf("header %+v %v", h, err)
	}
	rows := data[off:]
	f := func(r, c int) float64 {
		return math.Float64frombits(binary.LittleEndian.Uint64(rows[8*(r*ActionColumns+c):]))
	}
	r := 0
	counts := map[string]int64{}
	for _, ep := range eps {
		for k, a := range ep.Actions {
			payload := make([]byte, int(f(r, 9)))
			for i := range payload {
				payload[i] = byte(f(r, 10+i))
			}
			got := Action{Type: ActionType(f(r, 2)), HasPos: f(r, 3) == 1, HasDelta: f(r, 6) == 1}
			if got.HasPos {
				got.X, got.Y = float32(f(r, 4)), float32(f(r, 5))
			}
			if got.HasDelta {
				got.DX, got.DY = float32(f(r, 7)), float32(f(r, 8))
			}
			if len(a.Payload) > 0 {
				got.Payload = payload
			}
			if f(r, 0) != float64(ep.ID) || f(r, 1) != float64(k+1) || !reflect.DeepEqual(got, a) {
				t.Fatalf("row %d: %+v at (%g, %g), want %+v at (%d, %d)", r, got, f(r, 0), f(r, 1), a, ep.ID, k+1)
			}
			counts[ActionTypeNames()[a.Type]]++
			r++
		}
	}
	if r != h.Shape[0] {
		t.Fatalf("%d rows, %d actions", h.Shape[0], r)
	}
	s, err := Summarize(p)
	if err != nil || !s.NPYActions {
		t.Fatalf("Summarize: %+v %v", s, err)
	}
	for name, n := range counts {
		if s.Actions[name] != n {
			t.Fatalf("%s: %d counted, want %d", name, s.Actions[name], n)
		}
	}
	// An actions file that does not fit the index is refused.
	if err := os.WriteFile(ActionsPath(p), data[:len(data)-8*ActionColumns], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Summarize(p); err == nil {
		t.Fatal("a truncated actions file passed")
	}
}

// TestQuantizeByBatch: the quantizer gets a record batch's states at once
// (one call per batch), and a state it must not see (not finite) in
// the middle of a batch is an error at that row, after the episodes before
// it came back whole.
func TestQuantizeByBatch(t *testing.T) {
	m := Meta{Shape: smallShape, Content: States}
	n := smallShape.StateLen()
	eps := testEpisodes(m, 12, 20)
	rows, batches := 0, 0
	for _, ep := range eps {
		rows += ep.Len()
		batches += (ep.Len() + rowsPerBatch - 1) / rowsPerBatch // the Writer's batches
	}
	p := filepath.Join(t.TempDir(), "x.arrow")
	writeFile(t, p, m, eps)
	calls := 0
	counting := func(dst []uint8, s []float32) error {
		calls++
		return sign(dst, s)
	}
	got := readEpisodes(t, p, WithQuantize(n, counting))
	if len(got) != len(eps) || calls != batches {
		t.Fatalf("%d episodes, %d quantizer calls for %d rows in %d batches", len(got), calls, rows, batches)
	}
	// A NaN in the middle of a batch (written raw: the Writer refuses it):
	// episode 1 comes back quantized, episode 2 is an error at its step 2,
	// and the quantizer never sees the NaN.
	var raw []row
	for ep := int64(1); ep <= 2; ep++ {
		for step := int32(0); step < 4; step++ {
			r := row{ep: ep, step: step, action: int(step) - 1, xy: [2]bool{step > 0, step > 0}, x: 0.5, y: 0.5, value: 1}
			if step == 0 {
				r.action = -1
				r.xy = [2]bool{}
			}
			if ep == 2 && step == 2 {
				r.value = float32(math.NaN())
			}
			raw = append(raw, r)
		}
	}
	rp := filepath.Join(t.TempDir(), "nan.arrow")
	writeRaw(t, rp, raw)
	r, err := Open(rp, WithQuantize(n, func(dst []uint8, s []float32) error {
		for _, v := range s {
			if v != v {
				t.Fatal("the quantizer saw a NaN")
			}
		}
		return sign(dst, s)
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ep, err := r.Next()
	if err != nil || ep.ID != 1 || len(ep.Codes) != 4 || ep.Codes[3][3] != 1 {
		t.Fatalf("episode 1: %v %+v", err, ep)
	}
	if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), "episode 2 step 2") {
		t.Fatalf("the NaN: %v", err)
	}
}
