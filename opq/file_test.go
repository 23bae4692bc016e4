package opq

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memowm/memowm/internal/fuzzdamage"
)

func smallFile(t testing.TB) []byte {
	t.Helper()
	cfg := smallConfig()
	cfg.Codewords = 4
	cfg.Shape.Dim = 8
	return fileBytes(t, mustFit(t, synth(30, cfg.Shape, 1), cfg))
}

// reseal recomputes the checksum of a modified file.
func reseal(b []byte) []byte {
	b = bytes.Clone(b)
	fuzzdamage.Reseal(b)
	return b
}

func TestReadTruncated(t *testing.T) {
	b := smallFile(t)
	for n := 0; n < len(b); n++ {
		_, err := Read(bytes.NewReader(b[:n]))
		if !errors.Is(err, ErrFormat) || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.HasPrefix(err.Error(), "opq: ") {
			t.Fatalf("prefix of %d of %d bytes: %v", n, len(b), err)
		}
	}
}

func TestReadDamaged(t *testing.T) {
	b := smallFile(t)
	for i := range b {
		d := bytes.Clone(b)
		d[i] ^= 0x10
		if _, err := Read(bytes.NewReader(d)); !errors.Is(err, ErrFormat) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
	cases := []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"magic", func(b []byte) []byte { return append([]byte("PK\x03\x04xxxx"), b[8:]...) }, "wrong magic"},
		{"version", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], 2); return reseal(b) }, "format version 2 (this build reads version 1)"},
		{"codewords", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8+16:], 1); return reseal(b) }, "codewords 1 must be in 2..256"},
		{"flags", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8+20:], 6); return reseal(b) }, "flags 0x6"},
		{"nan", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[8+96:], math.Float32bits(float32(math.NaN())))
			return reseal(b)
		}, "reading the mean: value 0 is NaN, not finite"},
		{"std", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[8+96+4*32:], math.Float32bits(-1))
			return reseal(b)
		}, "std -1 of slot 0 channel 0 is not positive"},
		{"checksum", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }, "checksum mismatch"},
		{"huge", func(b []byte) []byte {
			// A header that claims a 8192-wide rotation, then ends.
			h := b[:8+96]
			binary.LittleEndian.PutUint32(h[8+4:], 1)     // slots
			binary.LittleEndian.PutUint32(h[8+8:], 8192)  // dim
			binary.LittleEndian.PutUint32(h[8+12:], 8192) // codes
			return h
		}, "the header describes a 268632172-byte file (1x8192 (8192 codes), 4 codewords), only 104 bytes are there"},
	}
	for _, c := range cases {
		_, err := Read(bytes.NewReader(c.edit(bytes.Clone(b))))
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// A stream of unknown length: the arrays grow as data arrives.
	huge := cases[len(cases)-1].edit(bytes.Clone(b))
	if _, err := Read(io.MultiReader(bytes.NewReader(huge))); !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "reading the mean: unexpected EOF") {
		t.Errorf("huge stream: %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	b := smallFile(t)
	trailing := filepath.Join(dir, "trailing.opq")
	os.WriteFile(trailing, append(bytes.Clone(b), 0), 0o644)
	if _, err := Load(trailing); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "data after the checksum") || !strings.HasPrefix(err.Error(), "opq: "+trailing) {
		t.Errorf("trailing byte: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.opq")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if IsFile(filepath.Join(dir, "missing.opq")) || IsFile(trailing+"x") {
		t.Error("IsFile of a missing file")
	}
	// Save into a missing directory fails and leaves nothing.
	q, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Save(filepath.Join(dir, "no", "such", "dir.opq")); err == nil {
		t.Error("Save into a missing directory succeeded")
	}
}

// Read consumes exactly one quantizer, so files can be embedded in a bundle.
func TestReadConsumesExactly(t *testing.T) {
	b := smallFile(t)
	r := bytes.NewReader(append(bytes.Clone(b), "tail"...))
	if _, err := Read(r); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r)
	if string(rest) != "tail" {
		t.Fatalf("Read left %q", rest)
	}
}

// nanoFile is the smallest quantizer file: 1 slot of 2 channels, one
// subspace of 2 codewords, 156 bytes.
func nanoFile(t testing.TB) []byte {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Shape.Slots, cfg.Shape.Dim, cfg.Shape.Codes = 1, 2, 1
	cfg.Codewords, cfg.Workers = 2, 1
	return fileBytes(t, mustFit(t, synth(4, cfg.Shape, 1), cfg))
}

// FuzzRead: Read never panics, every error wraps ErrFormat, a quantizer
// that reads writes back to its bytes and encodes and decodes. The seed is
// a 156-byte file, so the fuzzer's minimisation of new inputs (quadratic in
// their length) stays cheap.
func FuzzRead(f *testing.F) {
	f.Add(nanoFile(f))
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := Read(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		out := fileBytes(t, q)
		if !bytes.Equal(out, data[:len(out)]) {
			t.Fatal("a file that reads does not write back to the same bytes")
		}
		// Whatever was read encodes and decodes without panicking.
		codes := make([]uint8, q.Shape().Codes)
		rec := make([]float32, q.Shape().StateLen())
		enc := q.NewEncoderWorkers(1)
		if err := enc.DecodeBatch(rec, codes); err != nil {
			t.Fatal(err)
		}
		_ = enc.EncodeBatch(codes, rec)
	})
}

// FuzzReadResealed is FuzzRead with the checksum recomputed after the
// mutation, so mutations reach the header and array checks behind it. The
// input is a file without its last 4 bytes.
func FuzzReadResealed(f *testing.F) {
	b := nanoFile(f)
	f.Add(b[:len(b)-4])
	f.Fuzz(func(t *testing.T, data []byte) {
		d := binary.LittleEndian.AppendUint32(bytes.Clone(data), crc32.Checksum(data, castagnoli))
		q, err := Read(bytes.NewReader(d))
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		if out := fileBytes(t, q); !bytes.Equal(out, d) {
			t.Fatal("a file that reads does not write back to the same bytes")
		}
		codes := make([]uint8, q.Shape().Codes)
		rec := make([]float32, q.Shape().StateLen())
		enc := q.NewEncoderWorkers(1)
		if err := enc.DecodeBatch(rec, codes); err != nil {
			t.Fatal(err)
		}
		_ = enc.EncodeBatch(codes, rec)
	})
}

// TestDigest: a quantizer keeps its digest through a file; another one has
// another digest.
func TestDigest(t *testing.T) {
	cfg := smallConfig()
	cfg.Codewords, cfg.Shape.Dim = 4, 8
	q := mustFit(t, synth(30, cfg.Shape, 1), cfg)
	path := filepath.Join(t.TempDir(), "q.opq")
	if err := q.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := q.Digest(); len(d) != 64 || d != back.Digest() {
		t.Fatalf("digest %q, after a round trip %q", d, back.Digest())
	}
	if mustFit(t, synth(30, cfg.Shape, 2), cfg).Digest() == q.Digest() {
		t.Fatal("two quantizers share a digest")
	}
}
