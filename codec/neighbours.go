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
//
// Only the order is held (books x C x C bytes: 4 MiB for 1,024 books of 64
// codewords); a code's rank is found from it (rankTo), where the order is
// read anyway.
type Neighbours struct {
	books, C int
	order    []uint8 // (books, C, C): order[(b*C+p)*C+r] is the code at rank r from p
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
	if C > 256 || dim > 1<<12 {
		return nil, fmt.Errorf("codec: %d codewords of %d values: the neighbour order needs at most 256 of at most 4096", C, dim)
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
	n := &Neighbours{books: books, C: C, order: make([]uint8, books*C*C), origin: make([]uint8, books)}
	iv := make([]int64, books*C*dim)
	for b := range books {
		for c := range C {
			for k, v := range q.Codeword(b, c) {
				iv[(b*C+c)*dim+k] = int64(math.RoundToEven(float64(v) * scale))
			}
		}
	}
	// Books are independent: two goroutines each take every other book.
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys := make([]uint64, C)
			for b := w; b < books; b += 2 {
				n.orderBook(b, iv[b*C*dim:(b+1)*C*dim], dim, keys)
			}
		}()
	}
	wg.Wait()
	return n, nil
}

// orderBook fills book b's origin and order rows from its codewords
// iv (C x dim scaled integers). keys is scratch of C entries.
func (n *Neighbours) orderBook(b int, iv []int64, dim int, keys []uint64) {
	C := n.C
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
		// Sort keys (distance+1)<<8 | code: p itself first (key 0), then
		// by distance, then by code. A squared difference is below 2^42
		// and a subspace has at most 2^12 values (checked), so a key fits.
		for z := range C {
			var d int64
			for k := range dim {
				x := iv[p*dim+k] - iv[z*dim+k]
				d += x * x
			}
			keys[z] = uint64(d+1)<<8 | uint64(z)
		}
		keys[p] = 0
		slices.Sort(keys)
		base := (b*C + p) * C
		for r, k := range keys {
			z := p
			if k != 0 {
				z = int(k & 0xff)
			}
			n.order[base+r] = uint8(z)
		}
	}
}

// fits reports whether n is a neighbour order for h's geometry (a nil n
// fits nothing).
func (n *Neighbours) fits(h *Header) bool {
	return n != nil && n.C == h.Codewords && len(n.order) == n.books*n.C*n.C && h.Coords()%n.books == 0
}

// originRow returns coordinate j's order row from the codeword nearest the
// origin.
func (n *Neighbours) originRow(j int) []uint8 {
	return n.row(j, int(n.origin[j%n.books]))
}

// row returns coordinate j's order row for previous code p: the codes by
// rank.
func (n *Neighbours) row(j, p int) []uint8 {
	base := ((j%n.books)*n.C + p) * n.C
	return n.order[base : base+n.C]
}

// rankTo writes the inverse of order (every code's rank) into rank, which
// has len(order) entries, and returns it.
func rankTo(rank, order []uint8) []uint8 {
	for r, z := range order {
		rank[z] = uint8(r)
	}
	return rank
}
