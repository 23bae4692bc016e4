package trajectory

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

var smallShape = Shape{Slots: 4, Dim: 8, Codes: 16}

// testEpisodes returns n seeded episodes of varied lengths with every kind of
// optional action field present and absent.
func testEpisodes(m Meta, n int, seed uint64) []*Episode {
	rng := rand.New(rand.NewPCG(seed, 1))
	var eps []*Episode
	for e := 0; e < n; e++ {
		T := 1 + rng.IntN(7)
		ep := &Episode{ID: int64(100 + 3*e)}
		for t := 0; t <= T; t++ {
			if m.Content == States {
				s := make([]float32, m.Shape.StateLen())
				for i := range s {
					s[i] = float32(rng.NormFloat64())
				}
				ep.States = append(ep.States, s)
			} else {
				c := make([]uint8, m.Shape.Codes)
				for i := range c {
					c[i] = uint8(rng.IntN(64))
				}
				ep.Codes = append(ep.Codes, c)
			}
			if e%2 == 0 {
				ep.Facts = append(ep.Facts, []byte(`{"t":`+string(rune('0'+t))+`}`))
			}
		}
		for t := 0; t < T; t++ {
			a := Action{Type: ActionType(rng.IntN(NumActionTypes)), Payload: []byte{}}
			if rng.IntN(2) == 0 {
				a.HasPos, a.X, a.Y = true, rng.Float32(), rng.Float32()
			}
			if rng.IntN(3) == 0 {
				a.HasDelta, a.DX, a.DY = true, float32(rng.NormFloat64()), -3
			}
			a.Payload = make([]byte, rng.IntN(MaxPayload+1))
			for i := range a.Payload {
				a.Payload[i] = byte(rng.IntN(256))
			}
			ep.Actions = append(ep.Actions, a)
		}
		eps = append(eps, ep)
	}
	return eps
}

func writeFile(t testing.TB, path string, m Meta, eps []*Episode) {
	t.Helper()
	w, err := Create(path, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps {
		if err := w.Write(ep); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func readAll(path string) (Meta, []*Episode, error) { return readPath(path) }

func TestRoundTrip(t *testing.T) {
	for _, ext := range []string{".arrow", ".parquet"} {
		for _, content := range []Content{States, Codes} {
			t.Run(ext+"/"+content.String(), func(t *testing.T) {
				m := Meta{Shape: smallShape, Content: content}
				want := testEpisodes(m, 5, 7)
				path := filepath.Join(t.TempDir(), "x"+ext)
				writeFile(t, path, m, want)
				gotMeta, got, err := readAll(path)
				if err != nil {
					t.Fatal(err)
				}
				if gotMeta != m {
					t.Fatalf("meta %+v, want %+v", gotMeta, m)
				}
				if len(got) != len(want) {
					t.Fatalf("%d episodes, want %d", len(got), len(want))
				}
				for i := range want {
					if !reflect.DeepEqual(got[i], want[i]) {
						t.Fatalf("episode %d differs:\n got %+v\nwant %+v", i, got[i], want[i])
					}
				}
			})
		}
	}
}

func TestRoundTripDefaultShapeLongEpisode(t *testing.T) {
	// More rows than one batch, at the paper's shape.
	m := Meta{Shape: DefaultShape, Content: States}
	ep := &Episode{ID: 1}
	for i := 0; i <= rowsPerBatch+5; i++ {
		s := make([]float32, m.Shape.StateLen())
		s[i] = float32(i)
		ep.States = append(ep.States, s)
		if i > 0 {
			ep.Actions = append(ep.Actions, Action{Type: Scroll, HasDelta: true, DY: 1, Payload: []byte{}})
		}
	}
	for _, ext := range []string{".arrow", ".parquet"} {
		path := filepath.Join(t.TempDir(), "long"+ext)
		writeFile(t, path, m, []*Episode{ep})
		_, got, err := readAll(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || !reflect.DeepEqual(got[0], ep) {
			t.Fatalf("%s: long episode did not round-trip", ext)
		}
	}
}

func TestDeterministicBytes(t *testing.T) {
	for _, ext := range []string{".arrow", ".parquet", ".npy"} {
		m := Meta{Shape: smallShape, Content: States}
		dir := t.TempDir()
		a, b := filepath.Join(dir, "a"+ext), filepath.Join(dir, "b"+ext)
		writeFile(t, a, m, testEpisodes(m, 4, 3))
		writeFile(t, b, m, testEpisodes(m, 4, 3))
		ba, _ := os.ReadFile(a)
		bb, _ := os.ReadFile(b)
		if len(ba) == 0 || !bytes.Equal(ba, bb) {
			t.Fatalf("%s: same episodes gave different bytes (%d vs %d)", ext, len(ba), len(bb))
		}
	}
}

func TestDamagedFiles(t *testing.T) {
	m := Meta{Shape: smallShape, Content: States}
	for _, ext := range []string{".arrow", ".parquet"} {
		dir := t.TempDir()
		good := filepath.Join(dir, "good"+ext)
		writeFile(t, good, m, testEpisodes(m, 3, 1))
		data, _ := os.ReadFile(good)
		cases := map[string][]byte{
			"empty":     {},
			"garbage":   bytes.Repeat([]byte("not a trajectory "), 50),
			"truncated": data[:len(data)/2],
			"no footer": data[:len(data)-3],
		}
		for name, b := range cases {
			p := filepath.Join(dir, "bad"+ext)
			os.WriteFile(p, b, 0o644)
			_, _, err := readAll(p)
			if err == nil {
				t.Errorf("%s %s: no error", ext, name)
				continue
			}
			if !errors.Is(err, ErrFormat) {
				t.Errorf("%s %s: error %v does not wrap ErrFormat", ext, name, err)
			}
		}
	}
}
