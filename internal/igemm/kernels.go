package igemm

// mulVNNI runs the AVX-512 VNNI kernels: the activations are copied once,
// offset by 128 to unsigned bytes (xorCopy) and padded with zeros to whole
// groups, then each (panel, row range) item runs blocks of 6 rows and a last
// block of 1 to 5; a panel past N writes into a tile that is copied out.
func mulVNNI(out []int32, ldo int, a []int8, lda int, p *Packed, rows, threads int) {
	K, N, groups := p.k, p.n, p.groups
	kp := groups * groupK
	bp := getBuf(rows * kp)
	defer bufPool.Put(bp)
	buf := *bp
	for i := 0; i < rows; i++ {
		row := buf[i*kp : (i+1)*kp]
		xorCopy(&row[0], &a[i*lda], K)
		clear(row[K:])
	}
	parallel(p.panels, rows, 6, threads, func(pn, r0, r1 int) {
		panel := &p.data[pn*groups*groupBytes]
		bias := &p.bias[pn*panelCols]
		n0 := pn * panelCols
		nc := min(panelCols, N-n0)
		var tile [6 * panelCols]int32
		for i := r0; i < r1; i += 6 {
			r := min(6, r1-i)
			if nc == panelCols {
				vnniRows(r, &out[i*ldo+n0], ldo, &buf[i*kp], kp, panel, groups, bias)
				continue
			}
			vnniRows(r, &tile[0], panelCols, &buf[i*kp], kp, panel, groups, bias)
			for j := 0; j < r; j++ {
				copy(out[(i+j)*ldo+n0:(i+j)*ldo+n0+nc], tile[j*panelCols:])
			}
		}
	})
}

// mulAVX2 runs the AVX2 kernels on 8-column strips of each panel: the
// activations are copied once, sign-extended to 16 bits (extend16) and
// padded with zeros to whole groups; blocks of 4 rows, then a last block of
// 1 to 3; a strip past N writes into a tile.
func mulAVX2(out []int32, ldo int, a []int8, lda int, p *Packed, rows, threads int) {
	K, N, groups := p.k, p.n, p.groups
	kp := groups * groupK
	bp := getBuf16(rows * kp)
	defer buf16Pool.Put(bp)
	buf := *bp
	for i := 0; i < rows; i++ {
		row := buf[i*kp : (i+1)*kp]
		extend16(&row[0], &a[i*lda], K)
		clear(row[K:])
	}
	parallel(p.panels, rows, 4, threads, func(pn, r0, r1 int) {
		var tile [4 * 8]int32
		for q := 0; q < panelCols/8; q++ {
			n0 := pn*panelCols + 8*q
			nc := min(8, N-n0)
			if nc <= 0 {
				break
			}
			strip := &p.data[pn*groups*groupBytes+8*groupK*q]
			for i := r0; i < r1; i += 4 {
				r := min(4, r1-i)
				if nc == 8 {
					avx2Rows(r, &out[i*ldo+n0], ldo, &buf[i*kp], 2*kp, strip, groups)
					continue
				}
				avx2Rows(r, &tile[0], 8, &buf[i*kp], 2*kp, strip, groups)
				for j := 0; j < r; j++ {
					copy(out[(i+j)*ldo+n0:(i+j)*ldo+n0+nc], tile[8*j:])
				}
			}
		}
	})
}

// mulGo is the plain Go kernel on the packed layout. Two rows travel
// together in one int64 per inner index, x = a0 + a1<<32, so that one
// 64-bit multiply by a weight makes both products: the sum s over k of
// x*w is L + H<<32 modulo 2^64, where L and H are the two rows' true sums
// (each within int32 by the bound on K), so int32(s) is L and
// int32((s-L)>>32) is H, exactly.
func mulGo(out []int32, ldo int, a []int8, lda int, p *Packed, rows, threads int) {
	K, N, groups := p.k, p.n, p.groups
	kp := groups * groupK
	pairs := (rows + 1) / 2
	xp := getBuf64(pairs * kp)
	defer buf64Pool.Put(xp)
	x := *xp
	for i := 0; i < pairs; i++ {
		xs := x[i*kp : (i+1)*kp]
		clear(xs[K:])
		a0 := a[2*i*lda : 2*i*lda+K]
		if 2*i+1 == rows {
			for k, v := range a0 {
				xs[k] = int64(v)
			}
			continue
		}
		a1 := a[(2*i+1)*lda : (2*i+1)*lda+K]
		for k, v := range a0 {
			xs[k] = int64(v) + int64(a1[k])<<32
		}
	}
	parallel(p.panels, rows, 4, threads, func(pn, r0, r1 int) {
		n0 := pn * panelCols
		nc := min(panelCols, N-n0)
		panel := p.data[pn*groups*groupBytes : (pn+1)*groups*groupBytes]
		// put stores the sums s of row pair i (rows i, i+1) at column n.
		put := func(i, n int, s int64) {
			lo := int32(s)
			out[i*ldo+n] = lo
			if i+1 < r1 {
				out[(i+1)*ldo+n] = int32((s - int64(lo)) >> 32)
			}
		}
		for i := r0; i < r1; i += 4 {
			x0 := x[i/2*kp : (i/2+1)*kp]
			x1 := x0
			if i+2 < r1 {
				x1 = x[(i/2+1)*kp : (i/2+2)*kp]
			}
			// Columns in pairs: the panel is padded to 64 columns.
			for c := 0; c < nc; c += 2 {
				s00, s01, s10, s11 := dot2x2(x0, x1, panel[groupK*c:], groups)
				put(i, n0+c, s00)
				if c+1 < nc {
					put(i, n0+c+1, s01)
				}
				if i+2 < r1 {
					put(i+2, n0+c, s10)
					if c+1 < nc {
						put(i+2, n0+c+1, s11)
					}
				}
			}
		}
	})
}

// dot2x2 returns, modulo 2^64, the sums over the groups' inner indices k of
// x0[k] and x1[k] times the weights of the packed columns at w and w[4:]
// (group g's four weights of a column at g*groupBytes).
func dot2x2(x0, x1 []int64, w []int8, groups int) (s00, s01, s10, s11 int64) {
	x0, x1 = x0[:groups*groupK], x1[:groups*groupK]
	for g := 0; g < groups; g++ {
		q := w[g*groupBytes : g*groupBytes+2*groupK : g*groupBytes+2*groupK]
		y := x0[g*groupK : g*groupK+groupK : g*groupK+groupK]
		z := x1[g*groupK : g*groupK+groupK : g*groupK+groupK]
		w0, w1, w2, w3 := int64(q[0]), int64(q[1]), int64(q[2]), int64(q[3])
		v0, v1, v2, v3 := int64(q[4]), int64(q[5]), int64(q[6]), int64(q[7])
		s00 += y[0]*w0 + y[1]*w1 + y[2]*w2 + y[3]*w3
		s01 += y[0]*v0 + y[1]*v1 + y[2]*v2 + y[3]*v3
		s10 += z[0]*w0 + z[1]*w1 + z[2]*w2 + z[3]*w3
		s11 += z[0]*v0 + z[1]*v1 + z[2]*v2 + z[3]*v3
	}
	return
}
