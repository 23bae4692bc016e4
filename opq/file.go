package opq

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"strings"

	"github.com/memowm/memowm/internal/atomicfile"
	"github.com/memowm/memowm/internal/fileread"
	"github.com/memowm/memowm/trajectory"
)

// The file format, version 1, little-endian throughout:
//
//	magic    [8]byte  "\x89OPQ\r\n\x1a\n"
//	header   fileHeader (96 bytes; its last 16 bytes, once reserved and
//	         zero, hold the held-out measure: zero when none was taken)
//	mean     [Slots*Dim]float32
//	std      [Slots*Dim]float32
//	rotation [Dim*Dim]float32, row-major, y = x R
//	books    [Books*Codewords*SubDim]float32
//	crc      uint32, CRC-32C (Castagnoli) of every byte before it
//
// Derived tables (1/std, R^T, transposed books, codeword norms) are not
// stored; Read recomputes them.
//
// Limits: the header's geometry must pass Config.Validate (at most 2^20
// values per state, 256 codewords) and Dim is at most 8,192, so a file is at
// most fileSize(1<<20 values, 8192, 256) bytes (about 1.4 GB). Before it
// allocates anything for the arrays, Read checks that the size the header
// implies fits the bytes it can know are there (a bytes.Reader's Len, an
// io.LimitedReader's N, the file's size for Load); and it grows every array
// as its data arrives, so memory follows the bytes actually read.
const (
	// Version is the file format version that WriteTo writes.
	Version = 1
	// Magic starts every quantizer file.
	Magic = "\x89OPQ\r\n\x1a\n"
)

// ErrFormat is wrapped by every error about data that is not a valid
// quantizer file.
var ErrFormat = errors.New("not a valid quantizer file")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type fileHeader struct {
	Version                         uint32
	Slots, Dim, Codes, Codewords    uint32
	Flags                           uint32 // bit 0: shared codebooks
	Rotation                        uint32
	Rounds, Iterations, RoundIters  uint32
	MaxPointsPerCentroid, RotStates uint32
	Seed, TrainStates               uint64
	StdFloor, Distortion            float64
	HeldOutStates                   uint64 // 0: no held-out measure (files before it: reserved, zero)
	HeldOutR2                       float64
}

const headerSize = 96

const flagShared = 1

// maxRotationDim bounds Dim in files, so that a damaged header cannot ask for
// an absurd rotation matrix.
const maxRotationDim = 8192

// WriteTo writes q in the file format. The bytes depend only on q.
func (q *Quantizer) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w, h: crc32.New(castagnoli)}
	bw := bufio.NewWriter(cw)
	h := fileHeader{
		Version: Version,
		Slots:   uint32(q.shape.Slots), Dim: uint32(q.shape.Dim), Codes: uint32(q.shape.Codes),
		Codewords: uint32(q.codewords), Rotation: uint32(q.info.Rotation),
		Rounds: uint32(q.info.Rounds), Iterations: uint32(q.info.Iterations), RoundIters: uint32(q.info.RoundIterations),
		MaxPointsPerCentroid: uint32(q.info.MaxPointsPerCentroid), RotStates: uint32(q.info.RotationStates),
		Seed: q.info.Seed, TrainStates: uint64(q.info.TrainStates),
		StdFloor: q.info.StdFloor, Distortion: q.info.Distortion,
		HeldOutStates: uint64(q.info.HeldOutStates), HeldOutR2: q.info.HeldOutR2,
	}
	if q.shared {
		h.Flags |= flagShared
	}
	bw.WriteString(Magic)
	binary.Write(bw, binary.LittleEndian, &h)
	for _, a := range [][]float32{q.mean, q.std, q.rot, q.books} {
		writeFloats(bw, a)
	}
	if err := bw.Flush(); err != nil {
		return cw.n, fmt.Errorf("opq: %w", err)
	}
	var crc [4]byte
	binary.LittleEndian.PutUint32(crc[:], cw.h.Sum32())
	if _, err := cw.Write(crc[:]); err != nil {
		return cw.n, fmt.Errorf("opq: %w", err)
	}
	return cw.n, nil
}

func writeFloats(w *bufio.Writer, a []float32) {
	var b [4]byte
	for _, v := range a {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		w.Write(b[:])
	}
}

// countWriter counts and checksums what passes through it.
type countWriter struct {
	w io.Writer
	h hash.Hash32
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	return n, err
}

// Read reads one quantizer in the file format from r, consuming exactly its
// bytes. Damaged or foreign data gives an error wrapping ErrFormat (a short
// read also wraps io.ErrUnexpectedEOF), never a panic; memory grows with the
// bytes actually read, not with sizes claimed by the header.
func Read(r io.Reader) (*Quantizer, error) {
	q, err := read(r, fileread.Available(r))
	if err != nil {
		return nil, fmt.Errorf("opq: %w", err)
	}
	return q, nil
}

// fileSize is the size in bytes of a file of q's geometry.
func (q *Quantizer) fileSize() int64 {
	n := int64(q.shape.StateLen())
	d := int64(q.shape.Dim)
	books := int64(q.Books()) * int64(q.codewords) * int64(q.subDim)
	return int64(len(Magic)) + headerSize + 4*(2*n+d*d+books) + 4
}

// read is Read without the package prefix on errors; avail is the number of
// bytes r can still give (-1: unknown).
func read(r io.Reader, avail int64) (*Quantizer, error) {
	crc := crc32.New(castagnoli)
	tr := io.TeeReader(r, crc)
	var magic [len(Magic)]byte
	if _, err := io.ReadFull(tr, magic[:]); err != nil {
		return nil, formatErr("reading the magic: %w", short(err))
	}
	if string(magic[:]) != Magic {
		return nil, formatErr("wrong magic %q", magic[:])
	}
	var h fileHeader
	if err := binary.Read(tr, binary.LittleEndian, &h); err != nil {
		return nil, formatErr("reading the header: %w", short(err))
	}
	if h.Version != Version {
		return nil, formatErr("format version %d (this build reads version %d)", h.Version, Version)
	}
	q, err := headerQuantizer(&h)
	if err != nil {
		return nil, err
	}
	if size := q.fileSize(); avail >= 0 && size > avail {
		return nil, formatErr("the header describes a %d-byte file (%v, %d codewords), only %d bytes are there: %w",
			size, q.shape, q.codewords, avail, io.ErrUnexpectedEOF)
	}
	n := q.shape.StateLen()
	for _, a := range []struct {
		name string
		dst  *[]float32
		n    int
	}{
		{"mean", &q.mean, n}, {"std", &q.std, n},
		{"rotation", &q.rot, q.shape.Dim * q.shape.Dim},
		{"codebooks", &q.books, q.Books() * q.codewords * q.subDim},
	} {
		if *a.dst, err = readFloats(tr, a.n); err != nil {
			return nil, formatErr("reading the %s: %w", a.name, err)
		}
	}
	want := crc.Sum32()
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return nil, formatErr("reading the checksum: %w", short(err))
	}
	if got := binary.LittleEndian.Uint32(b[:]); got != want {
		return nil, formatErr("checksum mismatch (stored %08x, computed %08x): the file is damaged", got, want)
	}
	for i, s := range q.std {
		if !(s > 0) {
			return nil, formatErr("std %g of slot %d channel %d is not positive", s, i/q.shape.Dim, i%q.shape.Dim)
		}
	}
	q.derive()
	return q, nil
}

// headerQuantizer checks h and returns a Quantizer of its geometry with its
// derived tables allocated; the stored arrays are left for read to fill.
func headerQuantizer(h *fileHeader) (*Quantizer, error) {
	shape := trajectory.Shape{Slots: int(h.Slots), Dim: int(h.Dim), Codes: int(h.Codes)}
	cfg := DefaultConfig()
	cfg.Shape, cfg.Codewords, cfg.Shared = shape, int(h.Codewords), h.Flags&flagShared != 0
	cfg.Rotation = Rotation(h.Rotation)
	if uint32(cfg.Rotation) != h.Rotation {
		return nil, formatErr("bad header: unknown rotation %d", h.Rotation)
	}
	if err := cfg.Validate(); err != nil {
		return nil, formatErr("bad header: %w", err)
	}
	if shape.Dim > maxRotationDim || h.Flags&^flagShared != 0 {
		return nil, formatErr("bad header: dim %d or flags %#x out of range", shape.Dim, h.Flags)
	}
	if r2 := h.HeldOutR2; h.HeldOutStates > 1<<40 || !(r2 <= 1) || math.IsInf(r2, 0) || (h.HeldOutStates == 0 && r2 != 0) {
		return nil, formatErr("bad header: held-out R^2 %g over %d states", r2, h.HeldOutStates)
	}
	q := &Quantizer{shape: shape, subspaces: shape.Codes / shape.Slots, codewords: cfg.Codewords, shared: cfg.Shared}
	q.subDim = shape.Dim / q.subspaces
	q.info = Info{
		Rotation: cfg.Rotation, Rounds: int(h.Rounds), Iterations: int(h.Iterations), RoundIterations: int(h.RoundIters),
		MaxPointsPerCentroid: int(h.MaxPointsPerCentroid), RotationStates: int(h.RotStates),
		StdFloor: h.StdFloor, Seed: h.Seed, TrainStates: int(h.TrainStates), Distortion: h.Distortion,
		HeldOutStates: int(h.HeldOutStates), HeldOutR2: h.HeldOutR2,
	}
	return q, nil
}

// readFloats reads want values from r, growing its result as data arrives,
// and checks that every value is finite.
func readFloats(r io.Reader, want int) ([]float32, error) {
	var a []float32
	var buf [4096]byte
	for len(a) < want {
		n := min(len(buf)/4, want-len(a))
		if _, err := io.ReadFull(r, buf[:4*n]); err != nil {
			return nil, short(err)
		}
		for i := 0; i < n; i++ {
			v := math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
			if v-v != 0 {
				return nil, fmt.Errorf("value %d is %g, not finite", len(a), v)
			}
			a = append(a, v)
		}
	}
	return a, nil
}

func short(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: %w", ErrFormat, fmt.Errorf(format, args...))
}

// Save writes q to path through a temporary file in the same directory,
// synced and then renamed, so path never holds a partial file.
func (q *Quantizer) Save(path string) error {
	err := atomicfile.Write(path, func(w io.Writer) error {
		_, err := q.WriteTo(w)
		return err
	})
	if err != nil && !strings.HasPrefix(err.Error(), "opq: ") {
		err = fmt.Errorf("opq: %w", err)
	}
	return err
}

// Load reads the quantizer file at path. Bytes after the checksum are an
// error.
func Load(path string) (*Quantizer, error) {
	q, err := fileread.Load(path, read)
	var oe *fileread.OpenError
	switch {
	case errors.As(err, &oe):
		return nil, fmt.Errorf("opq: %w", oe.Err)
	case errors.Is(err, fileread.ErrTrailing):
		return nil, fmt.Errorf("opq: %s: %w", path, formatErr("data after the checksum"))
	case err != nil:
		return nil, fmt.Errorf("opq: %s: %w", path, err)
	}
	return q, nil
}

// IsFile reports whether the file at path starts with the quantizer magic.
func IsFile(path string) bool { return fileread.HasMagic(path, Magic) }
