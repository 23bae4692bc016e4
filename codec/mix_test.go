package codec

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"strings"
	"testing"

	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// mixFixture is a bundle with a randomly initialised world model and the
// fixture's episodes with 80% of slots repeating (screens of recorded
// programs).
func mixFixture(t testing.TB) (*model.Bundle, worldmodel.Predictor, []*trajectory.Episode) {
	t.Helper()
	_, eps0 := fixture(t)
	b, p := testBundle(t, 1, model.Policy{Kind: model.KeepAll})
	return b, p, repeating(eps0, p.Config().Subspaces)
}

// TestMixRoundTrip writes mixed files of the fixture and of screens whose
// slots mostly repeat, decodes them and compares every code and action; on
// repeating screens the mix must beat the world model's table alone.
func TestMixRoundTrip(t *testing.T) {
	_, eps0 := fixture(t)
	keep := model.Policy{Kind: model.KeepAll}
	b, p := testBundle(t, 1, keep)
	for k, eps := range [][]*trajectory.Episode{eps0, repeating(eps0, p.Config().Subspaces)} {
		path, stats := encodeFileWith(t, b, p, keep, Options{Mix: true}, eps)
		_, plain := encodeFileWith(t, b, p, keep, Options{}, eps)
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Header().Mix || r.Header().SlotRepeat {
			t.Fatalf("header %+v", r.Header())
		}
		r.Close()
		got := decodeFile(t, path, b, p)
		var bits, plainBits float64
		var payload int64
		for i, ep := range eps {
			if !sameCodes(got[i].Codes, ep.Codes) || !sameActions(got[i].Actions, ep.Actions) {
				t.Fatalf("episode %d does not round-trip", ep.ID)
			}
			if !sameCodes(stats[i].Recon, ep.Codes) {
				t.Fatalf("episode %d: the writer's reconstruction is not the input", ep.ID)
			}
			bits += stats[i].StateBits + stats[i].ActionBits
			plainBits += plain[i].StateBits
			payload += stats[i].Payload
		}
		// The coder's stream is within a few bytes per episode of the ideal.
		if over := float64(payload*8) - bits; over < 0 || over > float64(len(eps))*64 {
			t.Errorf("payload %d bits, ideal %.1f", payload*8, bits)
		}
		t.Logf("mix %.1f bits, world model alone %.1f", bits, plainBits)
		if k == 1 && bits > 0.8*plainBits {
			t.Errorf("repeating screens: mix %.1f bits, not well below the world model's %.1f", bits, plainBits)
		}
	}
}

func TestMixDeterministicAcrossGOMAXPROCS(t *testing.T) {
	b, p, eps := mixFixture(t)
	checkGOMAXPROCS(t, b, p, Options{Mix: true}, eps)
}

// TestMixEpisodesIndependent decodes each episode of a mixed file alone and
// in a batch of its own: adaptive state starts fresh per episode.
func TestMixEpisodesIndependent(t *testing.T) {
	b, p, eps := mixFixture(t)
	keep := model.Policy{Kind: model.KeepAll}
	path, _ := encodeFileWith(t, b, p, keep, Options{Mix: true}, eps)
	r := openChecked(t, path, b)
	for i := len(eps) - 1; i >= 0; i-- {
		got, err := r.Decode(p, []int{i})
		if err != nil {
			t.Fatal(err)
		}
		if !sameCodes(got[0].Codes, eps[i].Codes) {
			t.Fatalf("episode %d decoded alone differs", eps[i].ID)
		}
	}
	// Written alone, an episode's section is the same bytes.
	one, _ := encodeFileWith(t, b, p, keep, Options{Mix: true}, eps[1:2])
	r1, err := Open(one)
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	s1, _, _, err := r1.section(0)
	s2, _, _, err2 := r.section(1)
	if err != nil || err2 != nil || !bytes.Equal(s1, s2) {
		t.Fatalf("episode 1 codes differently in a batch: %v %v", err, err2)
	}
}

// TestMixDamageDetected flips bits and cuts prefixes of a small mixed file:
// every one is an error, never a panic.
func TestMixDamageDetected(t *testing.T) {
	b, p, eps := mixFixture(t)
	small := []*trajectory.Episode{{ID: 5, Codes: eps[0].Codes[:4], Actions: eps[0].Actions[:3]}}
	path, _ := encodeFileWith(t, b, p, model.Policy{Kind: model.KeepAll}, Options{Mix: true}, small)
	data, _ := os.ReadFile(path)
	step := 1
	if testing.Short() {
		step = 5
	}
	try := decodeAll(b, p)
	checkDamage(t, data, try, step)
	// The coder stream damaged under a recomputed section CRC goes through
	// the mixing decoder: it must fail (a decoder error or the codes CRC),
	// never panic.
	checkResealed(t, path, data, try, 4*step+3)
}

// checkResealed flips every bit (at the stride step) of the payload of a
// file's first episode under a recomputed section CRC, so the damage reaches
// the decoder: each must be an error that says the file is damaged (ErrFormat
// or ErrDesync) and names the file and the episode, never a panic.
func checkResealed(t *testing.T, path string, data []byte, try func([]byte) error, step int) {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	e := r.index[0]
	r.Close()
	lo := int(e.Offset) + sectionHead
	hi := int(e.Offset+e.Length) - sectionTail
	for bit := lo * 8; bit < hi*8; bit += step {
		d := bytes.Clone(data)
		d[bit/8] ^= 1 << (bit % 8)
		sec := d[e.Offset : e.Offset+e.Length]
		binary.LittleEndian.PutUint32(sec[len(sec)-4:], crc32.Checksum(sec[:len(sec)-4], castagnoli))
		err := try(d)
		if err == nil {
			t.Fatalf("flipping payload bit %d under a good section CRC went unnoticed", bit)
		}
		if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrDesync) || !strings.Contains(err.Error(), "damaged") ||
			!strings.Contains(err.Error(), fmt.Sprintf("episode %d", e.ID)) {
			t.Fatalf("payload bit %d: %v: want a damaged-file error naming the file and episode %d", bit, err, e.ID)
		}
	}
}

func TestMixHeaderAndRefusals(t *testing.T) {
	_, eps := fixture(t)
	keep := model.Policy{Kind: model.KeepAll}
	b, p := testBundle(t, 1, keep)
	path, _ := encodeFileWith(t, b, p, keep, Options{Mix: true}, eps[:1])
	data, _ := os.ReadFile(path)
	if h, err := parseHeader(data); err != nil || !h.Mix || h.SlotRepeat {
		t.Fatalf("header %+v %v", h, err)
	}
	// Mix and slot repeat together is no valid header.
	h := bytes.Clone(data[:headerLen])
	kind := binary.LittleEndian.Uint32(h[60+16:])
	binary.LittleEndian.PutUint32(h[60+16:], kind|flagSlotRepeat)
	binary.LittleEndian.PutUint32(h[headerLen-4:], crc32.Checksum(h[:headerLen-4], castagnoli))
	if _, err := parseHeader(h); err == nil {
		t.Fatal("mix with slot repeat accepted")
	}
	dir := t.TempDir()
	if _, err := CreateWith(dir+"/a.mwm", b, p, keep, Options{Mix: true, SlotRepeat: true}); err == nil {
		t.Fatal("Create took mix with slot repeat")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("refused writers left %d files", len(ents))
	}
}

// TestMixSimulateAndAblations: Simulate gives the writer's accounting, and
// every ablation still reconstructs exactly.
func TestMixSimulateAndAblations(t *testing.T) {
	b, p, eps := mixFixture(t)
	keep := model.Policy{Kind: model.KeepAll}
	_, stats := encodeFileWith(t, b, p, keep, Options{Mix: true}, eps)
	nb, err := NeighboursOf(b.OPQ)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SimulateWith(p, keep, eps, SimOptions{Mix: true}); err == nil {
		t.Fatal("Simulate ran the mix without the neighbour order")
	}
	sim, err := SimulateWith(p, keep, eps, SimOptions{Mix: true, Neighbours: nb})
	if err != nil {
		t.Fatal(err)
	}
	for i := range eps {
		if sim[i].StateBits != stats[i].StateBits || sim[i].Repeated != stats[i].Repeated || !sameCodes(sim[i].Recon, eps[i].Codes) {
			t.Fatalf("episode %d: simulate %+v, writer %+v", eps[i].ID, sim[i].StateBits, stats[i].StateBits)
		}
	}
	for _, w := range []MixPart{MixWorldModel, MixMatch, MixContexts, MixWorldModel | MixMatch | MixContexts} {
		st, err := SimulateWith(p, keep, eps, SimOptions{Mix: true, MixWithout: w, Neighbours: nb})
		if err != nil {
			t.Fatal(err)
		}
		diff := false
		for i := range eps {
			if !sameCodes(st[i].Recon, eps[i].Codes) {
				t.Fatalf("without %d: episode %d not reconstructed", w, eps[i].ID)
			}
			diff = diff || st[i].StateBits != sim[i].StateBits
		}
		if !diff {
			t.Errorf("leaving out part %d changed nothing", w)
		}
	}
}

// TestMixLossy: with a lossy policy the retention rule reads the mixed
// distribution; the decoder recomputes every decision (no mask is stored)
// and returns exactly the writer's reconstruction.
func TestMixLossy(t *testing.T) {
	b, p, eps := mixFixture(t)
	for _, pol := range []model.Policy{{Kind: model.MinEntropy, MinEntropyQ16: 2 << 16}, {Kind: model.MinEntropy, MinEntropyQ16: 3 << 16}} {
		path, stats := encodeFileWith(t, b, p, pol, Options{Mix: true}, eps)
		got := decodeFile(t, path, b, p)
		var omitted, recovered, coords uint64
		for i, ep := range eps {
			if !sameCodes(got[i].Codes, stats[i].Recon) || !sameActions(got[i].Actions, ep.Actions) {
				t.Fatalf("%v: episode %d: the decoder does not return the writer's reconstruction", pol, ep.ID)
			}
			omitted += stats[i].Omitted
			recovered += stats[i].Recovered
			coords += stats[i].Coords
			if stats[i].Kept+stats[i].Omitted != stats[i].Coords {
				t.Fatalf("kept %d + omitted %d != %d", stats[i].Kept, stats[i].Omitted, stats[i].Coords)
			}
		}
		if omitted == 0 || omitted == coords {
			t.Fatalf("%v: omitted %d of %d: the test needs some of each", pol, omitted, coords)
		}
		nb, _ := NeighboursOf(b.OPQ)
		sim, err := SimulateWith(p, pol, eps, SimOptions{Mix: true, Neighbours: nb})
		if err != nil {
			t.Fatal(err)
		}
		for i := range eps {
			if sim[i].StateBits != stats[i].StateBits || !sameCodes(sim[i].Recon, stats[i].Recon) {
				t.Fatalf("episode %d: Simulate differs from the writer", eps[i].ID)
			}
		}
		t.Logf("%v: omitted %d of %d coordinates, %d of them recovered by the mixed mode", pol, omitted, coords, recovered)
	}
}

// TestMixGolden pins the bytes of a mixed memory file of the fixture (with a
// randomly initialised world model): the same on every machine and build.
// A change of the mixing prior changes this hash, and must bump the format.
func TestMixGolden(t *testing.T) {
	b, p, eps := mixFixture(t)
	keep := model.Policy{Kind: model.KeepAll}
	lossless, _ := encodeFileWith(t, b, p, keep, Options{Mix: true}, eps)
	lossy, _ := encodeFileWith(t, b, p, model.Policy{Kind: model.MinEntropy, MinEntropyQ16: 2 << 16}, Options{Mix: true}, eps)
	for _, c := range []struct{ path, want string }{
		{lossless, "2ad2f3c0106f71bdc7bc5ddbdee2c1ceeb884fe8cd1c2c2775652f3b28750343"},
		{lossy, "a0aecbe68f7cb9e19cc8340ace7ce7748d1daeb039dc86a968159bab08d379ff"},
	} {
		d, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(d)); got != c.want {
			t.Errorf("mixed file sha256 %s, pinned %s", got, c.want)
		}
	}
}

// TestMixGoldenDense pins the bytes of mixed files of the fixture's own
// episodes, where most codes change every step (the rank tables, the node
// predictions and the context tables are all exercised): lossless and
// lossy. Pinned before the mixing prior's speed work, which must not change
// a bit.
func TestMixGoldenDense(t *testing.T) {
	_, eps := fixture(t)
	keep := model.Policy{Kind: model.KeepAll}
	b, p := testBundle(t, 1, keep)
	lossless, _ := encodeFileWith(t, b, p, keep, Options{Mix: true}, eps)
	lossy, st := encodeFileWith(t, b, p, model.Policy{Kind: model.MinEntropy, MinEntropyQ16: 3 << 15}, Options{Mix: true}, eps)
	omitted := uint64(0)
	for _, s := range st {
		omitted += s.Omitted
	}
	if omitted == 0 {
		t.Fatal("the lossy file omits nothing")
	}
	for _, c := range []struct{ path, want string }{
		{lossless, "793d7bda21fa6cc08914982b3761347eba7aec39f13983ff976e95ba4c6f549c"},
		{lossy, "89466fad7033b5921dab19dbdc5c1b0e5f0be1b5ea0dee8e0dd8abbf5e6e4b89"},
	} {
		d, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(d)); got != c.want {
			t.Errorf("mixed file sha256 %s, pinned %s", got, c.want)
		}
	}
}
