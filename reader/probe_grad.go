package reader

// backward accumulates scale times the gradient of one example's loss (nats)
// into g (laid out like the parameters; the standardisation entries stay
// zero) and sets dy (S x K) to scale times the gradient with respect to the
// projected rows y. ac must hold the example's forward activations (forward
// called with the same y and pq, alt nil). The Wp gradient is not formed
// here: the caller multiplies the standardised inputs' transpose by dy over a
// batch.
func (p *Probe) backward(g []float64, dy []float64, ac *acts, y []float32, pq *prepared, scale float64) {
	a, l := p.arch, p.lay
	S, K, H := a.Slots, a.Proj, a.Hidden
	C := len(pq.eb)
	// d loss / d score_c = p_c - [c = ans]; d score_c / d E_c = h, d / d e_c = 1.
	dh := make([]float64, H)
	for c := 0; c < C; c++ {
		ds := ac.sc[c]
		if c == pq.ans {
			ds -= 1
		}
		ds *= scale
		e := pq.e[c*H : (c+1)*H]
		for h := 0; h < H; h++ {
			dh[h] += ds * e[h]
		}
		for _, b := range pq.cbk[c] {
			g[l.cb+b] += ds
			gr := g[l.ce+b*H : l.ce+(b+1)*H]
			for h := 0; h < H; h++ {
				gr[h] += ds * ac.h[h]
			}
		}
	}
	// Through relu: dz = dh where z > 0.
	dz := dh
	for h := range dz {
		if ac.z[h] <= 0 {
			dz[h] = 0
		}
	}
	for h := 0; h < H; h++ {
		g[l.b1+h] += dz[h]
	}
	for _, b := range pq.qb {
		gr := g[l.qh+b*H : l.qh+(b+1)*H]
		for h := 0; h < H; h++ {
			gr[h] += dz[h]
		}
	}
	// z = r W1 + ...: dW1[k,h] += r_k dz_h, dr_k = sum_h W1[k,h] dz_h.
	dr := make([]float64, K)
	w1 := p.w[l.w1 : l.w1+K*H]
	for k := 0; k < K; k++ {
		gr, wr, rk := g[l.w1+k*H:l.w1+(k+1)*H], w1[k*H:(k+1)*H], ac.r[k]
		s := 0.0
		for h := 0; h < H; h++ {
			gr[h] += rk * dz[h]
			s += float64(wr[h]) * dz[h]
		}
		dr[k] = s
	}
	// r = sum_s a_s y_s: dy_s += a_s dr, da_s = y_s . dr.
	da := make([]float64, S)
	dot := 0.0
	for s := 0; s < S; s++ {
		ys, d := y[s*K:(s+1)*K], dy[s*K:(s+1)*K]
		v := 0.0
		for k := 0; k < K; k++ {
			d[k] = ac.at[s] * dr[k]
			v += float64(ys[k]) * dr[k]
		}
		da[s] = v
		dot += ac.at[s] * v
	}
	// Softmax: dl_s = a_s (da_s - sum_t a_t da_t). l_s = y_s . u + b_s.
	du := make([]float64, K)
	dsb := make([]float64, S)
	for s := 0; s < S; s++ {
		dl := ac.at[s] * (da[s] - dot)
		dsb[s] = dl
		ys, d := y[s*K:(s+1)*K], dy[s*K:(s+1)*K]
		for k := 0; k < K; k++ {
			du[k] += dl * float64(ys[k])
			d[k] += dl * pq.u[k]
		}
	}
	for _, b := range pq.qb {
		gk, gs := g[l.qk+b*K:l.qk+(b+1)*K], g[l.qs+b*S:l.qs+(b+1)*S]
		for k := 0; k < K; k++ {
			gk[k] += du[k]
		}
		for s := 0; s < S; s++ {
			gs[s] += dsb[s]
		}
	}
}
