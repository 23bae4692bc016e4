package igemm

// mulVNNI runs the AVX-512 VNNI kernels: the activations are copied once,
// offset by 128 to unsigned bytes (xorCopy) and padded with zeros to whole
// groups, then each (panel, row range) item runs blocks of 6 rows and single
// rows; a panel past N writes into a tile that is copied out.
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
		i := r0
		for ; i+6 <= r1; i += 6 {
			if nc == panelCols {
				vnni6x64(&out[i*ldo+n0], ldo, &buf[i*kp], kp, panel, groups, bias)
				continue
			}
			vnni6x64(&tile[0], panelCols, &buf[i*kp], kp, panel, groups, bias)
			for r := 0; r < 6; r++ {
				copy(out[(i+r)*ldo+n0:(i+r)*ldo+n0+nc], tile[r*panelCols:])
			}
		}
		for ; i < r1; i++ {
			if nc == panelCols {
				vnni1x64(&out[i*ldo+n0], &buf[i*kp], panel, groups, bias)
				continue
			}
			vnni1x64(&tile[0], &buf[i*kp], panel, groups, bias)
			copy(out[i*ldo+n0:i*ldo+n0+nc], tile[:nc])
		}
	})
}

// mulAVX2 runs the AVX2 kernels on 16-column strips of each panel: the
// activations are copied once, padded with zeros to whole groups; blocks of
// 2 rows, then a single row; a strip past N writes into a tile.
func mulAVX2(out []int32, ldo int, a []int8, lda int, p *Packed, rows, threads int) {
	K, N, groups := p.k, p.n, p.groups
	kp := groups * groupK
	bp := getBuf(rows * kp)
	defer bufPool.Put(bp)
	buf := *bp
	for i := 0; i < rows; i++ {
		row := buf[i*kp : (i+1)*kp]
		copy(row, a[i*lda:i*lda+K])
		clear(row[K:])
	}
	parallel(p.panels, rows, 2, threads, func(pn, r0, r1 int) {
		var tile [2 * 16]int32
		for q := 0; q < panelCols/16; q++ {
			n0 := pn*panelCols + 16*q
			nc := min(16, N-n0)
			if nc <= 0 {
				break
			}
			strip := &p.data[pn*groups*groupBytes+16*groupK*q]
			i := r0
			for ; i+2 <= r1; i += 2 {
				if nc == 16 {
					avx2x2x16(&out[i*ldo+n0], ldo, &buf[i*kp], kp, strip, groups)
					continue
				}
				avx2x2x16(&tile[0], 16, &buf[i*kp], kp, strip, groups)
				copy(out[i*ldo+n0:i*ldo+n0+nc], tile[:nc])
				copy(out[(i+1)*ldo+n0:(i+1)*ldo+n0+nc], tile[16:])
			}
			if i < r1 {
				if nc == 16 {
					avx2x1x16(&out[i*ldo+n0], &buf[i*kp], strip, groups)
					continue
				}
				avx2x1x16(&tile[0], &buf[i*kp], strip, groups)
				copy(out[i*ldo+n0:i*ldo+n0+nc], tile[:nc])
			}
		}
	})
}

// mulGo is the plain Go kernel on the packed layout: per row and panel, 64
// running sums, four products of one group added at a time.
func mulGo(out []int32, ldo int, a []int8, lda int, p *Packed, rows, threads int) {
	K, N, groups := p.k, p.n, p.groups
	parallel(p.panels, rows, 1, threads, func(pn, r0, r1 int) {
		n0 := pn * panelCols
		nc := min(panelCols, N-n0)
		panel := p.data[pn*groups*groupBytes : (pn+1)*groups*groupBytes]
		var acc [panelCols]int32
		for i := r0; i < r1; i++ {
			clear(acc[:])
			ar := a[i*lda : i*lda+K]
			for g := 0; g < groups; g++ {
				var x [groupK]int32
				for j := range x {
					if k := g*groupK + j; k < K {
						x[j] = int32(ar[k])
					}
				}
				wg := panel[g*groupBytes : g*groupBytes+groupK*nc]
				for c := range acc[:nc] {
					w := wg[groupK*c : groupK*c+groupK : groupK*c+groupK]
					acc[c] += x[0]*int32(w[0]) + x[1]*int32(w[1]) + x[2]*int32(w[2]) + x[3]*int32(w[3])
				}
			}
			copy(out[i*ldo+n0:i*ldo+n0+nc], acc[:nc])
		}
	})
}
