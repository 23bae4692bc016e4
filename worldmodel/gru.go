package worldmodel

import "github.com/memowm/memowm/internal/f32"

// gruScratch is the scratch gruTo needs: 2*3P floats.
func (c *Config) gruScratch() int { return 6 * c.PayloadHidden }

// gruTo runs the byte-level GRU over the payload and writes its final state
// (P) into h. The state starts at zero; an empty payload gives zeros. Gate
// order in the weight columns is z | r | n; per byte b, with x = byteEmb[b]:
//
//	xp = x Wx (3P), hp = h Wh (3P)
//	z = sigmoid((xp_z + hp_z) + b_z)
//	r = sigmoid((xp_r + hp_r) + b_r)
//	n = tanh((xp_n + r*hp_n) + b_n)
//	h = z*h + (1-z)*n
func (m *Model) gruTo(h, scratch []float32, payload []byte) {
	c, p := &m.cfg, m.p
	P, Y := c.PayloadHidden, c.ByteDim
	clear(h[:P])
	xp, hp := scratch[:3*P], scratch[3*P:6*P]
	for _, b := range payload {
		f32.MulTo(xp, 3*P, p.byteEmb[int(b)*Y:][:Y], Y, p.gruWx, 3*P, 1, Y, 3*P)
		f32.MulTo(hp, 3*P, h, P, p.gruWh, 3*P, 1, P, 3*P)
		for i := 0; i < P; i++ {
			z := sigmoidf((xp[i] + hp[i]) + p.gruB[i])
			r := sigmoidf((xp[P+i] + hp[P+i]) + p.gruB[P+i])
			n := tanhf((xp[2*P+i] + float32(r*hp[2*P+i])) + p.gruB[2*P+i])
			h[i] = float32(z*h[i]) + float32((1-z)*n)
		}
	}
}
