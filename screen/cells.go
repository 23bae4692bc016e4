package screen

import (
	"fmt"
	"math"
	"sort"
)

// The cells encoder's geometry: a state is CellGroups groups of GroupDim
// values, group g at values [g*GroupDim, (g+1)*GroupDim) of the slot-major
// state, which is where OPQ's subspace g%32 of slot g/32 lies when the
// quantizer is fitted without a rotation (fit opq --rotation none).
const (
	GroupDim   = 16
	CellGroups = Slots * Dim / GroupDim // 1,024
	// CursorGroups are the last groups: the cursor's column and row, each
	// as value/16 and value%16 (plus one; zero when there is no cursor).
	CursorGroups = 4
	// TextGroups is how many groups hold screen cells at most.
	TextGroups = CellGroups - CursorGroups
)

// Text encoders, as recording.ImportOptions and the CLI name them.
const (
	EncoderHash  = "hash"  // EncodeText: hashed n-gram features of 32 regions
	EncoderCells = "cells" // EncodeCells: the characters of every cell
)

// CellLayout is where EncodeCells puts a width x height screen's cells.
// Every row is cut into runs of cells, one run a group, in reading order:
// the Top first rows and the Bottom last rows (the message and status lines
// of most terminal programs) a cell a group, the other rows runs of
// PerGroup cells (the last run of a row may be shorter). Cell k of a run of
// c cells (k < c) takes the dims [k*16/c, max(k*16/c+1, (k+1)*16/c)) of its
// group, where its character's embedding is added.
type CellLayout struct {
	Width, Height int
	Top, Bottom   int // rows of one cell a group at the top and the bottom
	PerGroup      int // cells a group in the other rows
}

// EdgeTop and EdgeBottom are the rows NewCellLayout gives a group a cell
// when the screen is too large for a group a cell everywhere.
const (
	EdgeTop    = 1
	EdgeBottom = 2
)

// NewCellLayout returns the layout of a width x height screen: a cell a
// group everywhere when the screen has at most TextGroups cells; else the
// EdgeTop first and EdgeBottom last rows a cell a group (when that takes at
// most half the groups and leaves a middle row) and the fewest cells a group
// (PerGroup) in the other rows that fit the groups left. A screen of more
// than TextGroups rows does not fit.
func NewCellLayout(width, height int) (CellLayout, error) {
	if width < 1 || height < 1 || width > MaxTextSize || height > MaxTextSize {
		return CellLayout{}, fmt.Errorf("screen: text size %dx%d is outside 1x1..%dx%d", width, height, MaxTextSize, MaxTextSize)
	}
	if height > TextGroups {
		return CellLayout{}, fmt.Errorf("screen: cells encoder: a screen of %d rows does not fit %d groups (at most %d rows; the hash encoder takes any size)", height, TextGroups, TextGroups)
	}
	l := CellLayout{Width: width, Height: height, PerGroup: 1}
	if width*height <= TextGroups {
		return l, nil
	}
	if e := EdgeTop + EdgeBottom; height > e && e*width <= TextGroups/2 && height-e <= TextGroups-e*width {
		l.Top, l.Bottom = EdgeTop, EdgeBottom
	}
	mid, left := height-l.Top-l.Bottom, TextGroups-(l.Top+l.Bottom)*width
	for l.PerGroup = 1; mid*((width+l.PerGroup-1)/l.PerGroup) > left; l.PerGroup++ {
	}
	return l, nil
}

// Groups is how many groups the layout's cells take (at most TextGroups).
func (l CellLayout) Groups() int {
	return l.rowStart(l.Height)
}

// rowCells returns the cells a group in row y.
func (l CellLayout) rowCells(y int) int {
	if y < l.Top || y >= l.Height-l.Bottom {
		return 1
	}
	return l.PerGroup
}

// rowStart returns the first group of row y (y <= Height).
func (l CellLayout) rowStart(y int) int {
	mid := (l.Width + l.PerGroup - 1) / l.PerGroup
	top := min(y, l.Top)
	middle := min(max(y-l.Top, 0), l.Height-l.Top-l.Bottom)
	bottom := max(y-(l.Height-l.Bottom), 0)
	return (top+bottom)*l.Width + middle*mid
}

// cellDims returns the dims of cell k of a group of c cells.
func cellDims(k, c int) (lo, hi int) {
	lo = k * GroupDim / c
	hi = max(lo+1, (k+1)*GroupDim/c)
	return lo, hi
}

// Cell returns the group and dims [lo, hi) of cell (x, y).
func (l CellLayout) Cell(x, y int) (group, lo, hi int) {
	c := l.rowCells(y)
	group = l.rowStart(y) + x/c
	lo, hi = cellDims(x%c, c)
	return group, lo, hi
}

// valid reports whether l is the layout NewCellLayout gives its size (any
// other is refused: its arithmetic is only checked for those).
func (l CellLayout) valid() bool {
	want, err := NewCellLayout(l.Width, l.Height)
	return err == nil && want == l
}

// Seeds of the embeddings.
const (
	seedCellChar = 0x6d656d6f776d0101
	seedCellNum  = 0x6d656d6f776d0102
)

// embed returns the n-dim embedding of value v from seed: n values, each
// the sum of 3 uniforms in [-1, 1) scaled to variance 1 (so about N(0, 1)).
// The space (seedCellChar, ' ') is the zero vector.
func embed(dst []float32, seed uint64, v uint64) {
	if seed == seedCellChar && v == ' ' {
		clear(dst)
		return
	}
	r := &splitmix{s: mix(seed ^ mix(v))}
	for i := range dst {
		s := 0.0
		for range 3 {
			s += float64(2*r.uniform()) - 1
		}
		dst[i] = float32(s) // sum of 3 U(-1,1): variance 1
	}
}

// asciiEmbeddings[n][c] is the embedding of ASCII character c in n dims,
// for the n a layout uses with small screens (1 to 16).
var asciiEmbeddings = func() (t [GroupDim + 1][128][]float32) {
	for n := 1; n <= GroupDim; n++ {
		for c := range 128 {
			t[n][c] = make([]float32, n)
			embed(t[n][c], seedCellChar, uint64(c))
		}
	}
	return t
}()

// EncodeCells appends the cells state of t, a screen of width columns and
// height rows, to dst (Slots*Dim values, slot-major) and returns the
// extended slice. See the package doc. On error (t does not fit the size,
// or the size does not fit the encoder) dst is returned unchanged.
func EncodeCells(dst []float32, t Text, width, height int) ([]float32, error) {
	if err := t.Check(width, height); err != nil {
		return dst, err
	}
	l, err := NewCellLayout(width, height)
	if err != nil {
		return dst, err
	}
	dst, out := grow(dst)
	clear(out)
	var tmp [GroupDim]float32
	for y, r := range t.Rows {
		x := 0
		for _, c := range r {
			if c != ' ' {
				g, lo, hi := l.Cell(x, y)
				v := out[g*GroupDim+lo : g*GroupDim+hi]
				e := tmp[:hi-lo]
				if c < 128 {
					e = asciiEmbeddings[hi-lo][c]
				} else {
					embed(e, seedCellChar, uint64(c))
				}
				for i := range v {
					v[i] += e[i] // several cells share a dim only past 16 cells a group
				}
			}
			x++
		}
	}
	if t.HasCursor {
		cx := min(t.CursorX, width-1)
		for i, v := range []int{cx >> 4, cx & 15, t.CursorY >> 4, t.CursorY & 15} {
			g := TextGroups + i
			copy(out[g*GroupDim:(g+1)*GroupDim], cursorEmbeddings[i][v+1][:])
		}
	}
	return dst, nil
}

// Grid is a decoded cells state: Width*Height ASCII characters, row-major,
// and the cursor.
type Grid struct {
	Width, Height    int
	Cells            []byte
	CursorX, CursorY int
	HasCursor        bool
}

// Row returns row y of g.
func (g *Grid) Row(y int) []byte { return g.Cells[y*g.Width : (y+1)*g.Width] }

// Decode reads a cells state back: every cell's character, the printable
// ASCII character (or space) whose embedding is nearest its dims, and the
// cursor, the nearest of each cursor group's values (none when the zero
// vector is nearer than every value, or the position is off the screen).
// It is the inverse of EncodeCells on ASCII screens and the best guess on a
// quantised state; runes outside printable ASCII decode to their nearest.
// state must have Slots*Dim values.
func (l CellLayout) Decode(state []float32) (Text, error) {
	var g Grid
	if err := l.DecodeGrid(&g, state); err != nil {
		return Text{}, err
	}
	t := Text{Rows: make([]string, l.Height), CursorX: g.CursorX, CursorY: g.CursorY, HasCursor: g.HasCursor}
	for y := range t.Rows {
		t.Rows[y] = string(g.Row(y))
	}
	return t, nil
}

// DecodeGrid is Decode into g, reusing its buffer.
func (l CellLayout) DecodeGrid(g *Grid, state []float32) error {
	if len(state) != Slots*Dim {
		return fmt.Errorf("screen: state has %d values, want %d", len(state), Slots*Dim)
	}
	if !l.valid() {
		return fmt.Errorf("screen: invalid cell layout %+v", l)
	}
	g.Width, g.Height = l.Width, l.Height
	if cap(g.Cells) < l.Width*l.Height {
		g.Cells = make([]byte, l.Width*l.Height)
	}
	g.Cells = g.Cells[:l.Width*l.Height]
	for s := range Slots {
		l.decodeSlot(g, s, state[s*Dim:(s+1)*Dim])
	}
	return nil
}

// DecodeSlot updates g, a Grid of l, where slot s of the state decoded
// into it changes to values (Dim values): the cells whose groups lie in
// slot s, and the cursor when s holds the cursor groups.
func (l CellLayout) DecodeSlot(g *Grid, s int, values []float32) error {
	if s < 0 || s >= Slots || len(values) != Dim {
		return fmt.Errorf("screen: slot %d with %d values, want a slot in 0..%d with %d", s, len(values), Slots-1, Dim)
	}
	if !l.valid() || g.Width != l.Width || g.Height != l.Height || len(g.Cells) != l.Width*l.Height {
		return fmt.Errorf("screen: grid %dx%d does not match the layout %+v", g.Width, g.Height, l)
	}
	l.decodeSlot(g, s, values)
	return nil
}

// groupsPerSlot is how many groups a slot holds.
const groupsPerSlot = Dim / GroupDim

func (l CellLayout) decodeSlot(g *Grid, s int, v []float32) {
	g0, g1 := s*groupsPerSlot, (s+1)*groupsPerSlot
	// Rows whose groups meet [g0, g1): from the first row ending after g0.
	y := sort.Search(l.Height, func(y int) bool { return l.rowStart(y+1) > g0 })
	for ; y < l.Height && l.rowStart(y) < g1; y++ {
		c, start := l.rowCells(y), l.rowStart(y)
		row := g.Row(y)
		for x := max(0, (g0-start)*c); x < l.Width && start+x/c < g1; x++ {
			grp := start + x/c
			lo, hi := cellDims(x%c, c)
			off := (grp - g0) * GroupDim
			row[x] = nearestChar(v[off+lo:off+hi], &asciiEmbeddings[hi-lo])
		}
	}
	if g1 > TextGroups {
		var parts [CursorGroups]int
		for i := range parts {
			off := (TextGroups + i - g0) * GroupDim
			parts[i] = nearestNum(v[off:off+GroupDim], &cursorEmbeddings[i])
		}
		g.CursorX, g.CursorY, g.HasCursor = 0, 0, false
		if min(parts[0], parts[1], parts[2], parts[3]) > 0 {
			x, y := (parts[0]-1)<<4|(parts[1]-1), (parts[2]-1)<<4|(parts[3]-1)
			if x < l.Width && y < l.Height {
				g.CursorX, g.CursorY, g.HasCursor = x, y, true
			}
		}
	}
}

// spaceRadius2[n] is 0.8 times the squared half norm of the shortest
// printable character's n-dim embedding (the margin keeps the shortcut in
// nearestChar clear of rounding).
var spaceRadius2 = func() (t [GroupDim + 1]float64) {
	for n := 1; n <= GroupDim; n++ {
		m := math.Inf(1)
		for c := 33; c < 127; c++ {
			s := 0.0
			for _, x := range asciiEmbeddings[n][c] {
				s += float64(float64(x) * float64(x))
			}
			m = min(m, s)
		}
		t[n] = 0.8 * m / 4
	}
	return t
}()

// nearestChar returns the printable ASCII character (32..126) whose
// embedding is nearest v (squared distance in float64, the lowest code on
// ties).
func nearestChar(v []float32, emb *[128][]float32) byte {
	// A vector well inside half the shortest embedding's norm is nearer the
	// space (the zero vector) than any character: |v - e| >= |e| - |v| > |v|.
	n2 := 0.0
	for _, x := range v {
		n2 += float64(float64(x) * float64(x))
	}
	if n2 < spaceRadius2[len(v)] {
		return ' '
	}
	best, bestD := byte(' '), math.Inf(1)
	for c := 32; c < 127; c++ {
		d := 0.0
		for i, e := range emb[c] {
			x := float64(v[i]) - float64(e)
			d += float64(x * x)
		}
		if d < bestD {
			best, bestD = byte(c), d
		}
	}
	return best
}

// cursorValues is how many values a cursor group holds: 1..64 (a
// coordinate/16 or %16, plus one, for coordinates below MaxTextSize); 0 is
// no cursor.
const cursorValues = MaxTextSize / 16

// cursorEmbeddings[i][k] is the embedding of value k (1..cursorValues) in
// cursor group i, from seed seedCellNum+i; [i][0] is the zero vector.
var cursorEmbeddings = func() (t [CursorGroups][cursorValues + 1][GroupDim]float32) {
	for i := range t {
		for k := 1; k <= cursorValues; k++ {
			embed(t[i][k][:], seedCellNum+uint64(i), uint64(k))
		}
	}
	return t
}()

// nearestNum returns the value k in 0..cursorValues whose embedding emb[k]
// is nearest v (0, the zero vector, on ties and when nothing is nearer).
func nearestNum(v []float32, emb *[cursorValues + 1][GroupDim]float32) int {
	best, bestD := 0, 0.0
	for _, x := range v {
		bestD += float64(float64(x) * float64(x))
	}
	for k := 1; k <= cursorValues; k++ {
		d := 0.0
		for i, x := range v {
			t := float64(x) - float64(emb[k][i])
			d += float64(t * t)
		}
		if d < bestD {
			best, bestD = k, d
		}
	}
	return best
}
