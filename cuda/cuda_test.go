package cuda

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memowm/memowm/worldmodel"
)

// TestPTXUpToDate regenerates the PTX with gen.sh and compares it with the
// committed text, byte for byte. Without clang-14 it skips, unless
// MEMOWM_CLANG=1 (CI) makes that a failure.
func TestPTXUpToDate(t *testing.T) {
	clang := os.Getenv("CLANG")
	if clang == "" {
		clang = "clang-14"
	}
	if _, err := exec.LookPath(clang); err != nil {
		if os.Getenv("MEMOWM_CLANG") == "1" {
			t.Fatalf("MEMOWM_CLANG=1 but %s is not on PATH: %v", clang, err)
		}
		t.Skipf("%s is not on PATH (apt-get install clang-14): the PTX cannot be regenerated here", clang)
	}
	dir := t.TempDir()
	cmd := exec.Command("./gen.sh", dir)
	cmd.Env = append(os.Environ(), "CLANG="+clang)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen.sh: %v\n%s", err, out)
	}
	names, _ := ptxModules()
	for _, name := range names {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what cuda/gen.sh makes of kernels/: run cuda/gen.sh and commit it", name)
		}
	}
}

func TestKernelNames(t *testing.T) {
	_, texts := ptxModules()
	var got []string
	for _, t := range texts {
		got = append(got, kernelNames(t)...)
	}
	want := []string{"ln_rows", "gemm_s8", "requant8", "add_resid", "gelu8", "gather_rows", "attention", "heads"}
	for _, k := range want {
		if !slices.Contains(got, k) {
			t.Errorf("int8.ptx has no kernel %s (has %v)", k, got)
		}
	}
}

// TestModuleTargets: the modules' targets, which decide what a GPU loads
// (int8_tc's tensor cores from compute capability 8.0).
func TestModuleTargets(t *testing.T) {
	names, texts := ptxModules()
	want := map[string]int{"int8.ptx": 61, "int8_tc.ptx": 80, "train.ptx": 61, "train_tc.ptx": 80}
	driver := map[string]int{"int8.ptx": 9000, "int8_tc.ptx": 11000, "train.ptx": 9000, "train_tc.ptx": 11000}
	for i, n := range names {
		if got := ptxTarget(texts[i]); got != want[n] {
			t.Errorf("%s: target sm_%d, want sm_%d", n, got, want[n])
		}
		if got := ptxDriver(texts[i]); got != driver[n] {
			t.Errorf("%s: needs driver %d, want %d", n, got, driver[n])
		}
	}
	if len(names) != len(want) {
		t.Errorf("modules %v, want %d", names, len(want))
	}
}

// TestNoGPU: on a machine without a GPU (CI), Open and Probe say why and
// wrap ErrUnavailable; nothing panics or exits.
func TestNoGPU(t *testing.T) {
	d, err := Open(0)
	if err == nil {
		d.Close()
		t.Skip("a GPU opened: this test is for machines without one")
	}
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("Open: %v does not wrap ErrUnavailable", err)
	}
	if len(err.Error()) < len(ErrUnavailable.Error())+10 {
		t.Errorf("Open's error %q gives no reason", err)
	}
	if _, perr := Probe(); perr == nil || perr.Error() != err.Error() {
		t.Errorf("Probe: %v, want %v", perr, err)
	}
	if _, err := Open(-1); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Open(-1): %v", err)
	}
	t.Logf("reason: %v", err)
}

// openEmu opens the emulator for a test.
func openEmu(t *testing.T) Device {
	t.Helper()
	d, err := OpenEmulator()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func randomInt8(t *testing.T, preset string, seed uint64) *worldmodel.Int8Model {
	t.Helper()
	q, err := RandomInt8(preset, seed)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// checkParity compares the CPU and d with every GEMM kernel d has.
func checkParity(t *testing.T, d Device, q *worldmodel.Int8Model, hs []worldmodel.History, ops bool, opts ...worldmodel.Option) *Parity {
	t.Helper()
	var p *Parity
	for _, name := range []string{"dp4a", "mma"} {
		if !d.Has(GEMMs[name]) {
			continue
		}
		var err error
		p, err = CompareInt8(d, q, hs, CompareOptions{Ops: ops, GEMM: name, Model: opts})
		if err != nil {
			t.Fatal(err)
		}
		reportParity(t, p)
	}
	return p
}

func reportParity(t *testing.T, p *Parity) {
	t.Helper()
	if !p.OK() {
		t.Errorf("%s", p)
		for _, o := range p.Ops {
			if o.Mismatches > 0 {
				t.Errorf("  %s (layer %d): %d of %d differ, first at %d", o.Op, o.Layer, o.Mismatches, o.Values, o.First)
			}
		}
	}
}

// TestParityEmulator: the kernels, run by the emulator, give the CPU's
// integers at every step and the same tables, modes and entropies, for a
// batch of histories of every length up to the window.
func TestParityEmulator(t *testing.T) {
	d := openEmu(t)
	q := randomInt8(t, "tiny", 1)
	c := q.Config()
	n := 4
	if testing.Short() {
		n = 2
	}
	hs := RandomHistories(c, n, 3)
	hs = append(hs, RandomHistories(c, 1, 15)...) // a full window: 1 + 15 % 16 = 16 states
	p := checkParity(t, d, q, hs, true)
	// tokens, 11 steps per layer, final
	if want := 2 + 11*c.Layers; len(p.Ops) != want {
		t.Errorf("%d steps compared, want %d", len(p.Ops), want)
	}
	if p.Tables != len(hs)*c.Coords() {
		t.Errorf("%d tables compared, want %d", p.Tables, len(hs)*c.Coords())
	}
	t.Logf("%s; CPU %.3f s, emulator %.1f s", p, p.CPUSeconds, p.DeviceSeconds)
}

// TestParityEmulatorExtremes pushes the head's rules to their edges: logit
// gaps past 2^32 (mult.applyWide's 128-bit path), weights past the
// exponential table, a saturated copy gate, and a low precision where
// FixTotal must take from several entries.
func TestParityEmulatorExtremes(t *testing.T) {
	d := openEmu(t)
	q := randomInt8(t, "tiny", 2)
	c := q.Config()
	J, C := c.Coords(), c.Codewords
	for j := 0; j < J; j++ {
		switch j % 4 {
		case 0: // one codeword far ahead: gaps >= 2^32
			q.Bias[j*C+j%C] += 1 << 40
		case 1: // a spread wider than the table
			for cw := 0; cw < C; cw++ {
				q.Bias[j*C+cw] += int64(cw) << 28
			}
		case 2: // the copy gate saturated either way
			q.CopyB[j] = 1 << 50
			if j%8 == 2 {
				q.CopyB[j] = -(1 << 50)
			}
		}
	}
	hs := RandomHistories(c, 2, 5)
	checkParity(t, d, q, hs, false)
	checkParity(t, d, q, hs, false, worldmodel.WithPrecision(8))
}

// TestParityGPU runs the harness on a real GPU when one opens (never in CI).
func TestParityGPU(t *testing.T) {
	d, err := Open(0)
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	defer d.Close()
	for _, preset := range []string{"tiny", "small", "base"} {
		q := randomInt8(t, preset, 1)
		p := checkParity(t, d, q, RandomHistories(q.Config(), 8, 1), true)
		t.Logf("%s on %s", p, d.Info())
	}
}

// TestInt8Errors: bad histories are refused with worldmodel's errors and
// nothing reaches the device; an empty batch gives no predictions.
func TestInt8Errors(t *testing.T) {
	d := openEmu(t)
	q := randomInt8(t, "tiny", 1)
	g, err := NewInt8(d, q)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	c := q.Config()
	hs := RandomHistories(c, 2, 1)
	hs[1] = append(worldmodel.History(nil), hs[1]...)
	hs[1][0].Codes = hs[1][0].Codes[:3]
	if _, err := g.Predict(nil, hs); !errors.Is(err, worldmodel.ErrHistory) {
		t.Errorf("short codes: %v, want ErrHistory", err)
	}
	bad := RandomHistories(c, 1, 2)
	bad[0][0].Codes = append([]uint8(nil), bad[0][0].Codes...)
	bad[0][0].Codes[5] = uint8(c.Codewords)
	if _, err := g.Predict(nil, bad); !errors.Is(err, worldmodel.ErrCode) {
		t.Errorf("code out of range: %v, want ErrCode", err)
	}
	if out, err := g.Predict(make([]worldmodel.Prediction, 3), nil); err != nil || len(out) != 0 {
		t.Errorf("empty batch: %d predictions, %v", len(out), err)
	}
	if err := d.Launch("no_such_kernel", Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0); !errors.Is(err, ErrKernel) {
		t.Errorf("unknown kernel: %v", err)
	}
	if g.Profile() != worldmodel.ProfileInt8 || g.Precision() != worldmodel.DefaultPrecision {
		t.Errorf("profile %s precision %d", g.Profile(), g.Precision())
	}
}

// TestInt8Reuse: predictions into a reused dst, and batches of different
// sizes one after the other, give what fresh calls give.
func TestInt8Reuse(t *testing.T) {
	d := openEmu(t)
	q := randomInt8(t, "tiny", 3)
	g, err := NewInt8(d, q)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	cpu, err := worldmodel.NewInt8CPU(q)
	if err != nil {
		t.Fatal(err)
	}
	c := q.Config()
	var dst []worldmodel.Prediction
	for i, n := range []int{3, 1, 2} {
		hs := RandomHistories(c, n, uint64(20+i))
		if dst, err = g.Predict(dst, hs); err != nil {
			t.Fatal(err)
		}
		want, err := cpu.Predict(nil, hs)
		if err != nil {
			t.Fatal(err)
		}
		if len(dst) != n {
			t.Fatalf("call %d: %d predictions, want %d", i, len(dst), n)
		}
		for b := range want {
			if !slices.Equal(dst[b].Freq, want[b].Freq) || !slices.Equal(dst[b].Mode, want[b].Mode) || !slices.Equal(dst[b].Entropy, want[b].Entropy) {
				t.Errorf("call %d history %d differs from the CPU", i, b)
			}
		}
	}
}

// TestInt8Chunks: a batch larger than one call's rows is predicted in
// chunks of whole histories, with the CPU's results.
func TestInt8Chunks(t *testing.T) {
	d := openEmu(t)
	q := randomInt8(t, "tiny", 4)
	g, err := NewInt8(d, q)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	c := q.Config()
	g.chunkRows = c.MaxHistory * c.Slots // one full window per call at most
	if rows, _ := g.chunk(); rows != c.MaxHistory*c.Slots {
		t.Fatalf("chunk rows %d", rows)
	}
	hs := RandomHistories(c, 5, 6)
	cpu, err := worldmodel.NewInt8CPU(q)
	if err != nil {
		t.Fatal(err)
	}
	want, err := cpu.Predict(nil, hs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := g.Predict(nil, hs)
	if err != nil {
		t.Fatal(err)
	}
	for b := range want {
		if !slices.Equal(got[b].Freq, want[b].Freq) || !slices.Equal(got[b].Mode, want[b].Mode) || !slices.Equal(got[b].Entropy, want[b].Entropy) {
			t.Errorf("history %d differs from the CPU", b)
		}
	}
	g.chunkRows = 0
	if rows, hists := g.chunk(); rows < c.MaxHistory*c.Slots || hists < 1 {
		t.Errorf("default chunk: %d rows, %d histories", rows, hists)
	}
}
