package model

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/memowm/memowm/worldmodel"
)

// int8Bundle is testBundle converted to the int8 profile, calibrated on
// histories of constant codes.
func int8Bundle(t *testing.T) *Bundle {
	t.Helper()
	b := testBundle(t, 1)
	cfg := b.Model.Config()
	var hs []worldmodel.History
	for n := 1; n <= 4; n++ {
		var h worldmodel.History
		for k := 0; k < n; k++ {
			codes := make([]uint8, cfg.Coords())
			for j := range codes {
				codes[j] = uint8((j + k) % cfg.Codewords)
			}
			h = append(h, worldmodel.Step{Codes: codes})
		}
		hs = append(hs, h)
	}
	b8, err := b.ToInt8(hs, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b8.ToInt8(hs, 2); err == nil || !strings.Contains(err.Error(), "in the int8 profile already") {
		t.Fatalf("converting an int8 bundle: %v", err)
	}
	return b8
}

// TestInt8Bundle: an int8 bundle is format version 2, reads back to the
// same bytes with its network, gives the int8 backend, and a damaged int8
// part is refused; the f32 bundle it came from stays version 1.
func TestInt8Bundle(t *testing.T) {
	b := int8Bundle(t)
	data, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint32(data[len(Magic):]); v != VersionInt8 || b.FormatVersion() != VersionInt8 {
		t.Fatalf("version %d, want %d", v, VersionInt8)
	}
	r, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.Bytes()
	if err != nil || !bytes.Equal(again, data) || r.Hash() != b.Hash() {
		t.Fatalf("the int8 bundle does not read back to its bytes: %v", err)
	}
	p, err := r.Predictor()
	if err != nil || p.Profile() != worldmodel.ProfileInt8 {
		t.Fatalf("predictor: %v %v", p, err)
	}
	f32 := testBundle(t, 1)
	fd, err := f32.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if v := binary.LittleEndian.Uint32(fd[len(Magic):]); v != Version {
		t.Fatalf("an f32 bundle is version %d", v)
	}
	// The int8 part ends just before the CRC: damage there (with the CRC
	// fixed up) is found by the part's own checksum.
	d := bytes.Clone(data)
	d[len(d)-40] ^= 4
	if _, err := Read(bytes.NewReader(d)); err == nil {
		t.Fatal("a flipped bit in the int8 part was read")
	}
	// A version-2 header on a bundle without the part.
	d = bytes.Clone(fd)
	binary.LittleEndian.PutUint32(d[len(Magic):], VersionInt8)
	if _, err := Read(bytes.NewReader(d)); err == nil {
		t.Fatal("version 2 without an int8 part was read")
	}
	// The profile says int8 without the network, or f32 with one.
	nb := *b
	nb.Int8 = nil
	if _, err := nb.Bytes(); err == nil || !strings.Contains(err.Error(), "has no int8 network") {
		t.Fatalf("int8 without a network: %v", err)
	}
	nb = *b
	nb.Profile = worldmodel.ProfileF32
	if _, err := nb.Bytes(); err == nil || !strings.Contains(err.Error(), "carries an int8 network") {
		t.Fatalf("f32 with a network: %v", err)
	}
}
