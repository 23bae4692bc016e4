package worldmodel

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden is what the golden test pins: digests of every output bit and a few
// values for a person to read.
type golden struct {
	Note        string   `json:"note"`
	Logits      string   `json:"logits_sha256"`
	Gate        string   `json:"gate_sha256"`
	Valid       string   `json:"valid_sha256"`
	Tables      string   `json:"tables_sha256"`
	FirstLogits []uint32 `json:"first_logits_bits"`
	Mathf       string   `json:"mathf_sha256"`
}

func digestF32(vs ...[]float32) string {
	h := sha256.New()
	var b [4]byte
	for _, v := range vs {
		for _, x := range v {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// goldenNow computes the golden values: the tiny model (seed 21) on a batch
// of three histories (1, 5 and 16 steps), and the elementary functions on a
// grid.
func goldenNow(t *testing.T) golden {
	m := tinyModel(t, 21)
	c := m.Config()
	rng := rand.New(rand.NewPCG(21, 21))
	hs := []History{randomHistory(rng, &c, 1), randomHistory(rng, &c, 5), randomHistory(rng, &c, c.MaxHistory)}
	r := newCPU(t, m)
	outs, err := r.Forward(nil, hs)
	if err != nil {
		t.Fatal(err)
	}
	preds, err := r.Predict(nil, hs)
	if err != nil {
		t.Fatal(err)
	}
	g := golden{Note: "tiny preset, seed 21, histories of 1, 5 and 16 steps; recorded on amd64; must hold on every architecture"}
	var lg, gt, vd []float32
	for _, o := range outs {
		lg, gt, vd = append(lg, o.Logits...), append(gt, o.Gate...), append(vd, o.Valid...)
	}
	g.Logits, g.Gate, g.Valid = digestF32(lg), digestF32(gt), digestF32(vd)
	h := sha256.New()
	for _, p := range preds {
		binary.Write(h, binary.LittleEndian, p.Freq)
		h.Write(p.Mode)
		binary.Write(h, binary.LittleEndian, p.Entropy)
	}
	g.Tables = hex.EncodeToString(h.Sum(nil))
	for _, v := range lg[:8] {
		g.FirstLogits = append(g.FirstLogits, math.Float32bits(v))
	}
	var mf []float32
	for i := -40000; i <= 40000; i++ {
		x := float32(i) * 0.0025
		mf = append(mf, expf(x), tanhf(x), sigmoidf(x), geluf(x), slogf(x*100))
	}
	g.Mathf = digestF32(mf)
	return g
}

// TestGolden pins the outputs' bits. Run with -update on amd64 to record
// them; on arm64 (GOARCH=arm64 go test -c, run under qemu-aarch64) the same
// file must match, which is the cross-architecture determinism check.
func TestGolden(t *testing.T) {
	path := filepath.Join("testdata", "golden_tiny.json")
	got := goldenNow(t)
	js, _ := json.MarshalIndent(got, "", "  ")
	js = append(js, '\n')
	if *update {
		if err := os.WriteFile(path, js, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want golden
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if got.Mathf != want.Mathf || got.Logits != want.Logits || got.Gate != want.Gate || got.Valid != want.Valid || got.Tables != want.Tables {
		os.WriteFile(path+".got", js, 0o644)
		t.Fatalf("outputs differ from %s (wrote %s.got): mathf %v logits %v gate %v valid %v tables %v",
			path, path, got.Mathf == want.Mathf, got.Logits == want.Logits, got.Gate == want.Gate, got.Valid == want.Valid, got.Tables == want.Tables)
	}
}
