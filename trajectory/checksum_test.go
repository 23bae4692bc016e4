package trajectory

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestChecksummedAndLegacyFiles(t *testing.T) {
	m := Meta{Shape: smallShape, Content: States}
	for _, ext := range []string{".arrow", ".parquet"} {
		dir := t.TempDir()
		p := filepath.Join(dir, "x"+ext)
		writeFile(t, p, m, testEpisodes(m, 3, 4))
		r, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Checksummed() {
			t.Errorf("%s: a memowm file is not checksummed", ext)
		}
		r.Close()
		if s, err := Summarize(p); err != nil || !s.Checksummed || s.Episodes != 3 {
			t.Errorf("%s: Summarize %+v %v", ext, s, err)
		}
		// A file written without checksums (another tool, or memowm before
		// them) is still read, and says so.
		legacy := filepath.Join(dir, "legacy"+ext)
		writeRaw(t, legacy, []row{{ep: 1, action: -1}, {ep: 1, step: 1, action: 3}})
		r, err = Open(legacy)
		if err != nil {
			t.Fatal(err)
		}
		if r.Checksummed() {
			t.Errorf("%s: a file without checksums claims them", ext)
		}
		if ep, err := r.Next(); err != nil || ep.Len() != 2 {
			t.Errorf("%s: legacy file: %v", ext, err)
		}
		r.Close()
	}
}

// TestChecksumMismatch changes one stored sum and expects the episode named.
func TestChecksumMismatch(t *testing.T) {
	m := Meta{Shape: smallShape, Content: Codes}
	eps := testEpisodes(m, 3, 5)
	sums := make([]uint32, len(eps))
	for i, ep := range eps {
		sums[i] = episodeSum(m, ep)
	}
	for _, ext := range []string{".arrow", ".parquet"} {
		p := filepath.Join(t.TempDir(), "x"+ext)
		writeFile(t, p, m, eps)
		b, _ := os.ReadFile(p)
		old := encodeSums(sums)
		bad := []byte(encodeSums([]uint32{sums[0], sums[1] ^ 1, sums[2]}))
		i := bytes.Index(b, []byte(old))
		if i < 0 {
			t.Fatalf("%s: sums not found in the file", ext)
		}
		copy(b[i:], bad)
		_, got, _, err := readBytes(b, map[string]Format{".arrow": Arrow, ".parquet": Parquet}[ext])
		if !errors.Is(err, ErrChecksum) || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "episode 103") {
			t.Fatalf("%s: %v", ext, err)
		}
		if len(got) != 1 || !reflect.DeepEqual(got[0], eps[0]) {
			t.Fatalf("%s: the episodes before the damaged one should read", ext)
		}
	}
}

func TestMaxAlloc(t *testing.T) {
	m := Meta{Shape: DefaultShape, Content: States}
	ep := testEpisodes(Meta{Shape: DefaultShape, Content: States}, 1, 2)[0]
	for _, ext := range []string{".arrow", ".parquet"} {
		p := filepath.Join(t.TempDir(), "x"+ext)
		writeFile(t, p, m, []*Episode{ep})
		r, err := Open(p, WithMaxAlloc(1<<10))
		if err == nil {
			_, err = r.Next()
			r.Close()
		}
		if !errors.Is(err, ErrLimit) || !errors.Is(err, ErrFormat) || strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), "--max-alloc") {
			t.Errorf("%s: a 1 KiB cap: %v", ext, err)
		}
	}
	if _, err := Open("x.arrow", WithMaxAlloc(0)); err == nil {
		t.Error("WithMaxAlloc(0) accepted")
	}
}

func TestWriterQuestions(t *testing.T) {
	m := Meta{Shape: smallShape, Content: States}
	dir := t.TempDir()
	p := filepath.Join(dir, "x.arrow")
	qs := []Question{{Episode: 100, Step: 1, Kind: "k", Text: "q?", Answer: "a", Choices: []string{"a"}}}
	w, err := Create(p, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetQuestions([]Question{{Step: 1}}); err == nil {
		t.Fatal("an invalid question was accepted")
	}
	if err := w.SetQuestions(qs); err != nil {
		t.Fatal(err)
	}
	for _, ep := range testEpisodes(m, 2, 1) {
		if err := w.Write(ep); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadQuestions(QuestionsPath(p))
	if err != nil || !reflect.DeepEqual(got, qs) {
		t.Fatalf("questions %+v %v", got, err)
	}
	// A new file without questions removes the stale ones.
	writeFile(t, p, m, testEpisodes(m, 1, 9))
	if _, err := os.Stat(QuestionsPath(p)); !os.IsNotExist(err) {
		t.Fatalf("stale questions file left beside a new trajectory: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 1 {
		t.Fatalf("%d files in the directory, want 1", len(left))
	}
}

func TestQuestionLineLimit(t *testing.T) {
	long := `{"episode":1,"step":0,"kind":"k","question":"` + strings.Repeat("x", MaxQuestionLine) + `","answer":"a","choices":["a"]}`
	_, err := DecodeQuestions(strings.NewReader("\n"+long+"\n"), "q.jsonl")
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "q.jsonl line 2") {
		t.Fatalf("long line: %v", err)
	}
}
