package codec

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/memowm/memowm/opq"
)

// Neighbours orders every codebook's codewords by their distance from each
// codeword: for coordinate j and previous code p, rank 0 is p itself, rank
// 1 its nearest other codeword, and so on. The mixing prior codes a code as
// its rank from the previous code of its coordinate, so that a state that
// drifts (encoder jitter, a small change of a screen region) gives small
// ranks, which adaptive models shared by all coordinates learn.
//
// It is computed from the bundle's quantizer in integers only: every
// codeword value is scaled by one power of two (exact in floating point),
// rounded to an integer, and distances are exact int64 sums of squares;
// ties go to the lower codeword. The same bundle gives the same order on
// every machine.
type Neighbours struct {
	books, C int
	order    []uint8 // (books, C, C): order[(b*C+p)*C+r] is the code at rank r from p
	rank     []uint8 // (books, C, C): rank[(b*C+p)*C+z] is z's rank from p
	origin   []uint8 // (books): the codeword nearest the origin (the training mean)
}

var neighbourCache sync.Map // *opq.Quantizer -> *Neighbours

// NeighboursOf returns q's neighbour order (computed once per quantizer).
func NeighboursOf(q *opq.Quantizer) (*Neighbours, error) {
	if v, ok := neighbourCache.Load(q); ok {
		return v.(*Neighbours), nil
	}
	n, err := newNeighbours(q)
	if err != nil {
		return nil, err
	}
	v, _ := neighbourCache.LoadOrStore(q, n)
	return v.(*Neighbours), nil
}

func newNeighbours(q *opq.Quantizer) (*Neighbours, error) {
	books, C, dim := q.Books(), q.Codewords(), q.SubDim()
	if C > 256 {
		return nil, fmt.Errorf("codec: %d codewords: the neighbour order needs at most 256", C)
	}
	// One power-of-two scale for every value: the largest magnitude maps
	// below 2^20, so differences fit 21 bits and squares sum safely.
	var maxAbs float64
	for b := range books {
		for c := range C {
			for _, v := range q.Codeword(b, c) {
				if a := math.Abs(float64(v)); a > maxAbs {
					maxAbs = a
				}
				if v != v || math.IsInf(float64(v), 0) {
					return nil, fmt.Errorf("codec: the quantizer has a non-finite codeword value")
				}
			}
		}
	}
	scale := 1.0
	if maxAbs > 0 {
		_, e := math.Frexp(maxAbs) // maxAbs < 2^e
		scale = math.Ldexp(1, 20-e)
	}
	n := &Neighbours{books: books, C: C, order: make([]uint8, books*C*C), rank: make([]uint8, books*C*C), origin: make([]uint8, books)}
	iv := make([]int64, C*dim)
	dist := make([]int64, C)
	idx := make([]int, C)
	for b := range books {
		for c := range C {
			for k, v := range q.Codeword(b, c) {
				iv[c*dim+k] = int64(math.RoundToEven(float64(v) * scale))
			}
		}
		// The codeword nearest the origin of the standardised space: the
		// training mean's code (the lowest on ties).
		var best int64 = -1
		for c := range C {
			var d int64
			for k := range dim {
				d += iv[c*dim+k] * iv[c*dim+k]
			}
			if best < 0 || d < best {
				best, n.origin[b] = d, uint8(c)
			}
		}
		for p := range C {
			for z := range C {
				var d int64
				for k := range dim {
					x := iv[p*dim+k] - iv[z*dim+k]
					d += x * x
				}
				dist[z] = d
				idx[z] = z
			}
			slices.SortFunc(idx, func(x, y int) int {
				// p first, then by distance, then by index.
				switch {
				case x == p:
					return -1
				case y == p:
					return 1
				case dist[x] != dist[y]:
					if dist[x] < dist[y] {
						return -1
					}
					return 1
				}
				return x - y
			})
			base := (b*C + p) * C
			for r, z := range idx {
				n.order[base+r] = uint8(z)
				n.rank[base+z] = uint8(r)
			}
		}
	}
	return n, nil
}

// originRow returns coordinate j's order and rank rows from the codeword
// nearest the origin.
func (n *Neighbours) originRow(j int) (order, rank []uint8) {
	return n.row(j, int(n.origin[j%n.books]))
}

// row returns coordinate j's order and rank rows for previous code p.
func (n *Neighbours) row(j, p int) (order, rank []uint8) {
	base := ((j%n.books)*n.C + p) * n.C
	return n.order[base : base+n.C], n.rank[base : base+n.C]
}
