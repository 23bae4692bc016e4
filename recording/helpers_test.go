package recording

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/memowm/memowm/trajectory"
)

const handwritten = "testdata/handwritten"

// copyDir copies the files of src (and its frames/) into a new folder.
func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// pngOf encodes a w x h picture whose pixels depend on seed.
func pngOf(t testing.TB, w, h, seed int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x*7 + seed*31), uint8(y*13 + seed), uint8((x ^ y) * seed), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readAll reads every episode of a trajectory file.
func readAll(t testing.TB, path string) []*trajectory.Episode {
	t.Helper()
	r, err := trajectory.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var eps []*trajectory.Episode
	for {
		ep, err := r.Next()
		if err == io.EOF {
			return eps
		}
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, ep)
	}
}

// sameEpisode reports the first difference between a and b, bit for bit.
func sameEpisode(a, b *trajectory.Episode) string {
	switch {
	case a.ID != b.ID:
		return "id"
	case len(a.States) != len(b.States):
		return "observation count"
	case len(a.Actions) != len(b.Actions):
		return "action count"
	}
	for t := range a.States {
		if len(a.States[t]) != len(b.States[t]) {
			return "state width"
		}
		for i := range a.States[t] {
			if math.Float32bits(a.States[t][i]) != math.Float32bits(b.States[t][i]) {
				return "state values"
			}
		}
	}
	for t := range a.Actions {
		x, y := a.Actions[t], b.Actions[t]
		if x.Type != y.Type || x.HasPos != y.HasPos || x.X != y.X || x.Y != y.Y || x.HasDelta != y.HasDelta ||
			x.DX != y.DX || x.DY != y.DY || !bytes.Equal(x.Payload, y.Payload) {
			return "actions"
		}
	}
	if (a.Facts == nil) != (b.Facts == nil) || len(a.Facts) != len(b.Facts) {
		return "facts presence"
	}
	for t := range a.Facts {
		if !bytes.Equal(a.Facts[t], b.Facts[t]) {
			return "facts"
		}
	}
	return ""
}

func f64(v float64) *float64 { return &v }
