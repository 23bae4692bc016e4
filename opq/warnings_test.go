package opq

import (
	"bytes"
	"strings"
	"testing"
)

func TestWarnings(t *testing.T) {
	cases := []struct {
		states, codewords, maxPPC int
		shared                    bool
		ppc                       float64
		warn                      string
	}{
		// 30 states for 16 codewords: 1.9 points per centroid.
		{30, 16, 256, false, 30.0 / 16, "opq: fit on 30 training states, fewer than 1600: expect held-out reconstruction far worse"},
		// Shared codebooks see every slot: 4 x 30 points, the same warning:
		// it is about the states, whatever the points per centroid.
		{30, 16, 256, true, 120.0 / 16, "Fit on at least 1600 states"},
		// The subsample cap: 800 states, at most 40 x 16 sampled.
		{800, 16, 40, false, 40, "from 1600; below 0 from 64 to 200 recorded NetHack states"},
		{1599, 4, 256, false, 256, "fit on 1599 training states"}, // 1,024 sampled
		{ReliableStates, 4, 256, false, 256, ""},
	}
	for _, c := range cases {
		cfg := smallConfig()
		cfg.Codewords, cfg.Shared, cfg.MaxPointsPerCentroid, cfg.Workers = c.codewords, c.shared, c.maxPPC, 1
		cfg.Iterations = 2
		q := mustFit(t, synth(c.states, cfg.Shape, 3), cfg)
		if got := q.PointsPerCentroid(); got != c.ppc {
			t.Errorf("%+v: %g points per centroid, want %g", c, got, c.ppc)
		}
		w := strings.Join(q.Warnings(), "\n")
		if (c.warn == "") != (w == "") || !strings.Contains(w, c.warn) || (w != "" && !strings.HasPrefix(w, "opq: ")) {
			t.Errorf("%+v: warnings %q, want %q", c, w, c.warn)
		}
		// Fewer codewords are never the advice: measured, they do not help.
		if strings.Contains(w, "use fewer codewords") || (w != "" && !strings.Contains(w, "fewer codewords do not fix this")) {
			t.Errorf("%+v: warnings %q suggest fewer codewords", c, w)
		}
		// Warnings come from Info, so a quantizer read from its file has them.
		r := readBack(t, q)
		if r.PointsPerCentroid() != q.PointsPerCentroid() || strings.Join(r.Warnings(), "\n") != w {
			t.Errorf("%+v: the file changed the warnings", c)
		}
	}
	// A PCA rotation from fewer slot vectors than channels.
	cfg := smallConfig()
	cfg.Codewords, cfg.RotationStates = 4, 4 // 16 slot vectors, 32 channels
	q := mustFit(t, synth(200, cfg.Shape, 3), cfg)
	if w := strings.Join(q.Warnings(), "\n"); !strings.Contains(w, "estimated from 16 slot vectors for 32 channels: 16 of its directions are arbitrary") {
		t.Errorf("rotation warning: %q", w)
	}
}

func readBack(t *testing.T, q *Quantizer) *Quantizer {
	t.Helper()
	r, err := Read(bytes.NewReader(fileBytes(t, q)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestHeldOut(t *testing.T) {
	cfg := smallConfig()
	cfg.Workers = 1
	train, held := synth(300, cfg.Shape, 1), synth(100, cfg.Shape, 2)
	plain := mustFit(t, train, cfg)
	if _, _, ok := plain.HeldOut(); ok {
		t.Fatal("a fit without held-out states has a held-out measure")
	}
	cfg.HeldOut = held
	q := mustFit(t, train, cfg)
	want, err := q.Evaluate(held)
	if err != nil {
		t.Fatal(err)
	}
	r2, n, ok := q.HeldOut()
	if !ok || n != 100 || r2 != want.R2 || !(r2 > 0.3 && r2 < 1) {
		t.Fatalf("held-out R^2 %g over %d (%v), Evaluate says %v", r2, n, ok, want)
	}
	// The measure is all that differs from the plain fit, and it survives
	// the file.
	a, b := fileBytes(t, plain), fileBytes(t, q)
	held0 := len(Magic) + headerSize - 16 // the held-out fields end the header
	if len(a) != len(b) || !bytes.Equal(a[:held0], b[:held0]) || !bytes.Equal(a[held0+16:len(a)-4], b[held0+16:len(b)-4]) {
		t.Fatal("the held-out states changed the fit")
	}
	if r2b, nb, okb := readBack(t, q).HeldOut(); r2b != r2 || nb != n || !okb {
		t.Fatal("the held-out measure did not survive the file")
	}
	// A held-out state of the wrong length is an error.
	cfg.HeldOut = [][]float32{make([]float32, 3)}
	if _, err := Fit(train, cfg); err == nil || !strings.Contains(err.Error(), "held-out") {
		t.Fatalf("bad held-out state: %v", err)
	}
}
