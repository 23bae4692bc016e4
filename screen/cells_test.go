package screen

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func randomCellsText(rng *rand.Rand, w, h int) Text {
	rows := make([]string, rng.IntN(h+1))
	for y := range rows {
		b := make([]byte, rng.IntN(w+1))
		for x := range b {
			if rng.IntN(3) == 0 {
				b[x] = ' '
			} else {
				b[x] = byte(33 + rng.IntN(94))
			}
		}
		rows[y] = string(b)
	}
	t := Text{Rows: rows}
	if rng.IntN(2) == 0 {
		t.CursorX, t.CursorY, t.HasCursor = rng.IntN(w), rng.IntN(h), true
	}
	return t
}

// padded gives t's rows padded with spaces to w x h, as Decode returns them.
func padded(t Text, w, h int) []string {
	out := make([]string, h)
	for y := range out {
		r := ""
		if y < len(t.Rows) {
			r = t.Rows[y]
		}
		out[y] = r + strings.Repeat(" ", w-len(r))
	}
	return out
}

func TestCellsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][2]int{{80, 24}, {1, 1}, {40, 5}, {132, 43}, {200, 60}, {1024, 3}} {
		w, h := sz[0], sz[1]
		l, err := NewCellLayout(w, h)
		if err != nil {
			t.Fatal(err)
		}
		if l.Groups() > TextGroups || (l.PerGroup > 1 && (CellLayout{Width: w, Height: h, Top: l.Top, Bottom: l.Bottom, PerGroup: l.PerGroup - 1}).Groups() <= TextGroups) {
			t.Fatalf("%dx%d: layout %+v is not the smallest that fits", w, h, l)
		}
		// Every cell has its own dims.
		seen := map[[2]int]bool{}
		for y := range h {
			for x := range w {
				g, lo, _ := l.Cell(x, y)
				if g < 0 || g >= l.Groups() || (l.PerGroup <= GroupDim && seen[[2]int{g, lo}]) {
					t.Fatalf("%dx%d: cell (%d, %d) at group %d dim %d (taken or out of range)", w, h, x, y, g, lo)
				}
				seen[[2]int{g, lo}] = true
			}
		}
		for range 5 {
			tx := randomCellsText(rng, w, h)
			s, err := EncodeCells(nil, tx, w, h)
			if err != nil {
				t.Fatal(err)
			}
			got, err := l.Decode(s)
			if err != nil {
				t.Fatal(err)
			}
			if l.PerGroup <= GroupDim {
				want := padded(tx, w, h)
				for y := range want {
					if got.Rows[y] != want[y] {
						t.Fatalf("%dx%d (layout %+v) row %d: decoded %q, want %q", w, h, l, y, got.Rows[y], want[y])
					}
				}
			}
			if got.HasCursor != tx.HasCursor || (tx.HasCursor && (got.CursorX != tx.CursorX || got.CursorY != tx.CursorY)) {
				t.Fatalf("%dx%d: cursor decoded %v (%d, %d), want %v (%d, %d)", w, h,
					got.HasCursor, got.CursorX, got.CursorY, tx.HasCursor, tx.CursorX, tx.CursorY)
			}
		}
	}
	if l, _ := NewCellLayout(80, 24); l.PerGroup != 3 || l.Top != 1 || l.Bottom != 2 || l.Groups() != 3*80+21*27 {
		t.Fatalf("80x24 layout %+v, want a cell a group in rows 0, 22, 23 and 3 elsewhere", l)
	}
	if l, _ := NewCellLayout(40, 5); l.PerGroup != 1 || l.Top != 0 || l.Groups() != 200 {
		t.Fatalf("40x5 layout %+v, want a cell a group", l)
	}
}

func TestCellsLocality(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	w, h := 80, 24
	l, _ := NewCellLayout(w, h)
	base := randomCellsText(rng, w, h)
	base.HasCursor = false
	rows := padded(base, w, h)
	a, _ := EncodeCells(nil, Text{Rows: rows}, w, h)
	for range 50 {
		x, y := rng.IntN(w), rng.IntN(h)
		r := []byte(rows[y])
		r[x] = byte(33 + (int(r[x])-32)%94)
		ed := append([]string(nil), rows...)
		ed[y] = string(r)
		b, _ := EncodeCells(nil, Text{Rows: ed}, w, h)
		g, lo, hi := l.Cell(x, y)
		for i := range a {
			in := i >= g*GroupDim+lo && i < g*GroupDim+hi
			if a[i] != b[i] && !in {
				t.Fatalf("cell (%d, %d) changed value %d outside its dims %d..%d", x, y, i, g*GroupDim+lo, g*GroupDim+hi)
			}
		}
	}
}

func TestCellsErrors(t *testing.T) {
	if _, err := NewCellLayout(10, TextGroups+1); err == nil || !strings.HasPrefix(err.Error(), "screen: ") {
		t.Fatalf("too many rows: %v", err)
	}
	if _, err := NewCellLayout(0, 5); err == nil {
		t.Fatal("zero width accepted")
	}
	dst := []float32{1, 2}
	out, err := EncodeCells(dst, Text{Rows: []string{"too wide"}}, 3, 1)
	if err == nil || len(out) != 2 {
		t.Fatalf("too wide: %v, len %d", err, len(out))
	}
	l, _ := NewCellLayout(80, 24)
	if _, err := l.Decode(make([]float32, 7)); err == nil {
		t.Fatal("short state decoded")
	}
	if _, err := (CellLayout{}).Decode(make([]float32, Slots*Dim)); err == nil {
		t.Fatal("zero layout decoded")
	}
	// Unicode and a blank screen: finite, deterministic, blank is all zeros.
	s1, err := EncodeCells(nil, Text{Rows: []string{"héllo ☃"}}, 10, 2)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := EncodeCells(nil, Text{Rows: []string{"héllo ☃"}}, 10, 2)
	for i := range s1 {
		if s1[i] != s2[i] {
			t.Fatal("not deterministic")
		}
	}
	z, _ := EncodeCells(nil, Text{}, 80, 24)
	for _, v := range z {
		if v != 0 {
			t.Fatal("blank screen is not zeros")
		}
	}
}

func BenchmarkEncodeCells(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	tx := randomCellsText(rng, 80, 24)
	dst := make([]float32, 0, Slots*Dim)
	b.SetBytes(80 * 24)
	for b.Loop() {
		dst, _ = EncodeCells(dst[:0], tx, 80, 24)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "screens/s")
}

func BenchmarkDecodeCells(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	tx := randomCellsText(rng, 80, 24)
	s, _ := EncodeCells(nil, tx, 80, 24)
	l, _ := NewCellLayout(80, 24)
	b.SetBytes(80 * 24)
	for b.Loop() {
		l.Decode(s)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "screens/s")
}

func TestCellsDecodeSlot(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, sz := range [][2]int{{80, 24}, {132, 43}, {40, 5}} {
		w, h := sz[0], sz[1]
		l, _ := NewCellLayout(w, h)
		a, _ := EncodeCells(nil, randomCellsText(rng, w, h), w, h)
		b, _ := EncodeCells(nil, randomCellsText(rng, w, h), w, h)
		var g Grid
		if err := l.DecodeGrid(&g, a); err != nil {
			t.Fatal(err)
		}
		for s := range Slots {
			if err := l.DecodeSlot(&g, s, b[s*Dim:(s+1)*Dim]); err != nil {
				t.Fatal(err)
			}
			mixed := append(append([]float32(nil), b[:(s+1)*Dim]...), a[(s+1)*Dim:]...)
			var want Grid
			l.DecodeGrid(&want, mixed)
			if string(g.Cells) != string(want.Cells) || g.CursorX != want.CursorX || g.CursorY != want.CursorY || g.HasCursor != want.HasCursor {
				t.Fatalf("%dx%d: after slots 0..%d from b, DecodeSlot differs from DecodeGrid", w, h, s)
			}
		}
	}
	var g Grid
	l, _ := NewCellLayout(80, 24)
	if err := l.DecodeSlot(&g, 0, make([]float32, Dim)); err == nil {
		t.Fatal("DecodeSlot into an empty grid")
	}
}

// TestNearestCharShortcut: the space shortcut gives what the full search
// gives, on vectors near zero and near every character.
func TestNearestCharShortcut(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for n := 1; n <= GroupDim; n++ {
		emb := &asciiEmbeddings[n]
		for range 2000 {
			v := make([]float32, n)
			c := 32 + rng.IntN(95)
			scale := rng.Float64() * 1.5
			for i := range v {
				v[i] = emb[c][i] + float32(scale*rng.NormFloat64())
				if rng.IntN(2) == 0 {
					v[i] *= float32(rng.Float64())
				}
			}
			best, bestD := byte(' '), math.Inf(1)
			for k := 32; k < 127; k++ {
				d := 0.0
				for i, e := range emb[k] {
					x := float64(v[i]) - float64(e)
					d += float64(x * x)
				}
				if d < bestD {
					best, bestD = byte(k), d
				}
			}
			if got := nearestChar(v, emb); got != best {
				t.Fatalf("%d dims, %v: nearestChar %q, full search %q", n, v, got, best)
			}
		}
	}
}
