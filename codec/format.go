package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/opq"
)

// Format constants.
const (
	Magic    = "\x89MWM\r\n\x1a\n"
	EndMagic = "MWMEND\r\n"
	Version  = 1
)

// Errors. Each is wrapped with the file and, where it applies, the episode.
var (
	// ErrFormat: the data is not a valid memory file, or is damaged.
	ErrFormat = errors.New("not a valid memory file (damaged, or written by something else)")
	// ErrBundle: the memory file was written with another model bundle.
	ErrBundle = errors.New("written with another model bundle")
	// ErrDesync: an episode decoded to codes whose checksum differs from the
	// writer's: the file is damaged or the decoder computes differently.
	ErrDesync = errors.New("reconstructed codes do not match the writer's checksum (the file is damaged, or was written by something else)")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	headerLen = 8 + 4 + 32 + 16 + 4*4 + 4 + 8 + 4 // magic, version, bundle, profile, geometry, policy kind and parameter, crc
	footerLen = 8 + 8 + 8
	indexRow  = 8 + 8 + 8 + 4 + 8 + 8 + 8
	// sectionHead is id, observations, payload length.
	sectionHead = 8 + 4 + 4
	// sectionTail is the codes CRC and the section CRC.
	sectionTail = 4 + 4
)

// Header is a memory file's header.
type Header struct {
	Bundle    [32]byte // SHA-256 of the model bundle
	Profile   string   // inference profile, at most 16 bytes
	Precision uint     // table precision
	Slots     int
	Subspaces int
	Codewords int
	Policy    model.Policy // the retention policy the writer used
	// SlotRepeat: every predicted state starts with one repeat flag per
	// slot (see repeatCoder). Stored as bit 16 of the policy kind field.
	SlotRepeat bool
	// Mix: every predicted state is coded under the mixing prior (see
	// mix.go): the world model mixed with adaptive counts and long-range
	// copy, per slot repeat decisions first. Stored as
	// bit 17 of the policy kind field; files without it read as before.
	Mix bool
}

// flagSlotRepeat is Header.SlotRepeat's bit in the stored policy kind.
const flagSlotRepeat = 1 << 16

// flagMix is Header.Mix's bit in the stored policy kind.
const flagMix = 1 << 17

// checkCoding reports a header whose coding options cannot go together.
func (h *Header) checkCoding() error {
	if h.Mix && h.SlotRepeat {
		return fmt.Errorf("codec: the mixing prior has its own slot repeat decisions; choose one")
	}
	return nil
}

// checkPrior reports a risk policy that omits coordinates but was
// calibrated on the other prior than the one the file is coded under: its
// error lookup g(H) would read entropies of another distribution.
func checkPrior(p model.Policy, mix bool) error {
	if p.Kind != model.Risk || p.Lossless() || p.CalibratedOnMix() == mix {
		return nil
	}
	if mix {
		return fmt.Errorf("codec: the risk policy was calibrated on the world model's tables, not the mixing prior's distribution")
	}
	return fmt.Errorf("codec: the risk policy was calibrated on the mixing prior's distribution, not the world model's tables")
}

// packedInitial is the byte length of z_0 packed at the start of a
// section's payload: none in a mixed file, whose stream holds z_0.
func (h *Header) packedInitial() int {
	if h.Mix {
		return 0
	}
	return packedLen(h.Coords(), h.codeBits())
}

// Coords is the number of coordinates per state.
func (h *Header) Coords() int { return h.Slots * h.Subspaces }

// codeBits is ceil(log2 Codewords).
func (h *Header) codeBits() int { return opq.CodeBits(h.Codewords) }

// policyCode is how the header stores a policy: a kind and one parameter.
// A risk policy's tables live in the bundle; the header keeps its lambda.
func policyCode(p model.Policy) (uint32, uint64) {
	switch p.Kind {
	case model.MinEntropy:
		return 1, uint64(p.MinEntropyQ16)
	case model.Risk:
		return 2, p.LambdaQ32
	}
	return 0, 0
}

func (h *Header) marshal() []byte {
	b := make([]byte, 0, headerLen)
	b = append(b, Magic...)
	b = binary.LittleEndian.AppendUint32(b, Version)
	b = append(b, h.Bundle[:]...)
	var prof [16]byte
	copy(prof[:], h.Profile)
	b = append(b, prof[:]...)
	for _, v := range []int{int(h.Precision), h.Slots, h.Subspaces, h.Codewords} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	kind, param := policyCode(h.Policy)
	if h.SlotRepeat {
		kind |= flagSlotRepeat
	}
	if h.Mix {
		kind |= flagMix
	}
	b = binary.LittleEndian.AppendUint32(b, kind)
	b = binary.LittleEndian.AppendUint64(b, param)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func parseHeader(b []byte) (*Header, error) {
	if len(b) < headerLen {
		return nil, fmt.Errorf("%w: %d bytes, shorter than a header", ErrFormat, len(b))
	}
	b = b[:headerLen]
	if string(b[:8]) != Magic {
		return nil, fmt.Errorf("%w: wrong magic %q", ErrFormat, b[:8])
	}
	if got, want := binary.LittleEndian.Uint32(b[headerLen-4:]), crc32.Checksum(b[:headerLen-4], castagnoli); got != want {
		return nil, fmt.Errorf("%w: header checksum mismatch", ErrFormat)
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v != Version {
		return nil, fmt.Errorf("%w: format version %d (this build reads version %d)", ErrFormat, v, Version)
	}
	h := &Header{}
	copy(h.Bundle[:], b[12:44])
	prof := b[44:60]
	n := 0
	for n < len(prof) && prof[n] != 0 {
		n++
	}
	h.Profile = string(prof[:n])
	u := func(i int) uint32 { return binary.LittleEndian.Uint32(b[60+4*i:]) }
	h.Precision, h.Slots, h.Subspaces, h.Codewords = uint(u(0)), int(u(1)), int(u(2)), int(u(3))
	kind, param := u(4), binary.LittleEndian.Uint64(b[60+20:])
	if flags := kind &^ 0xffff; flags&^(flagSlotRepeat|flagMix) != 0 {
		return nil, fmt.Errorf("%w: unknown coding flags %#x (written by a newer memowm?)", ErrFormat, flags)
	}
	h.SlotRepeat = kind&flagSlotRepeat != 0
	h.Mix = kind&flagMix != 0
	if h.Mix && h.SlotRepeat {
		return nil, fmt.Errorf("%w: both slot repeat flags and the mixing prior", ErrFormat)
	}
	switch kind &= 0xffff; kind {
	case 0:
		h.Policy = model.Policy{Kind: model.KeepAll}
		if param != 0 {
			return nil, fmt.Errorf("%w: keep-all policy with a parameter", ErrFormat)
		}
	case 1:
		if param > 1<<32-1 {
			return nil, fmt.Errorf("%w: entropy threshold %d out of range", ErrFormat, param)
		}
		h.Policy = model.Policy{Kind: model.MinEntropy, MinEntropyQ16: uint32(param)}
	case 2:
		h.Policy = model.Policy{Kind: model.Risk, LambdaQ32: param} // tables: CheckBundle
	default:
		return nil, fmt.Errorf("%w: unknown policy %d", ErrFormat, kind)
	}
	if h.Precision < 8 || h.Precision > 28 || h.Slots < 1 || h.Subspaces < 1 || h.Codewords < 2 || h.Codewords > 256 ||
		h.Slots > 1<<16 || h.Subspaces > 1<<16 || h.Coords() > 1<<20 {
		return nil, fmt.Errorf("%w: geometry %dx%d, %d codewords, precision %d out of range", ErrFormat, h.Slots, h.Subspaces, h.Codewords, h.Precision)
	}
	return h, nil
}

// indexEntry locates and summarises one episode.
type indexEntry struct {
	ID           int64
	Offset       uint64 // of the section
	Length       uint64 // of the section
	Observations uint32
	Kept         uint64 // kept coordinates over t >= 1
	StateQ16     uint64 // ideal bits of the states (z_0 raw plus kept codes), Q16
	ActionQ16    uint64 // ideal bits of the actions, Q16
}

func marshalIndex(rows []indexEntry) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(rows)))
	for _, r := range rows {
		b = binary.LittleEndian.AppendUint64(b, uint64(r.ID))
		b = binary.LittleEndian.AppendUint64(b, r.Offset)
		b = binary.LittleEndian.AppendUint64(b, r.Length)
		b = binary.LittleEndian.AppendUint32(b, r.Observations)
		b = binary.LittleEndian.AppendUint64(b, r.Kept)
		b = binary.LittleEndian.AppendUint64(b, r.StateQ16)
		b = binary.LittleEndian.AppendUint64(b, r.ActionQ16)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func parseIndex(b []byte) ([]indexEntry, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("%w: index of %d bytes", ErrFormat, len(b))
	}
	if got, want := binary.LittleEndian.Uint32(b[len(b)-4:]), crc32.Checksum(b[:len(b)-4], castagnoli); got != want {
		return nil, fmt.Errorf("%w: index checksum mismatch", ErrFormat)
	}
	n := int(binary.LittleEndian.Uint32(b))
	if len(b) != 4+n*indexRow+4 {
		return nil, fmt.Errorf("%w: index of %d bytes for %d episodes", ErrFormat, len(b), n)
	}
	rows := make([]indexEntry, n)
	p := b[4:]
	for i := range rows {
		r := &rows[i]
		r.ID = int64(binary.LittleEndian.Uint64(p))
		r.Offset = binary.LittleEndian.Uint64(p[8:])
		r.Length = binary.LittleEndian.Uint64(p[16:])
		r.Observations = binary.LittleEndian.Uint32(p[24:])
		r.Kept = binary.LittleEndian.Uint64(p[28:])
		r.StateQ16 = binary.LittleEndian.Uint64(p[36:])
		r.ActionQ16 = binary.LittleEndian.Uint64(p[44:])
		p = p[indexRow:]
	}
	return rows, nil
}
