package trajectory

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// NumPy .npy export (format version 1.0): a magic string, a little-endian
// uint16 header length, a Python dict literal padded with spaces to a multiple
// of 64 bytes and ending in '\n', then the data in C order.
//
// The observation count is not known until the end of a stream, so the writer
// reserves a fixed npyHeaderSize-byte header and rewrites it on close; the
// padding makes every header the same length.

const (
	npyMagic      = "\x93NUMPY"
	npyHeaderSize = 128
)

// NPYHeader is the part of a .npy header that memowm writes and reads.
type NPYHeader struct {
	Descr        string // '<f4', '|u1', '<i8'
	FortranOrder bool
	Shape        []int
}

func (h NPYHeader) encode() ([]byte, error) {
	dims := make([]string, len(h.Shape))
	for i, d := range h.Shape {
		dims[i] = strconv.Itoa(d)
	}
	shape := strings.Join(dims, ", ")
	if len(h.Shape) == 1 {
		shape += ","
	}
	order := "False"
	if h.FortranOrder {
		order = "True"
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }", h.Descr, order, shape)
	pad := npyHeaderSize - len(npyMagic) - 4 - len(dict) - 1
	if pad < 0 {
		return nil, fmt.Errorf("trajectory: npy header %q is too long", dict)
	}
	out := make([]byte, 0, npyHeaderSize)
	out = append(out, npyMagic...)
	out = append(out, 1, 0)
	out = binary.LittleEndian.AppendUint16(out, uint16(npyHeaderSize-len(npyMagic)-4))
	out = append(out, dict...)
	out = append(out, strings.Repeat(" ", pad)...)
	return append(out, '\n'), nil
}

var (
	npyDescr   = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	npyFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape'\s*:\s*\(([0-9,\s]*)\)`)
)

// ReadNPYHeader reads a .npy header (format 1.0, 2.0 or 3.0) from r, leaving r
// at the first data byte.
func ReadNPYHeader(r io.Reader) (NPYHeader, error) {
	h, _, err := readNPYHeader(r)
	if err != nil {
		return h, notEOF(fmt.Errorf("trajectory: %w", err))
	}
	return h, nil
}

// maxNPYHeader bounds a version 2.0 or 3.0 header (numpy's own limit is
// 10,000 bytes for untrusted files).
const maxNPYHeader = 1 << 20

// readNPYHeader is ReadNPYHeader that also returns the header's length, the
// offset of the first data byte.
func readNPYHeader(r io.Reader) (NPYHeader, int64, error) {
	var h NPYHeader
	pre := make([]byte, 8)
	if _, err := io.ReadFull(r, pre); err != nil {
		return h, 0, fmt.Errorf("%w: npy header: %w", ErrFormat, unexpected(err))
	}
	if string(pre[:6]) != npyMagic {
		return h, 0, fmt.Errorf("%w: not a .npy file (bad magic)", ErrFormat)
	}
	var n, off int
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return h, 0, fmt.Errorf("%w: npy header: %w", ErrFormat, unexpected(err))
		}
		n, off = int(binary.LittleEndian.Uint16(b[:])), 10
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return h, 0, fmt.Errorf("%w: npy header: %w", ErrFormat, unexpected(err))
		}
		n, off = int(binary.LittleEndian.Uint32(b[:])), 12
		if n > maxNPYHeader {
			return h, 0, fmt.Errorf("%w: %w: npy header of %d bytes (at most %d)", ErrFormat, ErrLimit, n, maxNPYHeader)
		}
	default:
		return h, 0, fmt.Errorf("%w: npy format version %d.%d", ErrFormat, pre[6], pre[7])
	}
	dict := make([]byte, n)
	if _, err := io.ReadFull(r, dict); err != nil {
		return h, 0, fmt.Errorf("%w: npy header: %w", ErrFormat, unexpected(err))
	}
	d, f, s := npyDescr.FindSubmatch(dict), npyFortran.FindSubmatch(dict), npyShape.FindSubmatch(dict)
	if d == nil || f == nil || s == nil {
		return h, 0, fmt.Errorf("%w: npy header %q lacks descr, fortran_order or shape", ErrFormat, dict)
	}
	h.Descr, h.FortranOrder = string(d[1]), string(f[1]) == "True"
	for _, part := range strings.Split(string(s[1]), ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		v, err := strconv.Atoi(part)
		if err != nil || len(h.Shape) >= 32 {
			return h, 0, fmt.Errorf("%w: npy shape %q", ErrFormat, s[1])
		}
		h.Shape = append(h.Shape, v)
	}
	return h, int64(off + n), nil
}

// npyItemSize is the byte size of one element of the descr memowm writes.
func npyItemSize(descr string) (int64, bool) {
	switch descr {
	case "<f4":
		return 4, true
	case "|u1", "<u1":
		return 1, true
	case "<i8", "<f8":
		return 8, true
	}
	return 0, false
}

// checkNPYSize checks that the header's shape accounts for exactly the
// dataBytes that follow it (the product of the shape, times the item size,
// computed without overflow). Errors lack the package prefix.
func checkNPYSize(h NPYHeader, dataBytes int64) error {
	item, ok := npyItemSize(h.Descr)
	if !ok {
		return fmt.Errorf("%w: npy dtype %q is not one memowm writes", ErrFormat, h.Descr)
	}
	n := item
	for _, d := range h.Shape {
		if d < 0 || d > 0 && n > dataBytes/int64(d) {
			return fmt.Errorf("%w: npy shape %v of %s holds more than the file's %d data bytes", ErrFormat, h.Shape, h.Descr, dataBytes)
		}
		n *= int64(d)
	}
	if n != dataBytes {
		return fmt.Errorf("%w: npy shape %v of %s is %d bytes, the file holds %d", ErrFormat, h.Shape, h.Descr, n, dataBytes)
	}
	return nil
}

// npyStream writes one .npy array whose first dimension grows as rows come.
type npyStream struct {
	f     *tempFile
	buf   *bufio.Writer
	h     NPYHeader
	rows  int
	bytes []byte
}

func newNPYStream(f *tempFile, descr string, rowShape ...int) (*npyStream, error) {
	s := &npyStream{f: f, buf: bufio.NewWriterSize(f, 1<<20), h: NPYHeader{Descr: descr, Shape: append([]int{0}, rowShape...)}}
	hdr, err := s.h.encode()
	if err != nil {
		return nil, err
	}
	if _, err := s.buf.Write(hdr); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *npyStream) finish() error {
	if err := s.buf.Flush(); err != nil {
		return err
	}
	s.h.Shape[0] = s.rows
	hdr, err := s.h.encode()
	if err != nil {
		return err
	}
	_, err = s.f.WriteAt(hdr, 0)
	return err
}

// npySink exports observations to a .npy file, shape (N, Slots, Dim) float32
// or (N, Codes) uint8, and their (episode, step) pairs to IndexPath, (N, 2) int64.
type npySink struct {
	meta          Meta
	obs, idx, act *npyStream
	scratch       []byte
}

func newNPYSink(f *tempFile, m Meta) (*npySink, error) {
	s := &npySink{meta: m}
	var err error
	if m.Content == States {
		s.obs, err = newNPYStream(f, "<f4", m.Shape.Slots, m.Shape.Dim)
	} else {
		s.obs, err = newNPYStream(f, "|u1", m.Shape.Codes)
	}
	if err != nil {
		return nil, err
	}
	itmp, err := createTemp(IndexPath(f.final))
	if err != nil {
		return nil, err
	}
	if s.idx, err = newNPYStream(itmp, "<i8", 2); err != nil {
		itmp.abort()
		return nil, err
	}
	// The actions go beside, one float64 row each (ActionColumns).
	atmp, err := createTemp(ActionsPath(f.final))
	if err != nil {
		s.idx.f.abort()
		return nil, err
	}
	if s.act, err = newNPYStream(atmp, "<f8", ActionColumns); err != nil {
		atmp.abort()
		s.idx.f.abort()
		return nil, err
	}
	return s, nil
}

// actionRow writes the action that leads to step t of episode id.
func (s *npySink) actionRow(id int64, t int, a *Action) error {
	row := make([]float64, ActionColumns)
	row[0], row[1], row[2] = float64(id), float64(t), float64(a.Type)
	if a.HasPos {
		row[3], row[4], row[5] = 1, float64(a.X), float64(a.Y)
	}
	if a.HasDelta {
		row[6], row[7], row[8] = 1, float64(a.DX), float64(a.DY)
	}
	row[9] = float64(len(a.Payload))
	for i, c := range a.Payload {
		row[10+i] = float64(c)
	}
	b := s.scratch[:0]
	for _, v := range row {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	s.scratch = b
	if _, err := s.act.buf.Write(b); err != nil {
		return err
	}
	s.act.rows++
	return nil
}

func (s *npySink) writeEpisode(ep *Episode, row rowFn) error {
	for t := 0; t < ep.Len(); t++ {
		state, codes, err := row(t)
		if err != nil {
			return err
		}
		if s.meta.Content == States {
			s.scratch = s.scratch[:0]
			for _, v := range state {
				s.scratch = binary.LittleEndian.AppendUint32(s.scratch, math.Float32bits(v))
			}
			if _, err := s.obs.buf.Write(s.scratch); err != nil {
				return err
			}
		} else if _, err := s.obs.buf.Write(codes); err != nil {
			return err
		}
		s.obs.rows++
		var pair [16]byte
		binary.LittleEndian.PutUint64(pair[:8], uint64(ep.ID))
		binary.LittleEndian.PutUint64(pair[8:], uint64(t))
		if _, err := s.idx.buf.Write(pair[:]); err != nil {
			return err
		}
		s.idx.rows++
		if t > 0 {
			if err := s.actionRow(ep.ID, t, &ep.Actions[t-1]); err != nil {
				return err
			}
		}
	}
	return nil
}

// close finishes both arrays and commits the index; the Writer commits the
// observations file.
func (s *npySink) close([]uint32) error {
	if s.idx == nil {
		return nil
	}
	idx, act := s.idx, s.act
	s.idx, s.act = nil, nil
	fail := func(err error) error {
		idx.f.abort()
		act.f.abort()
		return err
	}
	if err := s.obs.finish(); err != nil {
		return fail(err)
	}
	if err := idx.finish(); err != nil {
		return fail(err)
	}
	if err := act.finish(); err != nil {
		return fail(err)
	}
	if err := idx.f.commit(); err != nil {
		act.f.abort()
		return err
	}
	return act.f.commit()
}

func (s *npySink) abort() {
	if s.idx != nil {
		s.idx.f.abort()
		s.act.f.abort()
		s.idx, s.act = nil, nil
	}
}
