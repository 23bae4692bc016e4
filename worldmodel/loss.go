package worldmodel

import "math"

// The training objective, in bits. For one history b with next state z
// (targets) and validity flags v (nil: every slot valid):
//
//	code   = (1/J) sum_j -log2 p_j(z_j),  p_j(c) = a_j 1[c = prev_j] + (1 - a_j) softmax(l_j)(c)
//	valid  = (1/S) sum_s BCE(sigmoid(valid_s), v_s) / ln 2
//	loss   = mean over the batch of (code + valid)
//
// The code term is the ideal code length per coordinate of the true next
// state under the model (teacher-forced: the history holds true codes); its
// sum over j is the bits/transition that Evaluate reports. The validity term
// is the reference's slot-validity objective; with the paper's interface every
// slot is valid, so it only teaches the validity head to say so.

const ln2 = math.Ln2

// lossStats are the sums of one batch's loss terms.
type lossStats struct {
	codeBits  float64 // sum over histories and coordinates of -log2 p(z)
	validBits float64 // sum over histories and slots of the BCE in bits
	n         int     // histories
}

// codeNLL returns -ln p(y) of coordinate logits l (C), gate logit gl and
// previous code prev, and (when dl != nil) writes d(-ln p)/dl into dl and
// returns d/dgate. noGate treats the gate as closed (a = 0).
//
// With q = softmax(l), a = sigmoid(gl), p = a [y = prev] + (1 - a) q_y:
//
//	d/dl_c    = rho (q_c - [c = y]),  rho = (1 - a) q_y / p
//	d/dgate   = -a (1 - a) ([y = prev] - q_y) / p
func codeNLL(dl []float32, l []float32, gl float32, y, prev int) (nll, dgate float64) {
	mx := l[0]
	for _, v := range l {
		if v > mx {
			mx = v
		}
	}
	var ebuf [256]float64
	e := ebuf[:len(l)]
	var z float64
	for c, v := range l {
		e[c] = math.Exp(float64(v - mx))
		z += e[c]
	}
	logq := float64(l[y]-mx) - math.Log(z) // log q_y
	qy := math.Exp(logq)
	g := float64(gl)
	// log a = -softplus(-g), log(1-a) = -softplus(g).
	log1ma := -softplus(g)
	a := 1 / (1 + math.Exp(-g))
	var logp, rho float64
	if y == prev {
		// p = a + (1 - a) q_y = 1 - (1 - a)(1 - q_y)
		p := a + (1-a)*qy
		logp = math.Log(p)
		rho = math.Exp(log1ma+logq) / p
		dgate = -a * (1 - a) * (1 - qy) / p
	} else {
		logp = log1ma + logq
		rho = 1
		dgate = a // -a(1-a)(-q_y) / ((1-a) q_y)
	}
	if dl != nil {
		iz := 1 / z
		for c := range l {
			q := e[c] * iz
			if c == y {
				q -= 1
			}
			dl[c] = float32(rho * q)
		}
	}
	return -logp, dgate
}

// softplus is log(1 + e^x), stable for large |x|.
func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	if x < -30 {
		return math.Exp(x)
	}
	return math.Log1p(math.Exp(x))
}

// lossGrad computes the loss of t.outs against the targets, and, when grad
// is true, the output gradients t.dlog, t.dgate and t.dvalid scaled by
// 1/len(targets) (the batch mean). noGate closes the copy gate (the
// ablation without it).
func (t *tape) lossGrad(targets []Step, grad, noGate bool) lossStats {
	c := &t.m.cfg
	S, J, C := c.Slots, c.Coords(), c.Codewords
	B := len(targets)
	if grad {
		t.dlog, t.dgate, t.dvalid = grow(t.dlog, B*J*C), grow(t.dgate, B*J), grow(t.dvalid, B*S)
	}
	code := make([]float64, B)
	valid := make([]float64, B)
	wCode := 1 / (float64(B) * float64(J) * ln2)
	wValid := 1 / (float64(B) * float64(S) * ln2)
	parallelN(t.threads, B, func(b int) {
		o := &t.outs[b]
		var sum float64
		for j := 0; j < J; j++ {
			var dl []float32
			if grad {
				dl = t.dlog[(b*J+j)*C : (b*J+j+1)*C]
			}
			gl := o.Gate[j]
			prev := int(o.Prev[j])
			if noGate {
				gl, prev = -1e4, -1
			}
			nll, dg := codeNLL(dl, o.Logits[j*C:(j+1)*C], gl, int(targets[b].Codes[j]), prev)
			sum += nll
			if grad {
				for i := range dl {
					dl[i] = float32(float64(dl[i]) * wCode)
				}
				if noGate {
					dg = 0
				}
				t.dgate[b*J+j] = float32(dg * wCode)
			}
		}
		code[b] = sum / ln2
		var vs float64
		for s := 0; s < S; s++ {
			y := 1.0
			if targets[b].SlotValid != nil && !targets[b].SlotValid[s] {
				y = 0
			}
			x := float64(o.Valid[s])
			// BCE with logits: softplus(x) - y x.
			vs += softplus(x) - y*x
			if grad {
				t.dvalid[b*S+s] = float32((1/(1+math.Exp(-x)) - y) * wValid)
			}
		}
		valid[b] = vs / ln2
	})
	st := lossStats{n: B}
	for b := range code {
		st.codeBits += code[b]
		st.validBits += valid[b]
	}
	return st
}

// loss returns the objective of the stats: mean over histories of the code
// bits per coordinate plus the validity bits per slot.
func (s lossStats) loss(c *Config) float64 {
	if s.n == 0 {
		return 0
	}
	return (s.codeBits/float64(c.Coords()) + s.validBits/float64(c.Slots)) / float64(s.n)
}
