package screen

import (
	"fmt"
	"image"
	"math"
	"sync"

	"github.com/memowm/memowm/internal/f32"
)

// Image screens are area-averaged onto an ImageGridW x ImageGridH grid, cut
// into ImageRegionRows x ImageRegionCols regions of 8 x 8 cells.
const (
	ImageGridW      = 64
	ImageGridH      = 32
	ImageRegionRows = 4
	ImageRegionCols = 8
	// MaxImageSize is the most pixels an image may have on a side.
	MaxImageSize = 1 << 14

	regionCells = 8                                                 // cells on a side of a region
	chromaCells = 2                                                 // cells on a side of a colour block
	chromaSide  = regionCells / chromaCells                         // colour blocks on a side of a region
	imageInputs = regionCells*regionCells + 2*chromaSide*chromaSide // 64 luma + 16 B-Y + 16 R-Y
	imageSeed   = 0x6d656d6f776d1001
)

var (
	projOnce sync.Once
	proj     []float32 // imageInputs x Dim, row-major
)

// projection returns the fixed 96 x 512 matrix: entry i is the sum of 12
// uniforms minus 6 (mean 0, variance 1) from SplitMix64 seeded with
// imageSeed, in row-major order, times 2/sqrt(96).
func projection() []float32 {
	projOnce.Do(func() {
		r := splitmix{s: imageSeed}
		scale := 2 / math.Sqrt(imageInputs)
		proj = make([]float32, imageInputs*Dim)
		for i := range proj {
			s := 0.0
			for k := 0; k < 12; k++ {
				s += r.uniform()
			}
			proj[i] = float32((s - 6) * scale)
		}
	})
	return proj
}

// EncodeImage appends the state of img to dst (Slots*Dim values, slot-major)
// and returns the extended slice; pass dst[:0] to reuse a buffer. See the
// package doc for the features. An empty image or one wider or taller than
// MaxImageSize is an error, and dst is returned unchanged.
func EncodeImage(dst []float32, img image.Image) ([]float32, error) {
	if img == nil {
		return dst, fmt.Errorf("screen: nil image")
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w < 1 || h < 1 || w > MaxImageSize || h > MaxImageSize {
		return dst, fmt.Errorf("screen: image size %dx%d is outside 1x1..%dx%d", w, h, MaxImageSize, MaxImageSize)
	}
	var grid [ImageGridH * ImageGridW][3]float32
	averageCells(&grid, img)
	x := make([]float32, Slots*imageInputs)
	for s := 0; s < Slots; s++ {
		regionInputs(x[s*imageInputs:(s+1)*imageInputs], &grid, s/ImageRegionCols, s%ImageRegionCols)
	}
	dst, out := grow(dst)
	f32.MulTo(out, Dim, x, imageInputs, projection(), Dim, Slots, imageInputs, Dim)
	return dst, nil
}

// cellSpan returns the pixels [lo, hi) of cell c of n over size: at least one.
func cellSpan(c, n, size int) (int, int) {
	lo, hi := c*size/n, (c+1)*size/n
	if hi <= lo {
		hi = lo + 1
	}
	return lo, hi
}

// averageCells sets grid to the mean premultiplied colour of each cell, as
// fractions of full scale. Sums are integers of 16-bit channels, so the
// result does not depend on the order of the pixels.
func averageCells(grid *[ImageGridH * ImageGridW][3]float32, img image.Image) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	for gy := 0; gy < ImageGridH; gy++ {
		y0, y1 := cellSpan(gy, ImageGridH, h)
		for gx := 0; gx < ImageGridW; gx++ {
			x0, x1 := cellSpan(gx, ImageGridW, w)
			r, g, bl := sumBox(img, b.Min.X+x0, b.Min.Y+y0, b.Min.X+x1, b.Min.Y+y1)
			n := float64(uint64((x1-x0)*(y1-y0)) * 0xffff)
			grid[gy*ImageGridW+gx] = [3]float32{float32(float64(r) / n), float32(float64(g) / n), float32(float64(bl) / n)}
		}
	}
}

// sumBox sums the 16-bit premultiplied red, green and blue of the pixels in
// [x0, x1) x [y0, y1), as color.Color.RGBA gives them. The common PNG pixel
// types are read from their buffers; the results equal the generic path.
func sumBox(img image.Image, x0, y0, x1, y1 int) (r, g, b uint64) {
	switch m := img.(type) {
	case *image.RGBA:
		var sr, sg, sb uint64 // 8-bit sums; times 0x101 below, which is exact
		for y := y0; y < y1; y++ {
			p := m.Pix[m.PixOffset(x0, y) : m.PixOffset(x1-1, y)+4]
			var rr, gg, bb uint32 // at most MaxImageSize pixels of 255
			for len(p) >= 4 {
				rr += uint32(p[0])
				gg += uint32(p[1])
				bb += uint32(p[2])
				p = p[4:]
			}
			sr, sg, sb = sr+uint64(rr), sg+uint64(gg), sb+uint64(bb)
		}
		return sr * 0x101, sg * 0x101, sb * 0x101
	case *image.NRGBA:
		for y := y0; y < y1; y++ {
			p := m.Pix[m.PixOffset(x0, y) : m.PixOffset(x1-1, y)+4]
			for i := 0; i+3 < len(p); i += 4 {
				a := uint64(p[i+3]) // as color.NRGBA.RGBA: v*0x101*a/0xff
				r += uint64(p[i]) * 0x101 * a / 0xff
				g += uint64(p[i+1]) * 0x101 * a / 0xff
				b += uint64(p[i+2]) * 0x101 * a / 0xff
			}
		}
	case *image.Gray:
		for y := y0; y < y1; y++ {
			p := m.Pix[m.PixOffset(x0, y) : m.PixOffset(x1-1, y)+1]
			for _, v := range p {
				r += uint64(v) * 0x101
			}
		}
		g, b = r, r
	default:
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				cr, cg, cb, _ := img.At(x, y).RGBA()
				r += uint64(cr)
				g += uint64(cg)
				b += uint64(cb)
			}
		}
	}
	return r, g, b
}

// regionInputs writes the 96 inputs of region (ry, rx): 64 luma values minus
// 0.5, row-major, then B-Y and R-Y of the 16 colour blocks, row-major. Every
// product is rounded to float32 before it is added (no fused multiply-add).
func regionInputs(x []float32, grid *[ImageGridH * ImageGridW][3]float32, ry, rx int) {
	luma := func(c [3]float32) float32 {
		return float32(0.299*c[0]) + float32(0.587*c[1]) + float32(0.114*c[2])
	}
	for cy := 0; cy < regionCells; cy++ {
		for cx := 0; cx < regionCells; cx++ {
			c := grid[(ry*regionCells+cy)*ImageGridW+rx*regionCells+cx]
			x[cy*regionCells+cx] = luma(c) - 0.5
		}
	}
	const nb = chromaSide * chromaSide
	for by := 0; by < chromaSide; by++ {
		for bx := 0; bx < chromaSide; bx++ {
			var m [3]float32
			for dy := 0; dy < chromaCells; dy++ {
				for dx := 0; dx < chromaCells; dx++ {
					c := grid[(ry*regionCells+by*chromaCells+dy)*ImageGridW+rx*regionCells+bx*chromaCells+dx]
					m[0], m[1], m[2] = m[0]+c[0], m[1]+c[1], m[2]+c[2]
				}
			}
			for k := range m {
				m[k] = m[k] / (chromaCells * chromaCells)
			}
			y := luma(m)
			i := regionCells*regionCells + by*chromaSide + bx
			x[i] = m[2] - y
			x[i+nb] = m[0] - y
		}
	}
}
