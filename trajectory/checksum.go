package trajectory

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"math"
)

// Episode checksums. The writer stores one CRC-32C per episode, computed over
// the episode's content as the reader assembles it (not over file bytes), so
// the same sums serve Arrow IPC and Parquet and cover damage anywhere, the
// metadata included: a misread column, a dropped row or a dropped episode all
// change the sums. The schema carries metaChecksum = checksumKind to say the
// sums must be there; the sums themselves follow the data (an Arrow file's
// last record batch, with no rows; a Parquet file's key-value metadata),
// under metaEpisodeSums, as hex, 8 digits per episode in file order.

const (
	metaChecksum    = "memowm.checksum"
	metaEpisodeSums = "memowm.episode_crc32c"
	checksumKind    = "crc32c-episode"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// episodeSum is the CRC-32C of ep's content under m: the shape, the id, then
// per observation its values and fact (present or not), then per action its
// fields (coordinates only when present) and payload.
func episodeSum(m Meta, ep *Episode) uint32 {
	var b []byte
	b = append(b, byte(m.Content))
	for _, v := range []int{m.Shape.Slots, m.Shape.Dim, m.Shape.Codes, ep.Len()} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(ep.ID))
	sum := crc32.Update(0, castagnoli, b)
	for t := 0; t < ep.Len(); t++ {
		b = b[:0]
		if m.Content == States {
			for _, v := range ep.States[t] {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
			}
		} else {
			b = append(b, ep.Codes[t]...)
		}
		if ep.Facts != nil && t < len(ep.Facts) && ep.Facts[t] != nil {
			b = binary.LittleEndian.AppendUint32(b, uint32(len(ep.Facts[t])))
			b = append(b, ep.Facts[t]...)
		} else {
			b = binary.LittleEndian.AppendUint32(b, math.MaxUint32)
		}
		sum = crc32.Update(sum, castagnoli, b)
	}
	for _, a := range ep.Actions {
		b = append(b[:0], byte(a.Type))
		f32 := func(ok bool, vs ...float32) {
			if !ok {
				b = append(b, 0)
				return
			}
			b = append(b, 1)
			for _, v := range vs {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
			}
		}
		f32(a.HasPos, a.X, a.Y)
		f32(a.HasDelta, a.DX, a.DY)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(a.Payload)))
		b = append(b, a.Payload...)
		sum = crc32.Update(sum, castagnoli, b)
	}
	return sum
}

func encodeSums(sums []uint32) string {
	b := make([]byte, 0, 4*len(sums))
	for _, s := range sums {
		b = binary.BigEndian.AppendUint32(b, s)
	}
	return hex.EncodeToString(b)
}

func decodeSums(s string) ([]uint32, error) {
	if len(s)%8 != 0 {
		return nil, fmt.Errorf("episode checksums: %d hex digits is not 8 per episode", len(s))
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("episode checksums: %w", err)
	}
	sums := make([]uint32, len(b)/4)
	for i := range sums {
		sums[i] = binary.BigEndian.Uint32(b[4*i:])
	}
	return sums, nil
}
