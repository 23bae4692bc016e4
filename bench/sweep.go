package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// CurvePoint is one model capacity and its episodic rates (paper A.4): the
// model's parameters P; R(P), the world model's own lossless ideal rate in
// bits per observation at lambda = 0; the memory file's rate, when
// measured; and the bytes of the bundle that holds the model (quantizer,
// FP32 weights and policy), when known.
type CurvePoint struct {
	Name   string  `json:"name"`
	Params float64 `json:"params"`
	// Rate is the world model alone: the ideal code length of every code
	// and action under its tables, per observation.
	Rate float64 `json:"rate_bits_per_obs"`
	// FileRate is the memory file's rate: the whole file that 'memowm
	// encode --lambda 0' writes of the evaluation episodes (its default
	// prior, the world model mixed with adaptive contexts and long-range
	// copy), in bits per observation, the observations N+K, actions and
	// headers included. 0 when unknown (a curve file without the column).
	FileRate float64 `json:"file_bits_per_obs,omitempty"`
	// FilePrior is the prior the measured file was coded under (mix), for
	// the record.
	FilePrior string `json:"file_prior,omitempty"`
	// BundleSHA256 and EvalSHA256 name the bundle and the evaluation
	// episodes the rates were measured with (hex; "" when not recorded): a
	// sweep measures a point again unless both are the same.
	BundleSHA256 string `json:"bundle_sha256,omitempty"`
	EvalSHA256   string `json:"eval_sha256,omitempty"`
	// BundleBytes is the size of the bundle file a reader needs: B_shared
	// as stored. 0 when unknown (a curve file without the column); the
	// weights alone at FP32 are counted then.
	BundleBytes int64 `json:"bundle_bytes,omitempty"`
	// Steps is how many optimizer steps the point's world model had (0:
	// unknown), for the record.
	Steps int `json:"steps,omitempty"`
	// LR is the peak learning rate of the point's (last) training run and
	// Init its initialisation ("" for the preset's), when known, for the
	// record.
	LR   float64 `json:"lr,omitempty"`
	Init string  `json:"init,omitempty"`
	// Dropout is the training dropout of the point's world model, for the
	// record (0 also when unknown).
	Dropout float64 `json:"dropout,omitempty"`
	// TrainSeconds is the wall-clock training time of the point's world
	// model over all its runs (0: unknown), for the record.
	TrainSeconds float64 `json:"train_seconds,omitempty"`
	// History is the point's world-model window, the states of history it
	// predicts from (0: unknown), for the record.
	History int `json:"history,omitempty"`
}

// HorizonRow is the total storage per observation of every point at one
// horizon N (remembered observations): S(P, N) = B_shared(P) / N + R(P), the
// shared model amortised plus the episodic rate (StoredRate: the memory
// file's when the curve has it), and the best point.
type HorizonRow struct {
	N     float64   `json:"n"`
	Total []float64 `json:"total_bits_per_obs"` // in the order of the points
	Best  string    `json:"best"`
}

// BreakEven is the horizon past which the larger of two consecutive points
// (by parameters) stores less: N > (B_b - B_a) / (R_a - R_b), or +Inf when
// the larger model's rate is not lower (it never wins). N is on the rates
// S counts (StoredRate); ModelN on the world models' rates alone, the same
// as N when the curve has no file rates.
type BreakEven struct {
	Smaller, Larger string
	N               float64
	ModelN          float64
}

// StoredRate is the episodic rate S(P, N) counts for p: the memory file's
// when measured, else the world model's own.
func StoredRate(p CurvePoint) float64 {
	if p.FileRate > 0 {
		return p.FileRate
	}
	return p.Rate
}

// RateRule says in words which rate StoredRate takes for pts: "file" when
// every point has its memory file's rate, "model" when none has, "mixed"
// otherwise (Analyze refuses that).
func RateRule(pts []CurvePoint) string {
	return rule(pts, func(p CurvePoint) bool { return p.FileRate > 0 }, "file", "model")
}

// rule is all when every point has what has reports, none when none has,
// and "mixed" otherwise.
func rule(pts []CurvePoint, has func(CurvePoint) bool, all, none string) string {
	n := 0
	for _, p := range pts {
		if has(p) {
			n++
		}
	}
	switch n {
	case len(pts):
		return all
	case 0:
		return none
	}
	return "mixed"
}

// breakEven is the horizon past which b, the larger, stores less than a
// when their episodic rates are ra and rb.
func breakEven(a, b CurvePoint, ra, rb float64) float64 {
	if rb < ra {
		return (SharedBits(b) - SharedBits(a)) / (ra - rb)
	}
	return math.Inf(1)
}

// SharedBits is B_shared(P) in bits, the model at the precision it is
// stored in: 8 times the bundle's bytes (quantizer, FP32 weights, policy)
// when they are known, else 32 P, the FP32 weights alone.
func SharedBits(p CurvePoint) float64 {
	if p.BundleBytes > 0 {
		return 8 * float64(p.BundleBytes)
	}
	return 32 * p.Params
}

// SharedRule says in words what SharedBits counted for pts: "bundle" when
// every point has its bundle's bytes, "weights" when none has, "mixed"
// otherwise (Analyze refuses that).
func SharedRule(pts []CurvePoint) string {
	return rule(pts, func(p CurvePoint) bool { return p.BundleBytes > 0 }, "bundle", "weights")
}

// Analyze sorts points by parameters and computes the totals at every
// horizon and the break-even horizon of consecutive points.
func Analyze(points []CurvePoint, horizons []float64) ([]CurvePoint, []HorizonRow, []BreakEven, error) {
	if len(points) == 0 {
		return nil, nil, nil, fmt.Errorf("bench: an empty capacity curve")
	}
	pts := append([]CurvePoint(nil), points...)
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].Params < pts[j].Params })
	for _, p := range pts {
		if !(p.Params > 0) || !(p.Rate >= 0) || math.IsInf(p.Rate, 0) || p.BundleBytes < 0 || !(p.FileRate >= 0) || math.IsInf(p.FileRate, 0) {
			return nil, nil, nil, fmt.Errorf("bench: curve point %q has params %g, rate %g, file rate %g and bundle bytes %d", p.Name, p.Params, p.Rate, p.FileRate, p.BundleBytes)
		}
	}
	if SharedRule(pts) == "mixed" {
		return nil, nil, nil, fmt.Errorf("bench: some curve points give their bundle's bytes and some do not; the totals would count different things")
	}
	if RateRule(pts) == "mixed" {
		return nil, nil, nil, fmt.Errorf("bench: some curve points give their memory file's rate and some do not; the totals would count different things")
	}
	var rows []HorizonRow
	for _, n := range horizons {
		if !(n > 0) {
			return nil, nil, nil, fmt.Errorf("bench: horizon %g must be positive", n)
		}
		r := HorizonRow{N: n}
		best := -1
		for i, p := range pts {
			s := SharedBits(p)/n + StoredRate(p)
			r.Total = append(r.Total, s)
			if best < 0 || s < r.Total[best] {
				best = i
			}
		}
		r.Best = pts[best].Name
		rows = append(rows, r)
	}
	var be []BreakEven
	for i := 0; i+1 < len(pts); i++ {
		a, b := pts[i], pts[i+1]
		be = append(be, BreakEven{Smaller: a.Name, Larger: b.Name,
			N: breakEven(a, b, StoredRate(a), StoredRate(b)), ModelN: breakEven(a, b, a.Rate, b.Rate)})
	}
	return pts, rows, be, nil
}

// DefaultHorizons are 10^3 .. 10^9 observations, three per decade.
func DefaultHorizons() []float64 {
	var h []float64
	for e := 3.0; e <= 9.0001; e += 1.0 / 3 {
		h = append(h, math.Round(math.Pow(10, e)))
	}
	return h
}

// ReadCurve reads a capacity curve from CSV: a header naming the columns
// name, params and rate_bits_per_obs and optionally bundle_bytes,
// file_bits_per_obs (the memory file's rate; empty or absent when not
// measured), steps, lr, init, dropout, train_seconds, history, file_prior,
// bundle_sha256 and eval_sha256 (in any order; those after
// file_bits_per_obs for the record), then one point a row. Curves written
// before a column was added read as they did.
func ReadCurve(r io.Reader) ([]CurvePoint, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("bench: curve: %w", err)
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("bench: curve: want a header and at least one point")
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[strings.TrimSpace(h)] = i
	}
	for _, need := range []string{"name", "params", "rate_bits_per_obs"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("bench: curve: no %q column (have %v)", need, rows[0])
		}
	}
	var pts []CurvePoint
	for n, row := range rows[1:] {
		num := func(c string) (float64, error) {
			v, err := strconv.ParseFloat(strings.TrimSpace(row[col[c]]), 64)
			if err != nil {
				return 0, fmt.Errorf("bench: curve line %d: %s: %w", n+2, c, err)
			}
			return v, nil
		}
		p, err := num("params")
		if err != nil {
			return nil, err
		}
		rate, err := num("rate_bits_per_obs")
		if err != nil {
			return nil, err
		}
		pt := CurvePoint{Name: strings.TrimSpace(row[col["name"]]), Params: p, Rate: rate}
		if _, ok := col["bundle_bytes"]; ok {
			b, err := num("bundle_bytes")
			if err != nil {
				return nil, err
			}
			if !(b >= 0 && b < 1<<50 && b == math.Trunc(b)) {
				return nil, fmt.Errorf("bench: curve line %d: bundle_bytes %g is not a byte count", n+2, b)
			}
			pt.BundleBytes = int64(b)
		}
		// opt reads an optional column: 0 when absent or empty, an error
		// when its value fails valid (NaN fails every bound).
		opt := func(c, what string, valid func(float64) bool) (float64, error) {
			i, ok := col[c]
			if !ok || strings.TrimSpace(row[i]) == "" {
				return 0, nil
			}
			v, err := num(c)
			if err != nil {
				return 0, err
			}
			if !valid(v) {
				return 0, fmt.Errorf("bench: curve line %d: %s %g is not %s", n+2, c, v, what)
			}
			return v, nil
		}
		whole := func(lim float64) func(float64) bool {
			return func(v float64) bool { return v >= 0 && v < lim && v == math.Trunc(v) }
		}
		steps, err := opt("steps", "a step count", whole(1<<40))
		if err != nil {
			return nil, err
		}
		pt.Steps = int(steps)
		if pt.LR, err = opt("lr", "a learning rate", func(v float64) bool { return v > 0 && v < 1 }); err != nil {
			return nil, err
		}
		if pt.Dropout, err = opt("dropout", "a dropout rate", func(v float64) bool { return v >= 0 && v < 1 }); err != nil {
			return nil, err
		}
		if _, ok := col["init"]; ok {
			pt.Init = strings.TrimSpace(row[col["init"]])
		}
		if pt.TrainSeconds, err = opt("train_seconds", "a duration", func(v float64) bool { return v >= 0 && v < 1e12 }); err != nil {
			return nil, err
		}
		history, err := opt("history", "a number of states", func(v float64) bool { return v >= 1 && whole(1<<20)(v) })
		if err != nil {
			return nil, err
		}
		pt.History = int(history)
		if pt.FileRate, err = opt("file_bits_per_obs", "a rate in bits per observation", func(v float64) bool { return v > 0 && v < 1e12 }); err != nil {
			return nil, err
		}
		str := func(c string) string {
			if i, ok := col[c]; ok {
				return strings.TrimSpace(row[i])
			}
			return ""
		}
		pt.FilePrior = str("file_prior")
		pt.BundleSHA256, pt.EvalSHA256 = str("bundle_sha256"), str("eval_sha256")
		for _, h := range []string{pt.BundleSHA256, pt.EvalSHA256} {
			if h != "" && !isSHA256(h) {
				return nil, fmt.Errorf("bench: curve line %d: %q is not a SHA-256 in hex", n+2, h)
			}
		}
		pts = append(pts, pt)
	}
	return pts, nil
}

func isSHA256(h string) bool {
	if len(h) != 64 {
		return false
	}
	for _, c := range h {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// CurveHeader is the header WriteCurve writes: the columns of the first
// curves first, so that a reader by position of an older curve still finds
// them where they were.
const CurveHeader = "name,params,rate_bits_per_obs,bundle_bytes,steps,lr,init,dropout,train_seconds,history,file_bits_per_obs,file_prior,bundle_sha256,eval_sha256"

// WriteCurve writes pts as ReadCurve reads them (CurveHeader), unknown
// values empty, the rates in full (the shortest decimal that reads back as
// the same float64), so a sweep that takes them from the curve reports what
// the one that measured them did.
func WriteCurve(w io.Writer, pts []CurvePoint) error {
	cw := csv.NewWriter(w)
	cw.Write(strings.Split(CurveHeader, ","))
	for _, p := range pts {
		opt := func(v float64, f byte, prec int) string {
			if v > 0 {
				return strconv.FormatFloat(v, f, prec, 64)
			}
			return ""
		}
		cw.Write([]string{
			p.Name, strconv.FormatFloat(p.Params, 'f', 0, 64), strconv.FormatFloat(p.Rate, 'f', -1, 64),
			strconv.FormatInt(p.BundleBytes, 10), strconv.Itoa(p.Steps), opt(p.LR, 'g', -1), p.Init,
			strconv.FormatFloat(p.Dropout, 'g', -1, 64), opt(p.TrainSeconds, 'f', 1), opt(float64(p.History), 'f', 0),
			opt(p.FileRate, 'f', -1), p.FilePrior, p.BundleSHA256, p.EvalSHA256,
		})
	}
	cw.Flush()
	return cw.Error()
}

// WriteSweepCSV writes one row per (horizon, point): n, name, params, the
// world model's rate, the shared model's bits per observation at n, the
// total S, whether the point is the best at n, then (columns added after
// the first seven, so older readers by position still work) the memory
// file's rate (empty when not known) and which rate the total counts:
// memory_file or world_model.
func WriteSweepCSV(w io.Writer, pts []CurvePoint, rows []HorizonRow) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"n", "name", "params", "rate_bits_per_obs", "shared_bits_per_obs", "total_bits_per_obs", "best", "file_bits_per_obs", "total_from"})
	from := "world_model"
	if RateRule(pts) == "file" {
		from = "memory_file"
	}
	for _, r := range rows {
		for i, p := range pts {
			file := ""
			if p.FileRate > 0 {
				file = strconv.FormatFloat(p.FileRate, 'f', 3, 64)
			}
			cw.Write([]string{
				strconv.FormatFloat(r.N, 'g', -1, 64), p.Name, strconv.FormatFloat(p.Params, 'g', -1, 64),
				strconv.FormatFloat(p.Rate, 'f', 3, 64), strconv.FormatFloat(SharedBits(p)/r.N, 'f', 3, 64),
				strconv.FormatFloat(r.Total[i], 'f', 3, 64), strconv.FormatBool(r.Best == p.Name), file, from,
			})
		}
	}
	cw.Flush()
	return cw.Error()
}
