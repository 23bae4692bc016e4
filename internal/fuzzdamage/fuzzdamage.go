// Package fuzzdamage damages a file as a fuzzer's few input bytes say, for
// the fuzz tests of readers whose files end in a CRC-32C of the bytes before
// it (model bundles, world-model weights, checkpoints, safetensors). It is
// for tests only, and a leaf: the packages whose in-package tests use it
// cannot import internal/fixture, which imports them.
package fuzzdamage

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Damage returns a copy of file damaged as a fuzzer's input says: edits is a
// list of (offset uint16, xor byte) triples (offsets modulo the length), cut
// (when not zero) truncates to cut modulo the length, and reseal sets the
// last 4 bytes to the CRC-32C of those before them, so that the damage
// reaches the checks behind the checksum. file must not be empty.
func Damage(file, edits []byte, cut uint16, reseal bool) []byte {
	d := bytes.Clone(file)
	for i := 0; i+3 <= len(edits); i += 3 {
		d[int(binary.LittleEndian.Uint16(edits[i:]))%len(d)] ^= edits[i+2]
	}
	if cut != 0 {
		d = d[:int(cut)%len(d)]
	}
	if reseal {
		Reseal(d)
	}
	return d
}

// Reseal sets the last 4 bytes of d to the CRC-32C of those before them (a
// file edited on purpose passes its checksum again); it leaves fewer than 4
// bytes as they are.
func Reseal(d []byte) {
	if len(d) >= 4 {
		binary.LittleEndian.PutUint32(d[len(d)-4:], crc32.Checksum(d[:len(d)-4], castagnoli))
	}
}
