package fgemm

// Packing: the micro-kernel reads op(a) and op(b) from contiguous panels.
//
//	a panel: rows [i0, i0+mr) of op(a), inner steps [p0, p0+kc):  dst[p*mr+i]
//	b panel: columns [j0, j0+nr) of op(b), the same steps:          dst[p*nr+j]
//
// Rows or columns past the matrix's edge are packed as zeros, so the kernel
// always runs a full block; their results are never stored.

// packA packs the pr x kc panel of op(a) at (i0, p0) with rows rows (<= pr;
// pr is mr or mr8) into dst. op(a) is a (m x k, row stride lda), or a's
// transpose when trans (a stored k x m).
func packA(dst, a []float32, lda int, trans bool, pr, i0, rows, p0, kc int) {
	mr := pr
	dst = dst[:kc*mr]
	if trans {
		for p := 0; p < kc; p++ {
			src := a[(p0+p)*lda+i0:][:rows]
			d := dst[p*mr : p*mr+mr]
			for i, v := range src {
				d[i] = v
			}
			clear(d[rows:])
		}
		return
	}
	for i := 0; i < rows; i++ {
		src := a[(i0+i)*lda+p0:][:kc]
		for p, v := range src {
			dst[p*mr+i] = v
		}
	}
	for i := rows; i < mr; i++ {
		for p := 0; p < kc; p++ {
			dst[p*mr+i] = 0
		}
	}
}

// packB packs columns [j0, j0+cols) of op(b), inner steps [p0, p0+kc), into
// consecutive panels of kc x nr (the last one padded with zero columns). op(b)
// is b (k x n, row stride ldb), or b's transpose when trans (b stored n x k).
func packB(dst, b []float32, ldb int, trans bool, j0, cols, p0, kc int) {
	for q := 0; q*nr < cols; q++ {
		w := min(nr, cols-q*nr)
		panel := dst[q*kc*nr : (q+1)*kc*nr]
		jq := j0 + q*nr
		if trans {
			for j := 0; j < w; j++ {
				src := b[(jq+j)*ldb+p0:][:kc]
				for p, v := range src {
					panel[p*nr+j] = v
				}
			}
			if w < nr {
				for p := 0; p < kc; p++ {
					clear(panel[p*nr+w : p*nr+nr])
				}
			}
			continue
		}
		if w == nr {
			for p := 0; p < kc; p++ {
				*(*[nr]float32)(panel[p*nr:]) = *(*[nr]float32)(b[(p0+p)*ldb+jq:])
			}
			continue
		}
		for p := 0; p < kc; p++ {
			d := panel[p*nr : p*nr+nr]
			copy(d, b[(p0+p)*ldb+jq:][:w])
			clear(d[w:])
		}
	}
}
