package worldmodel

import (
	"math"

	"github.com/memowm/memowm/internal/fgemm"
)

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
// previous code prev, in float64 (the evaluation's exact-enough path; the
// training step's gradient is codeNLLFast's):
//
//	q = softmax(l), a = sigmoid(gl), p = a [y = prev] + (1 - a) q_y
//
// and the gradient codeNLLFast writes is
//
//	d/dl_c    = rho (q_c - [c = y]),  rho = (1 - a) q_y / p
//	d/dgate   = -a (1 - a) ([y = prev] - q_y) / p
func codeNLL(l []float32, gl float32, y, prev int) float64 {
	mx := l[0]
	for _, v := range l {
		if v > mx {
			mx = v
		}
	}
	var z float64
	for _, v := range l {
		z += math.Exp(float64(v - mx))
	}
	logq := float64(l[y]-mx) - math.Log(z) // log q_y
	logp, _, _ := gateTerms(logq, gl, y == prev)
	return -logp
}

// gateTerms returns, for log q_y of the softmax and gate logit gl, log p(y)
// of the gated mixture, rho = (1 - a) q_y / p and d(-ln p)/dgate (codeNLL's
// terms); same says y is the previous code.
func gateTerms(logq float64, gl float32, same bool) (logp, rho, dgate float64) {
	qy := math.Exp(logq)
	g := float64(gl)
	// log a = -softplus(-g), log(1-a) = -softplus(g).
	log1ma := -softplus(g)
	a := 1 / (1 + math.Exp(-g))
	if same {
		// p = a + (1 - a) q_y = 1 - (1 - a)(1 - q_y)
		p := a + (1-a)*qy
		return math.Log(p), math.Exp(log1ma+logq) / p, -a * (1 - a) * (1 - qy) / p
	}
	return log1ma + logq, 1, a // dgate = -a(1-a)(-q_y) / ((1-a) q_y)
}

// codeNLLFast is codeNLL for training, with the row's exponentials from
// fgemm.ExpRows: dl holds e^(l - mx) on entry (sum z) and leaves with w times
// d(-ln p)/dl; the returned d/dgate is not scaled. ly is l[y].
func codeNLLFast(dl []float32, ly, mx, z, gl float32, y, prev int, w float64) (nll, dgate float64) {
	logq := float64(ly-mx) - math.Log(float64(z))
	logp, rho, dgate := gateTerms(logq, gl, y == prev)
	f := float32(rho * w / float64(z))
	for c := range dl {
		dl[c] *= f
	}
	dl[y] -= float32(rho * w)
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
// ablation without it). With grad the logits' exponentials are
// fgemm.ExpRows' (float32, 16 lanes: training needs no exactness); without
// it (evaluation) codeNLL computes them in float64.
func (t *tape) lossGrad(targets []Step, grad, noGate bool) lossStats {
	c := &t.m.cfg
	S, J, C := c.Slots, c.Coords(), c.Codewords
	B := len(targets)
	if grad {
		t.dlog, t.dgate, t.dvalid = grow(t.dlog, B*J*C), grow(t.dgate, B*J), grow(t.dvalid, B*S)
		t.lmx, t.lsum = grow(t.lmx, B*J), grow(t.lsum, B*J)
	}
	code := make([]float64, B)
	valid := make([]float64, B)
	wCode := 1 / (float64(B) * float64(J) * ln2)
	wValid := 1 / (float64(B) * float64(S) * ln2)
	parallelN(t.threads, B, func(b int) {
		o := &t.outs[b]
		var sum float64
		if grad {
			// The training step's exponentials, 16 lanes at a time.
			fgemm.ExpRows(t.dlog[b*J*C:(b+1)*J*C], o.Logits[:J*C], J, C, t.lmx[b*J:(b+1)*J], t.lsum[b*J:(b+1)*J])
		}
		for j := 0; j < J; j++ {
			gl := o.Gate[j]
			prev := int(o.Prev[j])
			if noGate {
				gl, prev = -1e4, -1
			}
			y := int(targets[b].Codes[j])
			if !grad {
				sum += codeNLL(o.Logits[j*C:(j+1)*C], gl, y, prev)
				continue
			}
			dl := t.dlog[(b*J+j)*C : (b*J+j+1)*C]
			nll, dg := codeNLLFast(dl, o.Logits[j*C+y], t.lmx[b*J+j], t.lsum[b*J+j], gl, y, prev, wCode)
			sum += nll
			if noGate {
				dg = 0
			}
			t.dgate[b*J+j] = float32(dg * wCode)
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
