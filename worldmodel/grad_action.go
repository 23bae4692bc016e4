package worldmodel

import (
	"github.com/memowm/memowm/internal/f32"
	"github.com/memowm/memowm/internal/fgemm"
	"github.com/memowm/memowm/trajectory"
)

// The backward of the action encoder (action.go, gru.go). Gradients are
// added into g, a Params-shaped gradient; each weight row's gradient and the
// matching input gradient are one fgemm.AxpyDot (16 lanes, not exact).

// actionScratch is the scratch of one action's backward.
type actionScratch struct {
	feat, dfeat []float32 // (4A+P)
	xp, hp      []float32 // (3P) per byte
	hs          []float32 // (len+1, P) GRU states h_0 .. h_len
	gates       []float32 // (len, 4P) per byte: z | r | n | hp_n
	dh, dxp     []float32 // (P), (3P)
	dhp         []float32 // (3P)
}

// actionBackward adds the gradients of the action encoder's parameters for
// one action, given dout (W), the gradient of its embedding.
func (m *Model) actionBackward(g *Params, dout []float32, a *trajectory.Action, s *actionScratch) {
	c, p := &m.cfg, m.p
	A, P, Y, W := c.ActionDim, c.PayloadHidden, c.ByteDim, c.Width()
	F := c.ActionWidth()
	s.feat, s.dfeat = grow(s.feat, F), grow(s.dfeat, F)
	feat := s.feat
	// Recompute the features (as actionEmbedTo), keeping the GRU's states.
	typ := int(a.Type)
	copy(feat[0:A], p.typeEmb[typ*A:][:A])
	xb := coordBin(a.X, a.HasPos, c.CoordBins)
	yb := coordBin(a.Y, a.HasPos, c.CoordBins)
	copy(feat[A:2*A], p.xEmb[xb*A:][:A])
	copy(feat[2*A:3*A], p.yEmb[yb*A:][:A])
	var in [3]float32
	if a.HasDelta {
		in = [3]float32{slogf(a.DX), slogf(a.DY), 1}
	}
	for i := 0; i < A; i++ {
		v := float32(0)
		for r := 0; r < 3; r++ {
			v += in[r] * p.deltaW[r*A+i]
		}
		feat[3*A+i] = v + p.deltaB[i]
	}
	L := len(a.Payload)
	s.hs, s.gates = grow(s.hs, (L+1)*P), grow(s.gates, L*4*P)
	s.xp, s.hp = grow(s.xp, 3*P), grow(s.hp, 3*P)
	clear(s.hs[:P])
	for t, b := range a.Payload {
		h, hn := s.hs[t*P:(t+1)*P], s.hs[(t+1)*P:(t+2)*P]
		x := p.byteEmb[int(b)*Y:][:Y]
		vecMat(s.xp, x, p.gruWx, 3*P)
		vecMat(s.hp, h, p.gruWh, 3*P)
		gt := s.gates[t*4*P : (t+1)*4*P]
		for i := 0; i < P; i++ {
			z := sigmoidf((s.xp[i] + s.hp[i]) + p.gruB[i])
			r := sigmoidf((s.xp[P+i] + s.hp[P+i]) + p.gruB[P+i])
			n := tanhf((s.xp[2*P+i] + r*s.hp[2*P+i]) + p.gruB[2*P+i])
			hn[i] = z*h[i] + (1-z)*n
			gt[i], gt[P+i], gt[2*P+i], gt[3*P+i] = z, r, n, s.hp[2*P+i]
		}
	}
	copy(feat[4*A:4*A+P], s.hs[L*P:(L+1)*P])

	// out = feat actW + actB.
	for i := 0; i < W; i++ {
		g.actB[i] += dout[i]
	}
	df := s.dfeat
	for r := 0; r < F; r++ {
		df[r] = fgemm.AxpyDot(g.actW[r*W:(r+1)*W], p.actW[r*W:(r+1)*W], dout[:W], feat[r])
	}
	for i := 0; i < A; i++ {
		g.typeEmb[typ*A+i] += df[i]
		g.xEmb[xb*A+i] += df[A+i]
		g.yEmb[yb*A+i] += df[2*A+i]
		d := df[3*A+i]
		g.deltaB[i] += d
		for r := 0; r < 3; r++ {
			g.deltaW[r*A+i] += in[r] * d
		}
	}
	// GRU, back through time.
	s.dh, s.dxp, s.dhp = grow(s.dh, P), grow(s.dxp, 3*P), grow(s.dhp, 3*P)
	dh := s.dh
	copy(dh, df[4*A:4*A+P])
	for t := L - 1; t >= 0; t-- {
		h := s.hs[t*P : (t+1)*P]
		gt := s.gates[t*4*P : (t+1)*4*P]
		dxp, dhp := s.dxp, s.dhp
		for i := 0; i < P; i++ {
			z, r, n, hpn := gt[i], gt[P+i], gt[2*P+i], gt[3*P+i]
			d := dh[i]
			dz := d * (h[i] - n)
			dn := d * (1 - z)
			dan := dn * (1 - n*n)
			dar := dan * hpn * r * (1 - r)
			daz := dz * z * (1 - z)
			dxp[i], dxp[P+i], dxp[2*P+i] = daz, dar, dan
			dhp[i], dhp[P+i], dhp[2*P+i] = daz, dar, dan*r
			g.gruB[i] += daz
			g.gruB[P+i] += dar
			g.gruB[2*P+i] += dan
			dh[i] = d * z
		}
		b := int(a.Payload[t])
		x := p.byteEmb[b*Y:][:Y]
		for k := 0; k < Y; k++ {
			g.byteEmb[b*Y+k] += fgemm.AxpyDot(g.gruWx[k*3*P:(k+1)*3*P], p.gruWx[k*3*P:(k+1)*3*P], dxp, x[k])
		}
		for k := 0; k < P; k++ {
			dh[k] += fgemm.AxpyDot(g.gruWh[k*3*P:(k+1)*3*P], p.gruWh[k*3*P:(k+1)*3*P], dhp, h[k])
		}
	}
}

// vecMat: out (k) = x (n) w (n, k), summed over n in order: internal/f32's
// product, so the recomputed GRU states are the forward's bits.
func vecMat(out, x, w []float32, k int) {
	f32.MulTo(out[:k], k, x, len(x), w, k, 1, len(x), k)
}
