package trajectory

import (
	"fmt"
	"math/bits"
)

// CodeRows holds the code vectors of one episode compactly: the form in
// which a long episode's codes are held (Episode.Compact), where Codes
// takes Width bytes and a slice header per observation.
//
// A row is cut into blocks: its slots (NewCodeRows' slots, when they divide
// the width and are at most 64; else the whole row is one block). A block
// is stored only when it differs from the same block of the row before, its
// codes packed at the fewest bits that hold every code seen so far (6 for
// 64 codewords). A row costs 12 bytes (which blocks changed, where they
// start) plus its changed blocks, and every 64th row a snapshot of where
// each block's content lies (4 bytes a block). A 32-slot row of 1,024
// 6-bit codes takes 782 bytes when every slot changes and 62 when two do,
// instead of Codes' 1,048; the sim world changes 30 of 32 slots a step.
// Contents grow in chunks of at most contentChunk bytes and are never
// copied to grow (but once for each bit a new largest code needs).
//
// Rows are appended in order and never change. CodesTo and RowTo read any
// row, walking back at most 63 rows per block. A CodeRows is not safe for
// concurrent appends; once appending stops, readers may share it.
type CodeRows struct {
	width, blocks, per int
	bits               int // bits per packed code
	bb                 int // bytes per packed block
	n                  int // rows

	mask  []uint64 // row t -> its blocks that differ from row t-1's (row 0: all)
	start []uint32 // row t -> the index of its first changed block's content
	keys  []uint32 // (row t/keyEvery, block) -> its content index at row t/keyEvery*keyEvery
	cur   []uint32 // block -> its content index in the last row
	pool  [][]byte // contents, bb bytes each, in chunks of perChunk
	count int      // contents in pool

	perChunk int
	scratch  []uint8 // one block's codes, for Append's comparison
}

const (
	// contentChunk is the largest chunk of contents, in bytes.
	contentChunk = 64 << 10
	// keyEvery is the distance between snapshots of the blocks' contents.
	keyEvery = 64
)

// NewCodeRows returns an empty CodeRows for rows of width codes of slots
// slots (both positive; see CodeRows for the slots it uses as blocks).
func NewCodeRows(width, slots int) *CodeRows {
	if width <= 0 || slots <= 0 {
		panic(fmt.Sprintf("trajectory: NewCodeRows(%d, %d): want positive sizes", width, slots))
	}
	blocks := slots
	if width%slots != 0 || slots > 64 {
		blocks = 1
	}
	r := &CodeRows{width: width, blocks: blocks, per: width / blocks, cur: make([]uint32, blocks)}
	r.setBits(1)
	return r
}

// setBits sets the packing to b bits a code (contents are repacked by the
// caller).
func (r *CodeRows) setBits(b int) {
	r.bits, r.bb = b, (r.per*b+7)/8
	r.perChunk = max(1, contentChunk/r.bb)
}

// Len is the number of rows.
func (r *CodeRows) Len() int { return r.n }

// Width is the number of codes per row.
func (r *CodeRows) Width() int { return r.width }

// Append adds z (Width codes) as the next row; z is copied.
func (r *CodeRows) Append(z []uint8) {
	if len(z) != r.width {
		panic(fmt.Sprintf("trajectory: CodeRows.Append: %d codes, want %d", len(z), r.width))
	}
	var top uint8
	for _, c := range z {
		top |= c
	}
	if need := bits.Len8(top); need > r.bits {
		r.repack(need)
	}
	var mask uint64
	for b := range r.blocks {
		c := z[b*r.per : (b+1)*r.per]
		if r.n > 0 {
			r.scratch = r.unpack(r.scratch, r.cur[b])
			if string(r.scratch) == string(c) {
				continue
			}
		}
		mask |= 1 << b
		r.cur[b] = r.add(c)
	}
	r.mask = append(r.mask, mask)
	r.start = append(r.start, uint32(r.count-bits.OnesCount64(mask)))
	if r.n%keyEvery == 0 {
		r.keys = append(r.keys, r.cur...)
	}
	r.n++
}

// add packs c as the next content and returns its index.
func (r *CodeRows) add(c []uint8) uint32 {
	k := r.count / r.perChunk
	if k == len(r.pool) {
		// The first chunk grows from small: a short episode stays small.
		n := r.bb * r.perChunk
		if k == 0 {
			n = r.bb * min(r.perChunk, 16)
		}
		r.pool = append(r.pool, make([]byte, 0, n))
	}
	ch := &r.pool[k]
	var acc uint64
	nb := 0
	for _, v := range c {
		acc |= uint64(v) << nb
		nb += r.bits
		for nb >= 8 {
			*ch = append(*ch, byte(acc))
			acc >>= 8
			nb -= 8
		}
	}
	if nb > 0 {
		*ch = append(*ch, byte(acc))
	}
	r.count++
	return uint32(r.count - 1)
}

// unpack writes content i's codes into dst (grown to a block) and returns
// it.
func (r *CodeRows) unpack(dst []uint8, i uint32) []uint8 {
	if cap(dst) < r.per {
		dst = make([]uint8, r.per)
	}
	dst = dst[:r.per]
	r.unpackTo(dst, i, 0)
	return dst
}

// unpackTo writes codes from, from+1, ... of content i into every entry of
// dst.
func (r *CodeRows) unpackTo(dst []uint8, i uint32, from int) {
	off := int(i) % r.perChunk * r.bb
	src := r.pool[int(i)/r.perChunk][off : off+r.bb]
	bit := from * r.bits
	p, skip := bit/8, bit%8
	var acc uint64
	nb := 0
	m := uint64(1)<<r.bits - 1
	for k := range dst {
		for nb < r.bits+skip {
			acc |= uint64(src[p]) << nb
			p++
			nb += 8
		}
		acc >>= skip
		nb -= skip
		skip = 0
		dst[k] = uint8(acc & m)
		acc >>= r.bits
		nb -= r.bits
	}
}

// repack stores every content again at b bits a code.
func (r *CodeRows) repack(b int) {
	old := *r
	r.pool, r.count = nil, 0
	r.setBits(b)
	var buf []uint8
	for i := range old.count {
		buf = old.unpack(buf, uint32(i))
		r.add(buf)
	}
}

// content is the index of block b's content in row t.
func (r *CodeRows) content(t, b int) uint32 {
	if t < 0 || t >= r.n || b < 0 || b >= r.blocks {
		panic(fmt.Sprintf("trajectory: CodeRows: block %d of row %d, of %d x %d", b, t, r.n, r.blocks))
	}
	key := t / keyEvery * keyEvery
	for ; t > key; t-- {
		if m := r.mask[t]; m&(1<<b) != 0 {
			return r.start[t] + uint32(bits.OnesCount64(m&(1<<b-1)))
		}
	}
	return r.keys[t/keyEvery*r.blocks+b]
}

// CodesTo writes codes lo..hi-1 of row t into dst, grown when shorter, and
// returns it.
func (r *CodeRows) CodesTo(dst []uint8, t, lo, hi int) []uint8 {
	if lo < 0 || hi > r.width || lo > hi {
		panic(fmt.Sprintf("trajectory: CodeRows.CodesTo: codes %d..%d of %d", lo, hi, r.width))
	}
	if cap(dst) < hi-lo {
		dst = make([]uint8, hi-lo)
	}
	dst = dst[:hi-lo]
	for j := lo; j < hi; {
		b := j / r.per
		end := min(hi, (b+1)*r.per)
		r.unpackTo(dst[j-lo:end-lo], r.content(t, b), j-b*r.per)
		j = end
	}
	return dst
}

// RowTo writes row t into dst, grown to Width codes when it is shorter, and
// returns it.
func (r *CodeRows) RowTo(dst []uint8, t int) []uint8 { return r.CodesTo(dst, t, 0, r.width) }
