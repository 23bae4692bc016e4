package fgemm

import (
	"fmt"
	"math"
)

// AdamHyper holds one AdamW update's scalars, already folded for the step:
// Decay = 1 - lr wd, Step = lr / (1 - b1^t), InvBC2 = 1 / sqrt(1 - b2^t).
type AdamHyper struct {
	GScale, B1, B2, Step, InvBC2, Eps, Decay float32
}

// AdamW applies one AdamW update to w with gradient g (times h.GScale, the
// clipping factor) and moments m and v, in place:
//
//	gi = g GScale;  m = B1 m + (1 - B1) gi;  v = B2 v + (1 - B2) gi^2
//	w  = w Decay - Step m / (sqrt(v) InvBC2 + Eps)
//
// The AVX-512 version fuses the multiply-adds, so its results may differ
// from the plain Go loop's in the last bits. All slices have w's length; it
// panics otherwise.
func AdamW(w, g, m, v []float32, h AdamHyper) {
	n := len(w)
	if len(g) != n || len(m) != n || len(v) != n {
		panic(fmt.Sprintf("fgemm: AdamW lengths %d, %d, %d, %d differ", n, len(g), len(m), len(v)))
	}
	i := 0
	if useAsm && n >= 16 {
		i = n &^ 15
		adamw16(&w[0], &g[0], &m[0], &v[0], i, &h)
	}
	b1c, b2c := 1-h.B1, 1-h.B2
	for ; i < n; i++ {
		gi := g[i] * h.GScale
		mi := h.B1*m[i] + b1c*gi
		vi := h.B2*v[i] + b2c*gi*gi
		m[i], v[i] = mi, vi
		w[i] = w[i]*h.Decay - h.Step*mi/(float32(math.Sqrt(float64(vi)))*h.InvBC2+h.Eps)
	}
}
