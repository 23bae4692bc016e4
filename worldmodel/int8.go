package worldmodel

import (
	"fmt"
	"math"
)

// ProfileInt8 is the integer inference profile: int8 weights with one scale
// per output channel, int8 activations with scales calibrated on training
// histories, int32 accumulation, fixed-point requantisation, an integer
// LayerNorm, table-driven GELU, softmax and copy gate, and integer logits
// into an integer frequency table. From the embedded tokens to the table,
// every value is an integer computed by the rules of int8_ops.go, so every
// backend that implements them gives the same table, whatever the order of
// its sums (no sum can overflow its type).
//
// The input tokens (the code, slot, time, task, validity and action
// embeddings, summed) are computed as in the f32 profile, whose float path
// is the same on every machine, and rounded to the residual stream's fixed
// point; after that nothing is a float.
const ProfileInt8 = "int8"

// The residual stream is int32 with Frac fractional bits, chosen so that
// the largest value calibration saw is at most 2^int8ResidCal, and held
// within +-int8Resid (16x headroom) by saturation.
const (
	int8ResidCal = 20
	int8Resid    = 1 << 24
	geluHalf     = 2048 // GELU's table covers [-2048, 2048] input steps
)

// qLinear is an int8 matrix product with its output requantisation:
// acc_n = sum_k a_k W[k][n] (int32), v_n = acc_n + Bias[n], out = Mult[n](v_n).
// |Bias| <= 2^29 and |acc| <= K 127 128 < 2^28 (K <= 16384), so v_n fits
// int32.
type qLinear struct {
	K, N int
	W    []int8 // (K, N) row-major: W[k*N+n]
	Bias []int32
	Mult []mult
}

// out is output n of the product for its sum acc: Mult[n](acc + Bias[n]).
func (l *qLinear) out(n int, acc int32) int64 {
	return l.Mult[n].apply(int64(acc) + int64(l.Bias[n]))
}

// qLayer is one Transformer block in the int8 profile.
type qLayer struct {
	LN1  qLN     // residual -> int8 (scale of LN1's output)
	QKV  qLinear // -> int8 q | k | v, each with its own scale
	Soft mult32  // q.k differences (int32) -> exp table steps (1/256 nat): s_q s_k / sqrt(hd) * 256
	PV   mult    // sum_k P_k v_k (P in Q14) -> int8 attention output: s_v 2^-14 / s_att
	O    qLinear // -> residual
	LN2  qLN     // residual -> int8
	W1   qLinear // -> GELU table index, clamped to [-2048, 2048]
	GELU []int8  // (4097) GELU[u+2048]: the int8 hidden value for input step u
	W2   qLinear // -> residual
}

// Int8Model is a Model converted to the int8 profile: the f32 model (its
// input embedding and configuration) and the integer network. It is built by
// CalibrateInt8 and stored next to the f32 weights in a bundle
// (WriteTo, ReadInt8).
type Int8Model struct {
	m      *Model
	Frac   uint8 // fractional bits of the residual stream
	Layers []qLayer
	Final  qLN // residual -> int16 final hidden h
	// Per coordinate j = s*G + g (the head, in int16 x int16 -> int64):
	//   l_c = sum_d h_d Emb[j,c,d] + Bias[j,c]; idx_c = Exp[j](max l - l_c) (1/256 nat)
	//   g = sum_d h_d Copy[j,d] + CopyB[j]; gate index = Gate[j](|g|) (1/64 logit), signed
	Emb   []int16 // (J, C, E)
	Bias  []int64 // (J, C)
	Exp   []mult  // (J)
	Copy  []int16 // (J, E)
	CopyB []int64 // (J)
	Gate  []mult  // (J)
}

// Model returns the f32 model the int8 one was made from.
func (q *Int8Model) Model() *Model { return q.m }

// Config returns the model's configuration.
func (q *Int8Model) Config() Config { return q.m.cfg }

// int8Scale is the scale that maps magnitudes up to m onto [-lim, lim].
func int8Scale(m float32, lim int) float64 {
	if !(m > 0) {
		return 1
	}
	return float64(m) / float64(lim)
}

func roundClamp(x float64, lim int64) int64 {
	r := math.Round(x)
	if r > float64(lim) {
		return lim
	}
	if r < -float64(lim) {
		return -lim
	}
	return int64(r)
}

// newQLN quantizes a LayerNorm with output scale s and limit lim.
func newQLN(g, b []float32, s float64, lim int64, frac uint8) qLN {
	q := qLN{G: make([]int64, len(g)), B: make([]int32, len(b)), Lim: lim}
	for i := range g {
		q.G[i] = roundClamp(float64(g[i])*(1<<16)/s, 1<<40)
		q.B[i] = int32(roundClamp(float64(b[i])/s, 1<<30))
	}
	q.Eps = max(1, int64(math.Round(float64(lnEps)*math.Ldexp(1, 2*int(frac)))))
	return q
}

// newQLinear quantizes w (K, N) per output column, with input scale sa
// and output scale sout(n) (the real value of one output step).
func newQLinear(w, b []float32, K, N int, sa float64, sout func(n int) float64) (qLinear, error) {
	q := qLinear{K: K, N: N, W: make([]int8, K*N), Bias: make([]int32, N), Mult: make([]mult, N)}
	for n := 0; n < N; n++ {
		var m float32
		for k := 0; k < K; k++ {
			m = max(m, float32(math.Abs(float64(w[k*N+n]))))
		}
		sw := int8Scale(m, 127)
		for k := 0; k < K; k++ {
			q.W[k*N+n] = int8(roundClamp(float64(w[k*N+n])/sw, 127))
		}
		q.Bias[n] = int32(roundClamp(float64(b[n])/(sa*sw), 1<<29))
		var err error
		if q.Mult[n], err = newMult(sa * sw / sout(n)); err != nil {
			return q, err
		}
	}
	return q, nil
}

// CalibrateInt8 converts m to the int8 profile, with activation scales
// from the largest magnitudes the f32 model reaches on the calibration
// histories hs (a few hundred windows of training data are plenty). The
// result does not depend on threads or on how hs is batched.
func CalibrateInt8(m *Model, hs []History, threads int) (*Int8Model, error) {
	c := &m.cfg
	if len(hs) == 0 {
		return nil, fmt.Errorf("worldmodel: int8: no calibration histories")
	}
	if err := c.checkInt8(); err != nil {
		return nil, err
	}
	r, err := NewCPU(m, WithThreads(threads))
	if err != nil {
		return nil, err
	}
	r.stats = newActStats(c.Layers)
	const batch = 16
	var outs []Output
	for lo := 0; lo < len(hs); lo += batch {
		if outs, err = r.Forward(outs, hs[lo:min(lo+batch, len(hs))]); err != nil {
			return nil, fmt.Errorf("worldmodel: int8 calibration: %w", err)
		}
	}
	return quantizeInt8(m, r.stats)
}

func quantizeInt8(m *Model, st *actStats) (*Int8Model, error) {
	c, p := &m.cfg, m.p
	W, M, S, G, C, E := c.Width(), c.MLP, c.Slots, c.Subspaces, c.Codewords, c.CodeDim
	q := &Int8Model{m: m}
	// Residual fixed point: the largest value at most 2^20.
	frac := 30
	if st.resid > 0 {
		frac = int(math.Floor(math.Log2(math.Ldexp(1, int8ResidCal) / float64(st.resid))))
	}
	q.Frac = uint8(max(0, min(30, frac)))
	resid := math.Ldexp(1, -int(q.Frac)) // the real value of one residual step
	hd := float64(c.HeadDim())
	for l := range p.layers {
		L, s := &p.layers[l], &st.layer[l]
		sc := func(site int) float64 { return int8Scale(s[site], 127) }
		var ql qLayer
		var err error
		ql.LN1 = newQLN(L.ln1g, L.ln1b, sc(siteLN1), 127, q.Frac)
		qs, ks, vs := sc(siteQ), sc(siteK), sc(siteV)
		if ql.QKV, err = newQLinear(L.wqkv, L.bqkv, W, 3*W, sc(siteLN1), func(n int) float64 {
			return [3]float64{qs, ks, vs}[n/W]
		}); err != nil {
			return nil, err
		}
		if ql.Soft, err = newMult32(qs * ks / math.Sqrt(hd) * expSteps); err != nil {
			return nil, err
		}
		if ql.PV, err = newMult(vs / (1 << 14) / sc(siteAtt)); err != nil {
			return nil, err
		}
		toResid := func(int) float64 { return resid }
		if ql.O, err = newQLinear(L.wo, L.bo, W, W, sc(siteAtt), toResid); err != nil {
			return nil, err
		}
		ql.LN2 = newQLN(L.ln2g, L.ln2b, sc(siteLN2), 127, q.Frac)
		step := int8Scale(s[sitePre], geluHalf)
		if ql.W1, err = newQLinear(L.w1, L.b1, W, M, sc(siteLN2), func(int) float64 { return step }); err != nil {
			return nil, err
		}
		sh := sc(siteGELU)
		ql.GELU = make([]int8, 2*geluHalf+1)
		for u := range ql.GELU {
			x := float32(float64(u-geluHalf) * step)
			ql.GELU[u] = int8(roundClamp(float64(geluf(x))/sh, 127))
		}
		if ql.W2, err = newQLinear(L.w2, L.b2, M, W, sh, toResid); err != nil {
			return nil, err
		}
		q.Layers = append(q.Layers, ql)
	}
	sf := int8Scale(st.final, 32767)
	q.Final = newQLN(p.finalG, p.finalB, sf, 32767, q.Frac)
	J := S * G
	q.Emb, q.Bias, q.Exp = make([]int16, J*C*E), make([]int64, J*C), make([]mult, J)
	q.Copy, q.CopyB, q.Gate = make([]int16, J*E), make([]int64, J), make([]mult, J)
	for j := 0; j < J; j++ {
		emb := p.codeEmb[j*C*E : (j+1)*C*E]
		se := int8Scale(maxAbs(0, emb), 32767)
		for i, v := range emb {
			q.Emb[j*C*E+i] = int16(roundClamp(float64(v)/se, 32767))
		}
		for cw := 0; cw < C; cw++ {
			q.Bias[j*C+cw] = roundClamp(float64(p.codeBias[j*C+cw])/(sf*se), 1<<40)
		}
		var err error
		if q.Exp[j], err = newMult(sf * se * expSteps); err != nil {
			return nil, err
		}
		cwt := p.copyW[j*E : (j+1)*E]
		scp := int8Scale(maxAbs(0, cwt), 32767)
		for d, v := range cwt {
			q.Copy[j*E+d] = int16(roundClamp(float64(v)/scp, 32767))
		}
		q.CopyB[j] = roundClamp(float64(p.copyB[j])/(sf*scp), 1<<40)
		if q.Gate[j], err = newMult(sf * scp * sigSteps); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// checkInt8 reports whether the int8 profile's bounds hold for c: width at
// most 4096 (LayerNorm's sums), head width at most 64 and at most 2048 keys
// (the softmax's uint32 arithmetic).
func (c *Config) checkInt8() error {
	switch {
	case c.Width() > 4096:
		return fmt.Errorf("%w: int8: width %d is more than 4096", ErrConfig, c.Width())
	case c.HeadDim() > 64:
		return fmt.Errorf("%w: int8: head width %d is more than 64", ErrConfig, c.HeadDim())
	case c.MaxHistory*c.Slots > 2048:
		return fmt.Errorf("%w: int8: %d keys is more than 2048", ErrConfig, c.MaxHistory*c.Slots)
	}
	return nil
}

// Int8Info describes an int8 network for people (inspect).
type Int8Info struct {
	ResidualFracBits int `json:"residual_frac_bits"` // fractional bits of the residual stream
	WeightBytes      int `json:"weight_bytes"`       // int8 matrix weights and int16 head weights
}

// Info returns q's description.
func (q *Int8Model) Info() Int8Info {
	n := 0
	for i := range q.Layers {
		L := &q.Layers[i]
		n += len(L.QKV.W) + len(L.O.W) + len(L.W1.W) + len(L.W2.W)
	}
	return Int8Info{ResidualFracBits: int(q.Frac), WeightBytes: n + 2*len(q.Emb) + 2*len(q.Copy)}
}
