package opq

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/mat"
)

// impl is gonum's pure-Go BLAS, for the float64 products of fitting.
var impl gonum.Implementation

// gramChunk is the number of rows converted to float64 per Dgemm call.
const gramChunk = 256

// crossTo sets c (d x d, float64) = a^T b / rows for a and b of rows x d
// float32 values. Every element is summed over rows in row order (Dgemm
// with a transposed A accumulates row by row; chunks run in order), so the
// result does not depend on GOMAXPROCS.
func crossTo(c []float64, a, b []float32, rows, d int) {
	clear(c)
	ab := make([]float64, gramChunk*d)
	bb := ab
	if &a[0] != &b[0] {
		bb = make([]float64, gramChunk*d)
	}
	for lo := 0; lo < rows; lo += gramChunk {
		m := min(gramChunk, rows-lo)
		for i, v := range a[lo*d : (lo+m)*d] {
			ab[i] = float64(v)
		}
		if &a[0] != &b[0] {
			for i, v := range b[lo*d : (lo+m)*d] {
				bb[i] = float64(v)
			}
		}
		impl.Dgemm(blas.Trans, blas.NoTrans, d, d, m, 1, ab, d, bb, d, 1, c, d)
	}
	inv := 1 / float64(rows)
	for i := range c {
		c[i] *= inv
	}
}

// pcaRotation returns the d x d rotation (row-major, float32; y = x R) whose
// columns are the eigenvectors of the symmetric matrix cov, assigned to the
// subspaces of sd columns so that their variance is balanced: in order of
// decreasing eigenvalue, each direction joins the subspace with the smallest
// variance so far that is not full (the lowest index on ties), after the
// directions already there. Each eigenvector's sign is fixed so that its
// largest-magnitude component (the first of equals) is positive. It also
// returns each subspace's share of the total variance.
func pcaRotation(cov []float64, d, sd int) ([]float32, []float64, error) {
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(d, cov), true) {
		return nil, nil, fmt.Errorf("opq: the eigen-decomposition of the %dx%d covariance did not converge", d, d)
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	order := make([]int, d)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return vals[order[a]] > vals[order[b]] })

	m := d / sd
	load := make([]float64, m)
	fill := make([]int, m)
	r := make([]float32, d*d)
	var total float64
	for _, e := range order {
		v := max(vals[e], 0)
		total += v
		best := -1
		for b := 0; b < m; b++ {
			if fill[b] < sd && (best < 0 || load[b] < load[best]) {
				best = b
			}
		}
		col := best*sd + fill[best]
		fill[best]++
		load[best] += v
		sign, big := 1.0, 0.0
		for i := 0; i < d; i++ {
			if a := math.Abs(vecs.At(i, e)); a > big {
				big = a
				sign = math.Copysign(1, vecs.At(i, e))
			}
		}
		for i := 0; i < d; i++ {
			r[i*d+col] = float32(sign * vecs.At(i, e))
		}
	}
	if total > 0 {
		for b := range load {
			load[b] /= total
		}
	}
	return r, load, nil
}

// procrustes returns the orthogonal R (d x d, float32, row-major) that
// minimises |X R - Y|_F given M = X^T Y: R = U V^T for the SVD M = U S V^T.
func procrustes(m []float64, d int) ([]float32, error) {
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(d, d, m), mat.SVDFull) {
		return nil, fmt.Errorf("opq: the SVD of the %dx%d Procrustes matrix did not converge", d, d)
	}
	var u, v, r mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	r.Mul(&u, v.T())
	out := make([]float32, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			out[i*d+j] = float32(r.At(i, j))
		}
	}
	return out, nil
}

// identity returns the d x d identity.
func identity(d int) []float32 {
	r := make([]float32, d*d)
	for i := 0; i < d; i++ {
		r[i*d+i] = 1
	}
	return r
}
