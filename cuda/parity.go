package cuda

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"time"

	"github.com/memowm/memowm/trajectory"
	"github.com/memowm/memowm/worldmodel"
)

// The parity harness: the same batch through worldmodel.Int8CPU and
// through Int8 on a Device, compared op by op (every step's output, see
// worldmodel.TraceFunc) and for the whole predictor (tables, modes,
// entropies), bit for bit. The tests run it on the emulator; devcheck on a
// GPU.

// OpParity is one step's comparison: its values and how many differ.
type OpParity struct {
	Op         string `json:"op"`
	Layer      int    `json:"layer"`
	Values     int    `json:"values"`
	Mismatches int    `json:"mismatches"`
	First      int    `json:"first_mismatch"` // index of the first, -1 when none
}

// Parity is the comparison of one batch.
type Parity struct {
	Preset     string     `json:"preset"`
	GEMM       string     `json:"gemm"` // the matrix-product kernel: dp4a or mma
	Histories  int        `json:"histories"`
	Tokens     int        `json:"tokens"`
	Ops        []OpParity `json:"per_op"`
	Tables     int        `json:"tables"` // coordinates compared
	Mismatches struct {
		Ops      int `json:"mismatched_steps"`     // steps with any difference
		Tables   int `json:"mismatched_tables"`    // tables with any entry different
		Modes    int `json:"mismatched_modes"`     // modes different
		Entropy  int `json:"mismatched_entropies"` // entropies different
		Sequence int `json:"mismatched_sequence"`  // steps the two sides ran in a different order
	} `json:"mismatches"`
	CPUSeconds    float64 `json:"cpu_seconds"`
	DeviceSeconds float64 `json:"device_seconds"` // with tracing when ops are compared
}

// OK reports whether everything matched.
func (p *Parity) OK() bool {
	m := p.Mismatches
	return m.Ops == 0 && m.Tables == 0 && m.Modes == 0 && m.Entropy == 0 && m.Sequence == 0
}

func (p *Parity) String() string {
	m := p.Mismatches
	return fmt.Sprintf("%s (%s): %d histories, %d tokens, %d steps and %d tables compared: %d steps, %d tables, %d modes, %d entropies differ",
		p.Preset, p.GEMM, p.Histories, p.Tokens, len(p.Ops), p.Tables, m.Ops, m.Tables, m.Modes, m.Entropy)
}

type traced struct {
	op    string
	layer int
	data  any
}

// CompareOptions are CompareInt8's.
type CompareOptions struct {
	Ops   bool                // also compare every step's output (slower on a GPU: each step waits for the device)
	GEMM  string              // the matrix-product kernel (SetGEMM; "": NewInt8's choice)
	Model []worldmodel.Option // for both predictors (WithPrecision)
}

// CompareInt8 predicts hs with q on the CPU and on dev and compares them.
func CompareInt8(dev Device, q *worldmodel.Int8Model, hs []worldmodel.History, o CompareOptions) (*Parity, error) {
	ops, opts := o.Ops, o.Model
	c := q.Config()
	p := &Parity{Preset: c.Preset, Histories: len(hs)}
	for _, h := range hs {
		p.Tokens += len(h) * c.Slots
	}
	cpu, err := worldmodel.NewInt8CPU(q, opts...)
	if err != nil {
		return nil, err
	}
	var ref []traced
	if ops {
		cpu.SetTrace(func(op string, layer int, data any) {
			ref = append(ref, traced{op, layer, cloneSlice(data)})
		})
	}
	t0 := time.Now()
	want, err := cpu.Predict(nil, hs)
	if err != nil {
		return nil, err
	}
	p.CPUSeconds = time.Since(t0).Seconds()
	g, err := NewInt8(dev, q, opts...)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	if o.GEMM != "" {
		if err := g.SetGEMM(o.GEMM); err != nil {
			return nil, err
		}
	}
	p.GEMM = g.GEMM()
	if ops {
		i := 0
		g.SetTrace(func(op string, layer int, data any) {
			o := OpParity{Op: op, Layer: layer, First: -1}
			if i >= len(ref) || ref[i].op != op || ref[i].layer != layer {
				p.Mismatches.Sequence++
			} else {
				o.Values, o.Mismatches, o.First = diffSlices(ref[i].data, data)
			}
			if o.Mismatches > 0 {
				p.Mismatches.Ops++
			}
			p.Ops = append(p.Ops, o)
			i++
		})
		defer func() {
			if i != len(ref) {
				p.Mismatches.Sequence++
			}
		}()
	}
	t0 = time.Now()
	got, err := g.Predict(nil, hs)
	if err != nil {
		return nil, err
	}
	p.DeviceSeconds = time.Since(t0).Seconds()
	C := c.Codewords
	for b := range want {
		w, d := &want[b], &got[b]
		for j := range w.Mode {
			p.Tables++
			if !reflect.DeepEqual(w.Freq[j*C:(j+1)*C], d.Freq[j*C:(j+1)*C]) {
				p.Mismatches.Tables++
			}
			if w.Mode[j] != d.Mode[j] {
				p.Mismatches.Modes++
			}
			if w.Entropy[j] != d.Entropy[j] {
				p.Mismatches.Entropy++
			}
		}
	}
	return p, nil
}

func cloneSlice(v any) any {
	switch s := v.(type) {
	case []int8:
		return append([]int8(nil), s...)
	case []int16:
		return append([]int16(nil), s...)
	case []int32:
		return append([]int32(nil), s...)
	}
	panic(fmt.Sprintf("cuda: trace of %T", v))
}

// diffSlices compares two traces of the same type: values, differences,
// the first difference's index (-1: none). A type or length difference
// counts every value.
func diffSlices(a, b any) (n, diff, first int) {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	n = va.Len()
	if va.Type() != vb.Type() || vb.Len() != n {
		return n, max(n, 1), 0
	}
	first = -1
	for i := 0; i < n; i++ {
		if va.Index(i).Int() != vb.Index(i).Int() {
			diff++
			if first < 0 {
				first = i
			}
		}
	}
	return n, diff, first
}

// RandomHistories draws n histories of c with lengths cycling through 1 to
// MaxHistory, states changing a few coordinates per step and random
// actions (seeded): test and benchmark batches.
func RandomHistories(c worldmodel.Config, n int, seed uint64) []worldmodel.History {
	rng := rand.New(rand.NewPCG(seed, 0x6d656d6f))
	hs := make([]worldmodel.History, n)
	for b := range hs {
		L := 1 + (b*5+int(seed))%c.MaxHistory
		codes := make([]uint8, c.Coords())
		for j := range codes {
			codes[j] = uint8(rng.IntN(c.Codewords))
		}
		h := make(worldmodel.History, L)
		for k := range h {
			for i := 0; i < c.Coords()/8; i++ {
				codes[rng.IntN(len(codes))] = uint8(rng.IntN(c.Codewords))
			}
			a := trajectory.Action{Type: trajectory.ActionType(rng.IntN(c.ActionTypes))}
			if rng.IntN(3) > 0 {
				a.HasPos, a.X, a.Y = true, rng.Float32(), rng.Float32()
			}
			if rng.IntN(2) == 0 {
				a.HasDelta, a.DX, a.DY = true, float32(rng.NormFloat64()*300), float32(rng.NormFloat64()*3)
			}
			for i := rng.IntN(c.MaxPayload + 1); i > 0; i-- {
				a.Payload = append(a.Payload, byte(rng.IntN(256)))
			}
			var valid []bool
			if rng.IntN(4) == 0 {
				valid = make([]bool, c.Slots)
				for s := range valid {
					valid[s] = rng.IntN(5) > 0
				}
			}
			h[k] = worldmodel.Step{Codes: append([]uint8(nil), codes...), Action: a, SlotValid: valid}
		}
		hs[b] = h
	}
	return hs
}

// RandomInt8 is a randomly initialised model of preset converted to the
// int8 profile, calibrated on random histories: its tables are noise, but
// every integer rule runs (parity and speed checks need no training).
func RandomInt8(preset string, seed uint64) (*worldmodel.Int8Model, error) {
	c, err := worldmodel.Preset(preset)
	if err != nil {
		return nil, err
	}
	m, err := worldmodel.New(c, seed)
	if err != nil {
		return nil, err
	}
	return worldmodel.CalibrateInt8(m, RandomHistories(c, 8, seed+1), runtime.GOMAXPROCS(0))
}
