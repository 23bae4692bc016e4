package web

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"testing"
	"time"
)

func TestDiff(t *testing.T) {
	a := image.NewRGBA(image.Rect(0, 0, 20, 10)) // 3 x 2 blocks of 8x8
	b := image.NewRGBA(a.Rect)
	if c := Diff(a, b); c.Changed() || c.Pixels != 0 || c.Blocks != 0 {
		t.Fatalf("equal images: %+v", c)
	}
	b.Set(0, 0, color.RGBA{1, 0, 0, 0})
	b.Set(7, 7, color.RGBA{0, 0, 0, 1})  // same block
	b.Set(19, 9, color.RGBA{0, 0, 1, 0}) // the last, partial block
	c := Diff(a, b)
	if !c.Changed() || math.Abs(c.Pixels-3.0/200) > 1e-12 || math.Abs(c.Blocks-2.0/6) > 1e-12 {
		t.Fatalf("got %+v, want 3/200 pixels and 2/6 blocks", c)
	}

	var s ChangeStats
	s.Add(c)
	s.Add(Change{})
	if s.ChangedShare() != 0.5 || s.MeanPixels() != c.Pixels/2 || s.MeanBlocks() != c.Blocks/2 {
		t.Errorf("stats %+v", s)
	}
}

func TestDecodeRGBA(t *testing.T) {
	g := image.NewGray(image.Rect(0, 0, 4, 3))
	g.SetGray(1, 2, color.Gray{200})
	var buf bytes.Buffer
	png.Encode(&buf, g)
	m, err := DecodeRGBA(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if m.Bounds() != image.Rect(0, 0, 4, 3) || m.RGBAAt(1, 2) != (color.RGBA{200, 200, 200, 255}) {
		t.Fatalf("decoded %v %v", m.Bounds(), m.RGBAAt(1, 2))
	}
	if _, err := DecodeRGBA([]byte("not a png")); err == nil {
		t.Fatal("garbage decoded")
	}
}

func TestSummarize(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	s := Summarize(ds)
	if s.Mean != 50.5 || s.Median != 50 || s.P95 != 95 {
		t.Errorf("got %+v", s)
	}
	if (Summarize(nil) != Summary{}) {
		t.Error("empty summary not zero")
	}
	if s := Summarize([]time.Duration{7 * time.Millisecond}); s.Median != 7 || s.P95 != 7 {
		t.Errorf("one value: %+v", s)
	}
}
