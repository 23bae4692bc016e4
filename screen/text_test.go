package screen

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomText fills a width x height screen with words and spaces.
func randomText(rng *rand.Rand, width, height int) Text {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 .,:;-=#$@é█│"
	letters := []rune(alphabet)
	t := Text{HasCursor: true, CursorX: rng.IntN(width), CursorY: rng.IntN(height)}
	for y := 0; y < height; y++ {
		row := make([]rune, rng.IntN(width+1))
		for x := range row {
			row[x] = letters[rng.IntN(len(letters))]
		}
		t.Rows = append(t.Rows, string(row))
	}
	return t
}

// setCell returns t with the cell (x, y) set to c (t's rows are copied).
func setCell(t Text, x, y int, c rune) Text {
	rows := append([]string(nil), t.Rows...)
	for len(rows) <= y {
		rows = append(rows, "")
	}
	r := []rune(rows[y])
	for len(r) <= x {
		r = append(r, ' ')
	}
	r[x] = c
	rows[y] = string(r)
	t.Rows = rows
	return t
}

// changedSlots lists the slots where a and b differ.
func changedSlots(a, b []float32) []int {
	var out []int
	for s := 0; s < Slots; s++ {
		for i := s * Dim; i < (s+1)*Dim; i++ {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

func mustText(t *testing.T, tx Text, w, h int) []float32 {
	t.Helper()
	s, err := EncodeText(nil, tx, w, h)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != Slots*Dim {
		t.Fatalf("got %d values, want %d", len(s), Slots*Dim)
	}
	return s
}

func hashState(s []float32) uint64 {
	h := fnv.New64a()
	var b [4]byte
	for _, v := range s {
		u := math.Float32bits(v)
		b[0], b[1], b[2], b[3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
		h.Write(b[:])
	}
	return h.Sum64()
}

// The encoder's output is part of every imported trajectory: a change to it
// must be deliberate (update the constant and say so in the commit).
func TestTextGolden(t *testing.T) {
	tx := Text{HasCursor: true, CursorX: 17, CursorY: 9}
	for y := 0; y < 24; y++ {
		tx.Rows = append(tx.Rows, fmt.Sprintf("%3d| the quick brown fox %d jumps over %x", y, y*y, y*7919))
	}
	const want = 0x49b4a1f88f110ea8
	if got := hashState(mustText(t, tx, 80, 24)); got != want {
		t.Errorf("text state hash %#x, want %#x: the encoder changed", got, uint64(want))
	}
}

func TestTextDeterministicAndFinite(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, sz := range [][2]int{{80, 24}, {132, 43}, {7, 3}, {1, 1}, {200, 60}} {
		tx := randomText(rng, sz[0], sz[1])
		a, b := mustText(t, tx, sz[0], sz[1]), mustText(t, tx, sz[0], sz[1])
		if hashState(a) != hashState(b) {
			t.Fatalf("%v: two encodings differ", sz)
		}
		maxAbs := float32(0)
		for _, v := range a {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("%v: value %v", sz, v)
			}
			maxAbs = max(maxAbs, float32(math.Abs(float64(v))))
		}
		if maxAbs > 12 {
			t.Errorf("%v: largest |value| %g, want O(1)", sz, maxAbs)
		}
	}
}

func TestTextLocality(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, sz := range [][2]int{{80, 24}, {132, 43}, {10, 9}} {
		w, h := sz[0], sz[1]
		tx := randomText(rng, w, h)
		tx.HasCursor = false
		base := mustText(t, tx, w, h)
		for trial := 0; trial < 200; trial++ {
			x, y := rng.IntN(w), rng.IntN(h)
			c := 'A' + rune(rng.IntN(26)) // never in randomText's alphabet
			got := changedSlots(base, mustText(t, setCell(tx, x, y, c), w, h))
			// the region: band b of n over L is [b*L/n, (b+1)*L/n)
			br, bc := 0, 0
			for (br+1)*h/TextBandRows <= y {
				br++
			}
			for (bc+1)*w/TextBandCols <= x {
				bc++
			}
			want := br*TextBandCols + bc
			if len(got) != 1 || got[0] != want {
				t.Fatalf("%dx%d: changing (%d, %d) changed slots %v, want [%d]", w, h, x, y, got, want)
			}
		}
	}
}

func TestTextCursor(t *testing.T) {
	tx := randomText(rand.New(rand.NewPCG(4, 4)), 80, 24)
	tx.HasCursor, tx.CursorX, tx.CursorY = true, 1, 0
	base := mustText(t, tx, 80, 24)
	moved := tx
	moved.CursorX = 12 // same region (columns 0..19, rows 0..2), other quarter
	if got := changedSlots(base, mustText(t, moved, 80, 24)); len(got) != 1 || got[0] != 0 {
		t.Errorf("cursor moved within region 0: slots %v changed, want [0]", got)
	}
	moved.CursorX, moved.CursorY = 45, 23 // region 7*4+2
	if got := changedSlots(base, mustText(t, moved, 80, 24)); len(got) != 2 || got[0] != 0 || got[1] != 30 {
		t.Errorf("cursor moved to region 30: slots %v changed, want [0 30]", got)
	}
	none := tx
	none.HasCursor = false
	if got := changedSlots(base, mustText(t, none, 80, 24)); len(got) != 1 || got[0] != 0 {
		t.Errorf("cursor removed: slots %v changed, want [0]", got)
	}
	past := tx
	past.CursorX, past.CursorY = 80, 5 // waiting to wrap: counts as column 79
	last := tx
	last.CursorX, last.CursorY = 79, 5
	if hashState(mustText(t, past, 80, 24)) != hashState(mustText(t, last, 80, 24)) {
		t.Error("a cursor just past the last column differs from one on it")
	}
}

func TestTextPadding(t *testing.T) {
	a := Text{Rows: []string{"hello", "world"}}
	b := Text{Rows: []string{"hello   ", "world", "", "   "}}
	if hashState(mustText(t, a, 40, 6)) != hashState(mustText(t, b, 40, 6)) {
		t.Error("trailing spaces and blank rows changed the state")
	}
	empty := mustText(t, Text{}, 40, 6)
	for _, v := range empty {
		if v != 0 {
			t.Fatal("an empty screen without a cursor is not all zeros")
		}
	}
	if hashState(mustText(t, a, 40, 6)) == hashState(mustText(t, Text{Rows: []string{"hellp", "world"}}, 40, 6)) {
		t.Error("a changed character did not change the state")
	}
}

func TestTextAppends(t *testing.T) {
	tx := Text{Rows: []string{"abc"}}
	prefix := []float32{1, 2, 3}
	s, err := EncodeText(prefix, tx, 10, 2)
	if err != nil || len(s) != 3+Slots*Dim || s[0] != 1 || s[2] != 3 {
		t.Fatalf("EncodeText did not append: len %d, err %v", len(s), err)
	}
	if hashState(s[3:]) != hashState(mustText(t, tx, 10, 2)) {
		t.Error("appended state differs")
	}
	buf := make([]float32, 0, Slots*Dim)
	s2, _ := EncodeText(buf, tx, 10, 2)
	if &s2[0] != &buf[:1][0] {
		t.Error("EncodeText reallocated a buffer with room")
	}
}

func TestTextErrors(t *testing.T) {
	cases := []struct {
		tx   Text
		w, h int
		want string
	}{
		{Text{}, 0, 24, "size 0x24"},
		{Text{}, 80, MaxTextSize + 1, "outside"},
		{Text{Rows: make([]string, 5)}, 80, 4, "5 rows for a screen of height 4"},
		{Text{Rows: []string{"", strings.Repeat("é", 11)}}, 10, 4, "row 1 is 11 characters, wider than the screen's 10"},
		{Text{HasCursor: true, CursorX: 11}, 10, 4, "cursor (11, 0) is outside"},
		{Text{HasCursor: true, CursorY: 4}, 10, 4, "cursor (0, 4) is outside"},
		{Text{HasCursor: true, CursorX: -1}, 10, 4, "outside"},
	}
	for _, c := range cases {
		dst := []float32{7}
		got, err := EncodeText(dst, c.tx, c.w, c.h)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "screen: ") {
			t.Errorf("%+v %dx%d: error %v, want %q", c.tx, c.w, c.h, err, c.want)
		}
		if len(got) != 1 {
			t.Errorf("dst changed on error")
		}
	}
}

func BenchmarkEncodeText(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, sz := range [][2]int{{80, 24}, {200, 60}} {
		tx := randomText(rng, sz[0], sz[1])
		b.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(b *testing.B) {
			buf := make([]float32, 0, Slots*Dim)
			b.ReportAllocs()
			for b.Loop() {
				buf, _ = EncodeText(buf[:0], tx, sz[0], sz[1])
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "screens/s")
		})
	}
}
