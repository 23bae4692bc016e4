package entropy

// Adaptive parts for binary context mixing, integer only: a probability
// counter, a logistic mixer with selectable weight sets, and an adaptive
// probability map (SSE). Writer and decoder that feed them the same bits in
// the same order hold the same state, on every machine.

// Counter is an adaptive bit probability: the high 22 bits hold p(1) in
// Q22, the low 10 bits how many updates it has seen (capped by the limit
// given to Update). Its rate starts at 1/1.5 and falls as 1/(n + 1.5), so a
// fresh counter learns fast and a seasoned one averages. The zero value is
// not ready: use NewCounter's value (p = 1/2).
type Counter uint32

// CounterInit is a fresh Counter: p = 1/2, no updates.
const CounterInit Counter = 1 << 31

// counterRecip[n] = round(2^16 / (n + 1.5)).
var counterRecip = func() (t [1024]uint32) {
	for n := range t {
		t[n] = uint32((1<<17 + (2*n+3)/2) / (2*n + 3))
	}
	return t
}()

// P16 is the counter's probability of a 1, in [1, 65535].
func (c Counter) P16() uint32 {
	p := uint32(c) >> 16
	if p == 0 {
		return 1
	}
	return p
}

// Update moves the counter toward bit; limit (at most 1023) caps the count,
// so the rate never falls below 1/(limit + 1.5).
func (c *Counter) Update(bit int, limit uint32) {
	n := min(uint32(*c)&1023, limit)
	p := int64(uint32(*c) >> 10) // Q22
	target := int64(0)
	if bit != 0 {
		target = 1<<22 - 1
	}
	p += (target - p) * int64(counterRecip[n]) >> 16
	if n < limit {
		n++
	}
	*c = Counter(uint32(p)<<10 | n)
}

// Mixer combines n inputs in the stretch domain with one of several weight
// sets and learns the weights online. Weights are Q16 (65536 = 1).
type Mixer struct {
	n       int
	weights []int32 // sets * n
	x       []int32 // the inputs of the current bit
	set     int     // the weight set of the current bit
	k       int     // inputs added so far
	pr      uint32  // the last Mix result
	lr      int64   // learning rate
}

// NewMixer returns a mixer of n inputs and sets weight sets, every weight
// w0 (Q16), learning at rate lr (the weight change is
// x * err16 * lr >> 20; lpaq's rate is about 7).
func NewMixer(n, sets int, w0 int32, lr int) *Mixer {
	m := &Mixer{n: n, weights: make([]int32, n*sets), x: make([]int32, n), lr: int64(lr)}
	for i := range m.weights {
		m.weights[i] = w0
	}
	return m
}

// SetWeights sets the initial weights of every set to w (len n).
func (m *Mixer) SetWeights(w []int32) {
	for s := 0; s < len(m.weights); s += m.n {
		copy(m.weights[s:s+m.n], w)
	}
}

// Add appends the next input (a stretch); call it n times per bit.
func (m *Mixer) Add(st int32) {
	m.x[m.k] = st
	m.k++
}

// CopyInputs sets the inputs of the current bit to from's (both mixers
// must take the same number of inputs).
func (m *Mixer) CopyInputs(from *Mixer) {
	m.k = copy(m.x, from.x[:from.k])
}

// Mix returns the mixed P16 with weight set set and keeps what Update needs.
func (m *Mixer) Mix(set int) uint32 {
	m.set = set
	m.pr = m.Predict(set, m.x[:m.k])
	return m.pr
}

// Update trains the weight set used by the last Mix toward bit and clears
// the inputs.
func (m *Mixer) Update(bit int) {
	m.Learn(m.set, m.x[:m.k], m.pr, bit)
	m.k = 0
}

// Predict is Mix for the inputs x (len at most n), without keeping
// anything: the mixer does not change.
func (m *Mixer) Predict(set int, x []int32) uint32 {
	w := m.weights[set*m.n : (set+1)*m.n]
	w = w[:len(x)]
	var dot int64
	for i, v := range x {
		dot += int64(w[i]) * int64(v)
	}
	return Squash(int32(dot >> 16))
}

// Learn trains weight set set toward bit, given the inputs x and the P16 p
// that Predict returned for them.
func (m *Mixer) Learn(set int, x []int32, p uint32, bit int) {
	// x * (err * lr) is (x * err) * lr: int64 multiplication is
	// associative, wrapping included.
	g := (int64(bit)<<16 - int64(p)) * m.lr
	w := m.weights[set*m.n : (set+1)*m.n]
	w = w[:len(x)]
	for i, v := range x {
		nw := int64(w[i]) + (int64(v)*g+1<<19)>>20
		w[i] = int32(min(max(nw, -(1<<24)), 1<<24))
	}
}

// APM refines a probability given a context: per context, 33 P16 entries
// over the stretch domain, interpolated; the nearer entry learns toward the
// bit at rate 2^-rate.
type APM struct {
	t    []uint16
	idx  int // the entry nearer to the last input
	rate uint
}

// NewAPM returns an APM of contexts contexts, each starting as the
// identity map.
func NewAPM(contexts int, rate uint) *APM {
	a := &APM{t: make([]uint16, contexts*33), rate: rate}
	for c := 0; c < contexts; c++ {
		for j := 0; j < 33; j++ {
			a.t[c*33+j] = uint16(ClampP16(int64(Squash(int32((j - 16) * 128)))))
		}
	}
	return a
}

// Refine returns p (a P16) mapped through context cx's curve.
func (a *APM) Refine(p uint32, cx int) uint32 {
	r, idx := a.Peek(p, cx)
	a.idx = idx
	return r
}

// Update trains the entry nearest to the last Refine's input toward bit.
func (a *APM) Update(bit int) { a.Learn(a.idx, bit) }

// Peek is Refine without keeping anything; it also returns the entry that
// Learn trains for this input.
func (a *APM) Peek(p uint32, cx int) (uint32, int) {
	st := int64(Stretch(p)) + 2048 // [1, 4095]
	lo := st >> 7                  // [0, 31]
	w := st & 127
	i := cx*33 + int(lo)
	idx := i
	if w >= 64 {
		idx = i + 1
	}
	return ClampP16((int64(a.t[i])*(128-w) + int64(a.t[i+1])*w) >> 7), idx
}

// Learn trains entry idx (from Peek) toward bit.
func (a *APM) Learn(idx, bit int) {
	g := int64(bit)<<16 - int64(bit)
	v := int64(a.t[idx])
	v += (g - v) >> a.rate
	a.t[idx] = uint16(ClampP16(v))
}
