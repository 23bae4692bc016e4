package codec

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	fixturepkg "github.com/memowm/memowm/internal/fixture"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// fixture is the shared test set's quantizer and episodes, plus an episode
// of a single observation.
func fixture(t testing.TB) (*opq.Quantizer, []*trajectory.Episode) {
	t.Helper()
	s, err := fixturepkg.Get()
	if err != nil {
		t.Fatal(err)
	}
	one := &trajectory.Episode{ID: 99, Codes: s.Episodes[0].Codes[:1], Actions: []trajectory.Action{}}
	return s.Q, append(append([]*trajectory.Episode(nil), s.Episodes...), one)
}

// testBundle is a bundle of the fixture's quantizer and a randomly
// initialised tiny world model.
func testBundle(t testing.TB, seed uint64, policy model.Policy) (*model.Bundle, worldmodel.Predictor) {
	t.Helper()
	b, p, err := fixturepkg.Bundle(seed, policy)
	if err != nil {
		t.Fatal(err)
	}
	return b, p
}

// encodeFile writes eps in batches of batch and returns the path and stats.
func encodeFile(t testing.TB, b *model.Bundle, p worldmodel.Predictor, policy model.Policy, eps []*trajectory.Episode, batch int) (string, []EpisodeStats) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.mwm")
	w, err := Create(path, b, p, policy)
	if err != nil {
		t.Fatal(err)
	}
	w.KeepRecon = true
	var stats []EpisodeStats
	for lo := 0; lo < len(eps); lo += batch {
		st, err := w.Write(eps[lo:min(len(eps), lo+batch)])
		if err != nil {
			t.Fatal(err)
		}
		stats = append(stats, st...)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, stats
}

// openChecked opens a memory file and checks it against bundle b.
func openChecked(t testing.TB, path string, b *model.Bundle) *Reader {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if err := r.CheckBundle(b); err != nil {
		t.Fatal(err)
	}
	return r
}

func decodeFile(t testing.TB, path string, b *model.Bundle, p worldmodel.Predictor) []*trajectory.Episode {
	t.Helper()
	r := openChecked(t, path, b)
	eps, err := r.Decode(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return eps
}

func sameActions(a, b []trajectory.Action) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Type != y.Type || x.HasPos != y.HasPos || x.X != y.X || x.Y != y.Y || x.HasDelta != y.HasDelta ||
			x.DX != y.DX || x.DY != y.DY || !bytes.Equal(x.Payload, y.Payload) {
			return false
		}
	}
	return true
}

func sameCodes(a, b [][]uint8) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func TestLosslessRoundTrip(t *testing.T) {
	_, eps := fixture(t)
	keep := model.Policy{Kind: model.KeepAll}
	b, p := testBundle(t, 1, keep)
	var first []byte
	for _, batch := range []int{1, 3, 7} {
		path, stats := encodeFile(t, b, p, keep, eps, batch)
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
			t.Fatalf("memory file mode %v (%v)", st.Mode(), err)
		}
		data, _ := os.ReadFile(path)
		if first == nil {
			first = data
		} else if !bytes.Equal(first, data) {
			t.Fatalf("batches of %d wrote different bytes than batches of 1", batch)
		}
		got := decodeFile(t, path, b, p)
		if len(got) != len(eps) {
			t.Fatalf("%d episodes decoded, want %d", len(got), len(eps))
		}
		for i, ep := range eps {
			if got[i].ID != ep.ID || !sameCodes(got[i].Codes, ep.Codes) || !sameActions(got[i].Actions, ep.Actions) {
				t.Fatalf("batch %d: episode %d does not round-trip", batch, ep.ID)
			}
			st := stats[i]
			if st.Kept != st.Coords || st.Observations != len(ep.Codes) {
				t.Fatalf("episode %d: kept %d of %d", ep.ID, st.Kept, st.Coords)
			}
			// The payload is within 0.1% + 64 bits of the ideal length.
			if ideal := st.StateBits + st.ActionBits; float64(st.Payload*8) > ideal*1.001+64 {
				t.Fatalf("episode %d: payload %d bits, ideal %.1f", ep.ID, st.Payload*8, ideal)
			}
		}
	}
}

func TestDeterministicAcrossGOMAXPROCS(t *testing.T) {
	_, eps := fixture(t)
	keep := model.Policy{Kind: model.KeepAll}
	b, p := testBundle(t, 1, keep)
	checkGOMAXPROCS(t, b, p, Options{}, eps)
}

// checkGOMAXPROCS writes eps (lossless, with opt) under GOMAXPROCS 1 and 2,
// requires the same bytes, and decodes the second under GOMAXPROCS 1.
func checkGOMAXPROCS(t *testing.T, b *model.Bundle, p worldmodel.Predictor, opt Options, eps []*trajectory.Episode) {
	t.Helper()
	keep := model.Policy{Kind: model.KeepAll}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(1)
	path1, _ := encodeFileWith(t, b, p, keep, opt, eps)
	runtime.GOMAXPROCS(2)
	path2, _ := encodeFileWith(t, b, p, keep, opt, eps)
	d1, _ := os.ReadFile(path1)
	d2, _ := os.ReadFile(path2)
	if !bytes.Equal(d1, d2) {
		t.Fatalf("%+v: GOMAXPROCS 1 and 2 wrote different files", opt)
	}
	runtime.GOMAXPROCS(1)
	got := decodeFile(t, path2, b, p)
	for i, ep := range eps {
		if !sameCodes(got[i].Codes, ep.Codes) {
			t.Fatalf("%+v: episode %d: decoding with GOMAXPROCS 1 a file written with 2 differs", opt, ep.ID)
		}
	}
}

func TestLossyDecoderMatchesWriter(t *testing.T) {
	_, eps := fixture(t)
	b, p := testBundle(t, 2, model.Policy{Kind: model.KeepAll})
	// Omit every coordinate whose predictive entropy is below the median of
	// the first prediction's.
	pr, err := p.Predict(nil, []worldmodel.History{{{Codes: eps[0].Codes[0], Action: eps[0].Actions[0]}}})
	if err != nil {
		t.Fatal(err)
	}
	hs := append([]uint32(nil), pr[0].Entropy...)
	slices.Sort(hs)
	policy := model.Policy{Kind: model.MinEntropy, MinEntropyQ16: hs[len(hs)/2]}
	path, stats := encodeFile(t, b, p, policy, eps, 4)
	got := decodeFile(t, path, b, p)
	var kept, coords uint64
	differs := false
	for i, ep := range eps {
		if !sameCodes(got[i].Codes, stats[i].Recon) {
			t.Fatalf("episode %d: the decoder's reconstruction differs from the writer's", ep.ID)
		}
		differs = differs || !sameCodes(got[i].Codes, ep.Codes)
		kept += stats[i].Kept
		coords += stats[i].Coords
	}
	if kept == 0 || kept == coords || !differs {
		t.Fatalf("the policy kept %d of %d coordinates (lossy: %v); the test needs some of each", kept, coords, differs)
	}
	t.Logf("kept %d of %d coordinates", kept, coords)
}

func TestWrongBundleRefused(t *testing.T) {
	_, eps := fixture(t)
	keep := model.Policy{Kind: model.KeepAll}
	b, p := testBundle(t, 1, keep)
	other, _ := testBundle(t, 3, keep)
	path, _ := encodeFile(t, b, p, keep, eps[:1], 1)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	err = r.CheckBundle(other)
	if !errors.Is(err, ErrBundle) || !strings.Contains(err.Error(), b.HashString()) || !strings.Contains(err.Error(), other.HashString()) {
		t.Fatalf("wrong bundle: %v", err)
	}
}

func TestEmptyFileAndErrors(t *testing.T) {
	_, eps := fixture(t)
	keep := model.Policy{Kind: model.KeepAll}
	b, p := testBundle(t, 1, keep)
	path, _ := encodeFile(t, b, p, keep, nil, 1)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.Episodes()); n != 0 {
		t.Fatalf("%d episodes in an empty file", n)
	}
	if got, err := r.Decode(p, nil); err != nil || len(got) != 0 {
		t.Fatalf("decoding an empty file: %v", err)
	}
	r.Close()

	// A failed write leaves nothing under the final name.
	dir := t.TempDir()
	final := filepath.Join(dir, "bad.mwm")
	w, err := Create(final, b, p, keep)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(eps[:2]); err != nil {
		t.Fatal(err)
	}
	bad := &trajectory.Episode{ID: 500, Codes: [][]uint8{make([]uint8, 1024)}, Actions: []trajectory.Action{}}
	bad.Codes[0][7] = 16
	if _, err := w.Write([]*trajectory.Episode{bad}); err == nil || !strings.Contains(err.Error(), "episode 500 step 0 coordinate 7: code 16 is outside the 16 codewords") {
		t.Fatalf("bad code: %v", err)
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close after a failed Write succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a failed write left %v", ents)
	}
	w, _ = Create(final, b, p, keep)
	if _, err := w.Write([]*trajectory.Episode{eps[0], eps[0]}); err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Fatalf("duplicate id: %v", err)
	}
	w.Abort()
}

// TestDamageDetected flips every bit and cuts every prefix of a small file:
// each must give an error, never a panic and never episodes returned as good.
func TestDamageDetected(t *testing.T) {
	_, eps := fixture(t)
	keep := model.Policy{Kind: model.KeepAll}
	b, p := testBundle(t, 1, keep)
	small := []*trajectory.Episode{{ID: eps[0].ID, Codes: eps[0].Codes[:3], Actions: eps[0].Actions[:2]}}
	path, _ := encodeFile(t, b, p, keep, small, 1)
	data, _ := os.ReadFile(path)
	step := 1
	if testing.Short() {
		step = 7
	}
	checkDamage(t, data, decodeAll(b, p), step)
	checkResealed(t, path, data, decodeAll(b, p), step+6)
}

// decodeAll opens a file's bytes, checks the bundle and decodes every
// episode: the first error, or nil.
func decodeAll(b *model.Bundle, p worldmodel.Predictor) func([]byte) error {
	return func(d []byte) error {
		r, err := OpenReaderAt(bytes.NewReader(d), int64(len(d)), "damaged")
		if err != nil {
			return err
		}
		if err := r.CheckBundle(b); err != nil {
			return err
		}
		_, err = r.Decode(p, nil)
		return err
	}
}

// checkDamage asserts that data decodes and that every bit flip (at the
// stride step) and every truncation of it is an error.
func checkDamage(t *testing.T, data []byte, try func([]byte) error, step int) {
	t.Helper()
	if err := try(data); err != nil {
		t.Fatal(err)
	}
	for bit := 0; bit < len(data)*8; bit += step {
		d := bytes.Clone(data)
		d[bit/8] ^= 1 << (bit % 8)
		if try(d) == nil {
			t.Fatalf("flipping bit %d of %d went unnoticed", bit, len(data)*8)
		}
	}
	for n := 0; n < len(data); n++ {
		if try(data[:n]) == nil {
			t.Fatalf("a cut to %d of %d bytes went unnoticed", n, len(data))
		}
	}
	t.Logf("%d-byte file: every bit flip (step %d) and truncation detected", len(data), step)
}

func FuzzDecode(f *testing.F) {
	_, eps := fixture(f)
	keep := model.Policy{Kind: model.KeepAll}
	b, p := testBundle(f, 1, keep)
	small := []*trajectory.Episode{{ID: 1, Codes: eps[0].Codes[:2], Actions: eps[0].Actions[:1]}}
	path, _ := encodeFile(f, b, p, keep, small, 1)
	data, _ := os.ReadFile(path)
	f.Add(data)
	f.Add(data[:100])
	rpath, _ := encodeFileWith(f, b, p, keep, Options{SlotRepeat: true}, repeating(small, p.Config().Subspaces))
	rdata, _ := os.ReadFile(rpath)
	f.Add(rdata)
	mpath, _ := encodeFileWith(f, b, p, keep, Options{Mix: true}, repeating(small, p.Config().Subspaces))
	mdata, _ := os.ReadFile(mpath)
	f.Add(mdata)
	f.Fuzz(func(t *testing.T, d []byte) {
		r, err := OpenReaderAt(bytes.NewReader(d), int64(len(d)), "fuzz")
		if err != nil {
			return
		}
		got, err := r.Decode(p, nil)
		if err == nil && !bytes.Equal(d, data) {
			// Only a CRC collision could get here; the episodes must at
			// least be well formed.
			for _, ep := range got {
				if ep.Validate(trajectory.Meta{Shape: trajectory.Shape{Slots: 32, Dim: 32, Codes: 1024}, Content: trajectory.Codes}) != nil {
					t.Fatal("decoded an invalid episode")
				}
			}
		}
	})
}

// TestSimulateMatchesWriter checks that the file-less closed loop gives the
// writer's accounting and reconstruction.
func TestSimulateMatchesWriter(t *testing.T) {
	_, eps := fixture(t)
	b, p := testBundle(t, 2, model.Policy{Kind: model.KeepAll})
	policy := model.Policy{Kind: model.MinEntropy, MinEntropyQ16: 2 << 16}
	_, want := encodeFile(t, b, p, policy, eps, len(eps))
	got, err := Simulate(p, policy, eps)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.Kept != g.Kept || w.StateBits != g.StateBits || w.ActionBits != g.ActionBits || w.Bytes != g.Bytes || !sameCodes(w.Recon, g.Recon) {
			t.Fatalf("episode %d: Simulate %+v, Writer %+v", w.ID, g, w)
		}
	}
}

// TestRiskPolicyFile writes with a risk policy and decodes through the
// bundle's tables: the header keeps lambda, the bundle the rest.
func TestRiskPolicyFile(t *testing.T) {
	_, eps := fixture(t)
	impact := make([]uint64, 1024)
	marginal := make([]uint32, 1024)
	for j := range impact {
		impact[j] = uint64(j%7) << 28
		marginal[j] = uint32(j % 5 * 9000)
	}
	risk := model.Policy{Kind: model.Risk, BinQ16: 1 << 14, BinRate: []int32{-1, 20000, -1, 40000}, Marginal: marginal, Impact: impact}
	b, p := testBundle(t, 2, risk)
	policy := risk.WithLambda(1 << 26)
	path, stats := encodeFile(t, b, p, policy, eps, 4)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Decode(p, nil); err == nil {
		t.Fatal("decoding a risk file without the bundle's tables succeeded")
	}
	if err := r.CheckBundle(b); err != nil {
		t.Fatal(err)
	}
	if r.Header().Policy.LambdaQ32 != 1<<26 {
		t.Fatalf("lambda %d in the header", r.Header().Policy.LambdaQ32)
	}
	got, err := r.Decode(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	var kept, coords uint64
	for i := range got {
		if !sameCodes(got[i].Codes, stats[i].Recon) {
			t.Fatalf("episode %d differs from the writer's reconstruction", got[i].ID)
		}
		kept += stats[i].Kept
		coords += stats[i].Coords
	}
	if kept == 0 || kept == coords {
		t.Fatalf("kept %d of %d", kept, coords)
	}
}

func TestSimulateOptions(t *testing.T) {
	_, eps := fixture(t)
	_, p := testBundle(t, 2, model.Policy{Kind: model.KeepAll})
	keep := model.Policy{Kind: model.KeepAll}
	a, _ := Simulate(p, keep, eps)
	b, err := SimulateWith(p, keep, eps, SimOptions{TeacherForced: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		// Lossless: the reconstruction is the truth, so teacher forcing
		// changes nothing.
		if a[i].StateBits != b[i].StateBits || a[i].Omitted != 0 {
			t.Fatalf("episode %d: lossless teacher forcing differs", a[i].ID)
		}
	}
	lossy := model.Policy{Kind: model.MinEntropy, MinEntropyQ16: 3 << 16}
	prev, err := SimulateWith(p, lossy, eps, SimOptions{FillPrevious: true})
	if err != nil {
		t.Fatal(err)
	}
	mode, _ := Simulate(p, lossy, eps)
	var om uint64
	for i, st := range prev {
		om += st.Omitted
		if st.Recovered > st.Omitted || mode[i].Recovered > mode[i].Omitted {
			t.Fatal("more recovered than omitted")
		}
		// Every coordinate that differs from the truth was omitted and
		// filled with the previous reconstructed code.
		for k := 1; k < len(st.Recon); k++ {
			for j := range st.Recon[k] {
				if st.Recon[k][j] != eps[i].Codes[k][j] && st.Recon[k][j] != st.Recon[k-1][j] {
					t.Fatalf("episode %d step %d coordinate %d: fill is neither the truth nor the previous code", st.ID, k, j)
				}
			}
		}
	}
	if om == 0 {
		t.Fatal("the lossy policy omitted nothing")
	}
}
