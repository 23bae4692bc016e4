package bench

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAnalyzeHandComputed(t *testing.T) {
	pts := []CurvePoint{{Name: "large", Params: 1e6, Rate: 90}, {Name: "small", Params: 1e5, Rate: 100}}
	sorted, rows, be, err := Analyze(pts, []float64{1e6, 1e7})
	if err != nil {
		t.Fatal(err)
	}
	if sorted[0].Name != "small" {
		t.Fatal("points are not sorted by parameters")
	}
	// No bundle sizes: B = 32 P, the FP32 weights.
	// N = 1e6: small 3.2 + 100 = 103.2, large 32 + 90 = 122 -> small.
	// N = 1e7: small 0.32 + 100 = 100.32, large 3.2 + 90 = 93.2 -> large.
	want := [][]float64{{103.2, 122}, {100.32, 93.2}}
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
	// Break-even: 32 * (1e6 - 1e5) / (100 - 90) = 2.88e6.
	if len(be) != 1 || math.Abs(be[0].N-2.88e6) > 1e-6 {
		t.Fatalf("break-even %+v", be)
	}

	// With the bundles' bytes (quantizer and weights): B = 8 * bytes.
	pts[0].BundleBytes, pts[1].BundleBytes = 9_000_000, 5_400_000
	_, rows, be, err = Analyze(pts, []float64{1e6})
	if err != nil {
		t.Fatal(err)
	}
	// small 43.2 + 100 = 143.2, large 72 + 90 = 162; break-even 8 * 3.6e6 / 10.
	if math.Abs(rows[0].Total[0]-143.2) > 1e-9 || math.Abs(rows[0].Total[1]-162) > 1e-9 || math.Abs(be[0].N-2.88e6) > 1e-6 {
		t.Fatalf("with bundle bytes: %+v %+v", rows, be)
	}
	pts[0].BundleBytes = 0
	if _, _, _, err := Analyze(pts, []float64{1e6}); err == nil || !strings.Contains(err.Error(), "some curve points") {
		t.Fatalf("a curve counting two things was accepted: %v", err)
	}
}

func TestSmallerModelNeverBeaten(t *testing.T) {
	pts := []CurvePoint{{Name: "a", Params: 1e5, Rate: 100}, {Name: "b", Params: 1e6, Rate: 100}, {Name: "c", Params: 1e7, Rate: 120}}
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
	if err := WriteSweepCSV(&b, sorted, rows); err != nil || !strings.Contains(b.String(), "1e+06,small,100000,100.000,3.200,103.200,true") {
		t.Fatalf("csv %q %v", b.String(), err)
	}
	pts, err = ReadCurve(strings.NewReader("name,params,rate_bits_per_obs,bundle_bytes\nsmall,1e5,100,6050000\n"))
	if err != nil || pts[0].BundleBytes != 6050000 {
		t.Fatalf("bundle_bytes: %+v %v", pts, err)
	}
	pts, err = ReadCurve(strings.NewReader("name,params,rate_bits_per_obs,bundle_bytes,steps\nsmall,1e5,100,6050000,20000\nbase,1e6,90,9000000,\n"))
	if err != nil || pts[0].Steps != 20000 || pts[1].Steps != 0 {
		t.Fatalf("steps: %+v %v", pts, err)
	}
	pts, err = ReadCurve(strings.NewReader("name,params,rate_bits_per_obs,bundle_bytes,steps,lr,init,dropout\nsmall,1e5,100,6050000,20000,0.002,,0.1\nbase,1e6,90,9000000,4000,0.001,scaled-residual,0\n"))
	if err != nil || pts[0].LR != 2e-3 || pts[0].Init != "" || pts[1].LR != 1e-3 || pts[1].Init != "scaled-residual" || pts[0].Dropout != 0.1 || pts[1].Dropout != 0 {
		t.Fatalf("lr and init: %+v %v", pts, err)
	}
	pts, err = ReadCurve(strings.NewReader("name,params,rate_bits_per_obs,train_seconds,history\nsmall,1e5,100,3012.5,1\nbase,1e6,90,,\n"))
	if err != nil || pts[0].TrainSeconds != 3012.5 || pts[1].TrainSeconds != 0 || pts[0].History != 1 || pts[1].History != 0 {
		t.Fatalf("train_seconds and history: %+v %v", pts, err)
	}
	for _, bad := range []string{"", "name,params,rate_bits_per_obs,train_seconds\nx,1,1,-3\n", "name,params,rate_bits_per_obs,train_seconds\nx,1,1,NaN\n", "name,params,rate_bits_per_obs,steps\nx,1,1,-1\n", "name,params,rate_bits_per_obs,steps\nx,1,1,1.5\n", "name,params\nx,1\n", "name,params,rate_bits_per_obs\nx,one,1\n",
		"name,params,rate_bits_per_obs,bundle_bytes\nx,1,1,-5\n", "name,params,rate_bits_per_obs,bundle_bytes\nx,1,1,2.5\n",
		"name,params,rate_bits_per_obs,lr\nx,1,1,0\n", "name,params,rate_bits_per_obs,lr\nx,1,1,3\n", "name,params,rate_bits_per_obs,lr\nx,1,1,fast\n", "name,params,rate_bits_per_obs,dropout\nx,1,1,1\n",
		"name,params,rate_bits_per_obs,history\nx,1,1,0\n", "name,params,rate_bits_per_obs,history\nx,1,1,1.5\n"} {
		if _, err := ReadCurve(strings.NewReader(bad)); err == nil {
			t.Errorf("curve %q was accepted", bad)
		}
	}
	if _, _, _, err := Analyze([]CurvePoint{{Name: "x", Params: 0, Rate: 1}}, nil); err == nil {
		t.Error("zero parameters accepted")
	}
}

func TestPlotSweep(t *testing.T) {
	pts := []CurvePoint{{Name: "tiny", Params: 168440, Rate: 4009.1}, {Name: "small", Params: 966672, Rate: 3897.1}, {Name: "base", Params: 5442304, Rate: 3850}}
	for _, withFile := range []bool{false, true} {
		if withFile {
			for i := range pts {
				pts[i].FileRate = pts[i].Rate / 5
			}
		}
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
		svg, err := os.ReadFile(filepath.Join(dir, "rate_vs_params.svg"))
		if err != nil {
			t.Fatal(err)
		}
		// Both curves, labelled, when the curve has file rates.
		if strings.Contains(string(svg), "memory file") != withFile || !strings.Contains(string(svg), "world model alone") {
			t.Fatalf("rate_vs_params with file rates %v: legend wrong", withFile)
		}
	}
}

// TestAnalyzeFileRate: S and the break-even horizons count the memory
// file's rate when every point has one; the world models' rates alone give
// ModelN; a curve with some file rates and not others is refused.
func TestAnalyzeFileRate(t *testing.T) {
	pts := []CurvePoint{
		{Name: "tiny", Params: 1e5, Rate: 870, FileRate: 180, BundleBytes: 6_000_000},
		{Name: "small", Params: 1e6, Rate: 650, FileRate: 178, BundleBytes: 9_000_000},
	}
	if RateRule(pts) != "file" {
		t.Fatalf("rule %s", RateRule(pts))
	}
	_, rows, be, err := Analyze(pts, []float64{1e6})
	if err != nil {
		t.Fatal(err)
	}
	// tiny 48 + 180 = 228, small 72 + 178 = 250: the files, not 918 and 722.
	if math.Abs(rows[0].Total[0]-228) > 1e-9 || math.Abs(rows[0].Total[1]-250) > 1e-9 || rows[0].Best != "tiny" {
		t.Fatalf("totals %+v", rows)
	}
	// 8 * 3e6 / (180 - 178) = 1.2e7 on the files; 8 * 3e6 / 220 on the models.
	if len(be) != 1 || math.Abs(be[0].N-1.2e7) > 1e-6 || math.Abs(be[0].ModelN-24e6/220) > 1e-6 {
		t.Fatalf("break-even %+v", be)
	}
	if StoredRate(pts[0]) != 180 || StoredRate(CurvePoint{Rate: 5}) != 5 {
		t.Fatal("StoredRate")
	}
	// The larger model's file no smaller: never, whatever its model's rate.
	pts[1].FileRate = 181
	if _, _, be, _ := Analyze(pts, []float64{1e6}); !math.IsInf(be[0].N, 1) || math.IsInf(be[0].ModelN, 1) {
		t.Fatalf("break-even %+v", be)
	}
	pts[1].FileRate = 0
	if _, _, _, err := Analyze(pts, []float64{1e6}); err == nil || !strings.Contains(err.Error(), "memory file's rate and some do not") {
		t.Fatalf("a curve counting two rates was accepted: %v", err)
	}
	pts[1].FileRate = math.NaN()
	if _, _, _, err := Analyze(pts, []float64{1e6}); err == nil {
		t.Fatal("a NaN file rate was accepted")
	}
}

// TestCurveRoundTrip: WriteCurve's curve reads back as written, and a curve
// of the columns before file_bits_per_obs reads with no file rate.
func TestCurveRoundTrip(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	pts := []CurvePoint{
		{Name: "tiny", Params: 168440, Rate: 872.4, FileRate: 183.4, FilePrior: "mix", BundleBytes: 6048282, Steps: 300, LR: 3e-3, Dropout: 0.1, TrainSeconds: 13.2, History: 16, BundleSHA256: sha, EvalSHA256: sha},
		{Name: "small", Params: 966672, Rate: 649.2, FileRate: 180.4, FilePrior: "mix", BundleBytes: 9241214, Steps: 300, LR: 2e-3, Init: "scaled-residual", Dropout: 0, History: 1, BundleSHA256: sha, EvalSHA256: sha},
	}
	var b bytes.Buffer
	if err := WriteCurve(&b, pts); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "name,params,rate_bits_per_obs,bundle_bytes,steps,lr,init,dropout,train_seconds,history,file_bits_per_obs,") {
		t.Fatalf("the columns of older curves moved: %s", b.String())
	}
	got, err := ReadCurve(&b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pts {
		if got[i] != pts[i] {
			t.Fatalf("read back %+v\nwrote     %+v", got[i], pts[i])
		}
	}
	// A curve.csv of the sweep before file rates.
	old := "name,params,rate_bits_per_obs,bundle_bytes,steps,lr,init,dropout,train_seconds,history\ntiny,168440,872.4000,6048282,300,0.003,,0.1,13.2,16\nsmall,966672,649.2000,9241214,300,0.002,,0.1,170.4,16\n"
	got, err = ReadCurve(strings.NewReader(old))
	if err != nil || len(got) != 2 || got[0].FileRate != 0 || got[0].BundleSHA256 != "" || got[1].Rate != 649.2 || RateRule(got) != "model" {
		t.Fatalf("an old curve: %+v %v", got, err)
	}
	_, _, be, err := Analyze(got, []float64{1e6})
	if err != nil || math.Abs(be[0].N-8*(9241214-6048282)/(872.4-649.2)) > 1e-6 || be[0].N != be[0].ModelN {
		t.Fatalf("an old curve's break-even: %+v %v", be, err)
	}
	for _, bad := range []string{
		"name,params,rate_bits_per_obs,file_bits_per_obs\nx,1,1,0\n", "name,params,rate_bits_per_obs,file_bits_per_obs\nx,1,1,-2\n",
		"name,params,rate_bits_per_obs,file_bits_per_obs\nx,1,1,NaN\n", "name,params,rate_bits_per_obs,bundle_sha256\nx,1,1,abc\n",
		"name,params,rate_bits_per_obs,eval_sha256\nx,1,1," + strings.Repeat("AB", 32) + "\n",
	} {
		if _, err := ReadCurve(strings.NewReader(bad)); err == nil {
			t.Errorf("curve %q was accepted", bad)
		}
	}
}

// TestSweepCSVFileRate: sweep.csv's totals are on the file rate when the
// curve has it, and say so; the first seven columns stay where they were.
func TestSweepCSVFileRate(t *testing.T) {
	pts := []CurvePoint{{Name: "small", Params: 1e5, Rate: 100, FileRate: 40}}
	sorted, rows, _, err := Analyze(pts, []float64{1e6})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteSweepCSV(&b, sorted, rows); err != nil {
		t.Fatal(err)
	}
	want := "n,name,params,rate_bits_per_obs,shared_bits_per_obs,total_bits_per_obs,best,file_bits_per_obs,total_from\n1e+06,small,100000,100.000,3.200,43.200,true,40.000,memory_file\n"
	if b.String() != want {
		t.Fatalf("sweep.csv\n%s\nwant\n%s", b.String(), want)
	}
	pts[0].FileRate = 0
	sorted, rows, _, _ = Analyze(pts, []float64{1e6})
	b.Reset()
	if err := WriteSweepCSV(&b, sorted, rows); err != nil || !strings.HasSuffix(b.String(), "1e+06,small,100000,100.000,3.200,103.200,true,,world_model\n") {
		t.Fatalf("sweep.csv without file rates %q %v", b.String(), err)
	}
}
