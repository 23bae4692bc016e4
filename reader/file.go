package reader

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"strings"

	"github.com/memowm/memowm/internal/atomicfile"
	"github.com/memowm/memowm/internal/fileread"
	"github.com/memowm/memowm/screen"
)

// The probe file format, version 1, little-endian throughout:
//
//	magic   [8]byte "\x89RDR\r\n\x1a\n"
//	header  fileHeader (64 bytes): version, kind (1 = probe), the Arch
//	params  [n]float32, the tensors in layout order:
//	        mean (S,D), invstd (S,D), Wp (D,K), Qk (NQ,K), Qs (NQ,S), Qh (NQ,H),
//	        W1 (K,H), b1 (H), Ce (NC,H), cb (NC)
//	crc     uint32, CRC-32C (Castagnoli) of every byte before it
const (
	// Version is the probe file format version that WriteTo writes.
	Version = 1
	// Magic starts every probe file.
	Magic = "\x89RDR\r\n\x1a\n"
)

const (
	kindProbe = 1
	kindText  = 2
)

// textHeader is the header of a text reader (kind 2): its TextArch. Its
// weights follow as [1<<WeightBits]float32, then the CRC.
type textHeader struct {
	Version, Kind                     uint32
	Width, Height, Top, Bottom, Group uint32
	WeightBits                        uint32
	_                                 [32]byte // reserved, zero
}

// Builtin is a reader memowm keeps in a model bundle and in its own file:
// the probe (Probe) or the text reader (TextReader).
type Builtin interface {
	Predictor
	// NumParams is the number of stored parameters.
	NumParams() int
	// WriteTo writes the reader in the file format; the bytes depend only
	// on the reader.
	WriteTo(w io.Writer) (int64, error)
	// Save writes the reader to path atomically.
	Save(path string) error
}

// WriteTo writes r in the file format (kind 2). The bytes depend only on r.
func (r *TextReader) WriteTo(w io.Writer) (int64, error) {
	l := r.arch.Layout
	h := textHeader{Version: Version, Kind: kindText, Width: uint32(l.Width), Height: uint32(l.Height),
		Top: uint32(l.Top), Bottom: uint32(l.Bottom), Group: uint32(l.PerGroup), WeightBits: uint32(r.arch.WeightBits)}
	return writeFile(w, "text reader", &h, r.w)
}

// Save writes r to path through a temporary file, renamed into place.
func (r *TextReader) Save(path string) error { return save(path, r) }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type fileHeader struct {
	Version, Kind                  uint32
	Slots, Dim, Proj, Hidden       uint32
	QuestionBuckets, ChoiceBuckets uint32
	_                              [32]byte // reserved, zero
}

// WriteTo writes p in the file format. The bytes depend only on p.
func (p *Probe) WriteTo(w io.Writer) (int64, error) {
	a := p.arch
	h := fileHeader{Version: Version, Kind: kindProbe, Slots: uint32(a.Slots), Dim: uint32(a.Dim),
		Proj: uint32(a.Proj), Hidden: uint32(a.Hidden),
		QuestionBuckets: uint32(a.QuestionBuckets), ChoiceBuckets: uint32(a.ChoiceBuckets)}
	return writeFile(w, "probe", &h, p.w)
}

// writeFile writes a reader file: the magic, header (a fixed-size struct of
// 64 bytes), the parameters as little-endian float32 and the CRC-32C of all
// before it; what names the reader in errors.
func writeFile(w io.Writer, what string, header any, params []float32) (int64, error) {
	cw := &countWriter{w: w, h: crc32.New(castagnoli)}
	bw := bufio.NewWriter(cw)
	bw.WriteString(Magic)
	binary.Write(bw, binary.LittleEndian, header)
	var buf [4]byte
	for _, v := range params {
		binary.LittleEndian.PutUint32(buf[:], math.Float32bits(v))
		bw.Write(buf[:])
	}
	if err := bw.Flush(); err != nil {
		return cw.n, fmt.Errorf("reader: writing %s: %w", what, err)
	}
	binary.LittleEndian.PutUint32(buf[:], cw.h.Sum32())
	if _, err := cw.Write(buf[:]); err != nil {
		return cw.n, fmt.Errorf("reader: writing %s: %w", what, err)
	}
	return cw.n, nil
}

// save writes r's file to path through a temporary file in the same
// directory, synced and then renamed, so path never holds a partial file.
func save(path string, r io.WriterTo) error {
	err := atomicfile.Write(path, func(w io.Writer) error {
		_, err := r.WriteTo(w)
		return err
	})
	if err != nil && !strings.HasPrefix(err.Error(), "reader: ") {
		err = fmt.Errorf("reader: %w", err)
	}
	return err
}

type countWriter struct {
	w io.Writer
	h hash.Hash32
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.h.Write(b[:n])
	return n, err
}

// crcReader hashes what it reads.
type crcReader struct {
	r io.Reader
	h hash.Hash32
}

func (c *crcReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.h.Write(b[:n])
	return n, err
}

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFormat}, args...)...)
}

// short turns an end of input inside the structure into
// io.ErrUnexpectedEOF, wrapped with ErrFormat.
func short(what string, err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w: %s: %w", ErrFormat, what, err)
}

// readChunk bounds how much Read allocates ahead of the bytes it has read.
const readChunk = 1 << 16

// Read reads one reader in the file format from r (a probe or a text
// reader), consuming exactly its bytes (r is not read past the checksum), so
// a reader can be embedded in a larger file. Damaged or foreign data gives an
// error wrapping ErrFormat (a short read also wraps io.ErrUnexpectedEOF),
// never a panic; memory grows with the bytes actually read, not with sizes
// claimed by the header.
func Read(r io.Reader) (Builtin, error) {
	cr := &crcReader{r: r, h: crc32.New(castagnoli)}
	var magic [len(Magic)]byte
	if _, err := io.ReadFull(cr, magic[:]); err != nil {
		return nil, short("magic", err)
	}
	if string(magic[:]) != Magic {
		return nil, formatErr("bad magic %q", magic[:])
	}
	var raw [64]byte
	if _, err := io.ReadFull(cr, raw[:]); err != nil {
		return nil, short("header", err)
	}
	if v := binary.LittleEndian.Uint32(raw[:4]); v != Version {
		return nil, formatErr("version %d, this build reads version %d", v, Version)
	}
	for i, c := range raw[32:] { // both headers end in 32 reserved bytes
		if c != 0 {
			return nil, formatErr("reserved header byte %d is %d, want 0", 32+i, c)
		}
	}
	var n int
	var finish func(w []float32) Builtin
	switch kind := binary.LittleEndian.Uint32(raw[4:8]); kind {
	case kindProbe:
		var h fileHeader
		binary.Read(bytes.NewReader(raw[:]), binary.LittleEndian, &h)
		a := Arch{Slots: int(h.Slots), Dim: int(h.Dim), Proj: int(h.Proj), Hidden: int(h.Hidden),
			QuestionBuckets: int(h.QuestionBuckets), ChoiceBuckets: int(h.ChoiceBuckets)}
		if err := a.validate(); err != nil {
			return nil, fmt.Errorf("%w: header: %w", ErrFormat, err)
		}
		n = a.numParams()
		finish = func(w []float32) Builtin {
			p := &Probe{arch: a, lay: a.layout(), w: w}
			p.setName()
			return p
		}
	case kindText:
		var h textHeader
		binary.Read(bytes.NewReader(raw[:]), binary.LittleEndian, &h)
		a := TextArch{Layout: screen.CellLayout{Width: int(min(h.Width, 1<<20)), Height: int(min(h.Height, 1<<20)),
			Top: int(min(h.Top, 1<<20)), Bottom: int(min(h.Bottom, 1<<20)), PerGroup: int(min(h.Group, 1<<20))},
			WeightBits: int(min(h.WeightBits, 64))}
		if err := a.validate(); err != nil {
			return nil, fmt.Errorf("%w: header: %w", ErrFormat, err)
		}
		n = 1 << a.WeightBits
		finish = func(w []float32) Builtin {
			t := &TextReader{arch: a, w: w}
			t.setName()
			return t
		}
	default:
		return nil, formatErr("reader kind %d, want %d (probe) or %d (text)", kind, kindProbe, kindText)
	}
	w := make([]float32, 0, min(n, readChunk))
	buf := make([]byte, 4*readChunk)
	for len(w) < n {
		m := min(n-len(w), readChunk)
		if _, err := io.ReadFull(cr, buf[:4*m]); err != nil {
			return nil, short("parameters", err)
		}
		for i := 0; i < m; i++ {
			v := math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, formatErr("parameter %d is %v", len(w)+i, v)
			}
			w = append(w, v)
		}
	}
	want := cr.h.Sum32()
	var tail [4]byte
	if _, err := io.ReadFull(r, tail[:]); err != nil {
		return nil, short("checksum", err)
	}
	if got := binary.LittleEndian.Uint32(tail[:]); got != want {
		return nil, formatErr("checksum %08x, computed %08x", got, want)
	}
	return finish(w), nil
}

// Load reads the reader file at path (a probe or a text reader). Bytes
// after the checksum are an error.
func Load(path string) (Builtin, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reader: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	p, err := Read(br)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%s: %w: bytes after the checksum", path, ErrFormat)
	}
	return p, nil
}

// Save writes p to path through a temporary file in the same directory,
// synced and then renamed, so path never holds a partial file.
func (p *Probe) Save(path string) error { return save(path, p) }

// IsFile reports whether the file at path starts with the reader magic.
func IsFile(path string) bool { return fileread.HasMagic(path, Magic) }
