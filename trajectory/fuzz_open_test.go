package trajectory

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// tinyShape keeps seed files small, so that fuzzers run thousands of
// executions a second.
var tinyShape = Shape{Slots: 2, Dim: 2, Codes: 4}

// seedFiles writes a small memowm file of each kind for the fuzzers and the
// damage tests: .arrow, .parquet, .npy with its index, and questions.
func seedFiles(t testing.TB, shape Shape, episodes int) map[string][]byte {
	t.Helper()
	m := Meta{Shape: shape, Content: States}
	eps := testEpisodes(m, episodes, 1)
	dir := t.TempDir()
	out := map[string][]byte{}
	for _, ext := range []string{".arrow", ".parquet", ".npy"} {
		p := filepath.Join(dir, "seed"+ext)
		writeFile(t, p, m, eps)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[ext] = b
	}
	idx, err := os.ReadFile(IndexPath(filepath.Join(dir, "seed.npy")))
	if err != nil {
		t.Fatal(err)
	}
	out[".index.npy"] = idx
	var qs []Question
	for _, ep := range eps {
		qs = append(qs, Question{Episode: ep.ID, Step: 1, Kind: "typed", Subject: "field:email", Text: "What was typed?", Answer: "a@b.c", Choices: []string{"a@b.c", "x"}})
	}
	qp := filepath.Join(dir, "seed.questions.jsonl")
	if err := WriteQuestions(qp, qs); err != nil {
		t.Fatal(err)
	}
	if out[".questions.jsonl"], err = os.ReadFile(qp); err != nil {
		t.Fatal(err)
	}
	return out
}

// readBytes reads b as a trajectory file of the given format from memory.
func readBytes(b []byte, format Format) (Meta, []*Episode, bool, error) {
	r, err := NewReader(bytes.NewReader(b), int64(len(b)), format, "fuzz."+format.String())
	if err != nil {
		return Meta{}, nil, false, err
	}
	defer r.Close()
	var eps []*Episode
	for {
		ep, err := r.Next()
		if err == io.EOF {
			return r.Meta(), eps, r.Checksummed(), nil
		}
		if err != nil {
			return r.Meta(), eps, r.Checksummed(), err
		}
		eps = append(eps, ep)
	}
}

// fuzzOpen checks that any bytes, read as a trajectory file from memory, give
// episodes or an error, never a panic or an unbounded allocation.
func fuzzOpen(f *testing.F, ext string, format Format) {
	seed := seedFiles(f, tinyShape, 2)[ext]
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add(seed[len(seed)/3:])
	f.Fuzz(func(t *testing.T, b []byte) {
		readBytes(b, format) // must not panic
	})
}

func FuzzOpenArrow(f *testing.F)   { fuzzOpen(f, ".arrow", Arrow) }
func FuzzOpenParquet(f *testing.F) { fuzzOpen(f, ".parquet", Parquet) }

// summarizeNPYBytes summarises a .npy export and its index from memory.
func summarizeNPYBytes(obs, idx []byte) (*Summary, error) {
	s := &Summary{Actions: map[string]int64{}}
	var ra io.ReaderAt
	if idx != nil {
		ra = bytes.NewReader(idx)
	}
	return s, s.npyFrom(bytes.NewReader(obs), int64(len(obs)), ra, int64(len(idx)), "fuzz.npy")
}

func FuzzNPY(f *testing.F) {
	seeds := seedFiles(f, tinyShape, 2)
	f.Add(seeds[".npy"], seeds[".index.npy"])
	f.Fuzz(func(t *testing.T, obs, idx []byte) {
		summarizeNPYBytes(obs, idx) // must not panic
	})
}

func FuzzQuestions(f *testing.F) {
	f.Add(seedFiles(f, tinyShape, 2)[".questions.jsonl"])
	f.Fuzz(func(t *testing.T, b []byte) {
		qs, err := DecodeQuestions(bytes.NewReader(b), "fuzz.questions.jsonl")
		if err == nil {
			for i := range qs {
				if qs[i].Validate() != nil {
					t.Fatalf("question %d accepted but invalid", i)
				}
			}
		}
	})
}
