package worldmodel

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"strings"

	"github.com/memowm/memowm/internal/atomicfile"
	"github.com/memowm/memowm/internal/fileread"
)

// The weights file, version 1, all integers little-endian:
//
//	magic    8 bytes  "MEMOWMWM"
//	version  uint32   1
//	cfgLen   uint32   length of the configuration JSON, at most 65,536
//	config   cfgLen bytes of JSON (Config)
//	count    uint64   number of parameters; must equal Config.NumParams()
//	data     count float32, the tensors in layout order (Params.Tensors)
//	crc      uint32   CRC-32C (Castagnoli) of every byte before it
//
// Read consumes exactly these bytes, so a bundle can embed the file in a
// larger stream.
//
// Limits: the configuration must pass Config.Validate (at most 2^28
// parameters, 1 GiB). Before it allocates, Read checks every length against
// the bytes it can know are there (a bytes.Reader's Len, an
// io.LimitedReader's N, the file's size for Load), and it grows the
// parameters as their data arrives, so memory follows the bytes actually
// read.

const (
	weightsMagic   = "MEMOWMWM"
	weightsVersion = 1
	maxConfigJSON  = 1 << 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteTo writes the model as a weights file to w and returns the number of
// bytes written.
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	cfg, err := json.Marshal(&m.cfg)
	if err != nil {
		return 0, fmt.Errorf("worldmodel: encoding config: %w", err)
	}
	crc := crc32.New(castagnoli)
	cw := &countWriter{w: io.MultiWriter(w, crc)}
	bw := bufio.NewWriterSize(cw, 1<<16)
	var hdr [20]byte
	copy(hdr[:8], weightsMagic)
	binary.LittleEndian.PutUint32(hdr[8:], weightsVersion)
	binary.LittleEndian.PutUint32(hdr[12:], uint32(len(cfg)))
	bw.Write(hdr[:16])
	bw.Write(cfg)
	binary.LittleEndian.PutUint64(hdr[:8], uint64(len(m.p.Data)))
	bw.Write(hdr[:8])
	var buf [4096]byte
	for i := 0; i < len(m.p.Data); i += len(buf) / 4 {
		chunk := m.p.Data[i:min(i+len(buf)/4, len(m.p.Data))]
		for k, v := range chunk {
			binary.LittleEndian.PutUint32(buf[4*k:], math.Float32bits(v))
		}
		bw.Write(buf[:4*len(chunk)])
	}
	if err := bw.Flush(); err != nil {
		return cw.n, fmt.Errorf("worldmodel: writing weights: %w", err)
	}
	binary.LittleEndian.PutUint32(hdr[:4], crc.Sum32())
	n, err := w.Write(hdr[:4])
	if err != nil {
		return cw.n + int64(n), fmt.Errorf("worldmodel: writing weights: %w", err)
	}
	return cw.n + int64(n), nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// crcReader reads exactly what it is asked for and keeps a running CRC.
type crcReader struct {
	r   io.Reader
	crc hash.Hash32
	off int64
}

func (c *crcReader) full(p []byte, what string) error {
	n, err := io.ReadFull(c.r, p)
	c.crc.Write(p[:n])
	c.off += int64(n)
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fmt.Errorf("%w: truncated in the %s at byte %d: %w", ErrFormat, what, c.off, io.ErrUnexpectedEOF)
		}
		return fmt.Errorf("worldmodel: reading weights (%s): %w", what, err)
	}
	return nil
}

// Read reads a weights file from r, consuming exactly its bytes, and returns
// the model. Damaged input gives an error wrapping ErrFormat, ErrVersion,
// ErrChecksum, ErrConfig or ErrProfile (truncation also wraps
// io.ErrUnexpectedEOF), never a panic; memory use grows with the bytes
// actually read, not with sizes the header claims.
func Read(r io.Reader) (*Model, error) {
	return read(r, fileread.Available(r))
}

// read is Read of a stream that can give avail more bytes (-1: unknown).
func read(r io.Reader, avail int64) (*Model, error) {
	cr := &crcReader{r: r, crc: crc32.New(castagnoli)}
	fits := func(what string, size int64) error {
		if avail >= 0 && size > avail {
			return fmt.Errorf("%w: the %s make a %d-byte file, only %d bytes are there: %w", ErrFormat, what, size, avail, io.ErrUnexpectedEOF)
		}
		return nil
	}
	var hdr [16]byte
	if err := cr.full(hdr[:], "header"); err != nil {
		return nil, err
	}
	if string(hdr[:8]) != weightsMagic {
		return nil, fmt.Errorf("%w: bad magic %q", ErrFormat, hdr[:8])
	}
	if v := binary.LittleEndian.Uint32(hdr[8:]); v != weightsVersion {
		return nil, fmt.Errorf("%w: version %d (this build reads %d)", ErrVersion, v, weightsVersion)
	}
	n := binary.LittleEndian.Uint32(hdr[12:])
	if n > maxConfigJSON {
		return nil, fmt.Errorf("%w: config of %d bytes, more than %d", ErrFormat, n, maxConfigJSON)
	}
	if err := fits("config length", 16+int64(n)+8+4); err != nil {
		return nil, err
	}
	js := make([]byte, n)
	if err := cr.full(js, "config"); err != nil {
		return nil, err
	}
	var cfg Config
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return nil, fmt.Errorf("%w: config: %v", ErrFormat, err)
	}
	// One model, one encoding: the config must be exactly what WriteTo
	// writes (json field names match case-insensitively, and Decode stops
	// after the first value), so a file that reads writes back to its bytes.
	if again, err := json.Marshal(&cfg); err != nil || !bytes.Equal(again, js) {
		return nil, fmt.Errorf("%w: the config is not in its canonical encoding", ErrFormat)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	var cnt [8]byte
	if err := cr.full(cnt[:], "parameter count"); err != nil {
		return nil, err
	}
	want := cfg.NumParams()
	if got := binary.LittleEndian.Uint64(cnt[:]); got != uint64(want) {
		return nil, fmt.Errorf("%w: %d parameters, the config has %d", ErrFormat, got, want)
	}
	if err := fits("config's parameters", 16+int64(n)+8+4*int64(want)+4); err != nil {
		return nil, err
	}
	data := make([]float32, 0, min(want, 1<<16))
	buf := make([]byte, min(1<<16, 4*want))
	for len(data) < want {
		k := min(want-len(data), len(buf)/4)
		if err := cr.full(buf[:4*k], "tensors"); err != nil {
			return nil, err
		}
		for i := 0; i < k; i++ {
			v := math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
			if isNonFinite(v) {
				return nil, fmt.Errorf("%w: parameter %d is %g", ErrFormat, len(data)+i, v)
			}
			data = append(data, v)
		}
	}
	sum := cr.crc.Sum32()
	var tr [4]byte
	if err := cr.full(tr[:], "checksum"); err != nil {
		return nil, err
	}
	if got := binary.LittleEndian.Uint32(tr[:]); got != sum {
		return nil, fmt.Errorf("%w: stored %08x, computed %08x", ErrChecksum, got, sum)
	}
	p := newParams(&cfg)
	copy(p.Data, data)
	return &Model{cfg: cfg, p: p}, nil
}

// Save writes the model to path: a temporary file in the same directory,
// synced and renamed, so path is either the old file or the complete new one.
func (m *Model) Save(path string) error {
	err := atomicfile.Write(path, func(w io.Writer) error {
		_, err := m.WriteTo(w)
		return err
	})
	if err != nil && !strings.HasPrefix(err.Error(), "worldmodel: ") {
		err = fmt.Errorf("worldmodel: %w", err)
	}
	return err
}

// Load reads the weights file at path (see Read). Bytes after the file's end
// are an error (ErrFormat).
func Load(path string) (*Model, error) {
	m, err := fileread.Load(path, read)
	var oe *fileread.OpenError
	switch {
	case errors.As(err, &oe):
		return nil, fmt.Errorf("worldmodel: %w", oe.Err)
	case errors.Is(err, fileread.ErrTrailing):
		return nil, fmt.Errorf("%s: %w: data after the end of the weights", path, ErrFormat)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
