package main

import (
	"fmt"
	"github.com/memowm/memowm/bench"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// demoRows reads the bench table the demo prints: method name to
// bits/obs.
func demoRows(t *testing.T, out string) map[string]float64 {
	t.Helper()
	rows := map[string]float64{}
	in := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "method":
			in = true
		case in && (len(f) < 2 || strings.HasPrefix(line, " ")):
			in = false
		case in:
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				t.Fatalf("bench row %q: %v", line, err)
			}
			rows[f[0]] = v
		}
	}
	if len(rows) == 0 {
		t.Fatalf("no bench table in\n%s", out)
	}
	return rows
}

// TestDemoKeepsNothing runs the demo without --dir: it says where its files
// go and that nothing is kept, leaves nothing behind, explains its terms,
// and ends with a conclusion that its own table supports.
func TestDemoKeepsNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // the demo's scratch folder goes here
	code, out, errs := memowm(t, "demo", "--dim", "32", "--episodes", "3", "--wm-steps", "20")
	if code != 0 {
		t.Fatalf("demo: %d\n%s%s", code, out, errs)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the demo left %v in TMPDIR", left)
	}
	for _, want := range []string{
		"removed at the end: nothing is kept", "--dir DIR", // said first
		"N+K: ", "Teacher-forced: ", "Ideal: ", "ideal bits: ", "physical: ", "dNLL: ", // terms explained
		"nothing kept (--dir DIR keeps the files).", // said last
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, out)
		}
	}
	// Every step has its one-line reason.
	for i := 1; i <= 9; i++ {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^== %d\. .*\n(.*\n)?   \S`, i)).MatchString(out) {
			t.Errorf("step %d has no explanation", i)
		}
	}

	rows := demoRows(t, out)
	best, bestV := "", 0.0
	gen, genV := "", 0.0
	for name, v := range rows {
		if name == "fixed-width" || name == "best-general" || strings.Contains(name, "-no-") {
			continue
		}
		if best == "" || v < bestV {
			best, bestV = name, v
		}
		if bench.IsGeneral(name) && (gen == "" || v < genV) {
			gen, genV = name, v
		}
	}
	m := regexp.MustCompile(`(?m)^conclusion: smallest lossless file here: (\S+), ([0-9.]+) bits/obs(.*)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no conclusion line in\n%s", out)
	}
	if got, _ := strconv.ParseFloat(m[2], 64); got != bestV || rows[m[1]] != bestV {
		t.Errorf("the conclusion names %s at %s bits/obs; the table's smallest is %s at %.1f", m[1], m[2], best, bestV)
	}
	if strings.HasPrefix(m[1], "wm-") {
		g := regexp.MustCompile(`: ([0-9.]+)x the best general-purpose compressor \((\S+), ([0-9.]+)\)`).FindStringSubmatch(m[3])
		if g == nil {
			t.Fatalf("the conclusion %q does not compare with the best general-purpose compressor", m[0])
		}
		ratio, _ := strconv.ParseFloat(g[1], 64)
		v, _ := strconv.ParseFloat(g[3], 64)
		if rows[g[2]] != genV || v != genV {
			t.Errorf("the conclusion compares with %s at %s; the table's best general-purpose row is %s at %.1f", g[2], g[3], gen, genV)
		}
		if math.Abs(ratio-bestV/genV) > 0.0015 {
			t.Errorf("the conclusion's ratio %s is not %.1f / %.1f", g[1], bestV, genV)
		}
	} else if !strings.Contains(m[3], "memowm's smallest") {
		t.Errorf("a general-purpose row wins but the conclusion %q does not say how far memowm is", m[0])
	}
}

// TestDemoDir runs the demo with --dir: it says the files are kept, and
// they are.
func TestDemoDir(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo")
	}
	dir := filepath.Join(t.TempDir(), "kept")
	code, out, errs := memowm(t, "demo", "--dir", dir, "--dim", "32", "--episodes", "2", "--steps", "5", "--wm-steps", "2")
	if code != 0 {
		t.Fatalf("demo: %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "Its files go to "+dir+" and are kept there.") || !strings.Contains(out, "kept in "+dir+" after ") {
		t.Errorf("the demo does not say it keeps its files:\n%s", out)
	}
	for _, name := range []string{"demo.arrow", "demo.parquet", "demo.opq", "demo.mwb", "demo.mwm", "demo-decoded.arrow"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	// The folder's files are the demo's own: a second run replaces them
	// (the verbs it runs refuse an existing --out without --force).
	if code, out, errs := memowm(t, "demo", "--dir", dir, "--dim", "32", "--episodes", "2", "--steps", "5", "--wm-steps", "2"); code != 0 {
		t.Fatalf("demo again: %d\n%s%s", code, out, errs)
	}
}
