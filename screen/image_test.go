package screen

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// testPicture draws a deterministic picture: gradients, stripes and blocks.
func testPicture(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			r := uint8(x * 255 / max(w-1, 1))
			g := uint8(y * 255 / max(h-1, 1))
			b := uint8(((x / 7) ^ (y / 5)) * 37)
			if (x/40+y/30)%3 == 0 {
				r, g, b = 250, 250, 245
			}
			img.SetRGBA(x, y, color.RGBA{r, g, b, 255})
		}
	}
	return img
}

// opaque hides img's concrete type, so EncodeImage takes the generic path.
type opaque struct{ image.Image }

func mustImage(t *testing.T, img image.Image) []float32 {
	t.Helper()
	s, err := EncodeImage(nil, img)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != Slots*Dim {
		t.Fatalf("got %d values", len(s))
	}
	for _, v := range s {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("value %v", v)
		}
	}
	return s
}

// See TestTextGolden.
func TestImageGolden(t *testing.T) {
	const want = 0x9818789437f20c5e
	if got := hashState(mustImage(t, testPicture(320, 200))); got != want {
		t.Errorf("image state hash %#x, want %#x: the encoder changed", got, uint64(want))
	}
}

func TestImageDeterministic(t *testing.T) {
	img := testPicture(333, 217)
	a, b := mustImage(t, img), mustImage(t, img)
	if hashState(a) != hashState(b) {
		t.Fatal("two encodings differ")
	}
	var sq float64
	for _, v := range a {
		sq += float64(v) * float64(v)
	}
	if rms := math.Sqrt(sq / float64(len(a))); rms < 0.05 || rms > 5 {
		t.Errorf("rms value %g, want O(1)", rms)
	}
}

// The fast paths for RGBA, NRGBA and Gray give the generic path's bits.
func TestImageFastPaths(t *testing.T) {
	src := testPicture(203, 131)
	b := src.Bounds()
	nrgba := image.NewNRGBA(b)
	gray := image.NewGray(b)
	rgbaAlpha := image.NewRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := src.RGBAAt(x, y)
			nrgba.SetNRGBA(x, y, color.NRGBA{c.R, c.G, c.B, uint8(x * y)})
			gray.SetGray(x, y, color.Gray{c.G})
			rgbaAlpha.Set(x, y, nrgba.At(x, y))
		}
	}
	sub := src.SubImage(image.Rect(17, 9, 190, 120))
	for name, img := range map[string]image.Image{"rgba": src, "nrgba": nrgba, "gray": gray, "rgba-alpha": rgbaAlpha, "subimage": sub} {
		if hashState(mustImage(t, img)) != hashState(mustImage(t, opaque{img})) {
			t.Errorf("%s: the fast path differs from the generic one", name)
		}
	}
}

func TestImageLocality(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for _, sz := range [][2]int{{640, 320}, {1000, 700}, {1280, 800}} {
		w, h := sz[0], sz[1]
		img := testPicture(w, h)
		base := mustImage(t, img)
		for trial := 0; trial < 20; trial++ {
			x, y := rng.IntN(w), rng.IntN(h)
			c := img.RGBAAt(x, y)
			img.SetRGBA(x, y, color.RGBA{c.R ^ 0x80, c.G ^ 0x55, c.B, 255})
			got := changedSlots(base, mustImage(t, img))
			img.SetRGBA(x, y, c)
			gx, gy := 0, 0
			for (gx+1)*w/ImageGridW <= x {
				gx++
			}
			for (gy+1)*h/ImageGridH <= y {
				gy++
			}
			want := (gy/regionCells)*ImageRegionCols + gx/regionCells
			if len(got) != 1 || got[0] != want {
				t.Fatalf("%dx%d: changing pixel (%d, %d) changed slots %v, want [%d]", w, h, x, y, got, want)
			}
		}
	}
}

func TestImageSmallAndErrors(t *testing.T) {
	for _, sz := range [][2]int{{1, 1}, {3, 5}, {64, 32}, {65, 33}} {
		mustImage(t, testPicture(sz[0], sz[1]))
	}
	for _, img := range []image.Image{image.NewRGBA(image.Rect(0, 0, 0, 5)), image.NewGray(image.Rect(0, 0, MaxImageSize+1, 1))} {
		dst := []float32{1}
		got, err := EncodeImage(dst, img)
		if err == nil || !strings.HasPrefix(err.Error(), "screen: image size") || len(got) != 1 {
			t.Errorf("%v: error %v, len %d", img.Bounds(), err, len(got))
		}
	}
}

func BenchmarkEncodeImage(b *testing.B) {
	for _, sz := range [][2]int{{640, 400}, {1280, 800}} {
		img := testPicture(sz[0], sz[1])
		b.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(b *testing.B) {
			buf := make([]float32, 0, Slots*Dim)
			b.ReportAllocs()
			for b.Loop() {
				buf, _ = EncodeImage(buf[:0], img)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "screens/s")
		})
	}
}
