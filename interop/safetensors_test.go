package interop

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// stReport is what check_safetensors.py prints.
type stReport struct {
	Reader string `json:"reader"`
	Read   struct {
		HeaderLen uint64            `json:"header_len"`
		Metadata  map[string]string `json:"metadata"`
		Tensors   []struct {
			Name        string   `json:"name"`
			Dtype       string   `json:"dtype"`
			Shape       []int    `json:"shape"`
			DataOffsets [2]int64 `json:"data_offsets"`
			SHA256      string   `json:"sha256"`
		} `json:"tensors"`
	} `json:"read"`
	Written []struct {
		Path      string `json:"path"`
		HeaderLen int    `json:"header_len"`
		Tensors   []struct {
			Name      string `json:"name"`
			Dtype     string `json:"dtype"`
			SHA256    string `json:"sha256"`
			SHA256F32 string `json:"sha256_f32"`
		} `json:"tensors"`
	} `json:"written"`
}

// stModel is a tiny-preset model with random weights, a non-trivial copy
// gate and output biases, and edge values (negative zero, float32
// subnormals, the largest float16) in state_pad, which inference never
// reads.
func stModel(t *testing.T) *worldmodel.Model {
	t.Helper()
	cfg, err := worldmodel.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	m, err := worldmodel.New(cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, name := range []string{"copy_head/w", "copy_head/b", "code_head/b", "mask_head/b"} {
		d, _ := m.Tensor(name)
		for i := range d {
			d[i] = float32(rng.NormFloat64())
		}
	}
	pad, _ := m.Tensor("state_pad")
	copy(pad, []float32{float32(math.Copysign(0, -1)), math.Float32frombits(1), math.Float32frombits(0x007fffff), 65504, 0x1p-24, 1e-5, -1.5})
	return m
}

// tensorSHA256 is the SHA-256 of a tensor's little-endian float32 bytes.
func tensorSHA256(v []float32) string {
	h := sha256.New()
	var b [4]byte
	for _, x := range v {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// stHistories are random histories of 1, 5 and 16 steps.
func stHistories(cfg worldmodel.Config) []worldmodel.History {
	rng := rand.New(rand.NewPCG(9, 10))
	var hs []worldmodel.History
	for _, n := range []int{1, 5, cfg.MaxHistory} {
		var h worldmodel.History
		for k := 0; k < n; k++ {
			codes := make([]uint8, cfg.Coords())
			for j := range codes {
				codes[j] = uint8(rng.IntN(cfg.Codewords))
			}
			a := trajectory.Action{Type: trajectory.ActionType(rng.IntN(cfg.ActionTypes)), HasPos: k%2 == 0, X: rng.Float32(), Y: rng.Float32(), Payload: []byte("abc")[:k%4]}
			h = append(h, worldmodel.Step{Codes: codes, Action: a})
		}
		hs = append(hs, h)
	}
	return hs
}

// samePredictions checks that two models give the same bits: the float
// outputs of Forward (logits, gates, validity) and the integer tables,
// modes and entropies of Predict.
func samePredictions(t *testing.T, what string, a, b *worldmodel.Model, hs []worldmodel.History) {
	t.Helper()
	var outs [2][]worldmodel.Output
	var preds [2][]worldmodel.Prediction
	for i, m := range []*worldmodel.Model{a, b} {
		cpu, err := worldmodel.NewCPU(m)
		if err != nil {
			t.Fatal(err)
		}
		if outs[i], err = cpu.Forward(nil, hs); err != nil {
			t.Fatal(err)
		}
		if preds[i], err = cpu.Predict(nil, hs); err != nil {
			t.Fatal(err)
		}
	}
	bits := func(v []float32) []uint32 {
		u := make([]uint32, len(v))
		for i, x := range v {
			u[i] = math.Float32bits(x)
		}
		return u
	}
	for k := range hs {
		o, p := outs[0][k], outs[1][k]
		if !slices.Equal(bits(o.Logits), bits(p.Logits)) || !slices.Equal(bits(o.Gate), bits(p.Gate)) || !slices.Equal(bits(o.Valid), bits(p.Valid)) {
			t.Errorf("%s: history %d (%d steps): Forward gives other bits", what, k, len(hs[k]))
		}
		x, y := preds[0][k], preds[1][k]
		if !slices.Equal(x.Freq, y.Freq) || !slices.Equal(x.Mode, y.Mode) || !slices.Equal(x.Entropy, y.Entropy) {
			t.Errorf("%s: history %d (%d steps): Predict gives other tables", what, k, len(hs[k]))
		}
	}
}

// TestSafetensorsNumPy: NumPy reads memowm's safetensors export with every
// tensor's bytes identical, and the files NumPy writes from those arrays
// (other orders, other metadata or none, float16) import into memowm: as
// float32 they give the model that was exported, bit for bit, and the same
// predictions; as float16 the values NumPy widens them to.
func TestSafetensorsNumPy(t *testing.T) {
	needNumPy(t)
	dir := t.TempDir()
	m := stModel(t)
	cfg := m.Config()
	var buf bytes.Buffer
	if _, err := m.WriteSafetensors(&buf); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "tiny.safetensors")
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgJS, _ := json.Marshal(&cfg)
	p := func(n string) string { return filepath.Join(dir, n) }
	spec := map[string]any{
		"read": in,
		"write": []map[string]any{
			{"path": p("np-reverse.safetensors"), "order": "reverse", "dtype": "F32", "pad": true,
				"metadata": map[string]string{worldmodel.SafetensorsConfigKey: string(cfgJS), "writer": "check_safetensors.py"}},
			{"path": p("np-bare.safetensors"), "order": "name", "dtype": "F32", "pad": false, "metadata": nil},
			{"path": p("np-f16.safetensors"), "order": "name", "dtype": "F16", "pad": true, "metadata": map[string]string{"format": "np"}},
		},
	}
	var report stReport
	runScript(t, &fixture{dir: dir}, spec, &report, systemPython, "-I", "check_safetensors.py")
	t.Logf("reader: %s", report.Reader)

	// (a) What NumPy read is what memowm wrote: names in layout order,
	// dtypes, shapes, offsets, metadata and every tensor's bytes.
	ck := &checker{t: t, reader: report.Reader + " reading " + filepath.Base(in)}
	ck.equal("header length", report.Read.HeaderLen, binary.LittleEndian.Uint64(buf.Bytes()))
	ck.equal("metadata", report.Read.Metadata, map[string]string{worldmodel.SafetensorsConfigKey: string(cfgJS), worldmodel.SafetensorsVersionKey: "1"})
	ts := m.Params().Tensors
	if len(report.Read.Tensors) != len(ts) {
		t.Fatalf("NumPy read %d tensors, memowm wrote %d", len(report.Read.Tensors), len(ts))
	}
	sums := map[string]string{}
	for i, tn := range ts {
		got := report.Read.Tensors[i]
		name := worldmodel.SafetensorsName(tn.Name)
		data, _ := m.Tensor(tn.Name)
		sums[name] = tensorSHA256(data)
		ck.equal("tensor "+name+" (name)", got.Name, name)
		ck.equal("tensor "+name+" dtype", got.Dtype, "F32")
		ck.equal("tensor "+name+" shape", got.Shape, tn.Shape)
		ck.equal("tensor "+name+" data_offsets", got.DataOffsets, [2]int64{4 * int64(tn.Off), 4 * int64(tn.Off+tn.Size())})
		ck.equal("tensor "+name+" sha256", got.SHA256, sums[name])
	}
	if t.Failed() {
		t.FailNow()
	}

	// (b) The files NumPy wrote import into memowm.
	if len(report.Written) != 3 {
		t.Fatalf("check_safetensors.py wrote %d files, want 3", len(report.Written))
	}
	hs := stHistories(cfg)
	for _, w := range report.Written[:2] {
		wc := &checker{t: t, reader: report.Reader + " writing " + filepath.Base(w.Path)}
		for _, tn := range w.Tensors {
			wc.equal("tensor "+tn.Name+" sha256", tn.SHA256, sums[tn.Name])
		}
	}
	got, info, err := worldmodel.LoadSafetensors(p("np-reverse.safetensors"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !info.ConfigInFile || info.Metadata["writer"] != "check_safetensors.py" {
		t.Errorf("np-reverse: info %+v", info)
	}
	checkSame(t, "np-reverse", got, m)
	samePredictions(t, "np-reverse", got, m, hs)

	if _, _, err := worldmodel.LoadSafetensors(p("np-bare.safetensors"), nil); !errors.Is(err, worldmodel.ErrConfig) {
		t.Errorf("np-bare without a configuration: %v", err)
	}
	got, info, err = worldmodel.LoadSafetensors(p("np-bare.safetensors"), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if info.ConfigInFile || info.Metadata != nil || info.HeaderBytes != int64(report.Written[1].HeaderLen) {
		t.Errorf("np-bare: info %+v", info)
	}
	checkSame(t, "np-bare", got, m)
	samePredictions(t, "np-bare", got, m, hs)

	// float16: memowm widens each value to the float32 NumPy widens it to.
	got, info, err = worldmodel.LoadSafetensors(p("np-f16.safetensors"), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if info.Dtypes["F16"] != len(ts) {
		t.Errorf("np-f16: info %+v", info)
	}
	fc := &checker{t: t, reader: report.Reader + " writing np-f16.safetensors"}
	for _, tn := range report.Written[2].Tensors {
		data, _ := got.Tensor(tensorName(ts, tn.Name))
		fc.equal("tensor "+tn.Name+" as float32 (sha256)", tensorSHA256(data), tn.SHA256F32)
	}
}

// tensorName is the layout name of the tensor named st in a safetensors
// file.
func tensorName(ts []worldmodel.Tensor, st string) string {
	for _, t := range ts {
		if worldmodel.SafetensorsName(t.Name) == st {
			return t.Name
		}
	}
	return ""
}

// checkSame checks that got has want's configuration and weights, bit for
// bit.
func checkSame(t *testing.T, what string, got, want *worldmodel.Model) {
	t.Helper()
	if got.Config() != want.Config() {
		t.Errorf("%s: configuration %+v, want %+v", what, got.Config(), want.Config())
	}
	a, b := got.Params().Data, want.Params().Data
	if len(a) != len(b) {
		t.Fatalf("%s: %d parameters, want %d", what, len(a), len(b))
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Errorf("%s: parameter %d is %g (bits %#08x), want %g (%#08x)", what, i, a[i], math.Float32bits(a[i]), b[i], math.Float32bits(b[i]))
			return
		}
	}
}
