package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memowm/memowm/internal/fixture"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/worldmodel"
)

// saveFixtureBundle saves a fixture bundle (a tiny world model with random
// weights from seed) at path.
func saveFixtureBundle(t *testing.T, path string, seed uint64, policy model.Policy, tr *model.Training) *model.Bundle {
	t.Helper()
	b, _, err := fixture.Bundle(seed, policy)
	if err != nil {
		t.Fatal(err)
	}
	b.Training = tr
	if err := b.Save(path); err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureHistories are histories of the fixture's episodes.
func fixtureHistories(t *testing.T, max int) []worldmodel.History {
	t.Helper()
	s, err := fixture.Get()
	if err != nil {
		t.Fatal(err)
	}
	var hs []worldmodel.History
	for _, ep := range s.Episodes[:2] {
		var h worldmodel.History
		for i := 0; i < min(len(ep.Codes)-1, max); i++ {
			h = append(h, worldmodel.Step{Codes: ep.Codes[i], Action: ep.Actions[i]})
		}
		hs = append(hs, h)
	}
	return hs
}

// samePredictions reports whether two models give the same integer tables,
// modes and entropies on hs.
func samePredictions(t *testing.T, a, b *worldmodel.Model, hs []worldmodel.History) bool {
	t.Helper()
	var out [2][]worldmodel.Prediction
	for i, m := range []*worldmodel.Model{a, b} {
		cpu, err := worldmodel.NewCPU(m)
		if err != nil {
			t.Fatal(err)
		}
		if out[i], err = cpu.Predict(nil, hs); err != nil {
			t.Fatal(err)
		}
	}
	for k := range hs {
		p, q := out[0][k], out[1][k]
		if !slices.Equal(p.Freq, q.Freq) || !slices.Equal(p.Mode, q.Mode) || !slices.Equal(p.Entropy, q.Entropy) {
			return false
		}
	}
	return true
}

func sameWeights(a, b *worldmodel.Model) bool {
	x, y := a.Params().Data, b.Params().Data
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
			return false
		}
	}
	return true
}

// TestWeightsExportImport: a bundle's weights go out as safetensors and into
// a copy of another bundle, which then holds exactly those weights and
// predicts the same bits; the copy keeps its quantizer and policy, gets a
// new hash and no training record.
func TestWeightsExportImport(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	b1 := saveFixtureBundle(t, p("b1.mwb"), 1, model.Policy{}, &model.Training{Steps: 3, TargetSteps: 3})
	b2 := saveFixtureBundle(t, p("b2.mwb"), 2, model.Policy{}, nil)

	code, out, errs := memowm(t, "weights", "export", "--model", p("b2.mwb"), "--out", p("w2.safetensors"), "--json")
	if code != 0 {
		t.Fatalf("export: %d\n%s%s", code, out, errs)
	}
	var ex struct {
		SHA256    string `json:"sha256"`
		SizeBytes int64  `json:"file_bytes"`
		Params    int    `json:"params"`
		Tensors   []struct {
			Name        string   `json:"name"`
			Shape       []int    `json:"shape"`
			DataOffsets [2]int64 `json:"data_offsets"`
			SHA256      string   `json:"sha256"`
		} `json:"per_tensor"`
	}
	if err := json.Unmarshal([]byte(out), &ex); err != nil {
		t.Fatal(err)
	}
	sum, size, err := fileSHA256(p("w2.safetensors"))
	if err != nil || sum != ex.SHA256 || size != ex.SizeBytes {
		t.Fatalf("export summary: sha256 %s size %d, the file has %s %d (%v)", ex.SHA256, ex.SizeBytes, sum, size, err)
	}
	cfg2 := b2.Model.Config()
	if len(ex.Tensors) != len(b2.Model.Params().Tensors) || ex.Params != cfg2.NumParams() || ex.Tensors[0].Name != "code_embedding" {
		t.Fatalf("export summary: %d tensors, %d params", len(ex.Tensors), ex.Params)
	}

	code, out, errs = memowm(t, "weights", "import", "--model", p("b1.mwb"), "--in", p("w2.safetensors"), "--out", p("n.mwb"))
	if code != 0 || !strings.Contains(out, "configuration from the file's memowm.config") || !strings.Contains(out, "training      imported from safetensors sha256 "+sum[:12]+" (trained elsewhere)") || errs != "" {
		t.Fatalf("import: %d\n%s%s", code, out, errs)
	}
	nb, err := model.Load(p("n.mwb"))
	if err != nil {
		t.Fatal(err)
	}
	if !sameWeights(nb.Model, b2.Model) || nb.Model.Config() != b2.Model.Config() {
		t.Fatal("the imported bundle does not hold the exported weights")
	}
	if !samePredictions(t, nb.Model, b2.Model, fixtureHistories(t, 6)) {
		t.Fatal("the imported bundle predicts other bits than the bundle it came from")
	}
	var q1, qn bytes.Buffer
	b1.OPQ.WriteTo(&q1)
	nb.OPQ.WriteTo(&qn)
	if !bytes.Equal(q1.Bytes(), qn.Bytes()) || nb.Precision != b1.Precision || nb.Policy.Kind != b1.Policy.Kind {
		t.Fatal("the import changed the quantizer, precision or policy")
	}
	// The new bundle records where its weights came from (the file's
	// SHA-256), so it is neither b1 nor b2, and it counts as trained: encode
	// and fit take it without the untrained warning.
	if nb.Training == nil || nb.Training.Imported != sum || nb.CheckTrained() != nil || nb.HashString() == b1.HashString() || nb.HashString() == b2.HashString() {
		t.Fatalf("training %v, hash %s (b1 %s, b2 %s)", nb.Training, nb.HashString(), b1.HashString(), b2.HashString())
	}

	// Round trip: export, import into the same bundle: the same weights.
	if code, _, errs := memowm(t, "weights", "export", "--model", p("b1.mwb"), "--out", p("w1.safetensors")); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs = memowm(t, "weights", "import", "--model", p("b1.mwb"), "--in", p("w1.safetensors"), "--out", p("r.mwb"), "--json")
	if code != 0 {
		t.Fatalf("import --json: %d\n%s%s", code, out, errs)
	}
	var im struct {
		SHA256        string         `json:"bundle_sha256"`
		Previous      string         `json:"previous_bundle_sha256"`
		ConfigFrom    string         `json:"config_from"`
		Changed       int            `json:"changed_params"`
		Dtypes        map[string]int `json:"dtypes"`
		Training      *model.Training
		PrevTraining  *model.Training `json:"previous_training"`
		TensorsInFile int             `json:"tensors"`
	}
	if err := json.Unmarshal([]byte(out), &im); err != nil {
		t.Fatal(err)
	}
	rb, err := model.Load(p("r.mwb"))
	if err != nil {
		t.Fatal(err)
	}
	if !sameWeights(rb.Model, b1.Model) || im.Changed != 0 || im.ConfigFrom != "file" || im.Previous != b1.HashString() ||
		im.SHA256 != rb.HashString() || im.Training == nil || im.Training.Imported == "" || im.PrevTraining == nil || im.Dtypes["F32"] != im.TensorsInFile {
		t.Fatalf("round trip: %+v", im)
	}

	// A file without memowm's metadata imports with the bundle's
	// configuration.
	data, _ := os.ReadFile(p("w2.safetensors"))
	n := binary.LittleEndian.Uint64(data)
	var h map[string]json.RawMessage
	if err := json.Unmarshal(data[8:8+n], &h); err != nil {
		t.Fatal(err)
	}
	delete(h, "__metadata__")
	js, _ := json.Marshal(h)
	bare := append(binary.LittleEndian.AppendUint64(nil, uint64(len(js))), js...)
	os.WriteFile(p("bare.safetensors"), append(bare, data[8+n:]...), 0o644)
	code, out, errs = memowm(t, "weights", "import", "--model", p("b1.mwb"), "--in", p("bare.safetensors"), "--out", p("m.mwb"))
	if code != 0 || !strings.Contains(out, "configuration from the bundle") {
		t.Fatalf("import without metadata: %d\n%s%s", code, out, errs)
	}
	if mb, err := model.Load(p("m.mwb")); err != nil || !sameWeights(mb.Model, b2.Model) {
		t.Fatalf("import without metadata: %v", err)
	}

	// A bundle whose policy depends on the weights is kept, with a warning.
	saveFixtureBundle(t, p("me.mwb"), 3, model.Policy{Kind: model.MinEntropy, MinEntropyQ16: 1 << 14}, nil)
	code, _, errs = memowm(t, "weights", "import", "--model", p("me.mwb"), "--in", p("w2.safetensors"), "--out", p("me2.mwb"))
	if code != 0 || !strings.Contains(errs, "warning") || !strings.Contains(errs, "recalibrate") {
		t.Fatalf("min-entropy policy: %d %s", code, errs)
	}
}

// TestWeightsErrors: usage mistakes are status 2 before any work; files
// that do not fit are status 1 with a message that says why.
func TestWeightsErrors(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	b1 := saveFixtureBundle(t, p("b1.mwb"), 1, model.Policy{}, nil)
	if err := b1.Model.SaveSafetensors(p("w.safetensors")); err != nil {
		t.Fatal(err)
	}
	// Weights of another architecture.
	other := b1.Model.Config()
	other.MLP *= 2
	om, err := worldmodel.New(other, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := om.SaveSafetensors(p("other.safetensors")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p("w.safetensors"))
	os.WriteFile(p("short.safetensors"), data[:len(data)-3], 0o644)
	os.WriteFile(p("w.bin"), data, 0o644)

	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"weights"}, 2, "export or import"},
		{[]string{"weights", "frob"}, 2, `"frob"`},
		{[]string{"weights", "export", "--out", p("x.safetensors")}, 2, "--model and --out are required"},
		{[]string{"weights", "export", "--model", p("b1.mwb"), "--out", p("x.bin")}, 2, "named .safetensors"},
		{[]string{"weights", "export", "--model", p("b1.mwb"), "--out", p("nope/x.safetensors")}, 2, "does not exist"},
		{[]string{"weights", "export", "--model", p("b1.mwb"), "--out", "-"}, 2, "never to stdout"},
		{[]string{"weights", "export", "--model", p("missing.mwb"), "--out", p("x.safetensors")}, 1, "missing.mwb"},
		{[]string{"weights", "export", "--model", p("b1.mwb"), "--out", p("x.safetensors"), "extra"}, 2, "unexpected argument"},
		{[]string{"weights", "import", "--model", p("b1.mwb"), "--in", p("w.safetensors")}, 2, "required"},
		{[]string{"weights", "import", "--model", p("b1.mwb"), "--in", p("w.bin"), "--out", p("n.mwb")}, 2, "named .safetensors"},
		{[]string{"weights", "import", "--model", p("b1.mwb"), "--in", p("w.safetensors"), "--out", p("n.opq")}, 2, "named .mwb"},
		{[]string{"weights", "import", "--model", p("b1.mwb"), "--in", p("w.safetensors"), "--out", p("b1.mwb")}, 2, "replace the input"},
		{[]string{"weights", "import", "--model", p("b1.mwb"), "--in", p("w.safetensors"), "--out", p("nope/n.mwb")}, 2, "does not exist"},
		{[]string{"weights", "import", "--model", p("b1.mwb"), "--in", p("w.safetensors"), "--out", p("n.mwb"), "--preset", "huge"}, 2, "unknown preset"},
		{[]string{"weights", "import", "--model", p("b1.mwb"), "--in", p("missing.safetensors"), "--out", p("n.mwb")}, 1, "missing.safetensors"},
		{[]string{"weights", "import", "--model", p("b1.mwb"), "--in", p("w.safetensors"), "--out", p("n.mwb"), "--preset", "tiny"}, 1, "codewords 64, expected 16"},
		{[]string{"weights", "import", "--model", p("b1.mwb"), "--in", p("other.safetensors"), "--out", p("n.mwb")}, 1, "does not fit the world model of"},
		{[]string{"weights", "import", "--model", p("b1.mwb"), "--in", p("short.safetensors"), "--out", p("n.mwb")}, 1, "worldmodel: invalid weights file: safetensors:"},
	}
	for _, c := range cases {
		code, out, errs := memowm(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: status %d, want %d; stderr %q does not say %q (stdout %q)", c.args[1:], code, c.code, errs, c.msg, out)
		}
	}
	if _, err := os.Stat(p("n.mwb")); !os.IsNotExist(err) {
		t.Fatalf("a failed import left its output: %v", err)
	}
	if code, out, _ := memowm(t, "weights", "-h"); code != 0 || !strings.Contains(out, "memowm weights import --model BUNDLE") {
		t.Fatalf("weights -h: %d %s", code, out)
	}
	if code, out, _ := memowm(t, "help", "weights"); code != 0 || !strings.Contains(out, "memowm weights export --model BUNDLE") {
		t.Fatalf("help weights: %d %s", code, out)
	}
	if code, out, _ := memowm(t, "completion", "bash"); code != 0 || !strings.Contains(out, `weights) flags="--force --in --json --model --out --preset"`) ||
		!strings.Contains(out, `compgen -W "export import"`) {
		t.Fatalf("completion: %d\n%s", code, out)
	}
}
