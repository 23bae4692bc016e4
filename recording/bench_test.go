package recording

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memowm/memowm/screen"
)

// BenchmarkEpisode measures Read plus Episode: JSON or PNG decoding and the
// screen encoders, per screen.
func BenchmarkEpisode(b *testing.B) {
	const n = 32
	for _, c := range []struct {
		name string
		meta Meta
	}{
		{"text-80x24", Meta{Kind: "tty", Screen: ScreenText, Width: 80, Height: 24}},
		{"image-640x400", Meta{Kind: "web", Screen: ScreenImage, Width: 640, Height: 400}},
		{"image-1280x800", Meta{Kind: "web", Screen: ScreenImage, Width: 1280, Height: 800}},
	} {
		dir := filepath.Join(b.TempDir(), "rec")
		w, err := NewWriter(dir, c.meta)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if i > 0 {
				w.AddAction(Action{Type: "noop"})
			}
			if c.meta.Screen == ScreenText {
				var rows []string
				for y := 0; y < 24; y++ {
					rows = append(rows, fmt.Sprintf("%4d %4d the quick brown fox jumps over the lazy dog %08x", i, y, i*y*7919))
				}
				err = w.AddText(screen.Text{Rows: rows, HasCursor: true, CursorX: i, CursorY: i % 24}, nil)
			} else {
				err = w.AddPNG(pngOf(b, c.meta.Width, c.meta.Height, i), nil)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				r, err := Read(dir)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.Episode(0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "screens/s")
		})
	}
}
