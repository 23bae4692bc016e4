package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memowm/memowm/trajectory"
)

// systemPython is Debian's interpreter, whose numpy is the python3-numpy
// package (a python3 earlier on PATH, e.g. pyenv's, has other packages).
const systemPython = "/usr/bin/python3"

// scriptTimeout bounds one reader script.
const scriptTimeout = 3 * time.Minute

// strict is MEMOWM_INTEROP=1, read once at start so that go test's cache
// always depends on it.
var strict = os.Getenv("MEMOWM_INTEROP") == "1"

// need skips the test when a tool is missing, or fails it under
// MEMOWM_INTEROP=1 (as in CI, where .ci/run installs the tools).
func need(t *testing.T, missing string) {
	t.Helper()
	if missing == "" {
		return
	}
	if strict {
		t.Fatalf("%s; MEMOWM_INTEROP=1 makes a missing tool a failure (.ci/run installs it)", missing)
	}
	t.Skipf("skipped: %s (set MEMOWM_INTEROP=1 to make this a failure)", missing)
}

func needNumPy(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(systemPython); err != nil {
		need(t, systemPython+" is missing (apt-get install python3-numpy)")
	}
	out, err := exec.Command(systemPython, "-I", "-c", "import numpy; print(numpy.__file__)").CombinedOutput()
	if err != nil {
		need(t, fmt.Sprintf("%s cannot import numpy (apt-get install python3-numpy): %v: %s", systemPython, err, strings.TrimSpace(string(out))))
	}
	// Reading numpy's __init__.py makes it part of go test's cache key, so a
	// changed or removed numpy reruns the test.
	if _, err := os.ReadFile(strings.TrimSpace(string(out))); err != nil {
		need(t, fmt.Sprintf("numpy's package file: %v", err))
	}
}

// needNode checks for node and for the npm package pkg in interop/node_modules.
func needNode(t *testing.T, pkg string) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		need(t, "node is not on PATH (Node.js 20 or later is needed)")
	}
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		need(t, fmt.Sprintf("node --version: %v", err))
	}
	var major int
	if _, err := fmt.Sscanf(string(out), "v%d.", &major); err != nil || major < 20 {
		need(t, fmt.Sprintf("node %s is too old or unknown (Node.js 20 or later is needed)", strings.TrimSpace(string(out))))
	}
	if _, err := os.Stat(filepath.Join("node_modules", pkg, "package.json")); err != nil {
		need(t, fmt.Sprintf("npm package %s is not installed (run `npm ci` in interop/)", pkg))
	}
}

// runScript runs a reader script on spec and decodes the JSON it prints
// into report.
func runScript(t *testing.T, f *fixture, spec any, report any, name string, args ...string) {
	t.Helper()
	// Reading the scripts and the npm lock file makes them part of go test's
	// cache key: the subprocess's own reads are not seen by the cache.
	for _, p := range []string{args[len(args)-1], "lib.mjs", "package-lock.json"} {
		if _, err := os.ReadFile(p); err != nil {
			t.Fatalf("reader script: %v", err)
		}
	}
	js, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	specPath := filepath.Join(f.dir, t.Name()+".spec.json")
	if err := os.WriteFile(specPath, js, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), scriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, append(args, specPath)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s failed: %v\nstderr:\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	t.Logf("%s: %.1f s", strings.Join(cmd.Args, " "), time.Since(start).Seconds())
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	if err := dec.Decode(report); err != nil {
		t.Fatalf("%s printed output that is not the expected report: %v\nstderr:\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
}

// checker collects mismatches between what a reader read and what Go wrote,
// reporting at most a few per file so that one broken column stays readable.
type checker struct {
	t      *testing.T
	reader string // "numpy 1.24.2 reading states.npy"
	errors int
}

const maxErrors = 12

func (c *checker) errorf(format string, args ...any) {
	c.t.Helper()
	c.errors++
	if c.errors <= maxErrors {
		c.t.Errorf("%s: %s", c.reader, fmt.Sprintf(format, args...))
	} else if c.errors == maxErrors+1 {
		c.t.Errorf("%s: more mismatches not shown", c.reader)
	}
}

// equal compares a value the reader reported with the one Go expects, both
// as JSON values.
func (c *checker) equal(what string, got any, want any) {
	c.t.Helper()
	g, w := canonical(got), canonical(want)
	if reflect.DeepEqual(g, w) {
		return
	}
	gl, gok := g.([]any)
	wl, wok := w.([]any)
	if !gok || !wok || len(gl) != len(wl) {
		c.errorf("%s = %s, Go wrote %s", what, compact(g), compact(w))
		return
	}
	for i := range gl {
		if !reflect.DeepEqual(gl[i], wl[i]) {
			c.errorf("%s[%d] = %s, Go wrote %s", what, i, compact(gl[i]), compact(wl[i]))
		}
	}
}

// rows compares the reader's rows with Go's, field by field for the given
// fields; floats are compared as bits and shown as values too.
func (c *checker) rows(got []map[string]json.RawMessage, want []row, content trajectory.Content, fields ...string) {
	c.t.Helper()
	if len(got) != len(want) {
		c.errorf("read %d rows, Go wrote %d", len(got), len(want))
	}
	for i := 0; i < min(len(got), len(want)); i++ {
		w := canonical(want[i]).(map[string]any)
		where := fmt.Sprintf("row %d (episode %s step %d)", i, want[i].Episode, want[i].Step)
		for k := range got[i] {
			if !contains(fields, k) {
				c.errorf("%s: unexpected field %q in the report", where, k)
			}
		}
		for _, k := range fields {
			raw, ok := got[i][k]
			if !ok {
				c.errorf("%s: the report lacks field %q", where, k)
				continue
			}
			g := canonical(raw)
			if !reflect.DeepEqual(g, w[k]) {
				c.errorf("%s: %s = %s, Go wrote %s", where, k, show(k, g, content), show(k, w[k], content))
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// canonical turns v (a Go value or raw JSON) into the generic JSON value that
// encoding/json decodes it to, so that values compare with reflect.DeepEqual.
func canonical(v any) any {
	raw, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			panic(err)
		}
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(fmt.Sprintf("canonical %s: %v", raw, err))
	}
	return out
}

func compact(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// show formats a row field; float bits are shown with their values.
func show(field string, v any, content trajectory.Content) string {
	asFloat := func(x any) string {
		f, ok := x.(float64)
		if !ok || f < 0 || f > math.MaxUint32 || f != math.Trunc(f) {
			return compact(x)
		}
		return fmt.Sprintf("%g (bits %#08x)", math.Float32frombits(uint32(f)), uint32(f))
	}
	switch {
	case field == "pos_x" || field == "pos_y" || field == "dx" || field == "dy":
		return asFloat(v)
	case field == "obs_sample" && content == trajectory.States:
		list, ok := v.([]any)
		if !ok {
			return compact(v)
		}
		parts := make([]string, len(list))
		for i, x := range list {
			parts[i] = asFloat(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return compact(v)
}

var contents = []trajectory.Content{trajectory.States, trajectory.Codes}

func samples(c trajectory.Content) []int {
	if c == trajectory.States {
		return stateSamples
	}
	return codeSamples
}

// npyArray is what check_npy.py reports about one .npy file.
type npyArray struct {
	Header struct {
		Version      []int  `json:"version"`
		FortranOrder bool   `json:"fortran_order"`
		Descr        string `json:"descr"`
		Shape        []int  `json:"shape"`
	} `json:"header"`
	Dtype string                       `json:"dtype"`
	Shape []int                        `json:"shape"`
	Rows  []map[string]json.RawMessage `json:"rows"`
}

// TestNumPy loads the .npy exports (observations and index) with Debian's
// NumPy and compares every row with what Go wrote.
func TestNumPy(t *testing.T) {
	needNumPy(t)
	f := getFixture(t)
	spec := map[string]any{}
	for _, c := range contents {
		p := f.path(c, ".npy")
		spec[c.String()] = map[string]any{"path": p, "index": trajectory.IndexPath(p), "samples": samples(c)}
	}
	var report struct {
		Reader string `json:"reader"`
		States *struct {
			Observations npyArray `json:"observations"`
			Index        npyArray `json:"index"`
		} `json:"states"`
		Codes *struct {
			Observations npyArray `json:"observations"`
			Index        npyArray `json:"index"`
		} `json:"codes"`
	}
	runScript(t, f, spec, &report, systemPython, "-I", "check_npy.py")
	t.Logf("reader: %s", report.Reader)
	for _, c := range contents {
		got := report.States
		if c == trajectory.Codes {
			got = report.Codes
		}
		if got == nil {
			t.Fatalf("check_npy.py reported nothing about %s", c)
		}
		want := expectedRows(c, f.episodes(c))
		n, shape := len(want), f.meta[c].Shape

		obs := &checker{t: t, reader: fmt.Sprintf("%s reading %s", report.Reader, filepath.Base(f.path(c, ".npy")))}
		wantShape, wantDescr := []int{n, shape.Slots, shape.Dim}, "<f4"
		if c == trajectory.Codes {
			wantShape, wantDescr = []int{n, shape.Codes}, "|u1"
		}
		obs.equal("header version", got.Observations.Header.Version, []int{1, 0})
		obs.equal("header fortran_order", got.Observations.Header.FortranOrder, false)
		obs.equal("header descr", got.Observations.Header.Descr, wantDescr)
		obs.equal("header shape", got.Observations.Header.Shape, wantShape)
		obs.equal("dtype", got.Observations.Dtype, wantDescr)
		obs.equal("shape", got.Observations.Shape, wantShape)
		obs.rows(got.Observations.Rows, want, c, "obs_len", "obs_sha256", "obs_sample")

		idx := &checker{t: t, reader: fmt.Sprintf("%s reading %s", report.Reader, filepath.Base(trajectory.IndexPath(f.path(c, ".npy"))))}
		idx.equal("header descr", got.Index.Header.Descr, "<i8")
		idx.equal("header shape", got.Index.Header.Shape, []int{n, 2})
		idx.equal("dtype", got.Index.Dtype, "<i8")
		idx.equal("shape", got.Index.Shape, []int{n, 2})
		idx.rows(got.Index.Rows, want, c, "episode", "step")
	}
}

// duckdbFile is what check_duckdb.mjs reports about one Parquet file.
type duckdbFile struct {
	Columns      json.RawMessage              `json:"columns"`
	Metadata     map[string]string            `json:"metadata"`
	Episodes     json.RawMessage              `json:"episodes"`
	ActionCounts json.RawMessage              `json:"action_counts"`
	Rows         []map[string]json.RawMessage `json:"rows"`
}

type column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// duckdbColumns are the SQL types DuckDB gives the Parquet columns.
func duckdbColumns(c trajectory.Content) []column {
	obs := column{trajectory.ColState, "FLOAT[]"}
	if c == trajectory.Codes {
		obs = column{trajectory.ColCodes, "UTINYINT[]"}
	}
	return []column{
		{trajectory.ColEpisode, "BIGINT"}, {trajectory.ColStep, "INTEGER"}, obs,
		{trajectory.ColAction, "UTINYINT"},
		{trajectory.ColX, "FLOAT"}, {trajectory.ColY, "FLOAT"}, {trajectory.ColDX, "FLOAT"}, {trajectory.ColDY, "FLOAT"},
		{trajectory.ColPayload, "BLOB"}, {trajectory.ColFacts, "VARCHAR"},
	}
}

// TestDuckDB queries the Parquet files with DuckDB: column types, schema
// metadata, rows per episode, action counts, and every row.
func TestDuckDB(t *testing.T) {
	needNode(t, "@duckdb/node-api")
	f := getFixture(t)
	spec := map[string]any{}
	for _, c := range contents {
		spec[c.String()] = map[string]any{"path": f.path(c, ".parquet"), "samples": samples(c)}
	}
	var report struct {
		Reader string      `json:"reader"`
		States *duckdbFile `json:"states"`
		Codes  *duckdbFile `json:"codes"`
	}
	runScript(t, f, spec, &report, "node", "check_duckdb.mjs")
	t.Logf("reader: %s", report.Reader)
	for _, c := range contents {
		got := report.States
		if c == trajectory.Codes {
			got = report.Codes
		}
		if got == nil {
			t.Fatalf("check_duckdb.mjs reported nothing about %s", c)
		}
		eps := f.episodes(c)
		ck := &checker{t: t, reader: fmt.Sprintf("%s reading %s", report.Reader, filepath.Base(f.path(c, ".parquet")))}
		ck.equal("DESCRIBE", got.Columns, duckdbColumns(c))
		ck.equal("memowm metadata (parquet_kv_metadata)", got.Metadata, expectedMetadata(f.meta[c], got.Metadata, len(eps), true))
		ck.equal("rows per episode (GROUP BY episode)", got.Episodes, expectedEpisodes(eps))
		ck.equal("rows per action type (GROUP BY action_type)", got.ActionCounts, expectedActionCounts(eps))
		ck.rows(got.Rows, expectedRows(c, eps), c,
			"episode", "step", "action_type", "pos_x", "pos_y", "dx", "dy", "payload", "facts", "page",
			"obs_len", "obs_sha256", "obs_sample")
	}
}

// arrowFile is what check_arrow.mjs reports about one Arrow IPC file.
type arrowFile struct {
	Fields   json.RawMessage              `json:"fields"`
	Metadata map[string]string            `json:"metadata"`
	Batches  int                          `json:"batches"`
	Rows     []map[string]json.RawMessage `json:"rows"`
}

type field struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
}

// arrowFields is the schema as Arrow JS names its types.
func arrowFields(m trajectory.Meta) []field {
	obs := field{trajectory.ColState, fmt.Sprintf("FixedSizeList[%d]<Float32>", m.Shape.StateLen()), false}
	if m.Content == trajectory.Codes {
		obs = field{trajectory.ColCodes, fmt.Sprintf("FixedSizeList[%d]<Uint8>", m.Shape.Codes), false}
	}
	return []field{
		{trajectory.ColEpisode, "Int64", false}, {trajectory.ColStep, "Int32", false}, obs,
		{trajectory.ColAction, "Uint8", true},
		{trajectory.ColX, "Float32", true}, {trajectory.ColY, "Float32", true},
		{trajectory.ColDX, "Float32", true}, {trajectory.ColDY, "Float32", true},
		{trajectory.ColPayload, "Binary", true}, {trajectory.ColFacts, "Utf8", true},
	}
}

// TestArrowJS reads the Arrow IPC files with Apache Arrow JS: field names,
// types and nullability, schema metadata, record batches, and every row.
func TestArrowJS(t *testing.T) {
	needNode(t, "apache-arrow")
	f := getFixture(t)
	spec := map[string]any{}
	for _, c := range contents {
		spec[c.String()] = map[string]any{"path": f.path(c, ".arrow"), "samples": samples(c)}
	}
	var report struct {
		Reader string     `json:"reader"`
		States *arrowFile `json:"states"`
		Codes  *arrowFile `json:"codes"`
	}
	runScript(t, f, spec, &report, "node", "check_arrow.mjs")
	t.Logf("reader: %s", report.Reader)
	for _, c := range contents {
		got := report.States
		if c == trajectory.Codes {
			got = report.Codes
		}
		if got == nil {
			t.Fatalf("check_arrow.mjs reported nothing about %s", c)
		}
		eps := f.episodes(c)
		ck := &checker{t: t, reader: fmt.Sprintf("%s reading %s", report.Reader, filepath.Base(f.path(c, ".arrow")))}
		ck.equal("schema fields", got.Fields, arrowFields(f.meta[c]))
		ck.equal("schema metadata", got.Metadata, expectedMetadata(f.meta[c], got.Metadata, len(eps), false))
		// The writer emits one record batch per episode (episodes here are
		// shorter than its 64-row batches), then a row-less one that carries
		// the episode checksums.
		ck.equal("record batches", got.Batches, len(eps)+1)
		ck.rows(got.Rows, expectedRows(c, eps), c,
			"episode", "step", "action_type", "pos_x", "pos_y", "dx", "dy", "payload", "facts",
			"obs_len", "obs_sha256", "obs_sample")
	}
}
