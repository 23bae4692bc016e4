package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memowm/memowm/internal/atomicfile"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/trajectory"
)

// TestNoClobber: a writing verb refuses an existing --out (exit 2, the file
// untouched) unless --force; a stage may update its --model in place.
func TestNoClobber(t *testing.T) {
	dir := t.TempDir()
	traj := filepath.Join(dir, "t.arrow")
	sim := []string{"sim", "--episodes", "4", "--steps", "20", "--dim", "32", "--out", traj, "--quiet"}
	if code, _, errs := memowm(t, sim...); code != 0 {
		t.Fatal(errs)
	}
	before, _ := os.ReadFile(traj)
	code, _, errs := memowm(t, append(sim[:len(sim):len(sim)], "--seed", "9")...)
	if code != 2 || !strings.Contains(errs, "exists") || !strings.Contains(errs, "--force") {
		t.Fatalf("sim over an existing file: %d %s", code, errs)
	}
	if after, _ := os.ReadFile(traj); string(after) != string(before) {
		t.Fatal("the refused run changed the file")
	}
	if code, _, errs := memowm(t, append(sim[:len(sim):len(sim)], "--seed", "9", "--force")...); code != 0 {
		t.Fatalf("--force: %s", errs)
	}
	if after, _ := os.ReadFile(traj); string(after) == string(before) {
		t.Fatal("--force did not replace the file")
	}
	for _, args := range [][]string{
		{"fit", "opq", "--in", traj, "--out", traj + ".opq", "--quiet"},
		{"quantize", "--opq", traj + ".opq", "--in", traj, "--out", filepath.Join(dir, "c.arrow"), "--quiet"},
		{"fit", "--in", traj, "--out", filepath.Join(dir, "b.mwb"), "--preset", "tiny", "--quiet"},
		{"encode", "--model", filepath.Join(dir, "b.mwb"), "--in", traj, "--out", filepath.Join(dir, "m.mwm"), "--quiet"},
		{"decode", "--model", filepath.Join(dir, "b.mwb"), "--in", filepath.Join(dir, "m.mwm"), "--out", filepath.Join(dir, "d.arrow"), "--quiet"},
	} {
		if code, out, errs := memowm(t, args...); code != 0 {
			t.Fatalf("%v: %s%s", args, out, errs)
		}
		if code, _, errs := memowm(t, args...); code != 2 || !strings.Contains(errs, "--force") {
			t.Fatalf("%v again: %d %s", args, code, errs)
		}
		if code, out, errs := memowm(t, append(args, "--force")...); code != 0 {
			t.Fatalf("%v --force: %s%s", args, out, errs)
		}
	}
}

// TestLossyEncodeMeasuresDecodedStates: a lossy encode reports the quality
// of the states the file gives back, which is what decode --what states
// then gives (the same R^2 to the last bit), and below the lossless file's.
func TestLossyEncodeMeasuresDecodedStates(t *testing.T) {
	dir := t.TempDir()
	traj, bundle := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "b.mwb")
	mustRun(t,
		[]string{"sim", "--episodes", "4", "--steps", "20", "--dim", "32", "--out", traj, "--quiet"},
		[]string{"fit", "--in", traj, "--out", bundle, "--preset", "tiny", "--quiet"},
	)
	encode := func(name string, extra ...string) accounting {
		t.Helper()
		args := append([]string{"encode", "--model", bundle, "--in", traj, "--out", filepath.Join(dir, name), "--quiet", "--json"}, extra...)
		code, out, errs := memowm(t, args...)
		if code != 0 {
			t.Fatalf("%v: %s%s", args, out, errs)
		}
		var a accounting
		if err := json.Unmarshal([]byte(out), &a); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		if a.StatesR2 == nil || a.StatesMSE == nil || a.StatesMeasured != 84 || a.StatesAgainst != "input states" {
			t.Fatalf("%v: no measured states quality: %s", args, out)
		}
		return a
	}
	lossless := encode("lossless.mwm", "--lambda", "0")
	// The untrained tiny model predicts near-uniform tables (H about 6
	// bits): --min-entropy 6.5 omits what it predicts, keeping z_0.
	lossy := encode("lossy.mwm", "--min-entropy", "6.5")
	if lossy.KeptFraction >= 1 {
		t.Fatalf("--min-entropy 6.5 kept %.4f: the test needs a lossy file", lossy.KeptFraction)
	}
	if !(*lossy.StatesR2 < *lossless.StatesR2) || !(*lossy.StatesMSE > *lossless.StatesMSE) {
		t.Fatalf("lossy R^2 %.4f MSE %.4g vs lossless %.4f %.4g", *lossy.StatesR2, *lossy.StatesMSE, *lossless.StatesR2, *lossless.StatesMSE)
	}
	// Measured independently: decode the states and compare with the input.
	for _, c := range []struct {
		name string
		a    accounting
	}{{"lossless", lossless}, {"lossy", lossy}} {
		dec := filepath.Join(dir, c.name+"-states.arrow")
		if code, out, errs := memowm(t, "decode", "--model", bundle, "--in", filepath.Join(dir, c.name+".mwm"), "--out", dec, "--what", "states", "--quiet"); code != 0 {
			t.Fatalf("decode: %s%s", out, errs)
		}
		q := statesQuality(t, traj, dec)
		if q.States != 84 || q.R2 != *c.a.StatesR2 || q.MSE != *c.a.StatesMSE {
			t.Fatalf("%s: encode says R^2 %v MSE %v, decoded states give %+v", c.name, *c.a.StatesR2, *c.a.StatesMSE, q)
		}
	}
	// The text says what was measured.
	code, out, errs := memowm(t, "encode", "--model", bundle, "--in", traj, "--out", filepath.Join(dir, "lossy2.mwm"), "--quiet", "--min-entropy", "6.5")
	if code != 0 || !strings.Contains(out, "decoded states (") || !strings.Contains(out, "vs the input states: R^2 ") {
		t.Fatalf("lossy text: %d %s%s", code, out, errs)
	}
}

// statesQuality compares two states files episode by episode.
func statesQuality(t *testing.T, want, got string) opq.Quality {
	t.Helper()
	a, err := trajectory.Open(want)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := trajectory.Open(got)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var m *opq.QualityMeter
	for {
		ea, erra := a.Next()
		eb, errb := b.Next()
		if erra == io.EOF && errb == io.EOF {
			break
		}
		if erra != nil || errb != nil {
			t.Fatal(erra, errb)
		}
		if ea.ID != eb.ID || len(ea.States) != len(eb.States) {
			t.Fatalf("episodes %d (%d states) and %d (%d)", ea.ID, len(ea.States), eb.ID, len(eb.States))
		}
		for i := range ea.States {
			if m == nil {
				m = opq.NewQualityMeter(len(ea.States[i]))
			}
			m.Add(ea.States[i], eb.States[i])
		}
	}
	return m.Quality()
}

// TestInspectDetectsDamage: inspect checks the header, the index and every
// episode's section checksum, so a bit flipped anywhere in a memory file
// makes it fail (exit 1) instead of printing a normal summary.
func TestInspectDetectsDamage(t *testing.T) {
	dir := t.TempDir()
	traj, bundle, mem := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "b.mwb"), filepath.Join(dir, "m.mwm")
	mustRun(t,
		[]string{"sim", "--episodes", "4", "--steps", "20", "--dim", "32", "--out", traj, "--quiet"},
		[]string{"fit", "--in", traj, "--out", bundle, "--preset", "tiny", "--quiet"},
		[]string{"encode", "--model", bundle, "--in", traj, "--out", mem, "--quiet"},
	)
	if code, out, errs := memowm(t, "inspect", mem); code != 0 || !strings.Contains(out, "every episode's section checksum") {
		t.Fatalf("intact file: %d %s%s", code, out, errs)
	}
	good, err := os.ReadFile(mem)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.mwm")
	// Every byte of the first and last 256 (header, index, footer), and
	// about 1,000 spread over the sections.
	step := len(good)/1000 + 1
	if testing.Short() {
		step *= 8
	}
	missed := 0
	for i := 0; i < len(good); i++ {
		if i >= 256 && i < len(good)-256 && i%step != 0 {
			continue
		}
		d := append([]byte(nil), good...)
		d[i] ^= 1 << (i % 8)
		if err := os.WriteFile(bad, d, 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, _ := memowm(t, "inspect", bad); code == 0 {
			missed++
			t.Errorf("a flip of bit %d of byte %d of %d: inspect exits 0", i%8, i, len(good))
		}
		if missed > 5 {
			t.FailNow()
		}
	}
}

// TestCompletionSubVerbs: bash completion offers fit's --stage and its
// values, and record's and model's sub-verbs (not file names), as bash
// itself computes them.
func TestCompletionSubVerbs(t *testing.T) {
	code, script, _ := memowm(t, "completion", "bash")
	if code != 0 {
		t.Fatal(code)
	}
	path := filepath.Join(t.TempDir(), "c.sh")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ words, want string }{
		{"memowm fit --s", "--stage"},
		{"memowm fit --stage ", "opq wm reader risk lambda all"},
		{"memowm record ", "web tty"},
		{"memowm model ", "info init"},
		{"memowm weights ", "export import"},
	} {
		words := strings.Fields(c.words)
		if strings.HasSuffix(c.words, " ") {
			words = append(words, "")
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + w + "'"
		}
		cmd := exec.Command("bash", "-c", fmt.Sprintf(`source %s; COMP_WORDS=(%s); COMP_CWORD=%d; _memowm; echo "${COMPREPLY[@]}"`, path, strings.Join(quoted, " "), len(words)-1))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v %s", c.words, err, out)
		}
		if !strings.Contains(string(out), c.want) {
			t.Errorf("%q completes to %q, want %q among them", c.words, strings.TrimSpace(string(out)), c.want)
		}
	}
}

// TestStdinRefused: "-" as an input file is refused with the alternative.
func TestStdinRefused(t *testing.T) {
	for _, args := range [][]string{
		{"encode", "--model", "b.mwb", "--in", "-", "--out", "m.mwm"},
		{"inspect", "-"},
		{"fit", "opq", "--in", "-", "--out", "q.opq"},
	} {
		code, _, errs := memowm(t, args...)
		if code != 2 || !strings.Contains(errs, "does not read standard input") || !strings.Contains(errs, "save the stream to a file") {
			t.Errorf("%v: %d %s", args, code, errs)
		}
	}
}

// TestInspectNamedLikeOwnFormat: an empty or foreign file named .mwm, .mwb
// or .opq is explained, not called an unknown trajectory extension.
func TestInspectNamedLikeOwnFormat(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, data, want string }{
		{"e.mwm", "", "named like a memory file but is empty"},
		{"g.mwb", "garbage\n", "named like a model bundle but does not start with its magic"},
		{"g.opq", "garbage\n", "named like a quantizer file"},
	} {
		p := filepath.Join(dir, c.name)
		os.WriteFile(p, []byte(c.data), 0o644)
		code, _, errs := memowm(t, "inspect", p)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Contains(errs, "unknown extension") {
			t.Errorf("%s: %d %s", c.name, code, errs)
		}
	}
}

// TestProgressLine: encode's progress gives the total and the time left
// when the file records its episode count, and reads well without.
func TestProgressLine(t *testing.T) {
	if got, want := progressLine(10, 40, 210, 20*time.Second), "10/40 episodes (25%), 210 observations (10.5 obs/s), about 1m0s left"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := progressLine(1, 0, 1, time.Second), "1 episode, 1 observation (1.0 obs/s)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestEncodeFlagsLowR2: encode warns, with the number, when the bundle's
// quantizer recorded a low held-out R^2 (here: fit on 71 states, held out
// on noisier ones).
func TestEncodeFlagsLowR2(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t,
		[]string{"sim", "--episodes", "1", "--steps", "70", "--dim", "32", "--seed", "3", "--out", p("few.arrow"), "--quiet"},
		[]string{"sim", "--episodes", "2", "--steps", "10", "--dim", "32", "--seed", "4", "--noise", "3", "--out", p("noisy.arrow"), "--quiet"},
		[]string{"fit", "opq", "--in", p("few.arrow"), "--eval", p("noisy.arrow"), "--out", p("q.opq"), "--quiet"},
		[]string{"fit", "--in", p("few.arrow"), "--opq", p("q.opq"), "--out", p("b.mwb"), "--preset", "tiny", "--quiet"},
	)
	code, _, errs := memowm(t, "encode", "--model", p("b.mwb"), "--in", p("noisy.arrow"), "--out", p("m.mwm"), "--quiet")
	if code != 0 || !regexp.MustCompile(`quantizer reconstructed held-out states with R\^2 0\.[0-4]\d\d when it was fitted`).MatchString(errs) {
		t.Fatalf("encode: %d %s", code, errs)
	}
}

// TestEncodeWarnsOfUnnamedCodes: a codes file that does not name the
// quantizer that made its codes is encoded with a warning that says so.
func TestEncodeWarnsOfUnnamedCodes(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t,
		[]string{"sim", "--episodes", "4", "--steps", "20", "--dim", "32", "--out", p("t.arrow"), "--quiet"},
		[]string{"fit", "--in", p("t.arrow"), "--out", p("b.mwb"), "--preset", "tiny", "--quiet"},
		[]string{"quantize", "--model", p("b.mwb"), "--in", p("t.arrow"), "--out", p("named.arrow"), "--quiet"},
	)
	// The same codes, written without the quantizer's name.
	r, err := trajectory.Open(p("named.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	m := r.Meta()
	if m.Quantizer == "" {
		t.Fatal("quantize did not name its quantizer")
	}
	m.Quantizer = ""
	w, err := trajectory.Create(p("unnamed.arrow"), m)
	if err != nil {
		t.Fatal(err)
	}
	for {
		ep, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(ep); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in   string
		warn bool
	}{{"named.arrow", false}, {"unnamed.arrow", true}} {
		code, _, errs := memowm(t, "encode", "--model", p("b.mwb"), "--in", p(c.in), "--out", p(c.in+".mwm"), "--quiet")
		if code != 0 || strings.Contains(errs, "do not name the quantizer") != c.warn {
			t.Errorf("%s: %d %q", c.in, code, errs)
		}
	}
}

// mustRun runs memowm commands in order, failing the test on the first
// that does not succeed.
func mustRun(t *testing.T, cmds ...[]string) {
	t.Helper()
	for _, c := range cmds {
		if code, out, errs := memowm(t, c...); code != 0 {
			t.Fatalf("%v: %d\n%s%s", c, code, out, errs)
		}
	}
}

// TestTwoEncodesOneOut: two encodes started together to the same --out: one
// writes it, the other fails and says so (refused at the start, or finding
// the file made while it worked), never both exit 0 with one's work gone.
func TestTwoEncodesOneOut(t *testing.T) {
	dir := t.TempDir()
	traj, bundle, mem := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "b.mwb"), filepath.Join(dir, "m.mwm")
	mustRun(t,
		[]string{"sim", "--episodes", "4", "--steps", "20", "--dim", "32", "--out", traj, "--quiet"},
		[]string{"fit", "--in", traj, "--out", bundle, "--preset", "tiny", "--quiet"},
	)
	for round := 0; round < 3; round++ {
		os.Remove(mem)
		var cmds [2]*exec.Cmd
		var outs [2]strings.Builder
		for i := range cmds {
			cmds[i] = child(t, "1", "encode", "--model", bundle, "--in", traj, "--out", mem, "--quiet")
			cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
			if err := cmds[i].Start(); err != nil {
				t.Fatal(err)
			}
		}
		ok := 0
		for i := range cmds {
			if err := cmds[i].Wait(); err == nil {
				ok++
			} else if !strings.Contains(outs[i].String(), "--force") {
				t.Errorf("round %d: the failed encode does not say why: %s", round, outs[i].String())
			}
		}
		if ok != 1 {
			t.Fatalf("round %d: %d encodes exit 0\n%s\n%s", round, ok, outs[0].String(), outs[1].String())
		}
		if l := atomicfile.Leftovers(mem); len(l) != 0 {
			t.Fatalf("round %d: temporaries left: %v", round, l)
		}
	}
}
