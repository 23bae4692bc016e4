package worldmodel

import "math"

// What another backend of the int8 profile (cuda's) needs from this
// package: the tables the rules index and the input tokens, which are
// computed in the f32 profile on the CPU (see ProfileInt8).

// Int8Tables returns copies of the profile's tables: the exponential
// (4097 entries, expTable: round(2^20 e^(-i/256)), 0 at the end) and the
// copy gate's sigmoid (2049 entries, sigTable: round(2^16 sigmoid(i/64)),
// i in [-1024, 1024]).
func Int8Tables() (exp []int32, sig []int64) {
	return append([]int32(nil), expTable...), append([]int64(nil), sigTable...)
}

// Int8ResidLimit is the residual stream's saturation bound (+-).
const Int8ResidLimit = int8Resid

// Int8GELUHalf is the GELU table's half width: W1's requantised output is
// clamped to +-Int8GELUHalf and indexes GELU at u + Int8GELUHalf.
const Int8GELUHalf = geluHalf

// Int8SigHalf is the sigmoid table's half width (Int8Tables' sig).
const Int8SigHalf = sigHalf

// InputTokens validates hs (as Predict) and returns the residual stream's
// first rows, the input tokens rounded to the fixed point of Frac bits: x is
// (N, Width) with history b's rows at start[b]..start[b+1], N = start[B]. x
// is resliced and reused when long enough.
func (r *Int8CPU) InputTokens(x []int32, hs []History) ([]int32, []int, error) {
	c := &r.q.m.cfg
	if err := c.checkHistories(hs); err != nil {
		return x, nil, err
	}
	S, W := c.Slots, c.Width()
	start := make([]int, len(hs)+1)
	for b, h := range hs {
		start[b+1] = start[b] + len(h)*S
	}
	x = grow(x, start[len(hs)]*W)
	r.tokens(x, hs, start)
	return x, start, nil
}

// tokens writes the input tokens of hs (rows from start) into x, in f32,
// rounded to the residual's fixed point.
func (r *Int8CPU) tokens(x []int32, hs []History, start []int) {
	N, W := start[len(hs)], r.q.m.cfg.Width()
	f := r.f
	f.x = grow(f.x, N*W)
	f.embed(hs, start)
	scale := math.Ldexp(1, int(r.q.Frac))
	for i, v := range f.x[:N*W] {
		x[i] = int32(roundClamp(float64(v)*scale, int8Resid))
	}
}

// TraceFunc receives each step's output during a forward pass, for
// op-by-op comparisons of backends: op names the step ("tokens", then per
// layer "ln1", "qkv.acc", "qkv", "attention", "o.acc", "resid1", "ln2",
// "w1.acc", "gelu", "w2.acc", "resid2", then "final"), layer is its block
// (-1 outside the blocks) and data a []int8, []int16 or []int32 valid only
// during the call. The last block's steps after "qkv" hold the last
// state's rows only.
type TraceFunc func(op string, layer int, data any)

// SetTrace makes every Predict call f after each step (nil: off).
func (r *Int8CPU) SetTrace(f TraceFunc) { r.trace = f }

func (r *Int8CPU) traced(op string, layer int, data any) {
	if r.trace != nil {
		r.trace(op, layer, data)
	}
}
