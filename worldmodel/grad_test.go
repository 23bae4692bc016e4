package worldmodel

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memowm/memowm/internal/fgemm"
)

// microConfig is a model small enough to check every parameter's gradient
// by finite differences of the float64 reference.
func microConfig() Config {
	return Config{
		Profile: ProfileF32, MaxHistory: 3, Slots: 3, Subspaces: 2, Codewords: 5, CodeDim: 2,
		Layers: 2, Heads: 2, MLP: 6, ActionTypes: 17, CoordBins: 4, ActionDim: 3, ByteDim: 2,
		PayloadHidden: 3, MaxPayload: 4, Tasks: 1,
	}
}

// microModel is a micro model whose every parameter is random (gains near
// 1), so that no gradient is trivially zero.
func microModel(t testing.TB, seed uint64) *Model {
	t.Helper()
	m, err := New(microConfig(), seed)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	for _, tn := range m.p.Tensors {
		d := m.p.Data[tn.Off : tn.Off+tn.Size()]
		for i := range d {
			switch tn.init {
			case initOne:
				d[i] = float32(1 + 0.3*rng.NormFloat64())
			default:
				d[i] = float32(0.5 * rng.NormFloat64())
			}
		}
	}
	return m
}

// microBatch draws histories of lengths 1..MaxHistory with some invalid
// slots, their next states and, for some, next-state validity flags; some
// targets copy the previous code so that both branches of the gate occur.
func microBatch(rng *rand.Rand, c *Config, lens []int) ([]History, []Step) {
	var hs []History
	var ts []Step
	for i, n := range lens {
		h := randomHistory(rng, c, n)
		for k := range h {
			if len(h[k].Action.Payload) > c.MaxPayload {
				h[k].Action.Payload = h[k].Action.Payload[:c.MaxPayload]
			}
		}
		if i%2 == 1 {
			h[0].SlotValid = []bool{true, false, true}
		}
		next := append([]uint8(nil), h[n-1].Codes...)
		for j := range next {
			if rng.IntN(2) == 0 {
				next[j] = uint8(rng.IntN(c.Codewords))
			}
		}
		st := Step{Codes: next}
		if i%3 == 2 {
			st.SlotValid = []bool{false, true, true}
		}
		hs, ts = append(hs, h), append(ts, st)
	}
	return hs, ts
}

// refLoss is the objective of loss.go computed on refForward's float64
// outputs.
func refLoss(m *Model, hs []History, ts []Step) float64 {
	c := &m.cfg
	S, J, C := c.Slots, c.Coords(), c.Codewords
	total := 0.0
	for b, h := range hs {
		lg, gt, vd := refForward(m, h)
		prev := h[len(h)-1].Codes
		code := 0.0
		for j := 0; j < J; j++ {
			l := lg[j*C : (j+1)*C]
			mx := l[0]
			for _, v := range l {
				mx = math.Max(mx, v)
			}
			z := 0.0
			for _, v := range l {
				z += math.Exp(v - mx)
			}
			y := int(ts[b].Codes[j])
			a := 1 / (1 + math.Exp(-gt[j]))
			p := (1 - a) * math.Exp(l[y]-mx) / z
			if y == int(prev[j]) {
				p += a
			}
			code -= math.Log2(p)
		}
		valid := 0.0
		for s := 0; s < S; s++ {
			y := 1.0
			if ts[b].SlotValid != nil && !ts[b].SlotValid[s] {
				y = 0
			}
			sg := 1 / (1 + math.Exp(-vd[s]))
			valid -= (y*math.Log(sg) + (1-y)*math.Log(1-sg)) / math.Ln2
		}
		total += code/float64(J) + valid/float64(S)
	}
	return total / float64(len(hs))
}

// TestGradientsFiniteDifferences checks the analytic gradient of every
// parameter of every layer (embeddings, action encoder and GRU, attention,
// LayerNorms, MLP, final LayerNorm, tied output, copy gate, validity head)
// against central differences of the float64 reference forward.
func TestGradientsFiniteDifferences(t *testing.T) {
	m := microModel(t, 3)
	c := m.Config()
	rng := rand.New(rand.NewPCG(3, 3))
	hs, ts := microBatch(rng, &c, []int{1, 2, 3, 3})
	var g1 *Params
	for _, threads := range []int{1, 2} {
		g := newParams(&c)
		tp := newTape(m, threads)
		tp.forward(hs, false, 0)
		st := tp.lossGrad(ts, true, false)
		tp.backward(g)
		if threads == 2 {
			if i := diffAt(g.Data, g1.Data); i >= 0 {
				t.Fatalf("gradient %d differs between 1 and 2 threads", i)
			}
			continue
		}
		g1 = g
		if d := math.Abs(st.loss(&c) - refLoss(m, hs, ts)); d > 1e-5 {
			t.Fatalf("loss %g, reference %g", st.loss(&c), refLoss(m, hs, ts))
		}
		for _, tn := range m.p.Tensors {
			w := m.p.Data[tn.Off : tn.Off+tn.Size()]
			an := g.Data[tn.Off : tn.Off+tn.Size()]
			fd := make([]float64, len(w))
			var num, den, scale float64
			for i := range w {
				orig := w[i]
				eps := float32(1e-3 * math.Max(1, math.Abs(float64(orig))))
				w[i] = orig + eps
				hi := float64(w[i])
				lp := refLoss(m, hs, ts)
				w[i] = orig - eps
				lo := float64(w[i])
				lm := refLoss(m, hs, ts)
				w[i] = orig
				fd[i] = (lp - lm) / (hi - lo)
				d := float64(an[i]) - fd[i]
				num += d * d
				den += fd[i] * fd[i]
				scale = math.Max(scale, math.Abs(fd[i]))
			}
			rel := 0.0
			if den > 0 {
				rel = math.Sqrt(num / den)
			}
			worst := 0.0
			for i := range fd {
				e := math.Abs(float64(an[i])-fd[i]) / (math.Abs(fd[i]) + 1e-3*scale + 1e-9)
				worst = math.Max(worst, e)
			}
			if rel > 1e-3 || worst > 1e-3 || (den == 0 && num > 0) {
				t.Errorf("%-24s relative error %.2e, worst element %.2e (|fd| max %.3g)", tn.Name, rel, worst, scale)
			} else if testing.Verbose() {
				t.Logf("%-24s relative error %.2e, worst element %.2e (|fd| max %.3g)", tn.Name, rel, worst, scale)
			}
		}
	}
}

// TestCodeNLLFast checks the training loss's fast per-coordinate terms
// against codeNLL in float64: the same -ln p, and gradients that match
// central differences of codeNLL, with the copy gate on the true code and
// off it.
func TestCodeNLLFast(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	const C = 64
	for trial := 0; trial < 6; trial++ {
		l := make([]float32, C)
		for i := range l {
			l[i] = float32(2 * rng.NormFloat64())
		}
		gl := float32(rng.NormFloat64())
		y := rng.IntN(C)
		prev := y
		if trial%2 == 1 {
			prev = (y + 1) % C
		}
		dl := make([]float32, C)
		mx, z := make([]float32, 1), make([]float32, 1)
		fgemm.ExpRows(dl, l, 1, C, mx, z)
		const w = 0.5
		nll, dg := codeNLLFast(dl, l[y], mx[0], z[0], gl, y, prev, w)
		if want := codeNLL(l, gl, y, prev); math.Abs(nll-want) > 1e-5*(1+want) {
			t.Fatalf("trial %d: nll %g, want %g", trial, nll, want)
		}
		const h = 1e-2
		for c := 0; c < C; c++ {
			up, dn := append([]float32(nil), l...), append([]float32(nil), l...)
			up[c] += h
			dn[c] -= h
			num := (codeNLL(up, gl, y, prev) - codeNLL(dn, gl, y, prev)) / (2 * h)
			if got := float64(dl[c]) / w; math.Abs(got-num) > 1e-3*(1+math.Abs(num)) {
				t.Fatalf("trial %d: d/dl[%d] = %g, numerical %g", trial, c, got, num)
			}
		}
		num := (codeNLL(l, gl+h, y, prev) - codeNLL(l, gl-h, y, prev)) / (2 * h)
		if math.Abs(dg-num) > 1e-3*(1+math.Abs(num)) {
			t.Fatalf("trial %d: d/dgate = %g, numerical %g", trial, dg, num)
		}
	}
}
