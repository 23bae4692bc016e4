package worldmodel

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestPaperParameterCount(t *testing.T) {
	cfg, err := Preset("paper")
	if err != nil {
		t.Fatal(err)
	}
	if n := cfg.NumParams(); n != 29092096 {
		t.Errorf("paper has %d parameters, the reference counts 29,092,096", n)
	}
	for _, name := range PresetNames() {
		cfg, _ := Preset(name)
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		total := 0
		for _, c := range cfg.Breakdown() {
			total += c.Params
		}
		ts := cfg.layout()
		last := ts[len(ts)-1]
		if total != cfg.NumParams() || last.Off+last.Size() != total {
			t.Errorf("%s: breakdown %d, layout %d, count %d", name, total, last.Off+last.Size(), cfg.NumParams())
		}
		t.Logf("%-7s %10d parameters", name, total)
	}
}

func TestShapes(t *testing.T) {
	m := tinyModel(t, 1)
	c := m.Config()
	rng := rand.New(rand.NewPCG(1, 1))
	r := newCPU(t, m)
	for _, n := range []int{1, 2, c.MaxHistory} {
		o := forward1(t, r, randomHistory(rng, &c, n))
		if len(o.Logits) != c.Coords()*c.Codewords || len(o.Gate) != c.Coords() || len(o.Valid) != c.Slots || len(o.Prev) != c.Coords() {
			t.Fatalf("n=%d: shapes %d %d %d %d", n, len(o.Logits), len(o.Gate), len(o.Valid), len(o.Prev))
		}
		for _, v := range o.Logits {
			if isNonFinite(v) {
				t.Fatal("non-finite logit")
			}
		}
	}
}

// TestMatchesReference holds the fast float32 forward to the literal float64
// transcription of the reference implementation, for short (padded) and full
// histories, with some slots marked invalid.
func TestMatchesReference(t *testing.T) {
	m := tinyModel(t, 2)
	c := m.Config()
	rng := rand.New(rand.NewPCG(2, 2))
	r := newCPU(t, m)
	lens := []int{1, 3, c.MaxHistory}
	if testing.Short() {
		lens = lens[:2]
	}
	for _, n := range lens {
		h := randomHistory(rng, &c, n)
		h[0].SlotValid = make([]bool, c.Slots)
		for s := range h[0].SlotValid {
			h[0].SlotValid[s] = s%3 != 0
		}
		o := forward1(t, r, h)
		lg, gt, vd := refForward(m, h)
		check := func(what string, got []float32, want []float64) {
			worst := 0.0
			for i := range got {
				d := math.Abs(float64(got[i])-want[i]) / (1e-3 + math.Abs(want[i]))
				worst = math.Max(worst, d)
				if d > 1e-3 {
					t.Fatalf("n=%d %s[%d] = %g, reference %g", n, what, i, got[i], want[i])
				}
			}
			t.Logf("n=%d %s: worst scaled error %.2g", n, what, worst)
		}
		check("logits", o.Logits, lg)
		check("gate", o.Gate, gt)
		check("valid", o.Valid, vd)
	}
}

// TestAttentionMask: perturbing a later block (codes and action) never
// changes an earlier block's final hidden state, and does change the later
// ones.
func TestAttentionMask(t *testing.T) {
	m := tinyModel(t, 3)
	c := m.Config()
	rng := rand.New(rand.NewPCG(3, 3))
	r := newCPU(t, m)
	r.keepAll = true
	n, k := 6, 3
	h := randomHistory(rng, &c, n)
	forward1(t, r, h)
	base := append([]float32(nil), r.x[:n*c.Slots*c.Width()]...)
	h2 := append(History(nil), h...)
	h2[k] = randomHistory(rng, &c, 1)[0]
	forward1(t, r, h2)
	cut := k * c.Slots * c.Width()
	if i := diffAt(base[:cut], r.x[:cut]); i >= 0 {
		t.Fatalf("perturbing block %d changed block %d", k, i/(c.Slots*c.Width()))
	}
	if diffAt(base[cut:], r.x[cut:n*c.Slots*c.Width()]) < 0 {
		t.Fatal("perturbing a block changed nothing after it")
	}
}

// TestCompactLastLayer: computing only the last block in the last layer
// gives the same bits as computing every block.
func TestCompactLastLayer(t *testing.T) {
	m := tinyModel(t, 4)
	c := m.Config()
	h := randomHistory(rand.New(rand.NewPCG(4, 4)), &c, 5)
	a := forward1(t, newCPU(t, m), h)
	r := newCPU(t, m)
	r.keepAll = true
	b := forward1(t, r, h)
	if i := diffAt(a.Logits, b.Logits); i >= 0 {
		t.Fatalf("logit %d differs", i)
	}
}

// TestPaddingAndBatchInvariance: a history's outputs are the same bits alone,
// in a batch with histories of other lengths, in any position, and with any
// thread count.
func TestPaddingAndBatchInvariance(t *testing.T) {
	m := tinyModel(t, 5)
	c := m.Config()
	rng := rand.New(rand.NewPCG(5, 5))
	hs := []History{randomHistory(rng, &c, 2), randomHistory(rng, &c, c.MaxHistory), randomHistory(rng, &c, 1), randomHistory(rng, &c, 7)}
	alone := make([]Output, len(hs))
	for i, h := range hs {
		alone[i] = forward1(t, newCPU(t, m, WithThreads(1)), h)
	}
	for _, threads := range []int{1, 2, 3, 8} {
		outs, err := newCPU(t, m, WithThreads(threads)).Forward(nil, hs)
		if err != nil {
			t.Fatal(err)
		}
		for i := range hs {
			if j := diffAt(outs[i].Logits, alone[i].Logits); j >= 0 {
				t.Fatalf("threads=%d history %d: logit %d differs in a batch", threads, i, j)
			}
			if diffAt(outs[i].Gate, alone[i].Gate) >= 0 || diffAt(outs[i].Valid, alone[i].Valid) >= 0 {
				t.Fatalf("threads=%d history %d: gate or validity differs in a batch", threads, i)
			}
		}
	}
	// Reversed order, reusing the destination.
	r := newCPU(t, m)
	rev := []History{hs[3], hs[2], hs[1], hs[0]}
	outs, _ := r.Forward(nil, hs)
	outs, _ = r.Forward(outs, rev)
	for i := range rev {
		if diffAt(outs[i].Logits, alone[3-i].Logits) >= 0 {
			t.Fatalf("reversed batch: history %d differs", i)
		}
	}
}

func TestCopyGateProbabilities(t *testing.T) {
	m := tinyModel(t, 6)
	c := m.Config()
	rng := rand.New(rand.NewPCG(6, 6))
	r := newCPU(t, m)
	h := randomHistory(rng, &c, 4)
	o := forward1(t, r, h)
	var p []float32
	for j := 0; j < c.Coords(); j++ {
		p = o.ProbsTo(p, j)
		sum := 0.0
		for _, v := range p {
			if !(v > 0) {
				t.Fatalf("coordinate %d: probability %g", j, v)
			}
			sum += float64(v)
		}
		if math.Abs(sum-1) > 1e-5 {
			t.Fatalf("coordinate %d: probabilities sum to %g", j, sum)
		}
		a := 1 / (1 + math.Exp(-float64(o.Gate[j])))
		if float64(p[o.Prev[j]]) < a-1e-6 {
			t.Fatalf("coordinate %d: p(prev) = %g below the gate %g", j, p[o.Prev[j]], a)
		}
	}
	// A gate pushed open makes the previous code the mode of every table.
	b, _ := m.Tensor("copy_head/b")
	for i := range b {
		b[i] = 12
	}
	preds, err := newCPU(t, m).Predict(nil, []History{h})
	if err != nil {
		t.Fatal(err)
	}
	last := h[len(h)-1].Codes
	for j := range last {
		if preds[0].Mode[j] != last[j] {
			t.Fatalf("coordinate %d: mode %d, previous code %d", j, preds[0].Mode[j], last[j])
		}
	}
}

func TestPredictTables(t *testing.T) {
	m := tinyModel(t, 7)
	c := m.Config()
	rng := rand.New(rand.NewPCG(7, 7))
	hs := []History{randomHistory(rng, &c, 3), randomHistory(rng, &c, 1)}
	var want []Prediction
	for _, threads := range []int{1, 2, 5} {
		r := newCPU(t, m, WithThreads(threads), WithPrecision(20))
		preds, err := r.Predict(nil, hs)
		if err != nil {
			t.Fatal(err)
		}
		for b := range preds {
			for j := 0; j < c.Coords(); j++ {
				f := preds[b].Table(j)
				var sum uint64
				best := 0
				for i, v := range f {
					if v < 1 {
						t.Fatalf("zero frequency")
					}
					sum += uint64(v)
					if v > f[best] {
						best = i
					}
				}
				if sum != 1<<20 || int(preds[b].Mode[j]) != best {
					t.Fatalf("history %d coordinate %d: total %d, mode %d (want %d)", b, j, sum, preds[b].Mode[j], best)
				}
			}
		}
		if want == nil {
			want = preds
			continue
		}
		for b := range preds {
			for i := range preds[b].Freq {
				if preds[b].Freq[i] != want[b].Freq[i] {
					t.Fatalf("threads=%d: table entry %d differs", threads, i)
				}
			}
			for j := range preds[b].Entropy {
				if preds[b].Entropy[j] != want[b].Entropy[j] {
					t.Fatalf("threads=%d: entropy %d differs", threads, j)
				}
			}
		}
	}
}

func TestHistoryErrors(t *testing.T) {
	m := tinyModel(t, 8)
	c := m.Config()
	rng := rand.New(rand.NewPCG(8, 8))
	r := newCPU(t, m)
	good := randomHistory(rng, &c, 2)
	cases := []struct {
		name string
		h    History
		want error
	}{
		{"empty", History{}, ErrHistory},
		{"too long", randomHistory(rng, &c, c.MaxHistory+1), ErrHistory},
		{"short codes", History{{Codes: make([]uint8, 5)}}, ErrHistory},
		{"code range", func() History { h := randomHistory(rng, &c, 2); h[1].Codes[7] = uint8(c.Codewords); return h }(), ErrCode},
		{"action type", func() History { h := randomHistory(rng, &c, 1); h[0].Action.Type = 17; return h }(), ErrAction},
		{"position", func() History {
			h := randomHistory(rng, &c, 1)
			h[0].Action.HasPos, h[0].Action.X = true, 1.5
			return h
		}(), ErrAction},
		{"delta", func() History {
			h := randomHistory(rng, &c, 1)
			h[0].Action.HasDelta, h[0].Action.DX = true, float32(math.Inf(1))
			return h
		}(), ErrAction},
		{"payload", func() History {
			h := randomHistory(rng, &c, 1)
			h[0].Action.Payload = make([]byte, c.MaxPayload+1)
			return h
		}(), ErrAction},
		{"slot flags", func() History { h := randomHistory(rng, &c, 1); h[0].SlotValid = make([]bool, 3); return h }(), ErrHistory},
	}
	for _, tc := range cases {
		_, err := r.Forward(nil, []History{good, tc.h})
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
		if _, err := r.Predict(nil, []History{tc.h}); !errors.Is(err, tc.want) {
			t.Errorf("%s: Predict error %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := Preset("huge"); !errors.Is(err, ErrConfig) {
		t.Errorf("unknown preset: %v", err)
	}
	cfg := c
	cfg.Heads = 3
	if _, err := New(cfg, 1); !errors.Is(err, ErrConfig) {
		t.Errorf("heads not dividing width: %v", err)
	}
	cfg = c
	cfg.Profile = "int8"
	if _, err := New(cfg, 1); !errors.Is(err, ErrProfile) {
		t.Errorf("unknown profile: %v", err)
	}
	if _, err := NewCPU(m, WithThreads(0)); !errors.Is(err, ErrConfig) {
		t.Errorf("zero threads: %v", err)
	}
}

func TestInitDeterministic(t *testing.T) {
	a, b := tinyModel(t, 9), tinyModel(t, 9)
	if diffAt(a.p.Data, b.p.Data) >= 0 {
		t.Fatal("same seed, different weights")
	}
	c := tinyModel(t, 10)
	if diffAt(a.p.Data, c.p.Data) < 0 {
		t.Fatal("different seeds, same weights")
	}
	d, shape := a.Tensor("layer1/mlp_w1")
	if len(shape) != 2 || shape[0] != a.cfg.Width() {
		t.Fatalf("mlp_w1 shape %v", shape)
	}
	var s, q float64
	for _, v := range d {
		s += float64(v)
		q += float64(v) * float64(v)
	}
	std := math.Sqrt(q / float64(len(d)))
	if want := 1 / math.Sqrt(float64(shape[0])); math.Abs(std-want) > 0.1*want || math.Abs(s/float64(len(d))) > 0.1*want {
		t.Errorf("fan-in init: std %g, want %g", std, want)
	}
}

// TestTransposeCols: the blocked transpose equals the element-by-element
// definition for row counts around its block of eight and a row stride wider
// than the block.
func TestTransposeCols(t *testing.T) {
	for _, rows := range []int{1, 7, 8, 9, 16, 23} {
		for _, cols := range []int{1, 3, 8} {
			lds := cols + 5
			src := make([]float32, rows*lds)
			for i := range src {
				src[i] = float32(i) + 0.5
			}
			dst := make([]float32, rows*cols)
			transposeCols(dst, src, lds, rows, cols)
			for r := 0; r < rows; r++ {
				for j := 0; j < cols; j++ {
					if got, want := dst[j*rows+r], src[r*lds+j]; got != want {
						t.Fatalf("rows %d cols %d: dst[%d][%d] = %v, want %v", rows, cols, j, r, got, want)
					}
				}
			}
		}
	}
}
