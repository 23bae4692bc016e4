package bench

import (
	"fmt"
	"strings"
)

// losslessModes are the lossless memory files 'memowm encode' writes, by
// bench row, with the flags that write them; the first is encode's default.
var losslessModes = []struct{ row, flags string }{
	{WMMix, "memowm encode (the default, --prior mix)"},
	{"wm-all-send", "memowm encode --prior wm"},
	{"wm-repeat", "memowm encode --prior wm --slot-repeat"},
}

// Hints returns advice that r's rows support: when a lossless mode other
// than encode's default writes a smaller file on these episodes, and when a
// general-purpose compressor is smaller than every lossless memowm mode (or
// would be once the bundle is counted, with the horizon where the bundle
// pays for itself). Empty when the default is the smallest and wins.
func (r *Report) Hints() []string {
	row := func(name string) *Row {
		for i := range r.Methods {
			if r.Methods[i].Name == name {
				return &r.Methods[i]
			}
		}
		return nil
	}
	def := row(losslessModes[0].row)
	var best *Row
	bestFlags := ""
	for _, m := range losslessModes {
		if x := row(m.row); x != nil && (best == nil || x.BitsPerObs < best.BitsPerObs) {
			best, bestFlags = x, m.flags
		}
	}
	if best == nil {
		return nil
	}
	var out []string
	if def != nil && best != def {
		out = append(out, fmt.Sprintf("on these episodes '%s' writes a smaller lossless file than the default: %.1f bits/obs (%s) against %.1f (%s), %.1f%% less",
			bestFlags, best.BitsPerObs, best.Name, def.BitsPerObs, def.Name, 100*(1-best.BitsPerObs/def.BitsPerObs)))
	}
	gen := row(BestGeneral)
	if gen == nil {
		return out
	}
	genName, _, _ := strings.Cut(gen.Note, ",")
	switch {
	case gen.BitsPerObs <= best.BitsPerObs:
		out = append(out, fmt.Sprintf("a general-purpose compressor is smaller here than every lossless memowm mode: %s %.1f bits/obs against %s %.1f; a better-trained world model or more data like this may change that",
			genName, gen.BitsPerObs, best.Name, best.BitsPerObs))
	case r.BundleBytes > 0 && best.BitsPerObs+r.BundleBitsPerObs > gen.BitsPerObs:
		out = append(out, fmt.Sprintf("counting the bundle (%d bytes) over these %d observations, %s is smaller (%.1f against %.1f bits/obs); at %.1f bits/obs saved the bundle pays for itself after about %.0f observations of data like this",
			r.BundleBytes, r.Observations, genName, gen.BitsPerObs, best.BitsPerObs+r.BundleBitsPerObs, gen.BitsPerObs-best.BitsPerObs,
			float64(r.BundleBytes*8)/(gen.BitsPerObs-best.BitsPerObs)))
	}
	return out
}
