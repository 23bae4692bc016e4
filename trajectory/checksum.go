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

// episodeSum is the CRC-32C of ep's content under m, in the order a Reader
// meets it (sumState): per observation its values, its fact (present or
// not) and the action that led to it; then the shape, the observation count
// and the id. Nothing needs the episode whole, so a Reader checks an episode
// it never holds in full (WithQuantize).
func episodeSum(m Meta, ep *Episode) uint32 {
	var s sumState
	var buf []uint8
	for t := 0; t < ep.Len(); t++ {
		var fact []byte
		if ep.Facts != nil && t < len(ep.Facts) {
			fact = ep.Facts[t]
		}
		var a *Action
		if t > 0 {
			a = &ep.Actions[t-1]
		}
		if m.Content == States {
			s.row(ep.States[t], nil, fact, a)
		} else {
			z := ep.CodesAt(buf, t)
			if ep.Compact != nil {
				buf = z
			}
			s.row(nil, z, fact, a)
		}
	}
	return s.final(m, ep.ID, ep.Len())
}

// sumState is an episode checksum in progress.
type sumState struct {
	crc uint32
	b   []byte
}

// row adds one observation: a state's values or codes, its fact (nil: none)
// and the action that led to it (nil at step 0).
func (s *sumState) row(state []float32, codes []uint8, fact []byte, a *Action) {
	b := s.b[:0]
	for _, v := range state {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	b = append(b, codes...)
	if fact != nil {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(fact)))
		b = append(b, fact...)
	} else {
		b = binary.LittleEndian.AppendUint32(b, math.MaxUint32)
	}
	if a != nil {
		b = append(b, byte(a.Type))
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
	}
	s.crc = crc32.Update(s.crc, castagnoli, b)
	s.b = b
}

// final returns the checksum of the episode id of n observations under m,
// and resets s.
func (s *sumState) final(m Meta, id int64, n int) uint32 {
	b := append(s.b[:0], byte(m.Content))
	for _, v := range []int{m.Shape.Slots, m.Shape.Dim, m.Shape.Codes, n} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(id))
	sum := crc32.Update(s.crc, castagnoli, b)
	*s = sumState{b: b[:0]}
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
