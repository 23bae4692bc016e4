package model

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/memowm/memowm/internal/fuzzdamage"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/reader"
	"github.com/memowm/memowm/sim"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

var (
	qOnce sync.Once
	testQ *opq.Quantizer
)

// testBundle is a tiny world model of 16 codewords with a quantizer fit on
// 32 x 32 sim states.
func testBundle(t testing.TB, seed uint64) *Bundle {
	t.Helper()
	qOnce.Do(func() {
		cfg := sim.DefaultConfig()
		cfg.Shape.Dim, cfg.Episodes, cfg.Steps = 32, 2, 20
		w, err := sim.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var states [][]float32
		for i := 0; i < cfg.Episodes; i++ {
			ep, _, _ := w.Episode(i)
			states = append(states, ep.States...)
		}
		ocfg := opq.DefaultConfig()
		ocfg.Shape, ocfg.Codewords = cfg.Shape, 16
		if testQ, err = opq.Fit(states, ocfg); err != nil {
			t.Fatal(err)
		}
	})
	cfg, _ := worldmodel.Preset("tiny")
	cfg.Codewords = 16
	m, err := worldmodel.New(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return &Bundle{OPQ: testQ, Model: m, Profile: worldmodel.ProfileF32, Precision: 24, Policy: Policy{Kind: KeepAll}}
}

func TestBundleRoundTrip(t *testing.T) {
	b := testBundle(t, 1)
	b.Policy = Policy{Kind: MinEntropy, MinEntropyQ16: 12345}
	data, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Read(bytes.NewReader(append(bytes.Clone(data), "tail"...)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Hash() != b.Hash() || r.Hash() == ([32]byte{}) || !reflect.DeepEqual(r.Policy, b.Policy) || r.Precision != 24 || r.Profile != worldmodel.ProfileF32 {
		t.Fatalf("read %+v, hash %s vs %s", r.Policy, r.HashString(), b.HashString())
	}
	again, _ := r.Bytes()
	if !bytes.Equal(again, data) {
		t.Fatal("read then write changed the bytes")
	}
	path := filepath.Join(t.TempDir(), "b.mwb")
	if err := b.Save(path); err != nil {
		t.Fatal(err)
	}
	l, err := Load(path)
	if err != nil || l.Hash() != b.Hash() || !IsFile(path) {
		t.Fatalf("Load: %v", err)
	}
	// Another seed is another identity.
	other := testBundle(t, 2)
	other.Bytes()
	if other.Hash() == b.Hash() {
		t.Fatal("two different bundles share a hash")
	}
}

func TestBundleDamage(t *testing.T) {
	b := testBundle(t, 1)
	data, _ := b.Bytes()
	// Flip a bit in every part: header, quantizer, weights, checksum.
	for _, at := range []int{3, 10, 20, 200, len(data) / 3, len(data) / 2, len(data) - 100, len(data) - 1} {
		d := bytes.Clone(data)
		d[at] ^= 0x20
		if _, err := Read(bytes.NewReader(d)); !errors.Is(err, ErrFormat) {
			t.Errorf("flip at %d: %v", at, err)
		}
	}
	for _, n := range []int{0, 5, 12, 40, 5000, len(data) / 2, len(data) - 1} {
		_, err := Read(bytes.NewReader(data[:n]))
		if !errors.Is(err, ErrFormat) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("cut to %d: %v", n, err)
		}
	}
	path := filepath.Join(t.TempDir(), "t.mwb")
	os.WriteFile(path, append(bytes.Clone(data), 0), 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "data after the checksum") {
		t.Errorf("trailing byte: %v", err)
	}
}

func TestBundleCheck(t *testing.T) {
	cases := []struct {
		edit func(*Bundle)
		want string
	}{
		{func(b *Bundle) { b.Profile = "int4" }, `unknown inference profile "int4"`},
		{func(b *Bundle) { b.Profile = "int8" }, "in the int8 profile has no int8 network"},
		{func(b *Bundle) { b.Precision = 30 }, "precision 30 is outside [8, 28]"},
		{func(b *Bundle) { b.Policy = Policy{Kind: "oracle"} }, `unknown retention policy "oracle"`},
		{func(b *Bundle) { b.Policy = Policy{Kind: KeepAll, MinEntropyQ16: 5} }, "takes no parameters"},
		{func(b *Bundle) {
			cfg, _ := worldmodel.Preset("tiny") // 64 codewords, the quantizer has 16
			b.Model, _ = worldmodel.New(cfg, 1)
		}, "does not fit the world model"},
		{func(b *Bundle) { b.OPQ = nil }, "needs a quantizer and a world model"},
	}
	for _, c := range cases {
		b := testBundle(t, 1)
		c.edit(b)
		if _, err := b.Bytes(); err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "model: ") {
			t.Errorf("%q: %v", c.want, err)
		}
	}
}

func TestPolicy(t *testing.T) {
	keep := Policy{}
	if !keep.Lossless() || !keep.Keep(5, 0) {
		t.Fatal("the zero policy must keep everything")
	}
	p := Policy{Kind: MinEntropy, MinEntropyQ16: 65536}
	if p.Lossless() || p.Keep(0, 65535) || !p.Keep(0, 65536) || !p.Keep(0, 1<<20) {
		t.Fatal("min-entropy keeps H >= threshold (ties keep)")
	}
	if !(Policy{Kind: MinEntropy}).Lossless() {
		t.Fatal("a zero threshold keeps everything")
	}
}

// FuzzRead: Read never panics on raw bytes, every error wraps ErrFormat,
// and a bundle that reads writes back to exactly the bytes it consumed. Its
// seeds are short, so the fuzzer's minimisation of new inputs (quadratic in
// their length) stays cheap; FuzzReadDamaged covers whole bundles.
func FuzzRead(f *testing.F) {
	data, err := microBundle(f).Bytes()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data[:300])
	f.Add([]byte(Magic + "\x01\x00\x00\x00\x02\x00\x00\x00{}"))
	f.Fuzz(func(t *testing.T, d []byte) {
		r := bytes.NewReader(d)
		b, err := Read(r)
		if err != nil {
			if !errors.Is(err, ErrFormat) || !strings.HasPrefix(err.Error(), "model: ") {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		out, err := b.Bytes()
		if err != nil || !bytes.Equal(out, d[:len(d)-r.Len()]) {
			t.Fatalf("a bundle that reads does not write back to its bytes: %v", err)
		}
	})
}

func TestRiskPolicy(t *testing.T) {
	p := Policy{Kind: Risk, BinQ16: 16384, BinRate: []int32{1000, -1, 30000}, Marginal: []uint32{500, 700}, Impact: []uint64{1 << 32, 2 << 32}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	// lambda = 0 keeps everything, whatever the risk.
	for _, h := range []uint32{0, 1, 1 << 16, 1 << 20} {
		if !p.Keep(0, h) || !p.Keep(1, h) {
			t.Fatalf("lambda 0 omitted H=%d", h)
		}
	}
	// Bin 1 is empty: coordinate 1 falls back to its marginal rate 700, so
	// its risk is 700 * 2^33 (Q48). With H = 20480 (bin 1) the tie
	// lambda * H = risk is at lambda = 700 * 2^33 / 20480 = 293601280 (Q32).
	hi, lo := p.Risk(1, 20480)
	if hi != 0 || lo != 700<<33 {
		t.Fatalf("risk %d:%d", hi, lo)
	}
	at := p.WithLambda(293601280)
	if !at.Keep(1, 20480) {
		t.Fatal("the tie was omitted")
	}
	if at.WithLambda(293601281).Keep(1, 20480) {
		t.Fatal("one step above the tie was kept")
	}
	// Large values use all 128 bits: an impact of 2^40 bits at rate 1.
	big := Policy{Kind: Risk, BinQ16: 16384, BinRate: []int32{65536}, Marginal: []uint32{0}, Impact: []uint64{1 << 63}}
	if hi, _ := big.Risk(0, 1); hi != 1<<15 {
		t.Fatalf("128-bit risk: high word %d", hi)
	}
	if !big.WithLambda(1<<62).Keep(0, 1<<16) {
		t.Fatal("a huge risk was omitted")
	}
	// A populated bin overrides the marginal rate; H past the table uses the
	// last bin.
	if _, lo := p.Risk(0, 100); lo != 1000<<32 {
		t.Fatal("bin lookup")
	}
	if _, lo := p.Risk(0, 1<<20); lo != 30000<<32 {
		t.Fatal("last bin")
	}
	if (Policy{Kind: Risk, BinQ16: 16384, BinRate: []int32{-2}, Marginal: []uint32{1}, Impact: []uint64{1}}).Validate() == nil {
		t.Fatal("a rate of -2 passed")
	}
	if !p.Lossless() || p.WithLambda(1).Lossless() {
		t.Fatal("Lossless")
	}
	// The prior it was calibrated on: wm (or unnamed) or mix, nothing else;
	// WithLambda keeps it; a keep-all policy names none.
	for _, c := range []struct {
		prior string
		ok    bool
	}{{"", true}, {PriorWM, true}, {PriorMix, true}, {"gpt", false}} {
		q := p
		q.Prior = c.prior
		if err := q.Validate(); (err == nil) != c.ok {
			t.Fatalf("prior %q: %v", c.prior, err)
		}
		if q.WithLambda(5).CalibratedOnMix() != (c.prior == PriorMix) {
			t.Fatalf("prior %q: CalibratedOnMix", c.prior)
		}
	}
	mixed := p.WithLambda(1 << 32)
	mixed.Prior = PriorMix
	if s := mixed.String(); !strings.Contains(s, "mixed distribution") {
		t.Fatalf("String %q", s)
	}
	if (Policy{Kind: KeepAll, Prior: PriorMix}).Validate() == nil || (Policy{Kind: MinEntropy, Prior: PriorMix}).CalibratedOnMix() {
		t.Fatal("a prior on a policy without an error lookup")
	}
}

func TestBundleWithReader(t *testing.T) {
	b := testBundle(t, 1)
	cfgSim := sim.DefaultConfig()
	cfgSim.Shape.Dim, cfgSim.Episodes, cfgSim.Steps = 32, 6, 10
	w, err := sim.New(cfgSim)
	if err != nil {
		t.Fatal(err)
	}
	var states [][]float32
	var qs []*trajectory.Question
	for i := 0; i < cfgSim.Episodes; i++ {
		ep, questions, _ := w.Episode(i)
		for k := range questions {
			z, _ := b.OPQ.Encode(ep.States[questions[k].Step])
			x, _ := b.OPQ.Decode(z)
			states, qs = append(states, x), append(qs, &questions[k])
		}
	}
	cfg := reader.DefaultProbeConfig()
	cfg.Epochs, cfg.Slots, cfg.Dim = 2, 32, 32
	probe, _, err := reader.TrainProbe(states, qs, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Reader = probe
	data, err := b.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if r.Reader == nil || r.Hash() != b.Hash() {
		t.Fatal("the reader did not survive the round trip")
	}
	want, _ := probe.Bits(nil, states, qs)
	got, _ := r.Reader.Bits(nil, states, qs)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("question %d: %g bits after the round trip, %g before", i, got[i], want[i])
		}
	}
}

// FuzzReadDamaged damages a whole micro bundle as its input says and reads
// it: edits is a list of (offset uint16, xor byte) triples, cut (when not
// zero) truncates the result, and reseal recomputes the bundle's checksum so
// that the damage reaches the checks behind it (the parts keep their own
// checksums). Without reseal, any damage must be an error; with it, any
// damage must be an error or read back to exactly its bytes. The input is a
// few bytes, so the fuzzer runs and minimises fast.
func FuzzReadDamaged(f *testing.F) {
	data, err := microBundle(f).Bytes()
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{0, 0, 1}, uint16(0), false)
	f.Add([]byte{20, 0, 0x10}, uint16(0), true) // the header's JSON
	f.Add([]byte{}, uint16(len(data)-3), true)
	f.Fuzz(func(t *testing.T, edits []byte, cut uint16, reseal bool) {
		d := fuzzdamage.Damage(data, edits, cut, reseal)
		b, err := Read(bytes.NewReader(d))
		if err != nil {
			if !errors.Is(err, ErrFormat) || !strings.HasPrefix(err.Error(), "model: ") {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		out, err := b.Bytes()
		if err != nil || !bytes.Equal(out, d) {
			t.Fatalf("a bundle that reads does not write back to its bytes: %v", err)
		}
		if !reseal && !bytes.Equal(d, data) {
			t.Fatal("a damaged bundle was accepted")
		}
	})
}
