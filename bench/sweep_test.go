package bench

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"
)

func TestAnalyzeHandComputed(t *testing.T) {
	pts := []CurvePoint{{"large", 1e6, 90}, {"small", 1e5, 100}}
	sorted, rows, be, err := Analyze(pts, []float64{1e6, 1e7})
	if err != nil {
		t.Fatal(err)
	}
	if sorted[0].Name != "small" {
		t.Fatal("points are not sorted by parameters")
	}
	// N = 1e6: small 1.6 + 100 = 101.6, large 16 + 90 = 106 -> small.
	// N = 1e7: small 0.16 + 100 = 100.16, large 1.6 + 90 = 91.6 -> large.
	want := [][]float64{{101.6, 106}, {100.16, 91.6}}
	for i, r := range rows {
		for k := range r.Total {
			if math.Abs(r.Total[k]-want[i][k]) > 1e-9 {
				t.Fatalf("N=%g total %v, want %v", r.N, r.Total, want[i])
			}
		}
	}
	if rows[0].Best != "small" || rows[1].Best != "large" {
		t.Fatalf("best %s, %s", rows[0].Best, rows[1].Best)
	}
	// Break-even: 16 * (1e6 - 1e5) / (100 - 90) = 1.44e6.
	if len(be) != 1 || math.Abs(be[0].N-1.44e6) > 1e-6 {
		t.Fatalf("break-even %+v", be)
	}
}

func TestSmallerModelNeverBeaten(t *testing.T) {
	pts := []CurvePoint{{"a", 1e5, 100}, {"b", 1e6, 100}, {"c", 1e7, 120}}
	_, rows, be, err := Analyze(pts, DefaultHorizons())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Best != "a" {
			t.Fatalf("N=%g: %s beats the smaller model whose rate is no worse", r.N, r.Best)
		}
	}
	for _, b := range be {
		if !math.IsInf(b.N, 1) {
			t.Fatalf("break-even %+v should be never", b)
		}
	}
}

func TestCurveCSV(t *testing.T) {
	in := "rate_bits_per_obs,name,params\n100,small,1e5\n90,large,1000000\n"
	pts, err := ReadCurve(strings.NewReader(in))
	if err != nil || len(pts) != 2 || pts[1].Params != 1e6 || pts[0].Rate != 100 {
		t.Fatalf("%+v %v", pts, err)
	}
	sorted, rows, _, _ := Analyze(pts, []float64{1e6})
	var b bytes.Buffer
	if err := WriteSweepCSV(&b, sorted, rows); err != nil || !strings.Contains(b.String(), "1e+06,small,100000,100.000,1.600,101.600,true") {
		t.Fatalf("csv %q %v", b.String(), err)
	}
	for _, bad := range []string{"", "name,params\nx,1\n", "name,params,rate_bits_per_obs\nx,one,1\n"} {
		if _, err := ReadCurve(strings.NewReader(bad)); err == nil {
			t.Errorf("curve %q was accepted", bad)
		}
	}
	if _, _, _, err := Analyze([]CurvePoint{{"x", 0, 1}}, nil); err == nil {
		t.Error("zero parameters accepted")
	}
}

func TestPlotSweep(t *testing.T) {
	pts := []CurvePoint{{"tiny", 168440, 4009.1}, {"small", 966672, 3897.1}, {"base", 5442304, 3850}}
	sorted, rows, _, err := Analyze(pts, DefaultHorizons())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := PlotSweep(dir, sorted, rows)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 6 {
		t.Fatalf("%d files", len(files))
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() < 1000 {
			t.Fatalf("%s: %v", f, err)
		}
	}
}
