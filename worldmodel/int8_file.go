package worldmodel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
)

// The int8 network's file (a part of a model bundle):
//
//	magic   [8]byte "\x89MWQ\r\n\x1a\n"
//	version uint32 (1)
//	frac    uint32
//	per layer: LN1, QKV, Soft (uint32 M, uint8 Sh), PV, O, LN2, W1, GELU, W2
//	Final, then the head: Emb, Bias, Exp, Copy, CopyB, Gate
//	crc     uint32, CRC-32C of every byte before it
//
// little-endian throughout; a qLN is G (int64 x W), B (int32 x W), Eps and
// Lim (int64); a qLinear is W (int8, K x N), Bias (int32 x N) and its
// multipliers; multipliers are M (int64 each) then Sh (uint8 each). Every
// array's length follows from the model's configuration, so nothing in the
// file sizes an allocation.
const (
	int8Magic   = "\x89MWQ\r\n\x1a\n"
	int8Version = 1
)

var int8CRC = crc32.MakeTable(crc32.Castagnoli)

// WriteTo writes the integer network in the int8 file format.
func (q *Int8Model) WriteTo(w io.Writer) (int64, error) {
	var buf bytes.Buffer
	le := binary.LittleEndian
	put := func(v any) { binary.Write(&buf, le, v) }
	buf.WriteString(int8Magic)
	put(uint32(int8Version))
	put(uint32(q.Frac))
	mults := func(ms []mult) {
		for _, m := range ms {
			put(m.M)
		}
		for _, m := range ms {
			put(m.Sh)
		}
	}
	ln := func(l *qLN) { put(l.G); put(l.B); put(l.Eps); put(l.Lim) }
	lin := func(l *qLinear) { put(l.W); put(l.Bias); mults(l.Mult) }
	for i := range q.Layers {
		L := &q.Layers[i]
		ln(&L.LN1)
		lin(&L.QKV)
		put(L.Soft.M)
		put(L.Soft.Sh)
		mults([]mult{L.PV})
		lin(&L.O)
		ln(&L.LN2)
		lin(&L.W1)
		put(L.GELU)
		lin(&L.W2)
	}
	ln(&q.Final)
	put(q.Emb)
	put(q.Bias)
	mults(q.Exp)
	put(q.Copy)
	put(q.CopyB)
	mults(q.Gate)
	put(crc32.Checksum(buf.Bytes(), int8CRC))
	n, err := w.Write(buf.Bytes())
	if err != nil {
		return int64(n), fmt.Errorf("worldmodel: %w", err)
	}
	return int64(n), nil
}

// ReadInt8 reads an int8 network for m (whose configuration sizes every
// array) from r, which must hold exactly the file. Damaged data is an error
// wrapping ErrFormat (or ErrChecksum), never a panic, and every value the
// integer rules depend on is checked to be in range.
func ReadInt8(r io.Reader, m *Model) (*Int8Model, error) {
	c := &m.cfg
	if err := c.checkInt8(); err != nil {
		return nil, err
	}
	h := crc32.New(int8CRC)
	tr := io.TeeReader(r, h)
	le := binary.LittleEndian
	var err error
	get := func(v any) {
		if err == nil {
			if e := binary.Read(tr, le, v); e != nil {
				err = fmt.Errorf("%w: int8 network: %v", ErrFormat, e)
			}
		}
	}
	var magic [8]byte
	get(&magic)
	if err == nil && string(magic[:]) != int8Magic {
		return nil, fmt.Errorf("%w: not an int8 network (magic %q)", ErrFormat, magic[:])
	}
	var ver, frac uint32
	get(&ver)
	if err == nil && ver != int8Version {
		return nil, fmt.Errorf("%w: int8 network version %d (this build reads %d)", ErrFormat, ver, int8Version)
	}
	get(&frac)
	q := &Int8Model{m: m, Frac: uint8(min(frac, 255))}
	bad := func(format string, args ...any) {
		if err == nil {
			err = fmt.Errorf("%w: int8 network: %s", ErrFormat, fmt.Sprintf(format, args...))
		}
	}
	if frac > 30 {
		bad("residual fraction %d bits is more than 30", frac)
	}
	mults := func(n int) []mult {
		ms := make([]mult, n)
		Ms, sh := make([]int64, n), make([]uint8, n)
		get(Ms)
		get(sh)
		for i := range ms {
			if Ms[i] < 0 || Ms[i] >= 1<<31 || sh[i] > 62 {
				bad("multiplier %d/2^%d is out of range", Ms[i], sh[i])
			}
			ms[i] = mult{M: Ms[i], Sh: sh[i]}
		}
		return ms
	}
	ln := func(W int, lim int64) qLN {
		l := qLN{G: make([]int64, W), B: make([]int32, W)}
		get(l.G)
		get(l.B)
		get(&l.Eps)
		get(&l.Lim)
		if l.Eps < 1 || l.Eps > 1<<62 || l.Lim != lim {
			bad("LayerNorm epsilon %d or limit %d is out of range", l.Eps, l.Lim)
		}
		return l
	}
	lin := func(K, N int) qLinear {
		l := qLinear{K: K, N: N, W: make([]int8, K*N), Bias: make([]int32, N)}
		get(l.W)
		get(l.Bias)
		for _, b := range l.Bias {
			if b > 1<<29 || b < -(1<<29) {
				bad("bias %d is out of range", b)
				break
			}
		}
		l.Mult = mults(N)
		return l
	}
	W, M, J, C, E := c.Width(), c.MLP, c.Coords(), c.Codewords, c.CodeDim
	for i := 0; i < c.Layers && err == nil; i++ {
		var L qLayer
		L.LN1 = ln(W, 127)
		L.QKV = lin(W, 3*W)
		get(&L.Soft.M)
		get(&L.Soft.Sh)
		if L.Soft.M >= 1<<10 || L.Soft.Sh > 31 {
			bad("softmax multiplier %d/2^%d is out of range", L.Soft.M, L.Soft.Sh)
		}
		L.PV = mults(1)[0]
		L.O = lin(W, W)
		L.LN2 = ln(W, 127)
		L.W1 = lin(W, M)
		L.GELU = make([]int8, 2*geluHalf+1)
		get(L.GELU)
		L.W2 = lin(M, W)
		q.Layers = append(q.Layers, L)
	}
	q.Final = ln(W, 32767)
	q.Emb, q.Bias = make([]int16, J*C*E), make([]int64, J*C)
	get(q.Emb)
	get(q.Bias)
	q.Exp = mults(J)
	q.Copy, q.CopyB = make([]int16, J*E), make([]int64, J)
	get(q.Copy)
	get(q.CopyB)
	q.Gate = mults(J)
	if err != nil {
		return nil, err
	}
	sum := h.Sum32()
	var crc uint32
	if e := binary.Read(r, le, &crc); e != nil {
		return nil, fmt.Errorf("%w: int8 network: %v", ErrFormat, e)
	}
	if crc != sum {
		return nil, fmt.Errorf("%w: int8 network", ErrChecksum)
	}
	var extra [1]byte
	if n, _ := r.Read(extra[:]); n != 0 {
		return nil, fmt.Errorf("%w: int8 network: data after its checksum", ErrFormat)
	}
	return q, nil
}

func crc32Castagnoli(b []byte) uint32 { return crc32.Checksum(b, int8CRC) }
