package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// jsonVocabulary reads the keys of docs/json.md's table and its retired
// names.
func jsonVocabulary(t *testing.T) (keys, retired map[string]bool) {
	t.Helper()
	data, err := os.ReadFile("../../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	keys, retired = map[string]bool{}, map[string]bool{}
	tick := regexp.MustCompile("`([a-z0-9_.]+)`")
	i := strings.Index(s, "## Keys")
	if i < 0 {
		t.Fatal("docs/json.md has no Keys section")
	}
	for _, line := range strings.Split(s[i:], "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.SplitN(line[1:], "|", 2)[0]
		for _, m := range tick.FindAllStringSubmatch(first, -1) {
			keys[m[1]] = true
		}
	}
	j := strings.Index(s, "## Retired names")
	k := strings.Index(s[j:], "## Keys")
	for _, m := range tick.FindAllStringSubmatch(s[j:j+k], -1) {
		if !keys[m[1]] {
			retired[m[1]] = true
		}
	}
	if len(keys) < 50 || len(retired) < 5 {
		t.Fatalf("docs/json.md: %d keys, %d retired names", len(keys), len(retired))
	}
	return keys, retired
}

// jsonMaps are keys whose own keys are data (action types, dtypes,
// metadata names, stage names): their values are still checked.
var jsonMaps = map[string]bool{"actions": true, "dtypes": true, "metadata": true, "stages": true}

// TestJSONVocabulary: every verb's --json uses only the documented names
// (docs/json.md), none of the retired ones, and counts and lists keep their
// type everywhere. fit --stage all, too slow to run twice, is checked by
// TestFitAll.
func TestJSONVocabulary(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	setup := [][]string{
		{"sim", "--episodes", "4", "--steps", "20", "--dim", "32", "--out", p("t.arrow"), "--quiet"},
		{"fit", "opq", "--in", p("t.arrow"), "--out", p("q.opq"), "--eval", p("t.arrow"), "--quiet"},
	}
	mustRun(t, setup...)
	runs := [][]string{
		{"fit", "--in", p("t.arrow"), "--out", p("b.mwb"), "--preset", "tiny", "--quiet", "--json"},
		{"fit", "--stage", "wm", "--in", p("t.arrow"), "--opq", p("q.opq"), "--out", p("wm.mwb"), "--preset", "tiny", "--steps", "2", "--quiet", "--json"},
		{"encode", "--model", p("b.mwb"), "--in", p("t.arrow"), "--out", p("m.mwm"), "--quiet", "--json"},
		{"decode", "--model", p("b.mwb"), "--in", p("m.mwm"), "--out", p("d.arrow"), "--quiet", "--json"},
		{"verify", "--model", p("b.mwb"), p("m.mwm"), "--json"},
		{"inspect", p("t.arrow"), "--json"},
		{"inspect", p("q.opq"), "--json"},
		{"inspect", p("b.mwb"), "--json"},
		{"inspect", p("m.mwm"), "--json"},
		{"bench", "--model", p("b.mwb"), "--in", p("t.arrow"), "--quiet", "--json", "--external=false"},
		{"model", "info", "--preset", "tiny", "--json"},
		{"gpu", "info", "--json"},
		{"gpu", "check", "--device", "emulator", "--presets", "tiny", "--histories", "1", "--json"},
		{"gpu", "bench", "--device", "cpu", "--preset", "tiny", "--batch", "1", "--time", "1ms", "--json"},
		{"weights", "export", "--model", p("b.mwb"), "--out", p("w.safetensors"), "--json"},
		{"weights", "import", "--model", p("b.mwb"), "--in", p("w.safetensors"), "--out", p("b2.mwb"), "--json"},
	}
	types := map[string]map[string]bool{}
	for _, c := range runs {
		code, out, errs := memowm(t, c...)
		if code != 0 {
			t.Fatalf("%v: %s%s", c, out, errs)
		}
		checkJSONVocabulary(t, strings.Join(c[:2], " "), out, types)
	}
	// sweep.json, from an analysis of a given curve (no training).
	curve := p("curve.csv")
	os.WriteFile(curve, []byte("name,params,rate_bits_per_obs,bundle_bytes,file_bits_per_obs\ntiny,168440,5008.6,6048322,3574.1\nsmall,966672,4925.8,9240000,3562.2\n"), 0o644)
	if code, out, errs := memowm(t, "sweep", "--curve", curve, "--out", p("sweep")); code != 0 {
		t.Fatalf("sweep --curve: %s%s", out, errs)
	}
	sj, err := os.ReadFile(p("sweep/sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkJSONVocabulary(t, "sweep.json", string(sj), types)
	for k, ts := range types {
		var got []string
		for t := range ts {
			got = append(got, t)
		}
		sort.Strings(got)
		want := ""
		switch {
		case k == "episodes" || k == "observations" || k == "transitions" || k == "tensors" || strings.HasSuffix(k, "_bits_per_obs") && k != "total_bits_per_obs" || strings.HasSuffix(k, "_bytes"):
			want = "number"
		case strings.HasPrefix(k, "per_") || k == "damaged" || k == "intermediate":
			want = "list"
		}
		if want != "" && (len(got) != 1 || got[0] != want) {
			t.Errorf("%s is %v, want always %s", k, got, want)
		}
	}
}

// checkJSONVocabulary checks one verb's JSON output against docs/json.md,
// recording each key's JSON types in types (when not nil).
func checkJSONVocabulary(t *testing.T, verb, out string, types map[string]map[string]bool) {
	t.Helper()
	keys, retired := jsonVocabulary(t)
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%s: not one JSON object: %v\n%s", verb, err, out)
	}
	var walk func(x any, at string, data bool)
	walk = func(x any, at string, data bool) {
		switch x := x.(type) {
		case map[string]any:
			for k, v := range x {
				if !data {
					if retired[k] {
						t.Errorf("%s: %s%s is a retired name (docs/json.md)", verb, at, k)
					} else if !keys[k] {
						t.Errorf("%s: %s%s is not in docs/json.md", verb, at, k)
					}
					if types != nil {
						if types[k] == nil {
							types[k] = map[string]bool{}
						}
						types[k][kindOf(v)] = true
					}
				}
				walk(v, at+k+".", jsonMaps[k] && !data)
			}
		case []any:
			for _, e := range x {
				walk(e, at+"[].", false)
			}
		}
	}
	walk(v, "", false)
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "list"
	case float64:
		return "number"
	case string:
		return "string"
	case bool:
		return "bool"
	}
	return "null"
}
