package entropy

import "fmt"

// Adaptive frequency models for side information (action types, payload
// bytes) and for the order-1 context baseline. The update rule is fixed, so
// an encoder and a decoder that see the same symbols hold the same counts:
//
//	after coding s: count[s] += inc; total += inc
//	if total >= limit: count[i] = (count[i]+1) >> 1 for every i (so >= 1)
//
// Every count starts at 1 and stays >= 1, so no symbol is ever impossible.
// Counts are held minus one (zeroed memory is the initial state) in uint16,
// which is why limit <= 65536.

// AdaptiveOption configures NewAdaptive and NewContextModel.
type AdaptiveOption func(*adaptiveOptions) error

type adaptiveOptions struct {
	inc   uint32
	limit uint32
}

func (o *adaptiveOptions) setDefault() {
	o.inc = 32
	o.limit = 1 << 16
}

// WithIncrement sets the amount a symbol's count grows each time it is coded
// (default 32). It must be in [1, 4096].
func WithIncrement(inc uint32) AdaptiveOption {
	return func(o *adaptiveOptions) error {
		if inc < 1 || inc > 4096 {
			return fmt.Errorf("%w: increment %d not in [1, 4096]", ErrOption, inc)
		}
		o.inc = inc
		return nil
	}
}

// WithLimit sets the total at which all counts are halved (default 65536).
// It must be at most 65536 and at least 2*(alphabet + increment), checked
// when the model is built.
func WithLimit(limit uint32) AdaptiveOption {
	return func(o *adaptiveOptions) error {
		if limit > 1<<16 {
			return fmt.Errorf("%w: limit %d above 65536", ErrOption, limit)
		}
		o.limit = limit
		return nil
	}
}

func buildOptions(n int, opts []AdaptiveOption) (adaptiveOptions, error) {
	var o adaptiveOptions
	o.setDefault()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return o, err
		}
	}
	if n < 2 || n > 1<<15 {
		return o, fmt.Errorf("%w: %d symbols", ErrAlphabet, n)
	}
	if uint64(o.limit) < 2*(uint64(n)+uint64(o.inc)) {
		return o, fmt.Errorf("%w: limit %d below 2*(alphabet %d + increment %d)", ErrOption, o.limit, n, o.inc)
	}
	return o, nil
}

// counts is one adaptive distribution: c[i] = count_i - 1, *extra = total - n.
// The functions below are shared by Adaptive and ContextModel.
type counts struct {
	c     []uint16
	extra *uint32
}

func (k counts) total() uint32 { return *k.extra + uint32(len(k.c)) }

func (k counts) encode(e *Encoder, s int) error {
	if s < 0 || s >= len(k.c) {
		return e.fail(ErrBadFrequency)
	}
	var cum uint32
	for _, c := range k.c[:s] {
		cum += uint32(c) + 1
	}
	return e.EncodeTotal(cum, uint32(k.c[s])+1, k.total())
}

func (k counts) decode(d *Decoder) (int, error) {
	t, err := d.TargetTotal(k.total())
	if err != nil {
		return 0, err
	}
	var cum uint32
	s := 0
	for ; s < len(k.c)-1; s++ {
		f := uint32(k.c[s]) + 1
		if t < cum+f {
			break
		}
		cum += f
	}
	if err := d.Consume(cum, uint32(k.c[s])+1); err != nil {
		return 0, err
	}
	return s, nil
}

// update applies the rule. Invariant: total < limit between calls, so a
// held count is below limit - n + 1 <= 65535 and fits a uint16; the
// incremented count may not, so it is kept in a uint32 until halved. Since
// limit >= 2*(n + inc), the halved total is again below limit.
func (k counts) update(s int, o *adaptiveOptions) {
	nc := uint32(k.c[s]) + o.inc
	*k.extra += o.inc
	if k.total() < o.limit {
		k.c[s] = uint16(nc)
		return
	}
	var extra uint32
	for i, c := range k.c {
		h := c >> 1 // (count+1)>>1 - 1 = (c+2)>>1 - 1 = c>>1
		if i == s {
			h = uint16(nc >> 1)
		}
		k.c[i] = h
		extra += uint32(h)
	}
	*k.extra = extra
}

// Adaptive is an adaptive model over an alphabet of n symbols (n in
// [2, 32768]): action types, or payload bytes with n = 256.
type Adaptive struct {
	o     adaptiveOptions
	c     []uint16
	extra uint32
}

// NewAdaptive returns an Adaptive model over n symbols, every count 1.
func NewAdaptive(n int, opts ...AdaptiveOption) (*Adaptive, error) {
	o, err := buildOptions(n, opts)
	if err != nil {
		return nil, err
	}
	return &Adaptive{o: o, c: make([]uint16, n)}, nil
}

func (a *Adaptive) k() counts { return counts{a.c, &a.extra} }

// Len returns the alphabet size.
func (a *Adaptive) Len() int { return len(a.c) }

// Reset returns every count to 1.
func (a *Adaptive) Reset() {
	clear(a.c)
	a.extra = 0
}

// Freq returns symbol s's current count and the total of all counts.
func (a *Adaptive) Freq(s int) (freq, total uint32) {
	return uint32(a.c[s]) + 1, a.k().total()
}

// Encode codes s with the current counts, then updates them.
func (a *Adaptive) Encode(e *Encoder, s int) error {
	if err := a.k().encode(e, s); err != nil {
		return err
	}
	a.k().update(s, &a.o)
	return nil
}

// Decode decodes a symbol with the current counts, then updates them.
func (a *Adaptive) Decode(d *Decoder) (int, error) {
	s, err := a.k().decode(d)
	if err != nil {
		return 0, err
	}
	a.k().update(s, &a.o)
	return s, nil
}

// Update records s without coding it (for ideal-bit accounting with CostQ16).
func (a *Adaptive) Update(s int) { a.k().update(s, &a.o) }

// CostQ16 returns the code length of s under the current counts, in Q16 bits.
func (a *Adaptive) CostQ16(s int) uint32 {
	f, t := a.Freq(s)
	return CostQ16(f, t)
}

// ContextModel is a bank of adaptive models, one per (coordinate, context)
// pair: the order-1 baseline is NewContextModel(1024, 64, 64), each
// coordinate's code conditioned on that coordinate's previous code. The
// counts of all coords*contexts*alphabet cells live in one allocation of
// 2 bytes each (8 MiB for the baseline), zero-initialised.
type ContextModel struct {
	o        adaptiveOptions
	contexts int
	alphabet int
	c        []uint16 // (coords, contexts, alphabet)
	extra    []uint32 // (coords, contexts)
}

// NewContextModel returns a ContextModel with every count 1.
func NewContextModel(coords, contexts, alphabet int, opts ...AdaptiveOption) (*ContextModel, error) {
	o, err := buildOptions(alphabet, opts)
	if err != nil {
		return nil, err
	}
	if coords < 1 || contexts < 1 || uint64(coords)*uint64(contexts)*uint64(alphabet) > 1<<31 {
		return nil, fmt.Errorf("%w: %d coords x %d contexts x %d symbols", ErrAlphabet, coords, contexts, alphabet)
	}
	return &ContextModel{
		o:        o,
		contexts: contexts,
		alphabet: alphabet,
		c:        make([]uint16, coords*contexts*alphabet),
		extra:    make([]uint32, coords*contexts),
	}, nil
}

// k returns the counts of (coord, ctx); out-of-range indices panic (a shape
// mistake of the caller, never a property of the input stream).
func (m *ContextModel) k(coord, ctx int) counts {
	if ctx < 0 || ctx >= m.contexts || coord < 0 || coord >= len(m.extra)/m.contexts {
		panic(fmt.Sprintf("entropy: coordinate %d or context %d out of range [0, %d) x [0, %d)",
			coord, ctx, len(m.extra)/m.contexts, m.contexts))
	}
	i := coord*m.contexts + ctx
	return counts{m.c[i*m.alphabet : (i+1)*m.alphabet], &m.extra[i]}
}

// Reset returns every count to 1.
func (m *ContextModel) Reset() {
	clear(m.c)
	clear(m.extra)
}

// Encode codes sym for coordinate coord in context ctx, then updates that
// context's counts.
func (m *ContextModel) Encode(e *Encoder, coord, ctx, sym int) error {
	k := m.k(coord, ctx)
	if err := k.encode(e, sym); err != nil {
		return err
	}
	k.update(sym, &m.o)
	return nil
}

// Decode decodes the symbol of coordinate coord in context ctx, then updates
// that context's counts.
func (m *ContextModel) Decode(d *Decoder, coord, ctx int) (int, error) {
	k := m.k(coord, ctx)
	s, err := k.decode(d)
	if err != nil {
		return 0, err
	}
	k.update(s, &m.o)
	return s, nil
}

// Update records sym without coding it.
func (m *ContextModel) Update(coord, ctx, sym int) { m.k(coord, ctx).update(sym, &m.o) }

// CostQ16 returns the code length of sym in (coord, ctx) under the current
// counts, in Q16 bits.
func (m *ContextModel) CostQ16(coord, ctx, sym int) uint32 {
	k := m.k(coord, ctx)
	return CostQ16(uint32(k.c[sym])+1, k.total())
}
