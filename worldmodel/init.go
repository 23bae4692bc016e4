package worldmodel

import "fmt"

// InitScaledResidual names the initialisation of ScaleResidualInit in
// training records (TrainConfig.Init, a bundle's training record); "" names
// New's fan-in draw.
const InitScaledResidual = "scaled-residual"

// KnownInit reports whether init names an initialisation this build can
// record: "" (New's) or InitScaledResidual.
func KnownInit(init string) bool { return init == "" || init == InitScaledResidual }

// ScaleResidualInit multiplies the initial weights of every block's two
// projections into the residual stream (attention output, layer%d/attn_out_w,
// and the MLP's second layer, layer%d/mlp_w2) by 1/sqrt(2 x layers), the
// initialisation GPT-2 uses: with fan-in weights each block adds about unit
// variance to the stream, so a deeper model starts with its inputs' signal
// (embeddings of standard deviation 0.02) buried under more of the blocks'
// noise. It is meant for a model just made by New, before training; it
// returns the factor. Inference is untouched: a model is only its weights.
func ScaleResidualInit(m *Model) float64 {
	L := m.cfg.Layers
	if L == 0 {
		return 1
	}
	f := 1 / sqrt64(float64(2*L))
	for l := 0; l < L; l++ {
		for _, name := range []string{fmt.Sprintf("layer%d/attn_out_w", l), fmt.Sprintf("layer%d/mlp_w2", l)} {
			w, _ := m.Tensor(name)
			for i, v := range w {
				w[i] = float32(float64(v) * f)
			}
		}
	}
	return f
}
