package cuda

import (
	"fmt"

	"github.com/memowm/memowm/entropy"
	"github.com/memowm/memowm/worldmodel"
)

// Int8 is the int8 profile's Predictor on a Device: the same Predictions
// as worldmodel.Int8CPU, bit for bit (the parity tests check it on the
// emulator; devcheck on a GPU). The input tokens are computed on the CPU
// (they are f32, see worldmodel.ProfileInt8) and everything after them on
// the device, for every history of a batch at once. One goroutine at a
// time.
type Int8 struct {
	dev  Device
	cpu  *worldmodel.Int8CPU
	q    *worldmodel.Int8Model
	cfg  worldmodel.Config
	prec uint

	layers []devLayer
	final  devLN
	head   devHead
	expt   Ptr // worldmodel.Int8Tables' exp (int32)
	sigt   Ptr // its sig (int64)
	log2t  Ptr // entropy.Log2TableQ24 (uint32)
	owned  []Ptr

	// per call, grown on demand
	x, xq, a8, h8, acc, qkv, att, hf, qmap, qlast, prev, lbuf, wbuf, freq, modes, ent buffer

	xh    []int32
	qh    []int32
	ql    []int32
	prevh []uint8
	modeh []uint8
	freqh []uint32 // the last chunk's tables, modes and entropies, read back
	enth  []uint32
	trace worldmodel.TraceFunc
	gemmK string // the matrix product's kernel: GEMMs' kernel names

	chunkRows int // tests: the rows of one call (0: chunk's own limits)
}

// GEMMs are the matrix-product kernels, by the names SetGEMM takes: dp4a
// (gemm_s8, any GPU from sm_61) and mma (gemm_s8_tc, tensor cores, sm_80
// and later). Both give igemm.MulRef's exact sums.
var GEMMs = map[string]string{"dp4a": "gemm_s8", "mma": "gemm_s8_tc"}

// gemmBlock is each GEMM kernel's block size.
var gemmBlock = map[string]uint32{"gemm_s8": 256, "gemm_s8_tc": 128}

// SetGEMM picks the matrix-product kernel ("dp4a" or "mma"); NewInt8
// takes mma when the device has it.
func (r *Int8) SetGEMM(name string) error {
	k, ok := GEMMs[name]
	if !ok {
		return fmt.Errorf("cuda: no GEMM kernel %q (want dp4a or mma)", name)
	}
	if !r.dev.Has(k) {
		return fmt.Errorf("cuda: %s has no %s kernel (%s)", r.dev.Info(), name, k)
	}
	r.gemmK = k
	return nil
}

// GEMM names the matrix-product kernel in use.
func (r *Int8) GEMM() string {
	for n, k := range GEMMs {
		if k == r.gemmK {
			return n
		}
	}
	return r.gemmK
}

type devLinear struct {
	w, bias, m, sh Ptr
	K, N           int
}

type devLN struct {
	g, b     Ptr
	eps, lim int64
}

type devLayer struct {
	ln1, ln2       devLN
	qkv, o, w1, w2 devLinear
	softM, softSh  uint32
	pvM            int64
	pvSh           uint32
	gelu           Ptr
}

type devHead struct {
	emb, bias, expM, expSh, copyW, copyB, gateM, gateSh Ptr
}

// Block shapes: elementwise kernels, LayerNorm rows, attention rows, the
// matrix product's tiles and the heads.
const (
	blockElem  = 256
	blockLN    = 128
	blockAttn  = 64
	tileGEMM   = 64
	blockHeads = 128
	maxShared  = 48 << 10
)

// NewInt8 uploads q's integer network to dev. Options are worldmodel's
// (WithPrecision sets the tables' precision, as for NewInt8CPU).
func NewInt8(dev Device, q *worldmodel.Int8Model, opts ...worldmodel.Option) (*Int8, error) {
	cpu, err := worldmodel.NewInt8CPU(q, opts...)
	if err != nil {
		return nil, err
	}
	c := q.Config()
	if keys := c.MaxHistory * c.Slots; keys*4 > maxShared {
		return nil, fmt.Errorf("cuda: a window of %d tokens is more than the attention kernel's %d", keys, maxShared/4)
	}
	r := &Int8{dev: dev, cpu: cpu, q: q, cfg: c, prec: cpu.Precision(), gemmK: GEMMs["dp4a"]}
	if dev.Has(GEMMs["mma"]) {
		r.gemmK = GEMMs["mma"]
	}
	if err := r.upload(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// put uploads s and remembers the allocation for Close.
func put[T any](r *Int8, s []T, err *error) Ptr {
	if *err != nil {
		return 0
	}
	p, e := upload(r.dev, s)
	if e != nil {
		*err = fmt.Errorf("cuda: uploading the model: %w", e)
		return 0
	}
	r.owned = append(r.owned, p)
	return p
}

func (r *Int8) upload() error {
	var err error
	q := r.q
	lin := func(w []int8, bias []int32, K, N int, mults func(n int) (int64, uint8)) devLinear {
		m, sh := make([]int64, N), make([]int32, N)
		for n := range N {
			v, s := mults(n)
			m[n], sh[n] = v, int32(s)
		}
		return devLinear{w: put(r, w, &err), bias: put(r, bias, &err), m: put(r, m, &err), sh: put(r, sh, &err), K: K, N: N}
	}
	for l := range q.Layers {
		L := &q.Layers[l]
		d := devLayer{
			ln1:   devLN{g: put(r, L.LN1.G, &err), b: put(r, L.LN1.B, &err), eps: L.LN1.Eps, lim: L.LN1.Lim},
			ln2:   devLN{g: put(r, L.LN2.G, &err), b: put(r, L.LN2.B, &err), eps: L.LN2.Eps, lim: L.LN2.Lim},
			softM: L.Soft.M, softSh: uint32(L.Soft.Sh), pvM: L.PV.M, pvSh: uint32(L.PV.Sh),
			gelu: put(r, L.GELU, &err),
		}
		d.qkv = lin(L.QKV.W, L.QKV.Bias, L.QKV.K, L.QKV.N, func(n int) (int64, uint8) { return L.QKV.Mult[n].M, L.QKV.Mult[n].Sh })
		d.o = lin(L.O.W, L.O.Bias, L.O.K, L.O.N, func(n int) (int64, uint8) { return L.O.Mult[n].M, L.O.Mult[n].Sh })
		d.w1 = lin(L.W1.W, L.W1.Bias, L.W1.K, L.W1.N, func(n int) (int64, uint8) { return L.W1.Mult[n].M, L.W1.Mult[n].Sh })
		d.w2 = lin(L.W2.W, L.W2.Bias, L.W2.K, L.W2.N, func(n int) (int64, uint8) { return L.W2.Mult[n].M, L.W2.Mult[n].Sh })
		r.layers = append(r.layers, d)
	}
	r.final = devLN{g: put(r, q.Final.G, &err), b: put(r, q.Final.B, &err), eps: q.Final.Eps, lim: q.Final.Lim}
	J := r.cfg.Coords()
	expM, expSh := make([]int64, J), make([]int32, J)
	gateM, gateSh := make([]int64, J), make([]int32, J)
	for j := range J {
		expM[j], expSh[j] = q.Exp[j].M, int32(q.Exp[j].Sh)
		gateM[j], gateSh[j] = q.Gate[j].M, int32(q.Gate[j].Sh)
	}
	r.head = devHead{
		emb: put(r, q.Emb, &err), bias: put(r, q.Bias, &err),
		expM: put(r, expM, &err), expSh: put(r, expSh, &err),
		copyW: put(r, q.Copy, &err), copyB: put(r, q.CopyB, &err),
		gateM: put(r, gateM, &err), gateSh: put(r, gateSh, &err),
	}
	exp, sig := worldmodel.Int8Tables()
	r.expt, r.sigt = put(r, exp, &err), put(r, sig, &err)
	r.log2t = put(r, entropy.Log2TableQ24(), &err)
	return err
}

// Close frees the device memory (not the Device).
func (r *Int8) Close() error {
	for _, p := range r.owned {
		r.dev.Free(p)
	}
	r.owned = nil
	for _, b := range []*buffer{&r.x, &r.xq, &r.a8, &r.h8, &r.acc, &r.qkv, &r.att, &r.hf, &r.qmap, &r.qlast,
		&r.prev, &r.lbuf, &r.wbuf, &r.freq, &r.modes, &r.ent} {
		b.free(r.dev)
	}
	return nil
}

var _ worldmodel.Predictor = (*Int8)(nil)

// Config returns the model's configuration.
func (r *Int8) Config() worldmodel.Config { return r.cfg }

// Profile returns worldmodel.ProfileInt8.
func (r *Int8) Profile() string { return worldmodel.ProfileInt8 }

// Precision returns the tables' precision.
func (r *Int8) Precision() uint { return r.prec }

// Device returns the device the predictor runs on.
func (r *Int8) Device() Device { return r.dev }
