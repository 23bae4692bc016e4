package opq

import "fmt"

// Quality says how close reconstructions are to their states.
type Quality struct {
	States int     `json:"states"`
	MSE    float64 `json:"mse"` // mean squared error per value
	// R2 is 1 - SSE/SST over all values, SST taken around each (slot,
	// channel)'s own mean over the measured states.
	R2 float64 `json:"r2"`
}

func (q Quality) String() string {
	return fmt.Sprintf("R^2 %.4f, MSE %.4g over %d states", q.R2, q.MSE, q.States)
}

// QualityMeter accumulates Quality over pairs of states and
// reconstructions, streaming: memory is three float64 per value of a state.
type QualityMeter struct {
	n               int
	sum, sumSq, sse []float64
}

// NewQualityMeter returns a meter for states of stateLen values.
func NewQualityMeter(stateLen int) *QualityMeter {
	return &QualityMeter{sum: make([]float64, stateLen), sumSq: make([]float64, stateLen), sse: make([]float64, stateLen)}
}

// Add adds one state and its reconstruction.
func (m *QualityMeter) Add(state, recon []float32) {
	recon = recon[:len(state)]
	for i, v := range state[:len(m.sum)] {
		x := float64(v)
		d := x - float64(recon[i])
		m.sum[i] += x
		m.sumSq[i] += float64(x * x)
		m.sse[i] += float64(d * d)
	}
	m.n++
}

// Quality returns the measures over everything added.
func (m *QualityMeter) Quality() Quality {
	if m.n == 0 {
		return Quality{}
	}
	var sse, sst float64
	n := float64(m.n)
	for i := range m.sum {
		sse += m.sse[i]
		sst += max(m.sumSq[i]-float64(m.sum[i]*m.sum[i])/n, 0)
	}
	q := Quality{States: m.n, MSE: sse / (n * float64(len(m.sum)))}
	if sst > 0 {
		q.R2 = 1 - sse/sst
	}
	return q
}

// Evaluate encodes and decodes states and measures the reconstructions.
func (q *Quantizer) Evaluate(states [][]float32) (Quality, error) {
	e := q.NewEncoder()
	sl, nc := q.shape.StateLen(), q.shape.Codes
	const batch = 64
	src := make([]float32, 0, batch*sl)
	codes := make([]uint8, batch*nc)
	rec := make([]float32, batch*sl)
	m := NewQualityMeter(sl)
	for lo := 0; lo < len(states); lo += batch {
		hi := min(len(states), lo+batch)
		src = src[:0]
		for _, s := range states[lo:hi] {
			if len(s) != sl {
				return Quality{}, fmt.Errorf("opq: state %d has %d values, want %d", lo, len(s), sl)
			}
			src = append(src, s...)
		}
		k := hi - lo
		if err := e.EncodeBatch(codes[:k*nc], src); err != nil {
			return Quality{}, err
		}
		if err := e.DecodeBatch(rec[:k*sl], codes[:k*nc]); err != nil {
			return Quality{}, err
		}
		for i := 0; i < k; i++ {
			m.Add(src[i*sl:(i+1)*sl], rec[i*sl:(i+1)*sl])
		}
	}
	return m.Quality(), nil
}
