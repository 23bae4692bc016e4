package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memowm/memowm/model"
)

// TestBenchExternal: bench runs the xz and zstd commands as rows and names
// them with their versions; with neither on PATH it still works and says
// they were not found; --external=false leaves them out and says so.
func TestBenchExternal(t *testing.T) {
	dir := t.TempDir()
	traj, bundle := filepath.Join(dir, "t.arrow"), filepath.Join(dir, "b.mwb")
	if code, out, errs := memowm(t, "sim", "--episodes", "3", "--steps", "8", "--dim", "32", "--out", traj, "--quiet"); code != 0 {
		t.Fatalf("sim: %s%s", out, errs)
	}
	saveFixtureBundle(t, bundle, 1, model.Policy{}, nil)
	bench := func(flags ...string) (string, string) {
		t.Helper()
		code, out, errs := memowm(t, append([]string{"bench", "--model", bundle, "--in", traj, "--quiet"}, flags...)...)
		if code != 0 {
			t.Fatalf("bench %v: status %d\n%s%s", flags, code, out, errs)
		}
		return out, errs
	}

	if _, err := exec.LookPath("xz"); err == nil {
		if _, err := exec.LookPath("zstd"); err == nil {
			out, _ := bench()
			for _, want := range []string{"\nxz-9e ", "\nzstd-19-long ", "\nzstd-22-long ",
				"  external command xz (", `"xz (XZ Utils) `, "): ran xz-9e, one thread\n",
				"  external command zstd (", "): ran zstd-19-long and zstd-22-long, one thread\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("bench lacks %q:\n%s", want, out)
				}
			}
			js, _ := bench("--json")
			var rep struct {
				Methods []struct {
					Name string `json:"name"`
					Note string `json:"note"`
				} `json:"methods"`
				External []struct {
					Command string   `json:"command"`
					Found   bool     `json:"found"`
					Version string   `json:"version"`
					Rows    []string `json:"rows"`
				} `json:"external"`
			}
			if err := json.Unmarshal([]byte(js), &rep); err != nil || len(rep.External) != 2 || !rep.External[0].Found || rep.External[1].Version == "" {
				t.Fatalf("%v: %s", err, js)
			}
			rows := map[string]bool{}
			for _, m := range rep.Methods {
				rows[m.Name] = true
			}
			if !rows["xz-9e"] || !rows["zstd-22-long"] || !rows["xz"] {
				t.Fatalf("rows %v", rows)
			}
		}
	} else if os.Getenv("MEMOWM_EXTERNAL") == "1" {
		t.Fatalf("MEMOWM_EXTERNAL=1 but xz is not on PATH: %v", err)
	}

	// Off: no external rows, and the text says so.
	out, _ := bench("--external=false")
	if strings.Contains(out, "xz-9e") || !strings.Contains(out, "  external commands: not run (--external=false)\n") {
		t.Errorf("--external=false:\n%s", out)
	}
	if js, _ := bench("--json", "--external=false"); strings.Contains(js, `"external"`) {
		t.Errorf("--external=false --json:\n%s", js)
	}

	// Neither command on PATH: bench works, without their rows, and says so.
	t.Setenv("PATH", t.TempDir())
	out, _ = bench()
	if strings.Contains(out, "\nxz-9e ") || strings.Contains(out, "\nzstd-19-long ") ||
		!strings.Contains(out, "  external command xz: not found on PATH; skipped xz-9e\n") ||
		!strings.Contains(out, "  external command zstd: not found on PATH; skipped zstd-19-long and zstd-22-long\n") ||
		!strings.Contains(out, "\nbest-general ") {
		t.Errorf("without xz and zstd:\n%s", out)
	}
}
