package sim

import (
	"iter"
	"slices"
)

// Stats counts how much of the screen changes per step, measured on the
// latent slot contents (a slot changes when what it shows changes; encoder
// jitter is not counted).
type Stats struct {
	Steps          int64 `json:"steps"`
	ChangedSlots   int64 `json:"changed_slots"`
	UnchangedSteps int64 `json:"unchanged_steps"` // steps where no slot changed
	PageLoads      int64 `json:"page_loads"`      // steps whose action loaded or switched a page
	LoadChanged    int64 `json:"page_load_changed_slots"`
}

func (s *Stats) add(prev, next *[NumSlots]cell, pageLoad bool) {
	n := int64(0)
	for i := range prev {
		if prev[i] != next[i] {
			n++
		}
	}
	s.Steps++
	s.ChangedSlots += n
	if n == 0 {
		s.UnchangedSteps++
	}
	if pageLoad {
		s.PageLoads++
		s.LoadChanged += n
	}
}

// Merge adds o's counts to s.
func (s *Stats) Merge(o Stats) {
	s.Steps += o.Steps
	s.ChangedSlots += o.ChangedSlots
	s.UnchangedSteps += o.UnchangedSteps
	s.PageLoads += o.PageLoads
	s.LoadChanged += o.LoadChanged
}

// ChangedFrac is the mean fraction of slots that change per step.
func (s Stats) ChangedFrac() float64 { return ratio(s.ChangedSlots, s.Steps*NumSlots) }

// UnchangedFrac is the fraction of steps where nothing changes.
func (s Stats) UnchangedFrac() float64 { return ratio(s.UnchangedSteps, s.Steps) }

// PageLoadFrac is the fraction of steps that load or switch a page.
func (s Stats) PageLoadFrac() float64 { return ratio(s.PageLoads, s.Steps) }

// LoadChangedFrac is the mean fraction of slots a page load changes.
func (s Stats) LoadChangedFrac() float64 { return ratio(s.LoadChanged, s.PageLoads*NumSlots) }

// OtherChangedFrac is the mean fraction of slots other steps change.
func (s Stats) OtherChangedFrac() float64 {
	return ratio(s.ChangedSlots-s.LoadChanged, (s.Steps-s.PageLoads)*NumSlots)
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// sortedKeys iterates over m in key order, so that generation never depends
// on Go's map order.
func sortedKeys[V any](m map[string]V) iter.Seq2[string, V] {
	return func(yield func(string, V) bool) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if !yield(k, m[k]) {
				return
			}
		}
	}
}
