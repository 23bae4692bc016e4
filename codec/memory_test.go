package codec

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// heapAt is a Predictor that records the live heap just before its call
// number at (1-based): in a one-episode batch, call t predicts state t.
type heapAt struct {
	worldmodel.Predictor
	calls, at int
	live      int64
}

func (h *heapAt) Predict(dst []worldmodel.Prediction, hs []worldmodel.History) ([]worldmodel.Prediction, error) {
	h.calls++
	if h.calls == h.at {
		h.live = liveHeap()
	}
	return h.Predictor.Predict(dst, hs)
}

// liveHeap is the heap that survives two collections (sync.Pools empty).
func liveHeap() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// longEpisode is an episode of n observations built from the fixture's codes
// and actions, 80% of slots repeating each step (a recorded screen).
func longEpisode(t testing.TB, n, perSlot int) *trajectory.Episode {
	_, eps := fixture(t)
	var rows [][]uint8
	var acts []trajectory.Action
	for _, ep := range eps {
		rows = append(rows, ep.Codes...)
		acts = append(acts, ep.Actions...)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	ep := &trajectory.Episode{ID: 1, Codes: make([][]uint8, n), Actions: make([]trajectory.Action, n-1)}
	for k := range ep.Codes {
		z := bytes.Clone(rows[k%len(rows)])
		for lo := 0; k > 0 && lo < len(z); lo += perSlot {
			if rng.Float64() < 0.8 {
				copy(z[lo:lo+perSlot], ep.Codes[k-1][lo:lo+perSlot])
			}
		}
		ep.Codes[k] = z
	}
	for k := range ep.Actions {
		ep.Actions[k] = acts[k%len(acts)]
	}
	return ep
}

// mixTables is what the mixing prior's tables sized by the episode (the
// context table, the match indexes: part of the format, and bounded) take
// for an episode of obs observations.
func mixTables(h *Header, nb *Neighbours, obs int) int64 {
	m := newMixCoder(h.Slots, h.Subspaces, h.Codewords, h.codeBits(), nb, obs)
	defer m.release()
	return int64(len(m.ctx.blocks)*4 + (len(m.match.index)+len(m.match.trans))*4)
}

// TestLongEpisodeMemory checks that what the writer and the decoder hold
// grows with an episode's length by at most maxPerObs bytes per observation
// beyond the mixing prior's tables sized by the episode (bounded, and part
// of the format): the live heap at the last step of a 1,100-observation
// episode against a 100-observation one (the fixture's 1,024 codes of 16
// codewords, 80% of slots repeating), coded losslessly under the mixing
// prior. Here the writer, given the episode Compact as encode reads it,
// holds about 70 bytes per observation (its coder stream), the decoder
// about 200 (the reconstruction, compact, and the decoded actions). memowm
// before compact episodes held 380 and 1,408: a code vector, its slot
// hashes and a copy of its action per observation, and the whole section.
func TestLongEpisodeMemory(t *testing.T) {
	const maxPerObs = 300
	b, p := testBundle(t, 1, model.Policy{Kind: model.KeepAll})
	keep := model.Policy{Kind: model.KeepAll}
	h := headerFor(b, keep)
	h.Mix = true
	nb, err := NeighboursOf(b.OPQ)
	if err != nil {
		t.Fatal(err)
	}
	lens := []int{100, 1100}
	var enc, dec [2]int64
	// A short episode first, unmeasured: the predictor's scratch and the
	// fixture's lazy state are then in place for both measurements.
	warm := longEpisode(t, 20, h.Subspaces)
	path, _ := encodeFileWith(t, b, p, keep, Options{Mix: true}, []*trajectory.Episode{warm})
	if _, err := openChecked(t, path, b).Decode(p, nil); err != nil {
		t.Fatal(err)
	}
	for i, n := range lens {
		ep := longEpisode(t, n, h.Subspaces)
		// The writer gets the episode as encode reads it: Compact.
		in := &trajectory.Episode{ID: ep.ID, Actions: ep.Actions, Compact: trajectory.NewCodeRows(h.Coords(), h.Slots)}
		for _, z := range ep.Codes {
			in.Compact.Append(z)
		}
		tables := mixTables(h, nb, n)

		hp := &heapAt{Predictor: p, at: n - 1}
		base := liveHeap()
		path, _ := encodeFileWith(t, b, hp, keep, Options{Mix: true}, []*trajectory.Episode{in})
		enc[i] = hp.live - base - tables

		r := openChecked(t, path, b)
		r.Compact = true
		hp = &heapAt{Predictor: p, at: n - 1}
		base = liveHeap()
		got, err := r.Decode(hp, nil)
		if err != nil {
			t.Fatal(err)
		}
		dec[i] = hp.live - base - tables
		for k := range n {
			if !bytes.Equal(got[0].CodesAt(nil, k), ep.Codes[k]) {
				t.Fatalf("%d observations: state %d decodes wrong", n, k)
			}
		}
		runtime.KeepAlive(in)
	}
	for _, c := range []struct {
		what string
		live [2]int64
	}{{"writer", enc}, {"decoder", dec}} {
		per := float64(c.live[1]-c.live[0]) / float64(lens[1]-lens[0])
		t.Logf("%s: %d then %d bytes live beyond the prior's tables: %.0f bytes per observation", c.what, c.live[0], c.live[1], per)
		if per > maxPerObs {
			t.Errorf("%s holds %.0f bytes more per observation of a longer episode, want at most %d", c.what, per, maxPerObs)
		}
	}
}
