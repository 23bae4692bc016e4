package bench

import (
	"strings"
	"testing"
)

// TestHints: advice follows the rows: another lossless mode smaller than
// the default, a general-purpose compressor smaller than every mode, or
// smaller once the bundle is counted (with the horizon where it pays).
func TestHints(t *testing.T) {
	rows := func(mix, allSend, repeat, gen float64) []Row {
		return []Row{{Name: "zstd", BitsPerObs: gen}, {Name: BestGeneral, BitsPerObs: gen, Note: "zstd, the smallest of the general-purpose rows here"},
			{Name: "wm-all-send", BitsPerObs: allSend}, {Name: "wm-repeat", BitsPerObs: repeat}, {Name: WMMix, BitsPerObs: mix}}
	}
	cases := []struct {
		r    Report
		want []string
	}{
		{Report{Methods: rows(100, 120, 110, 150)}, nil},
		{Report{Methods: rows(100, 120, 80, 150)}, []string{"'memowm encode --prior wm --slot-repeat' writes a smaller lossless file than the default: 80.0 bits/obs (wm-repeat) against 100.0 (wm-mix), 20.0% less"}},
		{Report{Methods: rows(100, 120, 110, 90)}, []string{"a general-purpose compressor is smaller here than every lossless memowm mode: zstd 90.0 bits/obs against wm-mix 100.0"}},
		// 1,000 observations, a 10,000-byte bundle: 80 bits/obs, so 100 + 80 > 150;
		// 80,000 bits / 50 saved = 1,600 observations.
		{Report{Methods: rows(100, 120, 110, 150), Observations: 1000, BundleBytes: 10000, BundleBitsPerObs: 80},
			[]string{"counting the bundle (10000 bytes) over these 1000 observations, zstd is smaller (150.0 against 180.0 bits/obs); at 50.0 bits/obs saved the bundle pays for itself after about 1600 observations"}},
		{Report{Methods: rows(100, 120, 110, 150), Observations: 1000, BundleBytes: 1000, BundleBitsPerObs: 8}, nil},
	}
	for i, c := range cases {
		got := c.r.Hints()
		if len(got) != len(c.want) {
			t.Fatalf("case %d: %q", i, got)
		}
		for k := range got {
			if !strings.Contains(got[k], c.want[k]) {
				t.Errorf("case %d: %q\nwant %q", i, got[k], c.want[k])
			}
		}
	}
}
