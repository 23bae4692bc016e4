package codec

import (
	"testing"

	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/trajectory"
)

func TestMixRoundTrip(t *testing.T) {
	_, eps0 := fixture(t)
	keep := model.Policy{Kind: model.KeepAll}
	b, p := testBundle(t, 1, keep)
	for _, eps := range [][]*trajectory.Episode{eps0, repeating(eps0, p.Config().Subspaces)} {
		path, stats := encodeFileWith(t, b, p, keep, Options{Mix: true}, eps)
		_, plain := encodeFileWith(t, b, p, keep, Options{}, eps)
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Header().Mix {
			t.Fatal("the header lost the mix flag")
		}
		r.Close()
		got := decodeFile(t, path, b, p)
		var bits, plainBits float64
		for i, ep := range eps {
			if !sameCodes(got[i].Codes, ep.Codes) || !sameActions(got[i].Actions, ep.Actions) {
				t.Fatalf("episode %d does not round-trip", ep.ID)
			}
			bits += stats[i].StateBits
			plainBits += plain[i].StateBits
		}
		t.Logf("mix %.1f bits, plain %.1f", bits, plainBits)
	}
}
