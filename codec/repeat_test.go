package codec

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	fixturepkg "github.com/memowm/memowm/internal/fixture"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// repeating is fixture.Repeating: screens whose slots mostly repeat.
func repeating(eps []*trajectory.Episode, perSlot int) []*trajectory.Episode {
	return fixturepkg.Repeating(eps, perSlot)
}

func encodeFileWith(t testing.TB, b *model.Bundle, p worldmodel.Predictor, policy model.Policy, opt Options, eps []*trajectory.Episode) (string, []EpisodeStats) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.mwm")
	w, err := CreateWith(path, b, p, policy, opt)
	if err != nil {
		t.Fatal(err)
	}
	w.KeepRecon = true
	st, err := w.Write(eps)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, st
}

func TestSlotRepeatRoundTrip(t *testing.T) {
	_, eps0 := fixture(t)
	keep := model.Policy{Kind: model.KeepAll}
	b, p := testBundle(t, 1, keep)
	eps := repeating(eps0, p.Config().Subspaces)
	path, stats := encodeFileWith(t, b, p, keep, Options{SlotRepeat: true}, eps)
	_, plain := encodeFileWith(t, b, p, keep, Options{}, eps)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Header().SlotRepeat {
		t.Fatal("the header lost the slot-repeat flag")
	}
	got := decodeFile(t, path, b, p)
	var bits, plainBits float64
	var repeated uint64
	for i, ep := range eps {
		if !sameCodes(got[i].Codes, ep.Codes) || !sameActions(got[i].Actions, ep.Actions) {
			t.Fatalf("episode %d does not round-trip", ep.ID)
		}
		st := stats[i]
		if st.Kept != st.Coords {
			t.Fatalf("episode %d: lossless, yet kept %d of %d", ep.ID, st.Kept, st.Coords)
		}
		if ideal := st.StateBits + st.ActionBits; float64(st.Payload*8) > ideal*1.001+64 {
			t.Fatalf("episode %d: payload %d bits, ideal %.1f", ep.ID, st.Payload*8, ideal)
		}
		bits += st.StateBits
		plainBits += plain[i].StateBits
		repeated += st.Repeated
	}
	if repeated == 0 || !(bits < 0.8*plainBits) {
		t.Fatalf("repeat flags: %d coordinates repeated, %.0f state bits against %.0f without", repeated, bits, plainBits)
	}
	t.Logf("%d coordinates repeated; %.0f state bits with repeat flags, %.0f without", repeated, bits, plainBits)
}

// TestSlotRepeatLossy: with a lossy rule the decoder still reproduces the
// writer's reconstruction, and Simulate its accounting.
func TestSlotRepeatLossy(t *testing.T) {
	_, eps0 := fixture(t)
	b, p := testBundle(t, 2, model.Policy{Kind: model.KeepAll})
	eps := repeating(eps0, p.Config().Subspaces)
	policy := model.Policy{Kind: model.MinEntropy, MinEntropyQ16: 5 << 16}
	path, stats := encodeFileWith(t, b, p, policy, Options{SlotRepeat: true}, eps)
	got := decodeFile(t, path, b, p)
	sim, err := SimulateWith(p, policy, eps, SimOptions{SlotRepeat: true})
	if err != nil {
		t.Fatal(err)
	}
	var omitted, repeated uint64
	for i, ep := range eps {
		if !sameCodes(got[i].Codes, stats[i].Recon) {
			t.Fatalf("episode %d: the decoder's reconstruction differs from the writer's", ep.ID)
		}
		w, g := stats[i], sim[i]
		if w.Kept != g.Kept || w.Repeated != g.Repeated || w.StateBits != g.StateBits || w.Bytes != g.Bytes || !sameCodes(w.Recon, g.Recon) {
			t.Fatalf("episode %d: Simulate %+v, Writer %+v", ep.ID, g, w)
		}
		omitted += w.Omitted
		repeated += w.Repeated
	}
	if omitted == 0 || repeated == 0 {
		t.Fatalf("omitted %d, repeated %d: the test needs both", omitted, repeated)
	}
}

func TestSlotRepeatDamageAndFlags(t *testing.T) {
	_, eps0 := fixture(t)
	keep := model.Policy{Kind: model.KeepAll}
	b, p := testBundle(t, 1, keep)
	eps := repeating(eps0, p.Config().Subspaces)
	small := []*trajectory.Episode{{ID: 5, Codes: eps[0].Codes[:3], Actions: eps[0].Actions[:2]}}
	path, _ := encodeFileWith(t, b, p, keep, Options{SlotRepeat: true}, small)
	data, _ := os.ReadFile(path)
	for bit := 0; bit < len(data)*8; bit += 5 {
		d := bytes.Clone(data)
		d[bit/8] ^= 1 << (bit % 8)
		r, err := OpenReaderAt(bytes.NewReader(d), int64(len(d)), "damaged")
		if err == nil {
			if err = r.CheckBundle(b); err == nil {
				_, err = r.Decode(p, nil)
			}
		}
		if err == nil {
			t.Fatalf("flipping bit %d of %d went unnoticed", bit, len(data)*8)
		}
	}
	// A header with an unknown coding flag is refused, even with a valid CRC.
	h := bytes.Clone(data[:headerLen])
	kind := binary.LittleEndian.Uint32(h[60+16:])
	binary.LittleEndian.PutUint32(h[60+16:], kind|1<<18)
	binary.LittleEndian.PutUint32(h[headerLen-4:], crc32.Checksum(h[:headerLen-4], castagnoli))
	if _, err := parseHeader(h); err == nil {
		t.Fatal("an unknown coding flag was accepted")
	}
	if hd, err := parseHeader(data); err != nil || !hd.SlotRepeat || hd.Policy.Kind != model.KeepAll {
		t.Fatalf("header %+v, %v", hd, err)
	}
}
