package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memowm/memowm/trajectory"
)

// TestMain lets a test run the memowm command in a child process: with
// MEMOWM_TEST_MAIN=1 the test binary is memowm.
func TestMain(m *testing.M) {
	if os.Getenv("MEMOWM_TEST_MAIN") == "1" {
		os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// child returns a command that runs memowm in a separate process.
func child(t *testing.T, procs string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "MEMOWM_TEST_MAIN=1", "GOMAXPROCS="+procs)
	return cmd
}

func readCodes(t *testing.T, path string) []*trajectory.Episode {
	t.Helper()
	r, err := trajectory.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var eps []*trajectory.Episode
	for {
		ep, err := r.Next()
		if err != nil {
			break
		}
		eps = append(eps, ep)
	}
	return eps
}

// TestEncodeDecodeSeparateProcesses writes a memory file in one process with
// GOMAXPROCS 1 and decodes it in another with GOMAXPROCS 2: the codes equal
// the quantized input exactly.
func TestEncodeDecodeSeparateProcesses(t *testing.T) {
	dir := t.TempDir()
	traj, bundle := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "b.mwb")
	mem, codes, dec := filepath.Join(dir, "m.mwm"), filepath.Join(dir, "codes.arrow"), filepath.Join(dir, "dec.arrow")
	mustRun(t,
		[]string{"sim", "--episodes", "4", "--steps", "20", "--dim", "32", "--out", traj, "--quiet"},
		[]string{"fit", "--in", traj, "--out", bundle, "--preset", "tiny", "--quiet"},
		[]string{"quantize", "--model", bundle, "--in", traj, "--out", codes, "--quiet"},
	)
	out, err := child(t, "1", "encode", "--model", bundle, "--in", traj, "--out", mem, "--lambda", "0", "--batch", "3").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "kept 100.00%") {
		t.Fatalf("encode: %v\n%s", err, out)
	}
	out, err = child(t, "2", "decode", "--model", bundle, "--in", mem, "--out", dec).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "every checksum holds") {
		t.Fatalf("decode: %v\n%s", err, out)
	}
	want, got := readCodes(t, codes), readCodes(t, dec)
	if len(want) != 4 || len(got) != 4 {
		t.Fatalf("%d and %d episodes", len(want), len(got))
	}
	for i := range want {
		if len(want[i].Codes) != len(got[i].Codes) {
			t.Fatalf("episode %d: %d vs %d observations", i, len(want[i].Codes), len(got[i].Codes))
		}
		for k := range want[i].Codes {
			if !bytes.Equal(want[i].Codes[k], got[i].Codes[k]) {
				t.Fatalf("episode %d step %d: decoded codes differ from the quantized input", i, k)
			}
		}
	}
	if out, err := child(t, "2", "verify", "--model", bundle, mem).CombinedOutput(); err != nil || !strings.Contains(string(out), "4 episodes, 84 observations intact") {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	// One episode, as states.
	one := filepath.Join(dir, "one.parquet")
	if code, out, errs := memowm(t, "decode", "--model", bundle, "--in", mem, "--out", one, "--what", "states", "--episode", "2", "--quiet"); code != 0 {
		t.Fatalf("decode --episode: %s%s", out, errs)
	}
	if sum, err := trajectory.Summarize(one); err != nil || sum.Episodes != 1 || sum.Content != "states" {
		t.Fatalf("decoded episode: %+v %v", sum, err)
	}
	code, js, _ := memowm(t, "inspect", "--json", mem)
	var info struct {
		Kind       string `json:"kind"`
		Accounting struct {
			Observations int     `json:"observations"`
			Kept         float64 `json:"kept_fraction"`
			Ideal        float64 `json:"ideal_bits_per_obs"`
			Payload      float64 `json:"payload_bits_per_obs"`
		} `json:"accounting"`
	}
	if code != 0 || json.Unmarshal([]byte(js), &info) != nil || info.Kind != "memory" || info.Accounting.Observations != 84 || info.Accounting.Kept != 1 {
		t.Fatalf("inspect --json: %s", js)
	}
	// The payload is within 0.1% + 64 bits per episode of the ideal length.
	if a := info.Accounting; a.Payload > a.Ideal*1.001+64*4/84.0 {
		t.Fatalf("payload %.2f bits/obs, ideal %.2f", a.Payload, a.Ideal)
	}
	if code, out, _ := memowm(t, "inspect", bundle); code != 0 || !strings.Contains(out, "model bundle") {
		t.Fatalf("inspect bundle: %s", out)
	}
	// With slot repeat flags: decoded in another process, equal to the input.
	rmem, rdec := filepath.Join(dir, "r.mwm"), filepath.Join(dir, "r.arrow")
	if code, out, errs := memowm(t, "encode", "--model", bundle, "--in", traj, "--out", rmem, "--lambda", "0", "--slot-repeat", "--quiet"); code != 0 {
		t.Fatalf("encode --slot-repeat: %s%s", out, errs)
	}
	if out, err := child(t, "2", "decode", "--model", bundle, "--in", rmem, "--out", rdec).CombinedOutput(); err != nil {
		t.Fatalf("decode --slot-repeat file: %v\n%s", err, out)
	}
	for i, ep := range readCodes(t, rdec) {
		for k := range ep.Codes {
			if !bytes.Equal(want[i].Codes[k], ep.Codes[k]) {
				t.Fatalf("slot repeat: episode %d step %d differs from the quantized input", i, k)
			}
		}
	}
	if code, out, _ := memowm(t, "inspect", rmem); code != 0 || !strings.Contains(out, "slot repeat flags") || !strings.Contains(out, "prior wm") {
		t.Fatalf("inspect: %s", out)
	}
	// The default prior of a lossless file is the mix; --prior wm and a
	// lossy --min-entropy under --prior mix decode in another process too.
	if code, out, _ := memowm(t, "inspect", mem); code != 0 || !strings.Contains(out, "prior mix") {
		t.Fatalf("inspect of a default lossless file: %s", out)
	}
	for _, c := range [][]string{{"--prior", "wm", "--lambda", "0"}, {"--prior", "mix", "--min-entropy", "2"}} {
		pm, pd := filepath.Join(dir, "p.mwm"), filepath.Join(dir, "p.arrow")
		code, out, errs := memowm(t, append([]string{"encode", "--model", bundle, "--in", traj, "--out", pm, "--quiet", "--force"}, c...)...)
		if code != 0 || !strings.Contains(out, "prior "+c[1]) {
			t.Fatalf("encode %v: %d %s%s", c, code, out, errs)
		}
		if out, err := child(t, "1", "decode", "--model", bundle, "--in", pm, "--out", pd, "--force").CombinedOutput(); err != nil {
			t.Fatalf("decode %v: %v\n%s", c, err, out)
		}
		if c[1] == "wm" {
			for i, ep := range readCodes(t, pd) {
				for k := range ep.Codes {
					if !bytes.Equal(want[i].Codes[k], ep.Codes[k]) {
						t.Fatalf("--prior wm: episode %d step %d differs from the quantized input", i, k)
					}
				}
			}
		}
	}
	for _, c := range [][]string{{"--prior", "nope"}, {"--prior", "mix", "--slot-repeat"}} {
		code, _, errs := memowm(t, append([]string{"encode", "--model", bundle, "--in", traj, "--out", filepath.Join(dir, "x.mwm")}, c...)...)
		if code != 2 || !strings.Contains(errs, "--prior") {
			t.Errorf("encode %v: %d %q", c, code, errs)
		}
	}
}

func TestCodecErrors(t *testing.T) {
	dir := t.TempDir()
	traj, b1, b2, mem := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "b1.mwb"), filepath.Join(dir, "b2.mwb"), filepath.Join(dir, "m.mwm")
	mustRun(t,
		[]string{"sim", "--episodes", "4", "--steps", "20", "--dim", "32", "--out", traj, "--quiet"},
		[]string{"fit", "--in", traj, "--out", b1, "--preset", "tiny", "--quiet"},
		[]string{"fit", "--in", traj, "--out", b2, "--preset", "tiny", "--seed", "7", "--quiet"},
		[]string{"encode", "--model", b1, "--in", traj, "--out", mem, "--quiet"},
	)
	folder := filepath.Join(dir, "z.mwm")
	os.Mkdir(folder, 0o755)
	damaged := filepath.Join(dir, "d.mwm")
	data, _ := os.ReadFile(mem)
	data[len(data)/2] ^= 4
	os.WriteFile(damaged, data, 0o644)
	// Verify lists every damaged episode, not the first: damage two of the
	// four episodes' sections (three flips).
	multi := filepath.Join(dir, "m3.mwm")
	d3 := bytes.Clone(data)
	d3[len(data)/2] ^= 4 // as damaged above
	for _, f := range []float64{0.3, 0.8} {
		d3[int(f*float64(len(d3)))] ^= 1
	}
	os.WriteFile(multi, d3, 0o644)
	if code, _, errs := memowm(t, "verify", "--model", b1, multi); code != 1 || strings.Count(errs, "verify: codec: ") != 2 ||
		!strings.Contains(errs, "2 of 4 episodes damaged (ids 1, 3)") || !strings.Contains(errs, "the other 2 (42 observations) are intact") {
		t.Fatalf("verify of two damaged episodes: %d\n%s", code, errs)
	}
	// The same as JSON: the damaged episodes listed, the status still 1;
	// decode --json on the intact file.
	if code, out, _ := memowm(t, "verify", "--model", b1, multi, "--json"); code != 1 || !strings.Contains(out, `"intact_episodes": 2`) || strings.Count(out, `"error": `) != 2 {
		t.Fatalf("verify --json: %d\n%s", code, out)
	}
	if code, out, errs := memowm(t, "decode", "--model", b1, "--in", mem, "--out", filepath.Join(dir, "j.arrow"), "--json", "--quiet"); code != 0 || !strings.Contains(out, `"observations": 84`) || !strings.Contains(out, `"checksums_hold": true`) {
		t.Fatalf("decode --json: %d\n%s%s", code, out, errs)
	}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"verify", "--model", b2, mem}, 1, "written with another model bundle: the file needs bundle"},
		{[]string{"verify", "--model", b1, damaged}, 1, "section checksum mismatch"},
		{[]string{"decode", "--model", b1, "--in", mem, "--out", filepath.Join(dir, "x.arrow"), "--episode", "77"}, 1, "has no episode 77"},
		{[]string{"decode", "--model", b1, "--in", mem, "--out", filepath.Join(dir, "x.arrow"), "--what", "pixels"}, 2, "want codes or states"},
		{[]string{"encode", "--model", b1, "--in", traj, "--out", filepath.Join(dir, "y.mwm"), "--lambda", "0.5"}, 2, "needs a bundle with a risk policy"},
		{[]string{"encode", "--model", b1, "--in", traj, "--out", filepath.Join(dir, "y.mwm"), "--lambda", "0", "--min-entropy", "1"}, 2, "give one"},
		{[]string{"encode", "--in", traj, "--out", filepath.Join(dir, "y.mwm")}, 2, "--model BUNDLE is required"},
		{[]string{"encode", "--model", mem, "--in", traj, "--out", filepath.Join(dir, "y.mwm")}, 1, "not a valid model bundle"},
		{[]string{"verify", "--model", b1}, 2, "want exactly one memory file"},
		{[]string{"encode", "--model", b1, "--in", traj, "--out", folder}, 2, "not a regular file"},
		{[]string{"fit", "--opq", b1, "--out", filepath.Join(dir, "f.mwb")}, 1, "not a valid quantizer file"},
	}
	for _, c := range cases {
		code, _, errs := memowm(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
	for _, p := range []string{"x.arrow", "y.mwm"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("a failed command left %s", p)
		}
	}
	// Lossy with the entropy threshold, then verify.
	lossy := filepath.Join(dir, "lossy.mwm")
	if code, out, errs := memowm(t, "encode", "--model", b1, "--in", traj, "--out", lossy, "--min-entropy", "2.5", "--quiet"); code != 0 || !strings.Contains(out, "min-entropy") {
		t.Fatalf("lossy encode: %s%s", out, errs)
	}
	if code, out, errs := memowm(t, "verify", "--model", b1, lossy); code != 0 {
		t.Fatalf("verify lossy: %s%s", out, errs)
	}
}

// TestKilledWriterLeavesNoFile kills an encode in the middle: nothing may
// appear under the final name.
func TestKilledWriterLeavesNoFile(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a long encode")
	}
	dir := t.TempDir()
	traj, bundle, mem := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "b.mwb"), filepath.Join(dir, "m.mwm")
	mustRun(t,
		[]string{"sim", "--episodes", "40", "--steps", "30", "--dim", "32", "--out", traj, "--quiet"},
		[]string{"fit", "--in", traj, "--out", bundle, "--preset", "tiny", "--quiet"},
	)
	cmd := child(t, "1", "encode", "--model", bundle, "--in", traj, "--out", mem, "--batch", "1")
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once it has written some episodes.
	started := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "encode: 2/") {
				started <- true
			}
		}
		close(started)
	}()
	select {
	case <-started:
	case <-time.After(60 * time.Second):
	}
	cmd.Process.Kill()
	if err := cmd.Wait(); err == nil {
		t.Fatal("the encode finished before it could be killed")
	}
	if _, err := os.Stat(mem); !os.IsNotExist(err) {
		t.Fatalf("a killed writer left %s", mem)
	}
}
