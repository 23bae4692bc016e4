package tty

import (
	"math"
	"testing"
	"time"
)

func TestChanges(t *testing.T) {
	a := Screen{Rows: []string{"hello", "world", ""}}
	b := Screen{Rows: []string{"hello", "wxrld!", "   "}}
	if c, r := Changes(a, b, 10); c != 2 || r != 1 {
		t.Fatalf("Changes = %d cells, %d rows; want 2, 1", c, r)
	}
	if c, r := Changes(a, a, 10); c != 0 || r != 0 {
		t.Fatalf("no change: %d, %d", c, r)
	}
	// Runes, not bytes.
	if c, _ := Changes(Screen{Rows: []string{"é"}}, Screen{Rows: []string{"e"}}, 5); c != 1 {
		t.Fatalf("rune change: %d cells", c)
	}
}

func TestSummarize(t *testing.T) {
	var ts []StepTiming
	for i := 1; i <= 100; i++ {
		ts = append(ts, StepTiming{Total: time.Duration(i) * time.Millisecond, Settled: i != 7,
			ChangedCells: i % 2 * 10, ChangedRows: i % 2, CursorMoved: i%4 == 0})
	}
	s := Summarize(ts)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(s.MeanMS, 50.5) || !near(s.MedianMS, 50.5) || !near(s.P95MS, 95.05) || !near(s.MaxMS, 100) {
		t.Errorf("times: mean %v median %v p95 %v max %v", s.MeanMS, s.MedianMS, s.P95MS, s.MaxMS)
	}
	if s.Unsettled != 1 || !near(s.ChangedShare, 0.5) || !near(s.MeanChangedCells, 5) || !near(s.MeanChangedRows, 0.5) ||
		!near(s.ChangedCellsWhenChanged, 10) || !near(s.CursorMove, 0.25) {
		t.Errorf("changes: %+v", s)
	}
	if len(s.Lines()) != 2 {
		t.Error("want two lines")
	}
	if z := Summarize(nil); z.Steps != 0 || z.MeanMS != 0 {
		t.Errorf("empty: %+v", z)
	}
}
