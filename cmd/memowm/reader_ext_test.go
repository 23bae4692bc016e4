package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startReferenceReader runs reader/reference/server.py on a free loopback
// port and returns its URL. Without python3 it skips, unless
// MEMOWM_INTEROP=1 (CI), which makes that a failure.
func startReferenceReader(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("MEMOWM_INTEROP") == "1" {
			t.Fatalf("MEMOWM_INTEROP=1 but python3 is not on PATH: %v", err)
		}
		t.Skipf("python3 is not on PATH: %v", err)
	}
	cmd := exec.Command(py, "../../reader/reference/server.py", "--port", "0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		for sc.Scan() { // drain
		}
	}()
	select {
	case l := <-lines:
		addr, ok := strings.CutPrefix(l, "listening on ")
		if !ok {
			t.Fatalf("the reference reader's first line is %q", l)
		}
		return "http://" + addr + "/"
	case <-time.After(20 * time.Second):
		t.Fatal("the reference reader did not start in 20 s")
	}
	return ""
}

// TestExternalReaderChain: the whole calibration chain and bench through
// the Python reference reader over loopback: fit --stage all --reader URL
// records the reader in the risk policy, lambda refuses another reader,
// bench measures the gated file's distortion with it.
func TestExternalReaderChain(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model and calibrates through an HTTP reader")
	}
	url := startReferenceReader(t)
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	mustRun(t, []string{"sim", "--episodes", "5", "--steps", "12", "--dim", "32", "--out", p("t.arrow"), "--quiet"})
	code, o, errs := memowm(t, "fit", "--stage", "all", "--in", p("t.arrow"), "--calib", p("t.arrow"), "--out", p("all.mwb"),
		"--preset", "tiny", "--steps", "3", "--epsilon", "0.5", "--reader", url, "--quiet")
	if code != 0 || !strings.Contains(o, "reader: "+url+" (external)") || !strings.Contains(o, "== stage lambda") {
		t.Fatalf("fit --stage all --reader: %d\n%s%s", code, o, errs)
	}
	code, o, _ = memowm(t, "inspect", p("all.mwb"), "--json")
	var info struct {
		Policy struct {
			Kind   string `json:"kind"`
			Reader string `json:"reader"`
		} `json:"policy"`
	}
	if code != 0 || json.Unmarshal([]byte(o), &info) != nil || info.Policy.Kind != "risk" || info.Policy.Reader != "http:"+url {
		t.Fatalf("inspect: the policy does not record the reader: %d %+v\n%s", code, info.Policy, o)
	}
	// lambda with the bundle's probe, when the impacts were measured with the
	// external reader: refused.
	if code, _, errs := memowm(t, "fit", "--stage", "lambda", "--model", p("all.mwb"), "--in", p("t.arrow"), "--out", p("x.mwb"), "--quiet"); code == 0 || !strings.Contains(errs, "same reader") {
		t.Errorf("lambda with another reader: %d %s", code, errs)
	}
	code, o, errs = memowm(t, "bench", "--model", p("all.mwb"), "--in", p("t.arrow"), "--reader", url, "--external=false", "--quiet")
	if code != 0 || !strings.Contains(o, "wm-gated") {
		t.Fatalf("bench --reader: %d\n%s%s", code, o, errs)
	}
	if code, _, errs := memowm(t, "bench", "--model", p("all.mwb"), "--in", p("t.arrow"), "--reader", "ftp://x", "--external=false"); code != 2 || !strings.Contains(errs, "--reader") {
		t.Errorf("bench --reader ftp://x: %d %s", code, errs)
	}
	if code, _, errs := memowm(t, "bench", "--model", p("all.mwb"), "--in", p("t.arrow"), "--reader", url, "--reader-batch", "0", "--external=false"); code != 2 || !strings.Contains(errs, "batch") {
		t.Errorf("bench --reader-batch 0: %d %s", code, errs)
	}
	// One question per request (protocol version 1) or batches: the same
	// distortion, as the reader is fixed.
	gated := func(batch string) float64 {
		t.Helper()
		code, o, errs := memowm(t, "bench", "--model", p("all.mwb"), "--in", p("t.arrow"), "--reader", url, "--reader-batch", batch,
			"--reader-timeout", "20s", "--external=false", "--quiet", "--json")
		var rep struct {
			Methods []struct {
				Name string   `json:"name"`
				DNLL *float64 `json:"delta_nll_bits"`
			} `json:"methods"`
		}
		if code != 0 || json.Unmarshal([]byte(o), &rep) != nil {
			t.Fatalf("bench --reader-batch %s: %d %s", batch, code, errs)
		}
		for _, m := range rep.Methods {
			if m.Name == "wm-gated" && m.DNLL != nil {
				return *m.DNLL
			}
		}
		t.Fatalf("bench --reader-batch %s: no wm-gated distortion\n%s", batch, o)
		return 0
	}
	if a, b := gated("1"), gated("64"); a != b {
		t.Errorf("wm-gated dNLL %v with one question per request, %v in batches", a, b)
	}
}
