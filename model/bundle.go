package model

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/memowm/memowm/internal/atomicfile"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/reader"
	"github.com/memowm/memowm/worldmodel"
)

// Magic starts every bundle file; Version is the format this build writes.
const (
	Magic   = "\x89MWB\r\n\x1a\n"
	Version = 1
)

// ErrFormat is wrapped by every error about data that is not a valid bundle.
var ErrFormat = errors.New("not a valid model bundle")

// maxHeader bounds the JSON header.
const maxHeader = 1 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Bundle is everything a writer and its decoder share.
type Bundle struct {
	OPQ       *opq.Quantizer
	Model     *worldmodel.Model
	Profile   string // inference profile: worldmodel.ProfileF32
	Precision uint   // log2 of every frequency table's total
	Policy    Policy
	// Reader is the frozen reader that defines answer loss (nil until the
	// reader stage ran). It calibrates the policy; decoders never need it.
	Reader *reader.Probe

	hash [32]byte // SHA-256 of the file bytes; set by Bytes, Read, Save, Load
}

// fileHeader is the bundle's JSON header; its field names are part of the
// format.
type fileHeader struct {
	Profile   string `json:"profile"`
	Precision uint   `json:"precision"`
	Policy    Policy `json:"policy"`
	Preset    string `json:"preset,omitempty"` // informational
}

// Check reports whether the parts of b fit together.
func (b *Bundle) Check() error {
	if b.OPQ == nil || b.Model == nil {
		return fmt.Errorf("model: a bundle needs a quantizer and a world model")
	}
	cfg := b.Model.Config()
	s := b.OPQ.Shape()
	if b.Reader != nil {
		if slots, dim := b.Reader.Shape(); slots != s.Slots || dim != s.Dim {
			return fmt.Errorf("model: the reader reads %dx%d states, the quantizer makes %v", slots, dim, s)
		}
	}
	if s.Slots != cfg.Slots || b.OPQ.Subspaces() != cfg.Subspaces || b.OPQ.Codewords() != cfg.Codewords {
		return fmt.Errorf("model: the quantizer (%d slots x %d subspaces, %d codewords) does not fit the world model (%d x %d, %d)",
			s.Slots, b.OPQ.Subspaces(), b.OPQ.Codewords(), cfg.Slots, cfg.Subspaces, cfg.Codewords)
	}
	if b.Profile != worldmodel.ProfileF32 {
		return fmt.Errorf("model: unknown inference profile %q (this build runs %q)", b.Profile, worldmodel.ProfileF32)
	}
	if cfg.Profile != "" && cfg.Profile != b.Profile {
		return fmt.Errorf("model: the weights are for profile %q, the bundle says %q", cfg.Profile, b.Profile)
	}
	if b.Precision < 8 || b.Precision > 28 {
		return fmt.Errorf("model: precision %d is outside [8, 28]", b.Precision)
	}
	if err := b.Policy.Validate(); err != nil {
		return err
	}
	return b.Policy.CheckCoords(cfg.Coords())
}

// WriteTo writes b in the bundle format and sets its hash.
func (b *Bundle) WriteTo(w io.Writer) (int64, error) {
	data, err := b.Bytes()
	if err != nil {
		return 0, err
	}
	n, err := w.Write(data)
	if err != nil {
		return int64(n), fmt.Errorf("model: %w", err)
	}
	return int64(n), nil
}

// Bytes returns b's file bytes and sets its hash.
func (b *Bundle) Bytes() ([]byte, error) {
	if err := b.Check(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString(Magic)
	binary.Write(&buf, binary.LittleEndian, uint32(Version))
	hdr, err := json.Marshal(fileHeader{Profile: b.Profile, Precision: b.Precision, Policy: b.Policy, Preset: b.Model.Config().Preset})
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	binary.Write(&buf, binary.LittleEndian, uint32(len(hdr)))
	buf.Write(hdr)
	parts := []io.WriterTo{b.OPQ, b.Model}
	if b.Reader != nil {
		parts = append(parts, b.Reader)
	}
	for _, part := range parts {
		var p bytes.Buffer
		if _, err := part.WriteTo(&p); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
		binary.Write(&buf, binary.LittleEndian, uint64(p.Len()))
		buf.Write(p.Bytes())
	}
	if b.Reader == nil {
		binary.Write(&buf, binary.LittleEndian, uint64(0))
	}
	binary.Write(&buf, binary.LittleEndian, crc32.Checksum(buf.Bytes(), castagnoli))
	b.hash = sha256.Sum256(buf.Bytes())
	return buf.Bytes(), nil
}

// Hash is the SHA-256 of the bundle's file bytes, its identity. It is zero
// until the bundle was read or written.
func (b *Bundle) Hash() [32]byte { return b.hash }

// HashString is Hash in hex.
func (b *Bundle) HashString() string { return hex.EncodeToString(b.hash[:]) }

// Read reads a bundle from r, consuming exactly its bytes.
func Read(r io.Reader) (*Bundle, error) {
	crc := crc32.New(castagnoli)
	sha := sha256.New()
	tr := io.TeeReader(r, io.MultiWriter(crc, sha))
	var head [len(Magic) + 8]byte
	if _, err := io.ReadFull(tr, head[:]); err != nil {
		return nil, formatErr("reading the magic: %w", short(err))
	}
	if string(head[:len(Magic)]) != Magic {
		return nil, formatErr("wrong magic %q", head[:len(Magic)])
	}
	if v := binary.LittleEndian.Uint32(head[len(Magic):]); v != Version {
		return nil, formatErr("bundle format version %d (this build reads version %d)", v, Version)
	}
	hlen := binary.LittleEndian.Uint32(head[len(Magic)+4:])
	if hlen > maxHeader {
		return nil, formatErr("header of %d bytes is too long", hlen)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(tr, hdr); err != nil {
		return nil, formatErr("reading the header: %w", short(err))
	}
	var h fileHeader
	dec := json.NewDecoder(bytes.NewReader(hdr))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, formatErr("header: %w", err)
	}
	b := &Bundle{Profile: h.Profile, Precision: h.Precision, Policy: h.Policy}
	var err error
	if b.OPQ, err = readPart(tr, "quantizer", opq.Read); err != nil {
		return nil, err
	}
	if b.Model, err = readPart(tr, "world model", worldmodel.Read); err != nil {
		return nil, err
	}
	if b.Reader, err = readPart(tr, "reader", readReader); err != nil {
		return nil, err
	}
	want := crc.Sum32()
	var c [4]byte
	if _, err := io.ReadFull(r, c[:]); err != nil {
		return nil, formatErr("reading the checksum: %w", short(err))
	}
	sha.Write(c[:])
	if got := binary.LittleEndian.Uint32(c[:]); got != want {
		return nil, formatErr("checksum mismatch (stored %08x, computed %08x): the file is damaged", got, want)
	}
	if err := b.Check(); err != nil {
		return nil, formatErr("%w", err)
	}
	copy(b.hash[:], sha.Sum(nil))
	return b, nil
}

// readReader reads the optional reader part: nothing for an empty part.
func readReader(r io.Reader) (*reader.Probe, error) {
	if lr, ok := r.(*io.LimitedReader); ok && lr.N == 0 {
		return nil, nil
	}
	return reader.Read(r)
}

// readPart reads a length-prefixed part with read, which must consume
// exactly the length.
func readPart[T any](r io.Reader, name string, read func(io.Reader) (T, error)) (T, error) {
	var zero T
	var l [8]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return zero, formatErr("reading the %s's length: %w", name, short(err))
	}
	n := binary.LittleEndian.Uint64(l[:])
	lr := &io.LimitedReader{R: r, N: int64(min(n, 1<<40))}
	v, err := read(lr)
	if err != nil {
		return zero, formatErr("the %s: %w", name, err)
	}
	if lr.N != 0 {
		return zero, formatErr("the %s is %d bytes shorter than its length says", name, lr.N)
	}
	return v, nil
}

func short(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

func formatErr(format string, args ...any) error {
	return fmt.Errorf("model: %w: %w", ErrFormat, fmt.Errorf(format, args...))
}

// Save writes b to path through a temporary file that is synced and renamed.
func (b *Bundle) Save(path string) error {
	data, err := b.Bytes()
	if err != nil {
		return err
	}
	err = atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("model: %w", err)
	}
	return nil
}

// Load reads the bundle at path; bytes after its end are an error.
func Load(path string) (*Bundle, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	b, err := Read(br)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("%s: %w", path, formatErr("data after the checksum"))
	}
	return b, nil
}

// IsFile reports whether the file at path starts with the bundle magic.
func IsFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var m [len(Magic)]byte
	_, err = io.ReadFull(f, m[:])
	return err == nil && string(m[:]) == Magic
}
