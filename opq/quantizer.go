package opq

import (
	"github.com/memowm/memowm/trajectory"
)

// Info records how a Quantizer was fit. It is stored in the file.
type Info struct {
	Rotation             Rotation `json:"rotation"`
	Rounds               int      `json:"rounds"`
	Iterations           int      `json:"iterations"`
	RoundIterations      int      `json:"round_iterations"`
	MaxPointsPerCentroid int      `json:"max_points_per_centroid"`
	RotationStates       int      `json:"rotation_states"`
	StdFloor             float64  `json:"std_floor"`
	Seed                 uint64   `json:"seed"`
	TrainStates          int      `json:"train_states"` // states given to Fit
	Distortion           float64  `json:"distortion"`   // mean squared error per standardised value on the k-means sample
	// HeldOutStates and HeldOutR2 are the reconstruction R^2 on
	// Config.HeldOut, states Fit did not train on (0 and 0: not measured).
	HeldOutStates int     `json:"held_out_states"`
	HeldOutR2     float64 `json:"held_out_r2"`
}

// Quantizer maps states to codes and back. It is immutable.
type Quantizer struct {
	shape     trajectory.Shape
	subspaces int // per slot: Codes / Slots
	subDim    int // values per subspace: Dim / subspaces
	codewords int
	shared    bool
	info      Info

	mean   []float32 // (Slots, Dim): training mean of each (slot, channel)
	std    []float32 // (Slots, Dim): floored training std
	invStd []float32 // (Slots, Dim): 1/std
	rot    []float32 // (Dim, Dim) row-major: y = x rot
	rotT   []float32 // (Dim, Dim): the transpose, x = y rotT
	books  []float32 // (Books, Codewords, subDim): codeword c of book b at (b*Codewords+c)*subDim
	booksT []float32 // (Books, subDim, Codewords): the same, transposed per book
	norms  []float32 // (Books, Codewords): |codeword|^2
	ident  bool      // rot is exactly the identity: rotations are copies
}

// Shape is the geometry of the states and codes.
func (q *Quantizer) Shape() trajectory.Shape { return q.shape }

// Subspaces is the number of subspaces (codes) per slot.
func (q *Quantizer) Subspaces() int { return q.subspaces }

// SubDim is the number of rotated values in one subspace.
func (q *Quantizer) SubDim() int { return q.subDim }

// Codewords is the number of entries of every codebook.
func (q *Quantizer) Codewords() int { return q.codewords }

// Shared reports whether all slots share one codebook per subspace.
func (q *Quantizer) Shared() bool { return q.shared }

// Books is the number of codebooks: Subspaces if Shared, else Codes.
func (q *Quantizer) Books() int {
	if q.shared {
		return q.subspaces
	}
	return q.shape.Codes
}

// Info says how the Quantizer was fit.
func (q *Quantizer) Info() Info { return q.info }

// Bits is the fixed width of one code vector: Codes * CodeBits(Codewords).
func (q *Quantizer) Bits() int { return q.shape.Codes * CodeBits(q.codewords) }

// CodeBits is the fixed width of one code of a codebook of the given size:
// ceil(log2 codewords).
func CodeBits(codewords int) int {
	b := 0
	for 1<<b < codewords {
		b++
	}
	return b
}

// book is the codebook index of coordinate j = slot*Subspaces + m.
func (q *Quantizer) book(j int) int {
	if q.shared {
		return j % q.subspaces
	}
	return j
}

// Codeword returns codeword c of coordinate j's codebook in the rotated,
// standardised space (SubDim values). The slice must not be modified.
func (q *Quantizer) Codeword(j, c int) []float32 {
	b := q.book(j)
	off := (b*q.codewords + c) * q.subDim
	return q.books[off : off+q.subDim : off+q.subDim]
}

// newQuantizer allocates a Quantizer of the given geometry with zero
// parameters.
func newQuantizer(shape trajectory.Shape, codewords int, shared bool) *Quantizer {
	q := &Quantizer{shape: shape, subspaces: shape.Codes / shape.Slots, codewords: codewords, shared: shared}
	q.subDim = shape.Dim / q.subspaces
	n := shape.StateLen()
	q.mean = make([]float32, n)
	q.std = make([]float32, n)
	q.invStd = make([]float32, n)
	q.rot = make([]float32, shape.Dim*shape.Dim)
	q.books = make([]float32, q.Books()*codewords*q.subDim)
	return q
}

// derive sets invStd, rotT, booksT and norms from std, rot and books.
func (q *Quantizer) derive() {
	q.invStd = grow(q.invStd, len(q.std))
	q.rotT = grow(q.rotT, len(q.rot))
	q.booksT = grow(q.booksT, len(q.books))
	q.norms = grow(q.norms, q.Books()*q.codewords)
	for i, s := range q.std {
		q.invStd[i] = 1 / s
	}
	d := q.shape.Dim
	q.ident = true
	for i := 0; i < d; i++ {
		for k := 0; k < d; k++ {
			q.rotT[k*d+i] = q.rot[i*d+k]
			if (i == k) != (q.rot[i*d+k] == 1) || (i != k && q.rot[i*d+k] != 0) {
				q.ident = false
			}
		}
	}
	k, sd := q.codewords, q.subDim
	for b := 0; b < q.Books(); b++ {
		book := q.books[b*k*sd : (b+1)*k*sd]
		bookT := q.booksT[b*k*sd : (b+1)*k*sd]
		transposeBook(bookT, book, k, sd)
		centroidNorms(q.norms[b*k:(b+1)*k], book, k, sd)
	}
}

// transposeBook writes the (sd, k) transpose of the (k, sd) book.
func transposeBook(dst, book []float32, k, sd int) {
	for c := 0; c < k; c++ {
		for l := 0; l < sd; l++ {
			dst[l*k+c] = book[c*sd+l]
		}
	}
}

// centroidNorms writes |c|^2 of every codeword, summed in index order.
func centroidNorms(dst, book []float32, k, sd int) {
	for c := 0; c < k; c++ {
		var s float32
		for _, v := range book[c*sd : (c+1)*sd] {
			s += float32(v * v)
		}
		dst[c] = s
	}
}
