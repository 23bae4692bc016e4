package reader

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"

	"github.com/memowm/memowm/internal/f32"
	"github.com/memowm/memowm/trajectory"
)

// Shape letters used in comments: S slots, D channels per slot, K projected
// width, H hidden width, NQ question-feature buckets, NC choice-feature
// buckets, C choices of one question.

// Arch is the probe's architecture, stored in its file.
type Arch struct {
	Slots, Dim      int // S, D: the state geometry
	Proj            int // K: slot projection width
	Hidden          int // H: hidden width
	QuestionBuckets int // NQ: hash buckets of question features
	ChoiceBuckets   int // NC: hash buckets of choice features
}

// Limits on an Arch, which Read also enforces so that a damaged header cannot
// ask for absurd sizes.
const (
	maxSlots   = 1 << 10
	maxDim     = 1 << 14
	maxWidth   = 1 << 12
	maxBuckets = 1 << 20
	maxParams  = 1 << 27
)

func (a Arch) validate() error {
	switch {
	case a.Slots < 1 || a.Slots > maxSlots:
		return fmt.Errorf("%w: slots %d outside 1..%d", ErrConfig, a.Slots, maxSlots)
	case a.Dim < 1 || a.Dim > maxDim:
		return fmt.Errorf("%w: dim %d outside 1..%d", ErrConfig, a.Dim, maxDim)
	case a.Proj < 1 || a.Proj > maxWidth:
		return fmt.Errorf("%w: proj %d outside 1..%d", ErrConfig, a.Proj, maxWidth)
	case a.Hidden < 1 || a.Hidden > maxWidth:
		return fmt.Errorf("%w: hidden %d outside 1..%d", ErrConfig, a.Hidden, maxWidth)
	case a.QuestionBuckets < 1 || a.QuestionBuckets > maxBuckets:
		return fmt.Errorf("%w: question buckets %d outside 1..%d", ErrConfig, a.QuestionBuckets, maxBuckets)
	case a.ChoiceBuckets < 1 || a.ChoiceBuckets > maxBuckets:
		return fmt.Errorf("%w: choice buckets %d outside 1..%d", ErrConfig, a.ChoiceBuckets, maxBuckets)
	}
	if n := a.numParams(); n > maxParams {
		return fmt.Errorf("%w: %d parameters, more than %d", ErrConfig, n, maxParams)
	}
	return nil
}

// layout is where each tensor lives in the one parameter slice, in file order.
type layout struct {
	mean, isd  int // (S, D) standardisation, fixed from training data
	wp         int // (D, K) slot projection: y_s = x'_s Wp
	qk, qs, qh int // (NQ, K) attention query, (NQ, S) slot bias, (NQ, H) hidden bias
	w1, b1     int // (K, H), (H)
	ce, cb     int // (NC, H) choice embedding, (NC) choice bias
	trainable  int // offset of the first trained tensor (wp)
	n          int
}

func (a Arch) layout() layout {
	var l layout
	off := 0
	take := func(n int) int { o := off; off += n; return o }
	sd := a.Slots * a.Dim
	l.mean, l.isd = take(sd), take(sd)
	l.trainable = off
	l.wp = take(a.Dim * a.Proj)
	l.qk, l.qs, l.qh = take(a.QuestionBuckets*a.Proj), take(a.QuestionBuckets*a.Slots), take(a.QuestionBuckets*a.Hidden)
	l.w1, l.b1 = take(a.Proj*a.Hidden), take(a.Hidden)
	l.ce, l.cb = take(a.ChoiceBuckets*a.Hidden), take(a.ChoiceBuckets)
	l.n = off
	return l
}

func (a Arch) numParams() int {
	// In int64 terms to avoid overflow on hostile headers before the check.
	sd := int64(a.Slots) * int64(a.Dim)
	n := 2*sd + int64(a.Dim)*int64(a.Proj) +
		int64(a.QuestionBuckets)*int64(a.Proj+a.Slots+a.Hidden) +
		int64(a.Proj)*int64(a.Hidden) + int64(a.Hidden) + int64(a.ChoiceBuckets)*int64(a.Hidden+1)
	if n > maxParams {
		return maxParams + 1
	}
	return int(n)
}

// Probe is the built-in reader: attention pooling over the slots of a decoded
// state with a query from the question's kind and subject, a small MLP, and a
// score per choice from hashed choice features (see the package doc). It is
// immutable and safe for concurrent use.
type Probe struct {
	arch Arch
	lay  layout
	w    []float32 // all parameters, laid out as lay says
	name string
}

// Arch returns the probe's architecture.
func (p *Probe) Arch() Arch { return p.arch }

// Shape is the state geometry the probe reads.
func (p *Probe) Shape() (slots, dim int) { return p.arch.Slots, p.arch.Dim }

// Name is "probe-" and the CRC-32C of the probe's file (its trailer), in hex.
func (p *Probe) Name() string { return p.name }

// NumParams is the number of parameters, the standardisation included.
func (p *Probe) NumParams() int { return len(p.w) }

func (p *Probe) setName() { p.name = fileName("probe", p) }

// fileName is prefix, "-" and the CRC-32C trailer of r's file, in hex.
func fileName(prefix string, r io.WriterTo) string {
	var t tailWriter
	if _, err := r.WriteTo(&t); err != nil {
		panic("reader: hashing a " + prefix + ": " + err.Error()) // tailWriter never fails
	}
	return fmt.Sprintf("%s-%08x", prefix, binary.LittleEndian.Uint32(t.last[:]))
}

// tailWriter keeps the last 4 bytes written: a file's CRC trailer.
type tailWriter struct{ last [4]byte }

func (t *tailWriter) Write(b []byte) (int, error) {
	if len(b) >= 4 {
		copy(t.last[:], b[len(b)-4:])
	} else {
		copy(t.last[:], append(t.last[len(b):], b...))
	}
	return len(b), nil
}

func (p *Probe) t(off, n int) []float32 { return p.w[off : off+n] }

// features of a question and of one of its choices. The strings are part of
// the file format: changing them changes what a trained probe means.
func questionFeatures(q *trajectory.Question) [3]string {
	return [3]string{"k=" + q.Kind, "s=" + q.Subject, "ks=" + q.Kind + "\x00" + q.Subject}
}

func choiceFeatures(q *trajectory.Question, c string) [3]string {
	return [3]string{"c=" + c, "sc=" + q.Subject + "\x00" + c, "kc=" + q.Kind + "\x00" + c}
}

// buckets hashes a feature into two buckets of n: the low and high halves of
// its FNV-1a 64 hash, each mod n. A feature's row is the sum of both buckets'
// rows, so two features collide only when both buckets do.
func buckets(f string, n int) [2]int {
	h := uint64(14695981039346656037)
	for i := 0; i < len(f); i++ {
		h ^= uint64(f[i])
		h *= 1099511628211
	}
	return [2]int{int(uint32(h) % uint32(n)), int(uint32(h>>32) % uint32(n))}
}

// prepared is the question-dependent part of the forward pass, computed once
// per question.
type prepared struct {
	q   *trajectory.Question
	ans int       // index of the answer among the choices
	qb  [6]int    // question-feature buckets
	cbk [][6]int  // (C) choice-feature buckets
	u   []float64 // (K) attention query
	sb  []float64 // (S) slot bias
	hb  []float64 // (H) hidden bias: b1 + question rows
	e   []float64 // (C, H) choice embeddings
	eb  []float64 // (C) choice biases
}

// prepare computes the question's query, biases and choice embeddings.
// Sums run over features in order, bucket 0 then 1.
func (p *Probe) prepare(q *trajectory.Question) (*prepared, error) {
	ans, err := answerIndex(q)
	if err != nil {
		return nil, err
	}
	a, l := p.arch, p.lay
	K, S, H := a.Proj, a.Slots, a.Hidden
	pq := &prepared{q: q, ans: ans, u: make([]float64, K), sb: make([]float64, S), hb: make([]float64, H),
		e: make([]float64, len(q.Choices)*H), eb: make([]float64, len(q.Choices)), cbk: make([][6]int, len(q.Choices))}
	for i, f := range questionFeatures(q) {
		b := buckets(f, a.QuestionBuckets)
		pq.qb[2*i], pq.qb[2*i+1] = b[0], b[1]
	}
	for h := range pq.hb {
		pq.hb[h] = float64(p.w[l.b1+h])
	}
	for _, b := range pq.qb {
		addRow(pq.u, p.t(l.qk+b*K, K))
		addRow(pq.sb, p.t(l.qs+b*S, S))
		addRow(pq.hb, p.t(l.qh+b*H, H))
	}
	for c, s := range q.Choices {
		for i, f := range choiceFeatures(q, s) {
			b := buckets(f, a.ChoiceBuckets)
			pq.cbk[c][2*i], pq.cbk[c][2*i+1] = b[0], b[1]
		}
		for _, b := range pq.cbk[c] {
			addRow(pq.e[c*H:(c+1)*H], p.t(l.ce+b*H, H))
			pq.eb[c] += float64(p.w[l.cb+b])
		}
	}
	return pq, nil
}

func addRow(dst []float64, row []float32) {
	for i, v := range row {
		dst[i] += float64(v)
	}
}

// project sets y (S x K) to the slot projections of state x, using xs (S x D)
// as scratch: x' = float32(x - mean) * invstd, then y = x' Wp by f32.MulTo.
// Rows are independent: projecting one slot alone gives the same row.
func (p *Probe) project(y, xs, x []float32, rows int, slot0 int) {
	a, l := p.arch, p.lay
	D := a.Dim
	mean := p.w[l.mean+slot0*D : l.mean+(slot0+rows)*D]
	isd := p.w[l.isd+slot0*D : l.isd+(slot0+rows)*D]
	for i := range rows * D {
		d := x[i] - mean[i]
		xs[i] = d * isd[i]
	}
	f32.MulTo(y, a.Proj, xs, D, p.w[l.wp:], a.Proj, rows, D, a.Proj)
}

// acts holds one forward pass's activations, reused across calls.
type acts struct {
	lg []float64 // (S) attention logits
	at []float64 // (S) attention weights
	r  []float64 // (K) pooled evidence
	z  []float64 // (H) pre-activation
	h  []float64 // (H) hidden
	sc []float64 // (C) choice scores, then probabilities
}

func (p *Probe) newActs() *acts {
	a := p.arch
	return &acts{lg: make([]float64, a.Slots), at: make([]float64, a.Slots), r: make([]float64, a.Proj),
		z: make([]float64, a.Hidden), h: make([]float64, a.Hidden)}
}

// forward runs the head on projected rows y (S x K); row alt, when alt is not
// nil, replaces row altSlot. It leaves the choice probabilities in ac.sc and
// returns the answer's loss in nats. Every sum runs in index order with each
// product rounded to float64 before it is added.
func (p *Probe) forward(ac *acts, y []float32, altSlot int, alt []float32, pq *prepared) float64 {
	a, l := p.arch, p.lay
	S, K, H := a.Slots, a.Proj, a.Hidden
	row := func(s int) []float32 {
		if alt != nil && s == altSlot {
			return alt
		}
		return y[s*K : (s+1)*K]
	}
	// Attention over slots.
	mx := math.Inf(-1)
	for s := 0; s < S; s++ {
		ys := row(s)
		v := pq.sb[s]
		for k := 0; k < K; k++ {
			v += float64(float64(ys[k]) * pq.u[k])
		}
		ac.lg[s] = v
		mx = max(mx, v)
	}
	sum := 0.0
	for s := 0; s < S; s++ {
		ac.at[s] = math.Exp(ac.lg[s] - mx)
		sum += ac.at[s]
	}
	for s := 0; s < S; s++ {
		ac.at[s] /= sum
	}
	// Pool.
	clear(ac.r)
	for s := 0; s < S; s++ {
		ys, w := row(s), ac.at[s]
		for k := 0; k < K; k++ {
			ac.r[k] += float64(w * float64(ys[k]))
		}
	}
	// Hidden.
	copy(ac.z, pq.hb)
	w1 := p.w[l.w1 : l.w1+K*H]
	for k := 0; k < K; k++ {
		rk, wr := ac.r[k], w1[k*H:(k+1)*H]
		for h := 0; h < H; h++ {
			ac.z[h] += float64(rk * float64(wr[h]))
		}
	}
	for h := range ac.h {
		ac.h[h] = max(ac.z[h], 0)
	}
	// Choices.
	C := len(pq.eb)
	if cap(ac.sc) < C {
		ac.sc = make([]float64, C)
	}
	ac.sc = ac.sc[:C]
	mx = math.Inf(-1)
	for c := 0; c < C; c++ {
		v, e := pq.eb[c], pq.e[c*H:(c+1)*H]
		for h := 0; h < H; h++ {
			v += float64(ac.h[h] * e[h])
		}
		ac.sc[c] = v
		mx = max(mx, v)
	}
	sum = 0
	for c := 0; c < C; c++ {
		sum += math.Exp(ac.sc[c] - mx)
	}
	lse := mx + math.Log(sum)
	loss := lse - ac.sc[pq.ans]
	for c := 0; c < C; c++ {
		ac.sc[c] = math.Exp(ac.sc[c] - lse)
	}
	return loss
}

// scratch is one goroutine's buffers.
type scratch struct {
	xs, y, alt []float32
	ac         *acts
}

func (p *Probe) newScratch() *scratch {
	a := p.arch
	return &scratch{xs: make([]float32, a.Slots*a.Dim), y: make([]float32, a.Slots*a.Proj),
		alt: make([]float32, a.Proj), ac: p.newActs()}
}

// parallelMin is the batch size from which Bits splits work between
// goroutines. Results do not depend on it.
const parallelMin = 16

// each runs fn(i, sc) for i < n on up to GOMAXPROCS goroutines, each with its
// own scratch, splitting indices into contiguous ranges; it returns the
// error of the lowest failing index.
func (p *Probe) each(n int, fn func(i int, sc *scratch) error) error {
	workers := min(runtime.GOMAXPROCS(0), max(n/parallelMin, 1))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Go(func() {
			sc := p.newScratch()
			for i := lo; i < hi; i++ {
				if err := fn(i, sc); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// prepareAll prepares each distinct question once; consecutive entries that
// share a *Question share its preparation.
func (p *Probe) prepareAll(qs []*trajectory.Question) ([]*prepared, error) {
	pqs := make([]*prepared, len(qs))
	for i, q := range qs {
		if i > 0 && q == qs[i-1] && q != nil {
			pqs[i] = pqs[i-1]
			continue
		}
		pq, err := p.prepare(q)
		if err != nil {
			return nil, fmt.Errorf("%w (question %d)", err, i)
		}
		pqs[i] = pq
	}
	return pqs, nil
}

func (p *Probe) checkBatch(states [][]float32, qs []*trajectory.Question) ([]*prepared, error) {
	if len(states) != len(qs) {
		return nil, fmt.Errorf("%w: %d states for %d questions", ErrShape, len(states), len(qs))
	}
	for i, x := range states {
		if err := checkState(x, p.arch.Slots, p.arch.Dim, fmt.Sprintf("state %d", i)); err != nil {
			return nil, err
		}
	}
	return p.prepareAll(qs)
}

// Bits implements Reader: dst[i] = -log2 P(qs[i].Answer | qs[i], states[i]).
func (p *Probe) Bits(dst []float64, states [][]float32, qs []*trajectory.Question) ([]float64, error) {
	pqs, err := p.checkBatch(states, qs)
	if err != nil {
		return nil, err
	}
	dst = grow(dst, len(qs))
	p.each(len(qs), func(i int, sc *scratch) error {
		p.project(sc.y, sc.xs, states[i], p.arch.Slots, 0)
		dst[i] = p.forward(sc.ac, sc.y, -1, nil, pqs[i]) / math.Ln2
		return nil
	})
	return dst, nil
}

// BitsEdits implements Reader. The base state is projected once and each
// edit's slot once; the result equals Bits of the edited state bit for bit.
func (p *Probe) BitsEdits(dst []float64, base []float32, q *trajectory.Question, edits []SlotEdit) ([]float64, error) {
	a := p.arch
	if err := checkState(base, a.Slots, a.Dim, "base state"); err != nil {
		return nil, err
	}
	for k, e := range edits {
		if err := checkEdit(e, k, a.Slots, a.Dim); err != nil {
			return nil, err
		}
	}
	pq, err := p.prepare(q)
	if err != nil {
		return nil, err
	}
	sc := p.newScratch()
	p.project(sc.y, sc.xs, base, a.Slots, 0)
	dst = grow(dst, len(edits))
	p.each(len(edits), func(k int, sc2 *scratch) error {
		e := edits[k]
		p.project(sc2.alt, sc2.xs, e.Values, 1, e.Slot)
		dst[k] = p.forward(sc2.ac, sc.y, e.Slot, sc2.alt, pq) / math.Ln2
		return nil
	})
	return dst, nil
}

// Predict implements Predictor: the most likely choice, the lowest index on
// ties.
func (p *Probe) Predict(dst []int, states [][]float32, qs []*trajectory.Question) ([]int, error) {
	pqs, err := p.checkBatch(states, qs)
	if err != nil {
		return nil, err
	}
	dst = grow(dst, len(qs))
	p.each(len(qs), func(i int, sc *scratch) error {
		p.project(sc.y, sc.xs, states[i], p.arch.Slots, 0)
		p.forward(sc.ac, sc.y, -1, nil, pqs[i])
		best := 0
		for c, v := range sc.ac.sc {
			if v > sc.ac.sc[best] {
				best = c
			}
		}
		dst[i] = best
		return nil
	})
	return dst, nil
}

// Probs sets dst to the probability of each of q's choices given state.
func (p *Probe) Probs(dst []float64, state []float32, q *trajectory.Question) ([]float64, error) {
	if err := checkState(state, p.arch.Slots, p.arch.Dim, "state"); err != nil {
		return nil, err
	}
	pq, err := p.prepare(q)
	if err != nil {
		return nil, err
	}
	sc := p.newScratch()
	p.project(sc.y, sc.xs, state, p.arch.Slots, 0)
	p.forward(sc.ac, sc.y, -1, nil, pq)
	dst = grow(dst, len(q.Choices))
	copy(dst, sc.ac.sc)
	return dst, nil
}
