package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/memowm/memowm/internal/fileread"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/reader"
	"github.com/memowm/memowm/worldmodel"
)

// Limits on what a bundle may claim: the JSON header is at most maxHeader
// bytes and each part at most maxPart (a quantizer file is at most about
// 1.4 GB, a weights file about 1 GiB).
const maxPart = 1 << 32

// tailLen is the bytes after a part's data: the later parts' lengths and
// the checksum.
func tailLen(partsAfter int) int64 { return 8*int64(partsAfter) + 4 }

// Read reads a bundle from r, consuming exactly its bytes. Damaged or
// foreign data is an error wrapping ErrFormat (a short read also wraps
// io.ErrUnexpectedEOF), never a panic. Every length in the file is checked
// against the limits above and, when r knows how many bytes it holds (a
// bytes.Reader, an io.LimitedReader), against them before anything is
// allocated; the parts' readers grow their arrays as data arrives.
func Read(r io.Reader) (*Bundle, error) {
	b, err := read(r, fileread.Available(r))
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return b, nil
}

// read is Read without the package prefix on errors; r can give avail more
// bytes (-1: unknown).
func read(r io.Reader, avail int64) (*Bundle, error) {
	crc := crc32.New(castagnoli)
	sha := sha256.New()
	tr := io.TeeReader(r, io.MultiWriter(crc, sha))
	// left is what the file can still hold, -1 when unknown.
	left := avail
	take := func(n int64) {
		if left >= 0 {
			left -= n
		}
	}
	var head [len(Magic) + 8]byte
	if _, err := io.ReadFull(tr, head[:]); err != nil {
		return nil, formatErr("reading the magic: %w", short(err))
	}
	take(int64(len(head)))
	if string(head[:len(Magic)]) != Magic {
		return nil, formatErr("wrong magic %q", head[:len(Magic)])
	}
	version := binary.LittleEndian.Uint32(head[len(Magic):])
	if version != Version && version != VersionInt8 {
		return nil, formatErr("bundle format version %d (this build reads versions %d and %d)", version, Version, VersionInt8)
	}
	// extra is the number of parts after the reader: version 2 has the
	// int8 network.
	extra := 0
	if version == VersionInt8 {
		extra = 1
	}
	hlen := int64(binary.LittleEndian.Uint32(head[len(Magic)+4:]))
	if hlen > maxHeader {
		return nil, formatErr("header of %d bytes is longer than %d", hlen, maxHeader)
	}
	if need := hlen + tailLen(3+extra); left >= 0 && need > left {
		return nil, formatErr("a header of %d bytes needs %d more bytes, only %d are there: %w", hlen, need, left, io.ErrUnexpectedEOF)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(tr, hdr); err != nil {
		return nil, formatErr("reading the header: %w", short(err))
	}
	take(hlen)
	h, err := parseHeader(hdr)
	if err != nil {
		return nil, err
	}
	b := &Bundle{Profile: h.Profile, Precision: h.Precision, Policy: h.Policy, Training: h.Training, Baselines: h.Baselines,
		legacySeconds: h.Training != nil && (h.Training.Seconds != 0 || h.Training.PriorSeconds != 0)}
	part := func(name string, after int, read func(io.Reader) error) error {
		var l [8]byte
		if _, err := io.ReadFull(tr, l[:]); err != nil {
			return formatErr("reading the %s's length: %w", name, short(err))
		}
		take(8)
		n := binary.LittleEndian.Uint64(l[:])
		if n > maxPart {
			return formatErr("the %s's length %d is more than %d", name, n, int64(maxPart))
		}
		if need := int64(n) + tailLen(after); left >= 0 && need > left {
			return formatErr("the %s's length %d needs %d more bytes, only %d are there: %w", name, n, need, left, io.ErrUnexpectedEOF)
		}
		lr := &io.LimitedReader{R: tr, N: int64(n)}
		if err := read(lr); err != nil {
			return formatErr("the %s: %w", name, err)
		}
		if lr.N != 0 {
			return formatErr("the %s is %d bytes shorter than its length says", name, lr.N)
		}
		take(int64(n))
		return nil
	}
	if err := part("quantizer", 2+extra, func(r io.Reader) (err error) { b.OPQ, err = opq.Read(r); return }); err != nil {
		return nil, err
	}
	if err := part("world model", 1+extra, func(r io.Reader) (err error) { b.Model, err = worldmodel.Read(r); return }); err != nil {
		return nil, err
	}
	if err := part("reader", extra, func(r io.Reader) (err error) { b.Reader, err = readReader(r.(*io.LimitedReader)); return }); err != nil {
		return nil, err
	}
	if extra == 1 {
		if err := part("int8 network", 0, func(r io.Reader) (err error) { b.Int8, err = worldmodel.ReadInt8(r, b.Model); return }); err != nil {
			return nil, err
		}
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
	if h.Preset != b.Model.Config().Preset {
		return nil, formatErr("the header names preset %q, the weights %q", h.Preset, b.Model.Config().Preset)
	}
	copy(b.hash[:], sha.Sum(nil))
	return b, nil
}

// parseHeader decodes the JSON header, which must be exactly what Bytes
// writes for it (no unknown fields, nothing after it, the canonical
// encoding), so a bundle that reads writes back to the same bytes.
func parseHeader(hdr []byte) (fileHeader, error) {
	var h fileHeader
	dec := json.NewDecoder(bytes.NewReader(hdr))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return h, formatErr("header: %w", err)
	}
	again, err := json.Marshal(h)
	if err != nil || !bytes.Equal(again, hdr) {
		return h, formatErr("the header is not in its canonical encoding (extra data, spacing or field order)")
	}
	return h, nil
}

// readReader reads the optional reader part: nothing for an empty part.
func readReader(lr *io.LimitedReader) (reader.Builtin, error) {
	if lr.N == 0 {
		return nil, nil
	}
	return reader.Read(lr)
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

// Load reads the bundle at path; bytes after its end are an error. Errors
// start with "model: " and the path. The training time and host come from
// the provenance sidecar beside it (ProvenancePath) when there is one for
// this bundle; a missing, foreign or damaged sidecar leaves them unrecorded.
func Load(path string) (*Bundle, error) {
	b, err := fileread.Load(path, read)
	var oe *fileread.OpenError
	switch {
	case errors.As(err, &oe):
		return nil, fmt.Errorf("model: %w", oe.Err)
	case errors.Is(err, fileread.ErrTrailing):
		return nil, fmt.Errorf("model: %s: %w", path, formatErr("data after the checksum"))
	case err != nil:
		return nil, fmt.Errorf("model: %s: %w", path, err)
	}
	b.loadProvenance(path)
	return b, nil
}

// IsFile reports whether the file at path starts with the bundle magic.
func IsFile(path string) bool { return fileread.HasMagic(path, Magic) }
