package trajectory

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"
)

// randomRows returns n rows of width codes below maxCode+1 where each of
// slots slots changes with probability change a step (row 0 is random).
func randomRows(rng *rand.Rand, n, width, slots int, change float64, maxCode int) [][]uint8 {
	per := width / slots
	rows := make([][]uint8, n)
	for t := range rows {
		z := make([]uint8, width)
		for s := range slots {
			lo, hi := s*per, (s+1)*per
			if s == slots-1 {
				hi = width
			}
			if t > 0 && rng.Float64() >= change {
				copy(z[lo:hi], rows[t-1][lo:hi])
				continue
			}
			for j := lo; j < hi; j++ {
				z[j] = uint8(rng.IntN(maxCode + 1))
			}
		}
		rows[t] = z
	}
	return rows
}

// TestCodeRowsRoundTrip appends rows of several geometries, change rates
// and code ranges (a larger code late in the episode repacks) and reads
// every row and random ranges back.
func TestCodeRowsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct {
		width, slots, maxCode int
		change                float64
	}{
		{1024, 32, 63, 0.95}, // the sim world: most slots change
		{1024, 32, 63, 0.05}, // recorded screens: most slots repeat
		{64, 32, 15, 0.5},    // the test fixture's geometry
		{100, 7, 255, 0.3},   // slots that do not divide the width: one block
		{130, 65, 3, 0.5},    // more than 64 slots: one block
		{5, 1, 1, 1},         // one-bit codes
		{3000, 3, 200, 0.6},  // blocks larger than a chunk holds many of
	} {
		n := 300
		rows := randomRows(rng, n, c.width, c.slots, c.change, c.maxCode)
		// A larger code late in the episode forces a repack.
		rows[n-5][c.width/2] = 255
		r := NewCodeRows(c.width, c.slots)
		for k, z := range rows {
			r.Append(z)
			if k%37 == 0 { // read while appending too
				if got := r.RowTo(nil, k/2); !bytes.Equal(got, rows[k/2]) {
					t.Fatalf("%+v: row %d read after %d appends differs", c, k/2, k+1)
				}
			}
		}
		if r.Len() != n || r.Width() != c.width {
			t.Fatalf("%+v: Len %d Width %d", c, r.Len(), r.Width())
		}
		buf := make([]uint8, 3)
		for k, z := range rows {
			if buf = r.RowTo(buf, k); !bytes.Equal(buf, z) {
				t.Fatalf("%+v: row %d: got %v, want %v", c, k, buf, z)
			}
			lo := rng.IntN(c.width)
			hi := lo + rng.IntN(c.width-lo+1)
			if got := r.CodesTo(nil, k, lo, hi); !bytes.Equal(got, z[lo:hi]) {
				t.Fatalf("%+v: row %d codes %d..%d: got %v, want %v", c, k, lo, hi, got, z[lo:hi])
			}
		}
	}
}

// TestCodeRowsMemory checks what CodeRows holds per row, on the heap, for
// 1,024 6-bit codes in 32 slots: at most 800 bytes when every slot changes
// every step (Codes: 1,048) and at most 100 when two slots a step do.
func TestCodeRowsMemory(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, c := range []struct {
		change float64
		max    float64 // bytes per row
	}{{1, 800}, {2.0 / 32, 100}} {
		const n = 4000
		rows := randomRows(rng, n, 1024, 32, c.change, 63)
		before := heapAlloc()
		r := NewCodeRows(1024, 32)
		for _, z := range rows {
			r.Append(z)
		}
		per := float64(heapAlloc()-before) / n
		runtime.KeepAlive(r)
		runtime.KeepAlive(rows)
		t.Logf("slots changing with p = %.3f: %.0f bytes per row", c.change, per)
		if per > c.max {
			t.Errorf("slots changing with p = %.3f: %.0f bytes per row, want at most %.0f", c.change, per, c.max)
		}
	}
}

func heapAlloc() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
