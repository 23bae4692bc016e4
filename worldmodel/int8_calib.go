package worldmodel

import (
	"fmt"
	"math"
)

// Calibration: the int8 profile's activation scales come from the largest
// magnitude each quantized activation reaches when the f32 reference runs
// on training histories (CalibrateInt8). The f32 forward records them when
// its CPU has stats set; with stats nil (always, outside calibration) the
// calls below return at once.

// Activation sites of one layer.
const (
	siteLN1  = iota // LN1 output: the QKV product's input
	siteQ           // queries
	siteK           // keys
	siteV           // values
	siteAtt         // attention output: the Wo product's input
	siteLN2         // LN2 output: the W1 product's input
	sitePre         // W1's output plus bias: GELU's input
	siteGELU        // GELU's output: the W2 product's input
	numSites
)

// actStats holds the largest magnitudes seen, per layer and site, of the
// residual stream and of the final LayerNorm's output.
type actStats struct {
	layer [][numSites]float32
	resid float32
	final float32
}

func newActStats(layers int) *actStats { return &actStats{layer: make([][numSites]float32, layers)} }

func maxAbs(m float32, v []float32) float32 {
	for _, x := range v {
		if a := float32(math.Abs(float64(x))); a > m {
			m = a
		}
	}
	return m
}

func (s *actStats) seeResid(v []float32) {
	if s != nil {
		s.resid = maxAbs(s.resid, v)
	}
}

func (s *actStats) seeFinal(v []float32) {
	if s != nil {
		s.final = maxAbs(s.final, v)
	}
}

func (s *actStats) seeLayer(l, site int, v []float32, _ int) {
	if s == nil {
		return
	}
	s.layer[l][site] = maxAbs(s.layer[l][site], v)
}

// seeQKV records the queries, keys and values of qkv (rows of 3W).
func (s *actStats) seeQKV(l int, qkv []float32, W int) {
	if s == nil {
		return
	}
	st := &s.layer[l]
	for r := 0; r+3*W <= len(qkv); r += 3 * W {
		st[siteQ] = maxAbs(st[siteQ], qkv[r:r+W])
		st[siteK] = maxAbs(st[siteK], qkv[r+W:r+2*W])
		st[siteV] = maxAbs(st[siteV], qkv[r+2*W:r+3*W])
	}
}

// seePre records W1's output plus its bias (rows of len(b)).
func (s *actStats) seePre(l int, mlp, b []float32) {
	if s == nil {
		return
	}
	m := s.layer[l][sitePre]
	M := len(b)
	for r := 0; r+M <= len(mlp); r += M {
		for i, v := range mlp[r : r+M] {
			if a := float32(math.Abs(float64(v + b[i]))); a > m {
				m = a
			}
		}
	}
	s.layer[l][sitePre] = m
}

// CalibrationHistories returns up to n histories of data for CalibrateInt8:
// the windows (at most MaxHistory states) that predict n transitions spread
// evenly over all of data's transitions, in order. The histories own their
// memory.
func (c *Config) CalibrationHistories(data Corpus, n int) ([]History, error) {
	total := Transitions(data)
	if total == 0 || n < 1 {
		return nil, fmt.Errorf("worldmodel: int8 calibration: no transitions to calibrate on")
	}
	n = min(n, total)
	J := c.Coords()
	var out []History
	var wb windowBuf
	var h History
	k, next := 0, 0 // transition index; the next one to take
	for i := 0; i < data.Sequences() && len(out) < n; i++ {
		for t := 1; t < data.States(i) && len(out) < n; t++ {
			if k == next {
				var err error
				if h, _, err = readWindow(h, &wb, data, J, example{int32(i), int32(t)}, c.MaxHistory, false); err != nil {
					return nil, fmt.Errorf("worldmodel: int8 calibration: %w", err)
				}
				own := make(History, len(h))
				for s, st := range h {
					own[s] = Step{Codes: append([]uint8(nil), st.Codes...), Action: st.Action}
					own[s].Action.Payload = append([]byte(nil), st.Action.Payload...)
				}
				out = append(out, own)
				next = int(int64(len(out)) * int64(total) / int64(n))
			}
			k++
		}
	}
	return out, nil
}
