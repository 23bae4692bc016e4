package reader

import (
	"fmt"
	"math/rand/v2"

	"github.com/memowm/memowm/trajectory"
)

// toyArch is a small probe for tests: 4 slots x 16 channels.
func toyArch() Arch {
	return Arch{Slots: 4, Dim: 16, Proj: 8, Hidden: 12, QuestionBuckets: 64, ChoiceBuckets: 128}
}

func toyConfig() ProbeConfig {
	c := DefaultProbeConfig()
	c.Arch = toyArch()
	c.Epochs, c.Batch, c.LR, c.Patience = 30, 16, 1e-2, 5
	return c
}

var toyWords = []string{"kiwi", "plum", "fig", "lime", "pear", "sage"}

// toyData makes n questions whose answer is readable from the state: one
// random slot holds a marker plus the answer word's vector, the others
// noise. Two question kinds: which word is marked ("word"), and whether the
// marked slot is the first ("first", yes/no).
func toyData(n int, seed uint64) ([][]float32, []*trajectory.Question) {
	a := toyArch()
	wr := rand.New(rand.NewPCG(99, 99)) // the world: fixed across seeds
	vec := func() []float32 {
		v := make([]float32, a.Dim)
		for i := range v {
			v[i] = float32(wr.NormFloat64())
		}
		return v
	}
	marker := vec()
	emb := make([][]float32, len(toyWords))
	for i := range emb {
		emb[i] = vec()
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	states := make([][]float32, n)
	qs := make([]*trajectory.Question, n)
	for i := range states {
		x := make([]float32, a.Slots*a.Dim)
		for j := range x {
			x[j] = float32(0.5 * rng.NormFloat64())
		}
		s, w := rng.IntN(a.Slots), rng.IntN(len(toyWords))
		for c := 0; c < a.Dim; c++ {
			x[s*a.Dim+c] += marker[c] + emb[w][c]
		}
		states[i] = x
		q := &trajectory.Question{Episode: int64(i / 3), Step: i % 3}
		if rng.IntN(2) == 0 {
			q.Kind, q.Subject, q.Text, q.Answer = "word", "marked", "Which word is marked?", toyWords[w]
			q.Choices = toyWords
		} else {
			q.Kind, q.Subject, q.Text = "first", "marked", "Is the first slot marked?"
			q.Answer, q.Choices = "no", []string{"no", "yes"}
			if s == 0 {
				q.Answer = "yes"
			}
		}
		qs[i] = q
	}
	return states, qs
}

// randomProbe is an untrained probe with every parameter drawn, so that
// tests exercise every tensor.
func randomProbe(a Arch, seed uint64) *Probe {
	rng := rand.New(rand.NewPCG(seed, 3))
	states := make([][]float32, 8)
	for i := range states {
		states[i] = make([]float32, a.Slots*a.Dim)
		for j := range states[i] {
			states[i][j] = float32(rng.NormFloat64())
		}
	}
	p := initProbe(a, seed, states, []int{0, 1, 2, 3, 4, 5, 6, 7})
	for i := p.lay.trainable; i < p.lay.n; i++ {
		p.w[i] += float32(0.2 * rng.NormFloat64())
	}
	p.setName()
	return p
}

func mustBits(p Reader, states [][]float32, qs []*trajectory.Question) []float64 {
	b, err := p.Bits(nil, states, qs)
	if err != nil {
		panic(fmt.Sprint("Bits: ", err))
	}
	return b
}
