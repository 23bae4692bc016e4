package worldmodel

// Per-row layers of the forward pass. Each writes its output first; rows are
// independent, so callers split rows across goroutines freely.

const lnEps = float32(1e-5)

// layerNormTo: out (rows, W) = (x - mean) / sqrt(var + eps) * g + b per row,
// mean and biased variance summed left to right.
func layerNormTo(out, x, g, b []float32, rows, W int) {
	invW := 1 / float32(W)
	for r := 0; r < rows; r++ {
		xr := x[r*W : r*W+W]
		or := out[r*W : r*W+W]
		var s float32
		for _, v := range xr {
			s += v
		}
		mean := float32(s * invW)
		var q float32
		for _, v := range xr {
			d := v - mean
			q += float32(d * d)
		}
		rstd := 1 / sqrtf(float32(q*invW)+lnEps)
		for i, v := range xr {
			or[i] = float32(float32((v-mean)*rstd)*g[i]) + b[i]
		}
	}
}

// addBiasTo: x (rows, k) += b (k) per row.
func addBias(x, b []float32, rows, k int) {
	for r := 0; r < rows; r++ {
		xr := x[r*k : r*k+k]
		for i := range xr {
			xr[i] += b[i]
		}
	}
}

// addBiasGELU: x (rows, k) = gelu(x + b) per row.
func addBiasGELU(x, b []float32, rows, k int) { addBiasGELUTo(x, x, b, rows, k) }

// addBiasGELUTo: dst (rows, k) = gelu(x + b) per row; dst may be x.
func addBiasGELUTo(dst, x, b []float32, rows, k int) {
	for r := 0; r < rows; r++ {
		geluBiasTo(dst[r*k:r*k+k], x[r*k:r*k+k], b)
	}
}

// addResidual: x (rows, k) += y + b per row, in the order x + (y + b).
func addResidual(x, y, b []float32, rows, k int) {
	for r := 0; r < rows; r++ {
		xr, yr := x[r*k:r*k+k], y[r*k:r*k+k]
		for i := range xr {
			xr[i] += yr[i] + b[i]
		}
	}
}
