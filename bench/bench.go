package bench

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/memowm/memowm/codec"
	"github.com/memowm/memowm/entropy"
	"github.com/memowm/memowm/model"
	"github.com/memowm/memowm/opq"
	"github.com/memowm/memowm/reader"
	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// Row is one method's result.
type Row struct {
	Name             string   `json:"name"`
	BitsPerObs       float64  `json:"file_bits_per_obs"`
	IdealBitsPerObs  float64  `json:"ideal_bits_per_obs"`
	ActionBitsPerObs float64  `json:"action_bits_per_obs"`
	DeltaNLLBits     *float64 `json:"delta_nll_bits"` // 0 for lossless rows; null when unmeasured
	KeptFraction     float64  `json:"kept_fraction"`
	EncodeObsPerS    float64  `json:"encode_obs_per_s"`
	DecodeObsPerS    float64  `json:"decode_obs_per_s"`
	RatioFixedWidth  float64  `json:"ratio_to_fixed_width"`
	RatioBestGeneral float64  `json:"ratio_to_best_general"` // BitsPerObs / best-general's
	Note             string   `json:"note,omitempty"`

	recon    map[int64][][]uint8 // memory rows: the reconstruction by episode
	repeated float64             // memory rows: share of predicted coordinates copied by a repeat flag
}

// Report is a bench run.
type Report struct {
	Bundle       string `json:"bundle_sha256"`
	Episodes     int    `json:"episodes"`
	Observations int    `json:"observations"` // N + K
	Transitions  int    `json:"transitions"`  // N
	Methods      []Row  `json:"methods"`
	// The shared model, in no row: the bundle's bytes (of them the
	// quantizer's) and what it adds to every memowm row spread over these
	// observations (S = B/N + R). Set by the caller, which knows the file.
	BundleBytes      int64   `json:"bundle_bytes,omitempty"`
	QuantizerBytes   int64   `json:"quantizer_bytes,omitempty"`
	BundleBitsPerObs float64 `json:"bundle_bits_per_obs,omitempty"`
	// The external commands looked for (Options.External): found, with
	// their versions and rows, or not. Absent when not looked for.
	External []ExternalTool `json:"external,omitempty"`
}

// Options configures Run.
type Options struct {
	// Questions about the episodes: with the bundle's reader they give
	// wm-gated its distortion (mean extra answer bits).
	Questions []*trajectory.Question
	Batch     int               // episodes per predictor batch (default 8)
	Dir       string            // where temporary memory files go (default os.TempDir)
	Progress  func(name string) // called before each row, if not nil
	// External adds the rows of the xz and zstd commands found on PATH
	// (xz-9e, zstd-19-long, zstd-22-long) to the general-purpose rows; a
	// missing command is noted in Report.External, never an error.
	External bool
	// Context cancels the external commands (nil: never cancelled).
	Context context.Context
	// Reader scores the answers of the distortion (nil: the bundle's
	// reader), e.g. an external reader (reader.NewHTTP).
	Reader reader.Reader
}

// scorer is the reader that measures distortion: opt's, else the
// bundle's, else nil.
func scorer(b *model.Bundle, opt Options) reader.Reader {
	if opt.Reader != nil {
		return opt.Reader
	}
	if b.Reader != nil {
		return b.Reader
	}
	return nil
}

// Run benchmarks every row on eps (codes) with bundle b and predictor p.
func Run(b *model.Bundle, p worldmodel.Predictor, eps []*trajectory.Episode, opt Options) (*Report, error) {
	if opt.Batch <= 0 {
		opt.Batch = 8
	}
	cfg := p.Config()
	J, C := cfg.Coords(), cfg.Codewords
	bits := opq.CodeBits(C)
	r := &Report{Bundle: b.HashString(), Episodes: len(eps)}
	for _, ep := range eps {
		if ep.Codes == nil {
			return nil, fmt.Errorf("bench: episode %d holds no codes", ep.ID)
		}
		r.Observations += len(ep.Codes)
		r.Transitions += len(ep.Codes) - 1
	}
	if r.Observations == 0 {
		return nil, fmt.Errorf("bench: no observations")
	}
	progress := func(name string) {
		if opt.Progress != nil {
			opt.Progress(name)
		}
	}

	// The memory-file rows come first: they give the action cost every row
	// is charged.
	progress("wm-all-send")
	all, err := memoryRow(b, p, eps, model.Policy{Kind: model.KeepAll}, codec.Options{}, opt)
	if err != nil {
		return nil, err
	}
	all.Name = "wm-all-send"
	zero := 0.0
	all.DeltaNLLBits = &zero
	actions := all.ActionBitsPerObs
	fixed := float64(J*bits) + actions

	progress("fixed-width")
	r.Methods = append(r.Methods, Row{Name: "fixed-width", BitsPerObs: fixed, IdealBitsPerObs: fixed,
		ActionBitsPerObs: actions, DeltaNLLBits: &zero, KeptFraction: 1, Note: fmt.Sprintf("%d bits per code", bits)})

	ctx := opt.Context
	if ctx == nil {
		ctx = context.Background()
	}
	if opt.External {
		r.External = findExternal(ctx)
	}
	general, err := generalRows(ctx, eps, bits, actions, r.External, progress)
	if err != nil {
		return nil, err
	}
	r.Methods = append(r.Methods, general...)
	r.Methods = append(r.Methods, bestGeneral(general))

	progress("order1-context")
	o, err := order1Row(eps, J, C, bits, actions)
	if err != nil {
		return nil, err
	}
	o.DeltaNLLBits = &zero
	r.Methods = append(r.Methods, o)

	r.Methods = append(r.Methods, all)
	progress("wm-repeat")
	rep, err := memoryRow(b, p, eps, model.Policy{Kind: model.KeepAll}, codec.Options{SlotRepeat: true}, opt)
	if err != nil {
		return nil, err
	}
	rep.Name = "wm-repeat"
	rep.DeltaNLLBits = &zero
	rep.Note = fmt.Sprintf("lossless with slot repeat flags: %.1f%% of the predicted coordinates copied by a flag", 100*rep.repeated)
	r.Methods = append(r.Methods, rep)
	progress("wm-gated")
	gated, err := memoryRow(b, p, eps, b.Policy, codec.Options{Mix: b.Policy.CalibratedOnMix()}, opt)
	if err != nil {
		return nil, err
	}
	gated.Name = "wm-gated"
	switch {
	case b.Policy.Lossless() && b.Policy.Kind == model.Risk:
		gated.DeltaNLLBits = &zero
		gated.Note = "the bundle's risk policy has lambda 0 (calibration kept everything)"
	case b.Policy.Lossless():
		gated.DeltaNLLBits = &zero
		gated.Note = "the bundle's policy is lossless: no calibrated lambda yet"
	case scorer(b, opt) == nil:
		gated.Note = "no reader in the bundle: distortion not measured"
	case len(opt.Questions) == 0:
		gated.Note = "no questions about these episodes: distortion not measured"
	default:
		d, n, err := distortion(b, scorer(b, opt), eps, gated.recon, opt.Questions)
		if err != nil {
			return nil, err
		}
		gated.DeltaNLLBits = &d
		gated.Note = fmt.Sprintf("%s; distortion over %d questions", b.Policy, n)
		if b.Policy.CalibratedOnMix() {
			gated.Note += "; written under the mixing prior, as the policy was calibrated"
		}
	}
	r.Methods = append(r.Methods, gated)
	mix, err := mixRows(b, p, eps, opt, progress)
	if err != nil {
		return nil, err
	}
	r.Methods = append(r.Methods, mix...)
	// Rows are appended above this line: the ratios are set in one pass
	// over all of them.
	if err := setRatios(r.Methods, fixed); err != nil {
		return nil, err
	}
	return r, nil
}

// memoryRow writes a memory file with policy, decodes it back and checks
// the reconstruction.
func memoryRow(b *model.Bundle, p worldmodel.Predictor, eps []*trajectory.Episode, policy model.Policy, copt codec.Options, opt Options) (Row, error) {
	dir := opt.Dir
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, "memowm-bench-*.mwm")
	if err != nil {
		return Row{}, fmt.Errorf("bench: %w", err)
	}
	path := f.Name()
	f.Close()
	defer os.Remove(path)
	start := time.Now()
	w, err := codec.CreateWith(path, b, p, policy, copt)
	if err != nil {
		return Row{}, err
	}
	w.KeepRecon = true
	var stats []codec.EpisodeStats
	for lo := 0; lo < len(eps); lo += opt.Batch {
		st, err := w.Write(eps[lo:min(len(eps), lo+opt.Batch)])
		if err != nil {
			w.Abort()
			return Row{}, err
		}
		stats = append(stats, st...)
	}
	if err := w.Close(); err != nil {
		return Row{}, err
	}
	encT := time.Since(start)
	fi, err := os.Stat(path)
	if err != nil {
		return Row{}, fmt.Errorf("bench: %w", err)
	}
	start = time.Now()
	rd, err := codec.Open(path)
	if err != nil {
		return Row{}, err
	}
	defer rd.Close()
	if err := rd.CheckBundle(b); err != nil {
		return Row{}, err
	}
	n := len(rd.Episodes())
	k := 0
	for lo := 0; lo < n; lo += opt.Batch {
		which := make([]int, 0, opt.Batch)
		for i := lo; i < min(n, lo+opt.Batch); i++ {
			which = append(which, i)
		}
		got, err := rd.Decode(p, which)
		if err != nil {
			return Row{}, err
		}
		for _, ep := range got {
			for t := range ep.Codes {
				if string(ep.Codes[t]) != string(stats[k].Recon[t]) {
					return Row{}, fmt.Errorf("bench: episode %d step %d decodes differently from what was written", ep.ID, t)
				}
			}
			k++
		}
	}
	decT := time.Since(start)
	var state, action float64
	var kept, coords, repeated uint64
	nobs := 0
	for _, s := range stats {
		state += s.StateBits
		action += s.ActionBits
		kept += s.Kept
		repeated += s.Repeated
		coords += s.Coords
		nobs += s.Observations
	}
	o := float64(max(nobs, 1))
	row := Row{
		BitsPerObs: float64(fi.Size()*8) / o, IdealBitsPerObs: (state + action) / o, ActionBitsPerObs: action / o,
		EncodeObsPerS: o / encT.Seconds(), DecodeObsPerS: o / decT.Seconds(), KeptFraction: 1,
	}
	if coords > 0 {
		row.KeptFraction = float64(kept) / float64(coords)
		row.repeated = float64(repeated) / float64(coords)
	}
	row.recon = map[int64][][]uint8{}
	for _, st := range stats {
		row.recon[st.ID] = st.Recon
	}
	return row, nil
}

// distortion is the mean, over the questions about eps, of the reader's
// answer bits on the reconstructed state minus those on the complete one.
func distortion(b *model.Bundle, rd reader.Reader, eps []*trajectory.Episode, recon map[int64][][]uint8, qs []*trajectory.Question) (float64, int, error) {
	byID := map[int64]*trajectory.Episode{}
	for _, ep := range eps {
		byID[ep.ID] = ep
	}
	var truth, rec [][]float32
	var used []*trajectory.Question
	for _, q := range qs {
		ep, ok := byID[q.Episode]
		if !ok || q.Step < 0 || q.Step >= len(ep.Codes) {
			continue
		}
		x, err := b.OPQ.Decode(ep.Codes[q.Step])
		if err != nil {
			return 0, 0, err
		}
		y, err := b.OPQ.Decode(recon[q.Episode][q.Step])
		if err != nil {
			return 0, 0, err
		}
		truth, rec, used = append(truth, x), append(rec, y), append(used, q)
	}
	if len(used) == 0 {
		return 0, 0, fmt.Errorf("bench: no question names an observation of these episodes")
	}
	a, err := rd.Bits(nil, truth, used)
	if err != nil {
		return 0, 0, err
	}
	c, err := rd.Bits(nil, rec, used)
	if err != nil {
		return 0, 0, err
	}
	var d float64
	for i := range a {
		d += c[i] - a[i]
	}
	return d / float64(len(a)), len(a), nil
}

// order1Row codes every code conditioned on its coordinate's previous code
// with adaptive counts that carry over from episode to episode.
func order1Row(eps []*trajectory.Episode, J, C, bits int, actions float64) (Row, error) {
	m, err := entropy.NewContextModel(J, C, C)
	if err != nil {
		return Row{}, fmt.Errorf("bench: %w", err)
	}
	e := entropy.NewEncoder(nil)
	var ideal uint64
	obs := 0
	start := time.Now()
	for _, ep := range eps {
		obs += len(ep.Codes)
		for t := 1; t < len(ep.Codes); t++ {
			prev, z := ep.Codes[t-1], ep.Codes[t]
			for j := 0; j < J; j++ {
				ideal += uint64(m.CostQ16(j, int(prev[j]), int(z[j])))
				if err := m.Encode(e, j, int(prev[j]), int(z[j])); err != nil {
					return Row{}, fmt.Errorf("bench: %w", err)
				}
			}
		}
	}
	if err := e.Close(); err != nil {
		return Row{}, fmt.Errorf("bench: %w", err)
	}
	encT := time.Since(start)
	stream := e.Bytes()
	start = time.Now()
	m.Reset()
	d, err := entropy.NewDecoderBytes(stream)
	if err != nil {
		return Row{}, fmt.Errorf("bench: %w", err)
	}
	for _, ep := range eps {
		for t := 1; t < len(ep.Codes); t++ {
			prev, z := ep.Codes[t-1], ep.Codes[t]
			for j := 0; j < J; j++ {
				s, err := m.Decode(d, j, int(prev[j]))
				if err != nil || s != int(z[j]) {
					return Row{}, fmt.Errorf("bench: order-1 round trip failed at episode %d step %d: %v", ep.ID, t, err)
				}
			}
		}
	}
	if err := d.Finish(); err != nil {
		return Row{}, fmt.Errorf("bench: %w", err)
	}
	decT := time.Since(start)
	o := float64(obs)
	first := float64(len(eps) * J * bits)
	return Row{Name: "order1-context",
		BitsPerObs:       (first+float64(len(stream)*8))/o + actions,
		IdealBitsPerObs:  (first+float64(ideal)/65536)/o + actions,
		ActionBitsPerObs: actions, KeptFraction: 1,
		EncodeObsPerS: o / encT.Seconds(), DecodeObsPerS: o / decT.Seconds(),
		Note: "adaptive across episodes in file order; first states raw"}, nil
}
