package reader

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/memowm/memowm/screen"
	"github.com/memowm/memowm/trajectory"
)

// TextConfig sets the text reader's table and its training. The zero value
// is not valid; start from DefaultTextConfig and set Layout.
type TextConfig struct {
	TextArch
	Seed        uint64  // seeds the split and the shuffles (default 1)
	Epochs      int     // at most this many passes over the training questions (default 12)
	LR          float64 // AdaGrad learning rate (default 0.2)
	L2          float64 // weight decay per update of a weight (default 1e-6)
	ValFraction float64 // share of episodes held out for early stopping (default 0.1)
	Patience    int     // stop after this many epochs without a better validation loss (default 3)
}

// DefaultTextConfig reads 80 x 24 terminal screens.
func DefaultTextConfig() TextConfig {
	l, _ := screen.NewCellLayout(80, 24)
	return TextConfig{TextArch: TextArch{Layout: l, WeightBits: 20}, Seed: 1, Epochs: 12, LR: 0.2, L2: 1e-6,
		ValFraction: 0.1, Patience: 3}
}

func (c TextConfig) validate() error {
	if err := c.TextArch.validate(); err != nil {
		return err
	}
	switch {
	case c.Epochs < 1:
		return fmt.Errorf("%w: epochs %d < 1", ErrConfig, c.Epochs)
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return fmt.Errorf("%w: learning rate %v", ErrConfig, c.LR)
	case !(c.L2 >= 0) || math.IsInf(c.L2, 0):
		return fmt.Errorf("%w: L2 %v", ErrConfig, c.L2)
	case !(c.ValFraction >= 0 && c.ValFraction < 1):
		return fmt.Errorf("%w: validation fraction %v outside [0, 1)", ErrConfig, c.ValFraction)
	case c.Patience < 1:
		return fmt.Errorf("%w: patience %d < 1", ErrConfig, c.Patience)
	}
	return nil
}

// TrainText trains a text reader on questions qs, reading qs[i] from
// states[i] (the complete quantised state of its observation, cells
// encoder). Episodes are split into training and validation as TrainProbe
// splits them; each epoch is one pass of AdaGrad over the training questions
// in a seeded order, one question a step; training stops after Patience
// epochs without a better validation loss and returns the best weights,
// frozen (float32). Every state is decoded once, on up to GOMAXPROCS
// goroutines, into features at fixed indices; the updates run on one
// goroutine, so the result depends only on the inputs and cfg.
func TrainText(states [][]float32, qs []*trajectory.Question, cfg TextConfig, progress func(TrainProgress)) (*TextReader, Report, error) {
	start := time.Now()
	if err := cfg.validate(); err != nil {
		return nil, Report{}, err
	}
	if len(states) != len(qs) {
		return nil, Report{}, fmt.Errorf("%w: %d states for %d questions", ErrShape, len(states), len(qs))
	}
	r := &TextReader{arch: cfg.TextArch, w: make([]float32, 1<<cfg.WeightBits)}
	ans, err := r.check(states, qs)
	if err != nil {
		return nil, Report{}, err
	}
	tr, va, trEp, vaEp, err := splitEpisodes(qs, cfg.Seed, cfg.ValFraction)
	if err != nil {
		return nil, Report{}, err
	}
	feats := make([][]choiceFeats, len(qs))
	rs := runs(states, len(qs))
	r.each(len(rs), func(k int, s *textScratch) {
		r.arch.Layout.DecodeGrid(&s.g, states[rs[k][0]])
		for i := rs[k][0]; i < rs[k][1]; i++ {
			feats[i] = r.features(nil, &s.g, qs[i].Kind, qs[i].Choices)
		}
	})
	w := make([]float64, len(r.w))
	g2 := make([]float64, len(r.w))
	var s textScratch
	// loss returns a question's bits under weights ww and leaves the choice
	// probabilities in s.sc and place weights in s.pw.
	loss := func(ww []float64, i int) float64 {
		s.sized(len(feats[i]))
		scoreChoices(ww, feats[i], s.sc, s.pw)
		softmax(s.sc)
		return bitsOf(s.sc, ans[i])
	}
	update := func(f uint32, g float64) {
		g += float64(cfg.L2 * w[f]) // explicit roundings: no fused multiply-add
		g2[f] += float64(g * g)
		w[f] -= cfg.LR * g / (math.Sqrt(g2[f]) + 1e-8)
	}
	evalVal := func() (bits, acc float64) {
		if len(va) == 0 {
			return math.NaN(), math.NaN()
		}
		right := 0
		for _, i := range va {
			s.sized(len(feats[i]))
			scoreChoices(r.w, feats[i], s.sc, s.pw)
			if argmax(s.sc) == ans[i] {
				right++
			}
			softmax(s.sc)
			bits += bitsOf(s.sc, ans[i])
		}
		return bits / float64(len(va)), float64(right) / float64(len(va))
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x74657874))
	order := append([]int(nil), tr...)
	best := append([]float32(nil), r.w...)
	bestVal, bestEpoch, bestTrain, since := math.Inf(1), 0, math.NaN(), 0
	epoch := 0
	for epoch = 1; epoch <= cfg.Epochs; epoch++ {
		rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		trainBits := 0.0
		for _, i := range order {
			trainBits += loss(w, i)
			for c, cf := range feats[i] {
				g := s.sc[c] // d(-ln P(ans))/d s(c) = P(c) - [c = ans]
				if c == ans[i] {
					g--
				}
				if g == 0 {
					continue
				}
				for _, f := range cf.own {
					update(f, g)
				}
				for k, p := range cf.places {
					gp := g * s.pw[c][k]
					for _, f := range p {
						update(f, gp)
					}
				}
			}
		}
		trainBits /= float64(len(order))
		for i, v := range w {
			r.w[i] = float32(v)
		}
		vb, vacc := evalVal()
		better := len(va) == 0 || vb < bestVal
		if better {
			copy(best, r.w)
			bestVal, bestEpoch, bestTrain, since = vb, epoch, trainBits, 0
		} else {
			since++
		}
		if progress != nil {
			progress(TrainProgress{Epoch: epoch, Epochs: cfg.Epochs, TrainBits: trainBits, ValBits: vb, ValAccuracy: vacc,
				Best: better, Elapsed: time.Since(start)})
		}
		if since >= cfg.Patience {
			break
		}
	}
	copy(r.w, best)
	r.setName()
	rep := Report{TrainQuestions: len(tr), ValQuestions: len(va), TrainEpisodes: trEp, ValEpisodes: vaEp,
		Epochs: min(epoch, cfg.Epochs), BestEpoch: bestEpoch, TrainBits: bestTrain, ValBits: math.NaN(), Params: len(r.w)}
	if len(va) > 0 {
		vs, vq := pick(states, qs, va)
		ev, err := Evaluate(r, vs, vq)
		if err != nil {
			return nil, Report{}, err
		}
		rep.Val, rep.ValBits = ev, ev.All.MeanBits
	}
	rep.Duration = time.Since(start)
	return r, rep, nil
}
