package trajectory

import (
	"os"
	"path/filepath"
	"testing"
)

// fuzzOpen checks that any bytes, read as a trajectory file, give episodes or
// an error, never a panic.
func fuzzOpen(f *testing.F, ext string) {
	m := Meta{Shape: smallShape, Content: States}
	seed := filepath.Join(f.TempDir(), "seed"+ext)
	writeFile(f, seed, m, testEpisodes(m, 2, 1))
	data, _ := os.ReadFile(seed)
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Add(data[len(data)/3:])
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "in"+ext)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		readAll(p) // must not panic
	})
}

func FuzzOpenArrow(f *testing.F)   { fuzzOpen(f, ".arrow") }
func FuzzOpenParquet(f *testing.F) { fuzzOpen(f, ".parquet") }
