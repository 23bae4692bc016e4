package tty

import (
	"fmt"
	"slices"
)

// Changes counts the cells and rows that differ between two screens of the
// given width (rows padded with spaces; a row's cells are its runes).
func Changes(a, b Screen, width int) (cells, rows int) {
	n := max(len(a.Rows), len(b.Rows))
	for y := range n {
		ra, rb := []rune(a.Row(y)), []rune(b.Row(y))
		d := 0
		for x := range max(width, len(ra), len(rb)) {
			ca, cb := ' ', ' '
			if x < len(ra) {
				ca = ra[x]
			}
			if x < len(rb) {
				cb = rb[x]
			}
			if ca != cb {
				d++
			}
		}
		cells += d
		if d > 0 {
			rows++
		}
	}
	return cells, rows
}

// Stats summarises a recording's step timings and screen changes.
type Stats struct {
	Steps int

	// Per-step recording time, milliseconds: the whole step, and its parts'
	// means.
	MeanMS, MedianMS, P95MS, MaxMS      float64
	SendMS, SettleMS, CaptureMS         float64 // means
	MeanPolls                           float64
	Unsettled                           int // steps that hit SettleMax
	ChangedShare                        float64
	MeanChangedCells, MeanChangedRows   float64 // over all steps
	ChangedCellsWhenChanged, CursorMove float64 // mean cells over changing steps; share of steps moving the cursor
}

// Summarize computes Stats from step timings.
func Summarize(ts []StepTiming) Stats {
	s := Stats{Steps: len(ts)}
	if len(ts) == 0 {
		return s
	}
	tot := make([]float64, len(ts))
	changed, cells, rows, moved := 0, 0, 0, 0
	for i, t := range ts {
		tot[i] = ms(t.Total)
		s.MeanMS += tot[i]
		s.SendMS += ms(t.Send)
		s.SettleMS += ms(t.Settle)
		s.CaptureMS += ms(t.Capture)
		s.MeanPolls += float64(t.Polls)
		if !t.Settled {
			s.Unsettled++
		}
		if t.ChangedCells > 0 {
			changed++
		}
		cells += t.ChangedCells
		rows += t.ChangedRows
		if t.CursorMoved {
			moved++
		}
	}
	n := float64(len(ts))
	s.MeanMS /= n
	s.SendMS /= n
	s.SettleMS /= n
	s.CaptureMS /= n
	s.MeanPolls /= n
	slices.Sort(tot)
	s.MedianMS = quantile(tot, 0.5)
	s.P95MS = quantile(tot, 0.95)
	s.MaxMS = tot[len(tot)-1]
	s.ChangedShare = float64(changed) / n
	s.MeanChangedCells = float64(cells) / n
	s.MeanChangedRows = float64(rows) / n
	if changed > 0 {
		s.ChangedCellsWhenChanged = float64(cells) / float64(changed)
	}
	s.CursorMove = float64(moved) / n
	return s
}

// quantile returns the q-quantile of sorted values, linearly interpolated.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(i)
	return sorted[i]*(1-f) + sorted[i+1]*f
}

// Lines returns the statistics as two lines of text: step times and screen
// changes.
func (s Stats) Lines() []string {
	return []string{
		fmt.Sprintf("per-step time: mean %.1f ms, median %.1f ms, p95 %.1f ms, max %.1f ms (send %.1f, settle %.1f, capture %.1f ms; %.1f polls; %d of %d steps hit the settle cap)",
			s.MeanMS, s.MedianMS, s.P95MS, s.MaxMS, s.SendMS, s.SettleMS, s.CaptureMS, s.MeanPolls, s.Unsettled, s.Steps),
		fmt.Sprintf("screen changes: %.1f%% of steps changed the screen, mean %.1f cells and %.2f rows per step (%.1f cells per changing step); cursor moved in %.1f%%",
			100*s.ChangedShare, s.MeanChangedCells, s.MeanChangedRows, s.ChangedCellsWhenChanged, 100*s.CursorMove),
	}
}
