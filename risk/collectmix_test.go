package risk

import (
	"bytes"
	"strings"
	"testing"

	"github.com/memowm/memowm/codec"
	"github.com/memowm/memowm/internal/fixture"
	"github.com/memowm/memowm/model"
)

// TestCollectMix counts the mixing prior's modes on screens whose slots
// mostly repeat: only the coordinates of changing slots reach the rule,
// every one of them once; kept modes equal the truth where a slot repeats;
// the counts do not depend on the batch size.
func TestCollectMix(t *testing.T) {
	s, p := setup(t)
	eps := fixture.Repeating(s.Episodes, p.Config().Subspaces)
	b, _, err := fixture.Bundle(1, model.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	nb, err := codec.NeighboursOf(b.OPQ)
	if err != nil {
		t.Fatal(err)
	}
	ep := eps[1]
	keep := map[StepKey]bool{{ep.ID, 3}: true}
	c, err := CollectMix(p, nb, eps, DefaultBinQ16, keep, 4)
	if err != nil {
		t.Fatal(err)
	}
	per := p.Config().Subspaces
	var changing, all uint64
	for _, e := range eps {
		for t := 1; t < len(e.Codes); t++ {
			for lo := 0; lo < len(e.Codes[t]); lo += per {
				all += uint64(per)
				if !bytes.Equal(e.Codes[t][lo:lo+per], e.Codes[t-1][lo:lo+per]) {
					changing += uint64(per)
				}
			}
		}
	}
	var n, e uint64
	for b := range c.BinN {
		n += c.BinN[b]
		e += c.BinErr[b]
	}
	if n != changing || changing == 0 || changing == all {
		t.Fatalf("%d coordinates counted, %d in changing slots of %d", n, changing, all)
	}
	if e == 0 || e == n {
		t.Fatalf("%d wrong modes of %d", e, n)
	}
	m := c.Modes[StepKey{ep.ID, 3}]
	if len(c.Modes) != 1 || len(m) != len(ep.Codes[3]) {
		t.Fatalf("kept modes %d, length %d", len(c.Modes), len(m))
	}
	for lo := 0; lo < len(m); lo += per {
		if bytes.Equal(ep.Codes[3][lo:lo+per], ep.Codes[2][lo:lo+per]) && !bytes.Equal(m[lo:lo+per], ep.Codes[3][lo:lo+per]) {
			t.Fatalf("a repeating slot at %d has modes other than its codes", lo)
		}
	}
	c1, err := CollectMix(p, nb, eps, DefaultBinQ16, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	for b := range c.BinN {
		if c1.BinN[b] != c.BinN[b] || c1.BinErr[b] != c.BinErr[b] {
			t.Fatal("batch size changed the counts")
		}
	}
	if _, err := CollectMix(p, nil, eps, DefaultBinQ16, nil, 1); err == nil || !strings.Contains(err.Error(), "neighbour order") {
		t.Fatalf("no neighbour order: %v", err)
	}
}
