package worldmodel

import (
	"math"

	"github.com/memowm/memowm/trajectory"
)

// refForward is an independent, literal float64 transcription of the
// reference implementation's forward pass (experiments/world_model/model.py
// in the research code): all MaxHistory blocks are built, padding blocks get
// state_pad and action/pad and are then zeroed, attention runs over the whole
// window with a -1e30 mask and renormalisation, and every layer multiplies
// by the activity mask. It uses math.Exp and math.Tanh. Tests hold the fast
// float32 forward to it within a tolerance.
func refForward(m *Model, h History) (logits, gate, valid []float64) {
	c := &m.cfg
	S, G, C, E, W, H, M := c.Slots, c.Subspaces, c.Codewords, c.CodeDim, c.Width(), c.MaxHistory, c.MLP
	n := len(h)
	f := func(v []float32) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	tensor := func(name string) []float64 { d, _ := m.Tensor(name); return f(d) }
	matvec := func(x []float64, w []float64, k int) []float64 { // x (inner) w (inner, k)
		out := make([]float64, k)
		for l, xv := range x {
			for j := 0; j < k; j++ {
				out[j] += xv * w[l*k+j]
			}
		}
		return out
	}
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	ln := func(x, g, b []float64) []float64 {
		mean, v := 0.0, 0.0
		for _, a := range x {
			mean += a
		}
		mean /= float64(len(x))
		for _, a := range x {
			v += (a - mean) * (a - mean)
		}
		v /= float64(len(x))
		out := make([]float64, len(x))
		for i, a := range x {
			out[i] = (a-mean)/math.Sqrt(v+1e-5)*g[i] + b[i]
		}
		return out
	}
	actionEmb := func(a *trajectory.Action) []float64 {
		A, P, Y := c.ActionDim, c.PayloadHidden, c.ByteDim
		var feat []float64
		feat = append(feat, tensor("action/type_embedding")[int(a.Type)*A:][:A]...)
		xb, yb := coordBin(a.X, a.HasPos, c.CoordBins), coordBin(a.Y, a.HasPos, c.CoordBins)
		feat = append(feat, tensor("action/x_embedding")[xb*A:][:A]...)
		feat = append(feat, tensor("action/y_embedding")[yb*A:][:A]...)
		slog := func(v float32) float64 {
			x := float64(v)
			if x < 0 {
				return -math.Log1p(-x)
			}
			return math.Log1p(x)
		}
		in := []float64{0, 0, 0}
		if a.HasDelta {
			in = []float64{slog(a.DX), slog(a.DY), 1}
		}
		d := matvec(in, tensor("action/delta_w"), A)
		for i, b := range tensor("action/delta_b") {
			d[i] += b
		}
		feat = append(feat, d...)
		hid := make([]float64, P)
		wx, wh, gb, be := tensor("action/gru_wx"), tensor("action/gru_wh"), tensor("action/gru_b"), tensor("action/byte_embedding")
		for _, b := range a.Payload {
			xp := matvec(be[int(b)*Y:][:Y], wx, 3*P)
			hp := matvec(hid, wh, 3*P)
			next := make([]float64, P)
			for i := 0; i < P; i++ {
				z := sig(xp[i] + hp[i] + gb[i])
				r := sig(xp[P+i] + hp[P+i] + gb[P+i])
				nn := math.Tanh(xp[2*P+i] + r*hp[2*P+i] + gb[2*P+i])
				next[i] = z*hid[i] + (1-z)*nn
			}
			hid = next
		}
		feat = append(feat, hid...)
		out := matvec(feat, tensor("action/proj_w"), W)
		for i, b := range tensor("action/proj_b") {
			out[i] += b
		}
		return out
	}

	T := H * S
	x := make([][]float64, T)
	active := make([]bool, T)
	code, slot, tim, task := tensor("code_embedding"), tensor("slot_embedding"), tensor("time_embedding"), tensor("task_embedding")
	validW, validB := tensor("valid/w"), tensor("valid/b")
	statePad, actPad := tensor("state_pad"), tensor("action/pad")
	for k := 0; k < H; k++ {
		present := k >= H-n
		var act []float64
		var st *Step
		if present {
			st = &h[k-(H-n)]
			act = actionEmb(&st.Action)
		}
		for s := 0; s < S; s++ {
			row := make([]float64, W)
			if present {
				flags := make([]float64, S)
				for i := range flags {
					flags[i] = 1
					if st.SlotValid != nil && !st.SlotValid[i] {
						flags[i] = 0
					}
				}
				vs := matvec(flags, validW, W)
				for g := 0; g < G; g++ {
					z := int(st.Codes[s*G+g])
					copy(row[g*E:], code[((s*G+g)*C+z)*E:][:E])
				}
				for i := range row {
					row[i] += vs[i] + validB[i] + act[i]
				}
			} else {
				for i := range row {
					row[i] = statePad[i] + actPad[i]
				}
			}
			mult := 0.0
			if present {
				mult = 1
			}
			for i := range row {
				row[i] = (row[i] + task[i] + tim[k*W+i] + slot[s*W+i]) * mult
			}
			x[k*S+s], active[k*S+s] = row, present
		}
	}
	hd := c.HeadDim()
	for l := 0; l < c.Layers; l++ {
		pre := "layer" + itoa(l) + "/"
		wqkv, bqkv := tensor(pre+"qkv_w"), tensor(pre+"qkv_b")
		qkv := make([][]float64, T)
		for t := range x {
			q := matvec(ln(x[t], tensor(pre+"attn_norm_scale"), tensor(pre+"attn_norm_bias")), wqkv, 3*W)
			for i := range q {
				q[i] += bqkv[i]
			}
			qkv[t] = q
		}
		att := make([][]float64, T)
		for q := 0; q < T; q++ {
			att[q] = make([]float64, W)
			for hh := 0; hh < c.Heads; hh++ {
				lg := make([]float64, T)
				mx := math.Inf(-1)
				for k := 0; k < T; k++ {
					allowed := k/S <= q/S && active[k]
					v := -1e30
					if allowed {
						v = 0
						for d := 0; d < hd; d++ {
							v += qkv[q][hh*hd+d] * qkv[k][W+hh*hd+d]
						}
						v /= math.Sqrt(float64(hd))
					}
					lg[k] = v
					mx = math.Max(mx, v)
				}
				sum := 0.0
				for k := range lg {
					lg[k] = math.Exp(lg[k] - mx)
					sum += lg[k]
				}
				sum2 := 0.0
				for k := range lg {
					lg[k] /= sum
					if !(k/S <= q/S && active[k]) {
						lg[k] = 0
					}
					sum2 += lg[k]
				}
				for k := range lg {
					a := lg[k] / math.Max(sum2, 1e-30)
					for d := 0; d < hd; d++ {
						att[q][hh*hd+d] += a * qkv[k][2*W+hh*hd+d]
					}
				}
			}
		}
		wo, bo := tensor(pre+"attn_out_w"), tensor(pre+"attn_out_b")
		w1, b1, w2, b2 := tensor(pre+"mlp_w1"), tensor(pre+"mlp_b1"), tensor(pre+"mlp_w2"), tensor(pre+"mlp_b2")
		for t := range x {
			o := matvec(att[t], wo, W)
			for i := range o {
				x[t][i] += o[i] + bo[i]
			}
			hh := matvec(ln(x[t], tensor(pre+"mlp_norm_scale"), tensor(pre+"mlp_norm_bias")), w1, M)
			for i := range hh {
				v := hh[i] + b1[i]
				hh[i] = 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
			}
			o = matvec(hh, w2, W)
			for i := range o {
				x[t][i] += o[i] + b2[i]
				if !active[t] {
					x[t][i] = 0
				}
			}
		}
	}
	J := S * G
	logits, gate = make([]float64, J*C), make([]float64, J)
	pooled := make([]float64, W)
	cb, cw, cbias := tensor("code_head/b"), tensor("copy_head/w"), tensor("copy_head/b")
	for s := 0; s < S; s++ {
		hf := ln(x[(H-1)*S+s], tensor("final_norm_scale"), tensor("final_norm_bias"))
		for i := range pooled {
			pooled[i] += hf[i] / float64(S)
		}
		for g := 0; g < G; g++ {
			j := s*G + g
			for cc := 0; cc < C; cc++ {
				v := cb[j*C+cc]
				for d := 0; d < E; d++ {
					v += hf[g*E+d] * code[(j*C+cc)*E+d]
				}
				logits[j*C+cc] = v
			}
			v := cbias[j]
			for d := 0; d < E; d++ {
				v += hf[g*E+d] * cw[j*E+d]
			}
			gate[j] = v
		}
	}
	valid = matvec(pooled, tensor("mask_head/w"), S)
	for i, b := range tensor("mask_head/b") {
		valid[i] += b
	}
	return logits, gate, valid
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
