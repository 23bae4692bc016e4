package screen

import (
	"fmt"
	"math"
	"unicode/utf8"
)

// The state's geometry, the same as trajectory.DefaultShape.
const (
	Slots = 32  // regions of a screen, one state slot each
	Dim   = 512 // features per slot
)

// Text screens are cut into TextBandRows x TextBandCols regions.
const (
	TextBandRows = 8
	TextBandCols = 4
	// MaxTextSize is the most columns or rows a text screen may have.
	MaxTextSize = 1024
)

// Text is one screen of a terminal: Rows[y] is row y, one rune a column.
// Rows shorter than the screen (or missing at the bottom) are spaces.
type Text struct {
	Rows []string
	// CursorX (column) and CursorY (row), from 0, when HasCursor.
	CursorX, CursorY int
	HasCursor        bool
}

// Check reports whether t fits a screen of width columns and height rows:
// at most height rows, each of at most width runes, and a cursor, if any,
// at a row < height and a column <= width (a terminal's cursor may wait just
// past the last column before it wraps).
func (t Text) Check(width, height int) error {
	if width < 1 || height < 1 || width > MaxTextSize || height > MaxTextSize {
		return fmt.Errorf("screen: text size %dx%d is outside 1x1..%dx%d", width, height, MaxTextSize, MaxTextSize)
	}
	if len(t.Rows) > height {
		return fmt.Errorf("screen: %d rows for a screen of height %d", len(t.Rows), height)
	}
	for y, r := range t.Rows {
		if n := utf8.RuneCountInString(r); n > width {
			return fmt.Errorf("screen: row %d is %d characters, wider than the screen's %d", y, n, width)
		}
	}
	if t.HasCursor && (t.CursorX < 0 || t.CursorX > width || t.CursorY < 0 || t.CursorY >= height) {
		return fmt.Errorf("screen: cursor (%d, %d) is outside the %dx%d screen", t.CursorX, t.CursorY, width, height)
	}
	return nil
}

// Feature kinds: each hashes from its own seed.
const (
	seedUni   = 0x6d656d6f776d0001
	seedBi    = 0x6d656d6f776d0002
	seedTri   = 0x6d656d6f776d0003
	seedPos   = 0x6d656d6f776d0004
	seedCur   = 0x6d656d6f776d0005
	seedCurCh = 0x6d656d6f776d0006
)

// Cursor feature weights (integers, so counts stay exact).
const (
	cursorWeight     = 4
	cursorCharWeight = 2
)

// band returns the start of band b of n over size: [band(b), band(b+1)).
func band(b, n, size int) int { return b * size / n }

// EncodeText appends the state of t, a screen of width columns and height
// rows, to dst (Slots*Dim values, slot-major) and returns the extended slice;
// pass dst[:0] to reuse a buffer. See the package doc for the features. On
// error (t does not fit the size, see Text.Check) dst is returned unchanged.
func EncodeText(dst []float32, t Text, width, height int) ([]float32, error) {
	if err := t.Check(width, height); err != nil {
		return dst, err
	}
	dst, out := grow(dst)
	clear(out)
	cells := make([]rune, width*height)
	for i := range cells {
		cells[i] = ' '
	}
	for y, r := range t.Rows {
		x := 0
		for _, c := range r {
			cells[y*width+x] = c
			x++
		}
	}
	for br := 0; br < TextBandRows; br++ {
		r0, r1 := band(br, TextBandRows, height), band(br+1, TextBandRows, height)
		for bc := 0; bc < TextBandCols; bc++ {
			c0, c1 := band(bc, TextBandCols, width), band(bc+1, TextBandCols, width)
			s := br*TextBandCols + bc
			v := out[s*Dim : (s+1)*Dim]
			for y := r0; y < r1; y++ {
				encodeRun(v, cells[y*width+c0:y*width+c1], y-r0)
			}
			if t.HasCursor && t.CursorY >= r0 && t.CursorY < r1 {
				cx := min(t.CursorX, width-1) // just past the last column counts as the last
				if cx >= c0 && cx < c1 {
					q := (cx - c0) * 4 / (c1 - c0)
					add(v, mix(seedCur^uint64((t.CursorY-r0)<<2|q)), cursorWeight)
					add(v, mix(seedCurCh^uint64(cells[t.CursorY*width+cx])), cursorCharWeight)
				}
			}
			finish(v)
		}
	}
	return dst, nil
}

// encodeRun adds the features of one row of one region: row is the region's
// cells in that row, rr the row's index in the region.
func encodeRun(v []float32, row []rune, rr int) {
	n := len(row)
	for i, a := range row {
		sa := a == ' '
		if !sa {
			add(v, mix(seedUni^uint64(a)), 1)
			q := i * 4 / n
			add(v, mix(mix(seedPos^uint64(a))^uint64(rr<<2|q)), 1)
		}
		if i+1 < n {
			b := row[i+1]
			sb := b == ' '
			if !(sa && sb) {
				add(v, mix(mix(seedBi^uint64(a))^uint64(b)), 1)
			}
			if i+2 < n {
				c := row[i+2]
				if !(sa && sb && c == ' ') {
					add(v, mix(mix(mix(seedTri^uint64(a))^uint64(b))^uint64(c)), 1)
				}
			}
		}
	}
}

// add adds w times the feature with hash h: channel h mod Dim, sign from the
// top bit. The counts are integers far below 2^24, so float32 holds them
// exactly and the order of additions does not matter.
func add(v []float32, h uint64, w float32) {
	i := h & (Dim - 1)
	if h>>63 != 0 {
		v[i] -= w
	} else {
		v[i] += w
	}
}

// finish maps each count c to sign(c)*sqrt(|c|). Small counts read a table
// of the same correctly rounded square roots, so every machine agrees.
func finish(v []float32) {
	for i, c := range v {
		n := int32(c)
		switch {
		case n == 0:
		case n > 0 && n < int32(len(sqrtTable)):
			v[i] = sqrtTable[n]
		case n < 0 && -n < int32(len(sqrtTable)):
			v[i] = -sqrtTable[-n]
		case n > 0:
			v[i] = float32(math.Sqrt(float64(c)))
		default:
			v[i] = -float32(math.Sqrt(float64(-c)))
		}
	}
}

// sqrtTable[n] is float32(sqrt(n)).
var sqrtTable = func() (t [256]float32) {
	for n := range t {
		t[n] = float32(math.Sqrt(float64(n)))
	}
	return t
}()

// grow extends dst by Slots*Dim values and returns it with the new part.
func grow(dst []float32) ([]float32, []float32) {
	n := len(dst)
	dst = append(dst, make([]float32, Slots*Dim)...)
	return dst, dst[n:]
}
