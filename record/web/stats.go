package web

import (
	"bytes"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"slices"
	"time"
)

// Timing is how long one step took, by stage.
type Timing struct {
	Act        time.Duration // sending the action
	Settle     time.Duration // waiting for loads and the scroll to end
	Screenshot time.Duration // capturing the PNG
	Facts      time.Duration // reading the page (observe.js)
}

// Total is the step's whole recording time.
func (t Timing) Total() time.Duration { return t.Act + t.Settle + t.Screenshot + t.Facts }

// JSON returns the timing as the object of timing.jsonl: milliseconds with
// two decimals.
func (t Timing) JSON(step int) map[string]any {
	ms := func(d time.Duration) float64 { return float64(d.Round(10*time.Microsecond).Microseconds()) / 1e3 }
	return map[string]any{
		"step": step, "act": ms(t.Act), "settle": ms(t.Settle),
		"screenshot": ms(t.Screenshot), "facts": ms(t.Facts), "total": ms(t.Total()),
	}
}

// Summary is the mean, median and 95th percentile of some durations, in
// milliseconds.
type Summary struct{ Mean, Median, P95 float64 }

// Summarize returns the summary of ds (zero for none). Percentiles are the
// nearest rank.
func Summarize(ds []time.Duration) Summary {
	if len(ds) == 0 {
		return Summary{}
	}
	ms := make([]float64, len(ds))
	sum := 0.0
	for i, d := range ds {
		ms[i] = float64(d) / float64(time.Millisecond)
		sum += ms[i]
	}
	slices.Sort(ms)
	rank := func(q float64) float64 {
		i := int(q*float64(len(ms))+0.999999) - 1
		return ms[min(len(ms)-1, max(0, i))]
	}
	return Summary{Mean: sum / float64(len(ms)), Median: rank(0.5), P95: rank(0.95)}
}

func (s Summary) String() string {
	return fmt.Sprintf("mean %.0f, median %.0f, p95 %.0f ms", s.Mean, s.Median, s.P95)
}

// Change is how much one screenshot differs from the one before.
type Change struct {
	Pixels float64 // share of pixels that differ
	Blocks float64 // share of 8x8 blocks with a differing pixel
}

// Changed reports whether any pixel differs.
func (c Change) Changed() bool { return c.Pixels > 0 }

// BlockSize is the side of the blocks Change counts.
const BlockSize = 8

// Diff returns the change from a to b, two images of one size.
func Diff(a, b *image.RGBA) Change {
	r := a.Bounds()
	w, h := r.Dx(), r.Dy()
	bw, bh := (w+BlockSize-1)/BlockSize, (h+BlockSize-1)/BlockSize
	blocks := make([]bool, bw*bh)
	pixels := 0
	for y := range h {
		ra := a.Pix[y*a.Stride : y*a.Stride+4*w]
		rb := b.Pix[y*b.Stride : y*b.Stride+4*w]
		if bytes.Equal(ra, rb) {
			continue
		}
		for x := range w {
			i := 4 * x
			if ra[i] != rb[i] || ra[i+1] != rb[i+1] || ra[i+2] != rb[i+2] || ra[i+3] != rb[i+3] {
				pixels++
				blocks[(y/BlockSize)*bw+x/BlockSize] = true
			}
		}
	}
	nb := 0
	for _, c := range blocks {
		if c {
			nb++
		}
	}
	return Change{Pixels: float64(pixels) / float64(w*h), Blocks: float64(nb) / float64(bw*bh)}
}

// DecodeRGBA decodes a PNG into an RGBA image with its origin at (0, 0).
func DecodeRGBA(data []byte) (*image.RGBA, error) {
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("record web: screenshot: %w", err)
	}
	if m, ok := img.(*image.RGBA); ok && m.Rect.Min == (image.Point{}) {
		return m, nil
	}
	r := img.Bounds()
	m := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	draw.Draw(m, m.Rect, img, r.Min, draw.Src)
	return m, nil
}

// ChangeStats sums the changes of a recording's steps.
type ChangeStats struct {
	Steps   int     // steps compared
	Changed int     // steps whose screenshot differs from the one before
	Pixels  float64 // sum of the steps' changed-pixel shares
	Blocks  float64 // sum of the steps' changed-block shares
}

// Add counts one step.
func (s *ChangeStats) Add(c Change) {
	s.Steps++
	if c.Changed() {
		s.Changed++
	}
	s.Pixels += c.Pixels
	s.Blocks += c.Blocks
}

// ChangedShare is the share of steps whose screenshot changed.
func (s ChangeStats) ChangedShare() float64 { return ratio(float64(s.Changed), s.Steps) }

// MeanPixels is the mean share of changed pixels per step.
func (s ChangeStats) MeanPixels() float64 { return ratio(s.Pixels, s.Steps) }

// MeanBlocks is the mean share of changed 8x8 blocks per step.
func (s ChangeStats) MeanBlocks() float64 { return ratio(s.Blocks, s.Steps) }

func ratio(a float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return a / float64(n)
}
