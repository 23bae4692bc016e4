package reader

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/memowm/memowm/internal/fuzzdamage"
)

func probeBytes(t testing.TB, p Builtin) []byte {
	var b bytes.Buffer
	n, err := p.WriteTo(&b)
	if err != nil || n != int64(b.Len()) {
		t.Fatalf("WriteTo: %d bytes, %v (buffer %d)", n, err, b.Len())
	}
	return b.Bytes()
}

// saveLoad saves r under name in a temporary directory, checks that the
// file is a reader file that loads to want's bytes, and returns its path and
// what Load gave.
func saveLoad(t *testing.T, r Builtin, want []byte, name string) (string, Builtin) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	if !IsFile(path) {
		t.Fatalf("IsFile is false for a saved %T", r)
	}
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(probeBytes(t, l), want) {
		t.Fatalf("Save/Load of a %T gave a %T that is not byte-identical", r, l)
	}
	return path, l
}

func TestFileRoundTrip(t *testing.T) {
	p := randomProbe(toyArch(), 11)
	b := probeBytes(t, p)
	// Read consumes exactly the probe's bytes.
	r := bytes.NewReader(append(append([]byte(nil), b...), "tail"...))
	qb, err := Read(r)
	if err != nil {
		t.Fatal(err)
	}
	q := qb.(*Probe)
	if rest, _ := io.ReadAll(r); string(rest) != "tail" {
		t.Fatalf("Read left %q, want %q", rest, "tail")
	}
	if !bytes.Equal(probeBytes(t, q), b) {
		t.Fatal("write, read, write is not byte-identical")
	}
	if q.Name() != p.Name() || q.Arch() != p.Arch() {
		t.Fatalf("read probe %s %+v, wrote %s %+v", q.Name(), q.Arch(), p.Name(), p.Arch())
	}
	states, qs := toyData(20, 12)
	a, bb := mustBits(p, states, qs), mustBits(q, states, qs)
	for i := range a {
		if a[i] != bb[i] {
			t.Fatalf("question %d: %v before saving, %v after", i, a[i], bb[i])
		}
	}
	// Save and Load.
	path, _ := saveLoad(t, p, b, "p.rdr")
	if err := os.WriteFile(path, append(b, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); !errors.Is(err, ErrFormat) {
		t.Fatalf("trailing byte: %v, want ErrFormat", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("Load of a missing file succeeded")
	}
	// Different parameters, different names.
	if randomProbe(toyArch(), 12).Name() == p.Name() {
		t.Fatal("two probes share a name")
	}
}

// fixCRC recomputes the trailer of a damaged file so the damage is judged
// by the checks behind the checksum.
func fixCRC(b []byte) []byte {
	b = append([]byte(nil), b...)
	fuzzdamage.Reseal(b)
	return b
}

func TestFileDamage(t *testing.T) {
	b := probeBytes(t, randomProbe(toyArch(), 13))
	hdr := len(Magic)
	set32 := func(off int, v uint32) []byte {
		c := append([]byte(nil), b...)
		binary.LittleEndian.PutUint32(c[off:], v)
		return fixCRC(c)
	}
	flip := append([]byte(nil), b...)
	flip[len(flip)/2] ^= 0x10
	cases := map[string][]byte{
		"empty":          nil,
		"magic":          append([]byte("NOTAPROB"), b[8:]...),
		"version":        set32(hdr, 2),
		"kind":           set32(hdr+4, 9),
		"zero slots":     set32(hdr+8, 0),
		"huge dim":       set32(hdr+12, 1<<30),
		"huge buckets":   set32(hdr+28, 1<<30),
		"flipped bit":    flip,
		"nan parameter":  set32(hdr+64+8, math.Float32bits(float32(math.NaN()))),
		"inf parameter":  set32(hdr+64+12, math.Float32bits(float32(math.Inf(1)))),
		"truncated tail": b[:len(b)-1],
		"truncated body": b[:len(b)/3],
		"header only":    b[:hdr+10],
	}
	for name, c := range cases {
		_, err := Read(bytes.NewReader(c))
		if !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
	}
	for _, n := range []int{len(b) - 1, len(b) / 3, hdr + 10} {
		if _, err := Read(bytes.NewReader(b[:n])); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("cut at %d: %v, want io.ErrUnexpectedEOF", n, err)
		}
	}
}

func FuzzRead(f *testing.F) {
	b := probeBytes(f, randomProbe(Arch{Slots: 2, Dim: 3, Proj: 2, Hidden: 2, QuestionBuckets: 3, ChoiceBuckets: 4}, 1))
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add(fixCRC(append(append([]byte(nil), b[:len(b)-4]...), 0, 0, 0, 0)))
	tb := smallTextReaderBytes(f)
	f.Add(tb)
	f.Add(tb[:len(tb)/2])
	f.Add(fixCRC(append(append(append([]byte(nil), tb[:len(Magic)+24]...), 2, 0, 0, 0), tb[len(Magic)+28:]...)))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Read(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		out := probeBytes(t, p)
		if !bytes.Equal(out, data[:len(out)]) {
			t.Fatal("a probe read from data does not write back as data")
		}
	})
}
