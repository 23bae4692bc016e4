package fuzzdamage

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
)

func TestDamage(t *testing.T) {
	file := []byte("0123456789abcdef")
	if d := Damage(file, nil, 0, false); !bytes.Equal(d, file) || &d[0] == &file[0] {
		t.Fatalf("no damage: %q (must be an equal copy)", d)
	}
	// Offset 17 wraps to 1; the trailing pair of bytes is not a triple.
	d := Damage(file, []byte{17, 0, 0x01, 3, 0, 0xff, 9}, 0, false)
	want := bytes.Clone(file)
	want[1] ^= 0x01
	want[3] ^= 0xff
	if !bytes.Equal(d, want) || file[1] != '1' {
		t.Fatalf("edits: %q, want %q (file %q)", d, want, file)
	}
	if d := Damage(file, nil, 20, false); !bytes.Equal(d, file[:4]) {
		t.Fatalf("cut 20 of 16: %q", d)
	}
	d = Damage(file, []byte{0, 0, 0x20}, 0, true)
	if crc := binary.LittleEndian.Uint32(d[12:]); crc != crc32.Checksum(d[:12], crc32.MakeTable(crc32.Castagnoli)) || d[0] != '0'^0x20 {
		t.Fatalf("reseal: %q", d)
	}
	if d := Damage(file, nil, 3, true); !bytes.Equal(d, file[:3]) {
		t.Fatalf("reseal of fewer than 4 bytes: %q", d)
	}
}
