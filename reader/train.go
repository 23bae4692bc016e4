package reader

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/memowm/memowm/internal/f32"
	"github.com/memowm/memowm/trajectory"
)

// ProbeConfig sets the probe's architecture and its training.
// The zero value is not valid; start from DefaultProbeConfig.
type ProbeConfig struct {
	Arch
	Seed        uint64  // seeds the split, the initialisation and the shuffles (default 1)
	Epochs      int     // at most this many passes over the training questions (default 40)
	Batch       int     // questions per Adam step (default 64)
	LR          float64 // Adam learning rate (default 1e-3)
	ValFraction float64 // share of episodes held out for early stopping (default 0.1)
	Patience    int     // stop after this many epochs without a better validation loss (default 4)
	GradClip    float64 // scale a batch gradient down to this L2 norm when larger; 0: off (default 5)
}

// DefaultProbeConfig reads the paper's 32 x 512 states.
func DefaultProbeConfig() ProbeConfig {
	return ProbeConfig{
		Arch: Arch{Slots: trajectory.DefaultShape.Slots, Dim: trajectory.DefaultShape.Dim,
			Proj: 128, Hidden: 128, QuestionBuckets: 1024, ChoiceBuckets: 4096},
		Seed: 1, Epochs: 40, Batch: 64, LR: 1e-3, ValFraction: 0.1, Patience: 4, GradClip: 5,
	}
}

func (c ProbeConfig) validate() error {
	if err := c.Arch.validate(); err != nil {
		return err
	}
	switch {
	case c.Epochs < 1:
		return fmt.Errorf("%w: epochs %d < 1", ErrConfig, c.Epochs)
	case c.Batch < 1:
		return fmt.Errorf("%w: batch %d < 1", ErrConfig, c.Batch)
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return fmt.Errorf("%w: learning rate %v", ErrConfig, c.LR)
	case !(c.ValFraction >= 0 && c.ValFraction < 1):
		return fmt.Errorf("%w: validation fraction %v outside [0, 1)", ErrConfig, c.ValFraction)
	case !(c.GradClip >= 0) || math.IsInf(c.GradClip, 0):
		return fmt.Errorf("%w: gradient clip %v", ErrConfig, c.GradClip)
	case c.Patience < 1:
		return fmt.Errorf("%w: patience %d < 1", ErrConfig, c.Patience)
	}
	return nil
}

// TrainProgress is reported after every epoch.
type TrainProgress struct {
	Epoch, Epochs int
	TrainBits     float64 // mean answer bits over the epoch's batches (before each step)
	ValBits       float64 // mean answer bits on the validation questions (NaN without any)
	ValAccuracy   float64
	Best          bool // this epoch's parameters are the best so far
	Elapsed       time.Duration
}

// Report describes a finished training run. The probe returned is the one of
// BestEpoch.
type Report struct {
	TrainQuestions, ValQuestions int
	TrainEpisodes, ValEpisodes   int
	Epochs, BestEpoch            int
	TrainBits, ValBits           float64 // at BestEpoch; ValBits NaN without validation
	Val                          Evaluation
	Params                       int
	Duration                     time.Duration
}

// gradChunks is the fixed number of parts a batch's gradient is summed in,
// so the sum's order does not depend on GOMAXPROCS.
const gradChunks = 4

// TrainProbe trains a probe on questions qs, reading qs[i] from states[i]
// (the complete quantised state of observation qs[i].Step: the OPQ decode of
// its true codes). Episodes are split into training and validation by a
// seeded hash of qs[i].Episode (so questions with the same episode id, even
// from different files, fall on the same side); training stops after Patience epochs without a better
// validation loss and returns the best parameters, frozen. progress, if not
// nil, is called after every epoch. The result depends only on the inputs and
// cfg.
func TrainProbe(states [][]float32, qs []*trajectory.Question, cfg ProbeConfig, progress func(TrainProgress)) (*Probe, Report, error) {
	start := time.Now()
	if err := cfg.validate(); err != nil {
		return nil, Report{}, err
	}
	if len(states) != len(qs) {
		return nil, Report{}, fmt.Errorf("%w: %d states for %d questions", ErrShape, len(states), len(qs))
	}
	a := cfg.Arch
	for i := range qs {
		if err := checkState(states[i], a.Slots, a.Dim, fmt.Sprintf("state %d", i)); err != nil {
			return nil, Report{}, err
		}
		if _, err := answerIndex(qs[i]); err != nil {
			return nil, Report{}, fmt.Errorf("%w (question %d)", err, i)
		}
	}
	tr, va, trEp, vaEp, err := splitEpisodes(qs, cfg.Seed, cfg.ValFraction)
	if err != nil {
		return nil, Report{}, err
	}
	p := initProbe(a, cfg.Seed, states, tr)
	t := newTrainer(p, cfg)
	valStates, valQs := pick(states, qs, va)
	rep := Report{TrainQuestions: len(tr), ValQuestions: len(va), TrainEpisodes: trEp, ValEpisodes: vaEp,
		Params: len(p.w), ValBits: math.NaN(), TrainBits: math.NaN()}
	best := math.Inf(1)
	bestW := append([]float32(nil), p.w...)
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5_4ff1e))
	since := 0
	for ep := 1; ep <= cfg.Epochs; ep++ {
		rng.Shuffle(len(tr), func(i, j int) { tr[i], tr[j] = tr[j], tr[i] })
		sum := 0.0
		for lo := 0; lo < len(tr); lo += cfg.Batch {
			sum += t.step(states, qs, tr[lo:min(lo+cfg.Batch, len(tr))])
		}
		pr := TrainProgress{Epoch: ep, Epochs: cfg.Epochs, TrainBits: sum / float64(len(tr)) / math.Ln2,
			ValBits: math.NaN(), ValAccuracy: math.NaN()}
		score := pr.TrainBits
		if len(va) > 0 {
			ev, err := Evaluate(p, valStates, valQs)
			if err != nil {
				return nil, Report{}, err
			}
			pr.ValBits, pr.ValAccuracy = ev.All.MeanBits, ev.All.Accuracy
			score = pr.ValBits
		}
		rep.Epochs = ep
		if score < best {
			best, since, pr.Best = score, 0, true
			copy(bestW, p.w)
			rep.BestEpoch, rep.TrainBits, rep.ValBits = ep, pr.TrainBits, pr.ValBits
		} else {
			since++
		}
		pr.Elapsed = time.Since(start)
		if progress != nil {
			progress(pr)
		}
		if since >= cfg.Patience {
			break
		}
	}
	copy(p.w, bestW)
	p.setName()
	if len(va) > 0 {
		ev, err := Evaluate(p, valStates, valQs)
		if err != nil {
			return nil, Report{}, err
		}
		rep.Val = ev
	}
	rep.Duration = time.Since(start)
	return p, rep, nil
}

func pick(states [][]float32, qs []*trajectory.Question, idx []int) ([][]float32, []*trajectory.Question) {
	s, q := make([][]float32, len(idx)), make([]*trajectory.Question, len(idx))
	for k, i := range idx {
		s[k], q[k] = states[i], qs[i]
	}
	return s, q
}

// splitEpisodes splits the questions into training and validation by a
// seeded hash of their episode id (so questions with the same episode id,
// even from different files, fall on the same side), about valFraction of
// the episodes to validation. It returns the question indices of each side
// and how many episodes each has; no training question is an error.
func splitEpisodes(qs []*trajectory.Question, seed uint64, valFraction float64) (tr, va []int, trEps, vaEps int, err error) {
	trEp, vaEp := map[int64]bool{}, map[int64]bool{}
	for i, q := range qs {
		u := float64(mix(seed^mix(uint64(q.Episode)))>>11) / (1 << 53)
		if u < valFraction {
			va = append(va, i)
			vaEp[q.Episode] = true
		} else {
			tr = append(tr, i)
			trEp[q.Episode] = true
		}
	}
	if len(tr) == 0 {
		return nil, nil, 0, 0, fmt.Errorf("%w: no training questions (%d questions, validation fraction %v)", ErrConfig, len(qs), valFraction)
	}
	return tr, va, len(trEp), len(vaEp), nil
}

// mix is SplitMix64's finaliser.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// initProbe sets the standardisation from the training states (each distinct
// state counted once per question that reads it) and draws the weights.
func initProbe(a Arch, seed uint64, states [][]float32, tr []int) *Probe {
	lay := a.layout()
	p := &Probe{arch: a, lay: lay, w: make([]float32, lay.n)}
	sd := a.Slots * a.Dim
	mean, sq := make([]float64, sd), make([]float64, sd)
	for _, i := range tr {
		for j, v := range states[i] {
			mean[j] += float64(v)
			sq[j] += float64(v) * float64(v)
		}
	}
	n := float64(len(tr))
	totVar := 0.0
	for j := range mean {
		mean[j] /= n
		sq[j] = max(sq[j]/n-mean[j]*mean[j], 0)
		totVar += sq[j]
	}
	// The floor keeps channels that barely vary in training (a screen
	// region that never changes) from being scaled up a thousandfold: at
	// 1e-3 of the RMS std, a recorded NetHack screen's rare changes gave
	// logits in the thousands and answers costing thousands of bits.
	floor := 0.1 * math.Sqrt(totVar/float64(sd))
	if floor == 0 {
		floor = 1
	}
	for j := range mean {
		p.w[lay.mean+j] = float32(mean[j])
		p.w[lay.isd+j] = float32(1 / max(math.Sqrt(sq[j]), floor))
	}
	rng := rand.New(rand.NewPCG(seed, 0x1_417))
	normal := func(off, cnt int, std float64) {
		for i := off; i < off+cnt; i++ {
			p.w[i] = float32(rng.NormFloat64() * std)
		}
	}
	K, H := a.Proj, a.Hidden
	normal(lay.wp, a.Dim*K, 1/math.Sqrt(float64(a.Dim)))
	normal(lay.qk, a.QuestionBuckets*K, 0.02)
	normal(lay.qh, a.QuestionBuckets*H, 0.02)
	normal(lay.w1, K*H, math.Sqrt(2/float64(K)))
	normal(lay.ce, a.ChoiceBuckets*H, 1/math.Sqrt(float64(H)))
	return p
}

// trainer holds Adam's state and the batch buffers.
type trainer struct {
	p             *Probe
	cfg           ProbeConfig
	m, v          []float64 // Adam moments of the trainable parameters
	steps         int
	xs, xt, y, dy []float32 // (B*S, D) standardised inputs, (D, B*S) their transpose, (B*S, K), (B*S, K)
	gwp           []float32 // (D, K)
	g             [gradChunks][]float64
	dyc           [gradChunks][]float64
	threads       int
}

func newTrainer(p *Probe, cfg ProbeConfig) *trainer {
	a := p.arch
	nt := p.lay.n - p.lay.trainable
	bs := cfg.Batch * a.Slots
	t := &trainer{p: p, cfg: cfg, m: make([]float64, nt), v: make([]float64, nt),
		xs: make([]float32, bs*a.Dim), xt: make([]float32, bs*a.Dim), y: make([]float32, bs*a.Proj),
		dy: make([]float32, bs*a.Proj), gwp: make([]float32, a.Dim*a.Proj), threads: runtime.GOMAXPROCS(0)}
	for c := range t.g {
		t.g[c] = make([]float64, p.lay.n)
		t.dyc[c] = make([]float64, a.Slots*a.Proj)
	}
	return t
}

// step takes one Adam step on the batch idx and returns its summed loss in
// nats, measured before the step.
func (t *trainer) step(states [][]float32, qs []*trajectory.Question, idx []int) float64 {
	p, a, lay := t.p, t.p.arch, t.p.lay
	S, D, K := a.Slots, a.Dim, a.Proj
	B := len(idx)
	for b, i := range idx {
		x, xs := states[i], t.xs[b*S*D:(b+1)*S*D]
		for j := range xs {
			d := x[j] - p.w[lay.mean+j]
			xs[j] = d * p.w[lay.isd+j]
		}
	}
	f32.MulParTo(t.y, K, t.xs, D, p.w[lay.wp:], K, B*S, D, K, t.threads)
	scale := 1 / float64(B)
	var loss [gradChunks]float64
	var wg sync.WaitGroup
	for c := 0; c < gradChunks; c++ {
		lo, hi := c*B/gradChunks, (c+1)*B/gradChunks
		wg.Go(func() {
			g := t.g[c]
			clear(g)
			ac := p.newActs()
			for b := lo; b < hi; b++ {
				pq, _ := p.prepare(qs[idx[b]]) // checked by TrainProbe
				y := t.y[b*S*K : (b+1)*S*K]
				loss[c] += p.forward(ac, y, -1, nil, pq)
				p.backward(g, t.dyc[c], ac, y, pq, scale)
				dy := t.dy[b*S*K : (b+1)*S*K]
				for j, v := range t.dyc[c] {
					dy[j] = float32(v)
				}
			}
		})
	}
	wg.Wait()
	// dWp = xs^T dy over the batch.
	n := B * S
	for r := 0; r < n; r++ {
		for d := 0; d < D; d++ {
			t.xt[d*n+r] = t.xs[r*D+d]
		}
	}
	f32.MulParTo(t.gwp, K, t.xt, n, t.dy, K, D, n, K, t.threads)
	g := t.g[0]
	for c := 1; c < gradChunks; c++ {
		for j := lay.trainable; j < lay.n; j++ {
			g[j] += t.g[c][j]
		}
	}
	for j, v := range t.gwp {
		g[lay.wp+j] += float64(v)
	}
	gt := g[lay.trainable:]
	if t.cfg.GradClip > 0 {
		norm := 0.0
		for _, v := range gt {
			norm += v * v
		}
		if norm = math.Sqrt(norm); norm > t.cfg.GradClip {
			f := t.cfg.GradClip / norm
			for j := range gt {
				gt[j] *= f
			}
		}
	}
	t.adam(gt)
	total := 0.0
	for _, l := range loss {
		total += l
	}
	return total
}

const (
	adamB1  = 0.9
	adamB2  = 0.999
	adamEps = 1e-8
)

func (t *trainer) adam(g []float64) {
	t.steps++
	c1 := 1 - math.Pow(adamB1, float64(t.steps))
	c2 := 1 - math.Pow(adamB2, float64(t.steps))
	w := t.p.w[t.p.lay.trainable:]
	lr := t.cfg.LR
	for j, gj := range g {
		if gj == 0 && t.m[j] == 0 && t.v[j] == 0 {
			continue // untouched hash buckets stay as drawn
		}
		t.m[j] = adamB1*t.m[j] + (1-adamB1)*gj
		t.v[j] = adamB2*t.v[j] + (1-adamB2)*gj*gj
		w[j] = float32(float64(w[j]) - lr*(t.m[j]/c1)/(math.Sqrt(t.v[j]/c2)+adamEps))
	}
}
