package ptx

import (
	"fmt"
	"slices"
)

// Dim3 is a CUDA grid or block shape (x, y, z).
type Dim3 [3]uint32

func (d Dim3) String() string { return fmt.Sprintf("(%d,%d,%d)", d[0], d[1], d[2]) }

// Param is one .param of an .entry, in declaration order.
type Param struct {
	Name string
	Size int // bytes: .u32 -> 4, .u64 -> 8, .b8 x[16] -> 16
}

// Module is a parsed PTX module: its kernels and module-scope variables.
type Module struct {
	kernels map[string]*Kernel
	order   []string
	vars    []*modVar // .global and .const variables, allocated by Machine.Load
	varIdx  map[string]int
	shared  map[string]*sharedVar // module-scope .shared (static and .extern)
	hazards []int
}

// ContractionHazards returns the PTX lines of plain mul.f32/.f64 (no .rn)
// whose result feeds a plain add/sub. ptxas fuses such pairs into an fma by
// default, so on a GPU they may round once where this interpreter rounds
// twice; results agree bit for bit only when this list is empty. Compiling
// with clang's -ffp-contract=on (or off) marks the unfused operations .rn,
// which ptxas leaves alone.
func (m *Module) ContractionHazards() []int {
	out := append([]int(nil), m.hazards...)
	slices.Sort(out)
	return out
}

// Kernels lists the .entry names in source order.
func (m *Module) Kernels() []string { return append([]string(nil), m.order...) }

// Kernel returns the .entry called name.
func (m *Module) Kernel(name string) (*Kernel, error) {
	k, ok := m.kernels[name]
	if !ok {
		return nil, fmt.Errorf("ptx: no kernel %q in module", name)
	}
	return k, nil
}

// modVar is a module-scope .global or .const variable.
type modVar struct {
	name  string
	space space
	align int
	size  int
	init  []byte // nil when not initialised (zero)
	line  int
}

// sharedVar is a .shared variable; extern ones are the dynamic shared window.
type sharedVar struct {
	name   string
	align  int
	size   int
	extern bool
	line   int
}

// Kernel is one decoded .entry, ready to run on a Machine.
type Kernel struct {
	Name      string
	mod       *Module
	params    []Param
	paramOff  []int
	paramSize int
	code      []inst
	nregs     int
	consts    []constReg // pseudo-registers filled before a thread starts
	shared    []*sharedVar
	sharedOff []int
	static    int // static shared bytes (module + function scope)
	dynAlign  int // alignment of the dynamic shared window
	localSize int
	localVars map[string]int
	reqntid   Dim3
	maxntid   Dim3
	line      int
	xops      [][]int32 // register lists of mma instructions (inst.target indexes it)
	warp      bool      // the kernel has warp collectives
}

// Params lists the kernel parameters in order.
func (k *Kernel) Params() []Param { return append([]Param(nil), k.params...) }

// SharedBytes is the static shared memory a block of k uses.
func (k *Kernel) SharedBytes() int { return k.static }

// LocalBytes is the .local depot of each thread of k.
func (k *Kernel) LocalBytes() int { return k.localSize }

type space uint8

const (
	spGeneric space = iota
	spGlobal
	spShared
	spLocal
	spParam
	spConst
)

var spaceNames = [...]string{"generic", "global", "shared", "local", "param", "const"}

func (s space) String() string { return spaceNames[s] }

// tkind is the class of a PTX scalar type.
type tkind uint8

const (
	kNone tkind = iota
	kU
	kS
	kB
	kF
	kPred
)

// ptype is a PTX scalar type such as .s32 or .f64.
type ptype struct {
	k    tkind
	bits uint8
}

func (t ptype) String() string {
	switch t.k {
	case kU:
		return fmt.Sprintf(".u%d", t.bits)
	case kS:
		return fmt.Sprintf(".s%d", t.bits)
	case kB:
		return fmt.Sprintf(".b%d", t.bits)
	case kF:
		return fmt.Sprintf(".f%d", t.bits)
	case kPred:
		return ".pred"
	}
	return "(none)"
}

func (t ptype) isInt() bool { return t.k == kU || t.k == kS || t.k == kB }
func (t ptype) bytes() int  { return int(t.bits) / 8 }

func (t ptype) mask() uint64 {
	if t.bits >= 64 {
		return ^uint64(0)
	}
	return 1<<t.bits - 1
}

func parseType(s string) (ptype, bool) {
	switch s {
	case "u8":
		return ptype{kU, 8}, true
	case "u16":
		return ptype{kU, 16}, true
	case "u32":
		return ptype{kU, 32}, true
	case "u64":
		return ptype{kU, 64}, true
	case "s8":
		return ptype{kS, 8}, true
	case "s16":
		return ptype{kS, 16}, true
	case "s32":
		return ptype{kS, 32}, true
	case "s64":
		return ptype{kS, 64}, true
	case "b8":
		return ptype{kB, 8}, true
	case "b16":
		return ptype{kB, 16}, true
	case "b32":
		return ptype{kB, 32}, true
	case "b64":
		return ptype{kB, 64}, true
	case "f32":
		return ptype{kF, 32}, true
	case "f64":
		return ptype{kF, 64}, true
	case "pred":
		return ptype{kPred, 1}, true
	}
	return ptype{}, false
}

// constReg is a pseudo-register whose value is fixed for a launch: a special
// register, a symbol address or an immediate.
type constReg struct {
	reg  int32
	kind constKind
	val  uint64 // immediate value, param/local offset, module var or shared var index
}

type constKind uint8

const (
	ckImm constKind = iota
	ckParam
	ckLocal
	ckShared  // val indexes Kernel.shared
	ckGlobal  // val indexes Module.vars
	ckSpecial // val is a special register id
)

// Special registers; the first ones are per thread.
const (
	srTidX = iota
	srTidY
	srTidZ
	srLaneid
	srWarpid
	srLanemaskEq
	srLanemaskLe
	srLanemaskLt
	srLanemaskGe
	srLanemaskGt
	srNtidX
	srNtidY
	srNtidZ
	srCtaidX
	srCtaidY
	srCtaidZ
	srNctaidX
	srNctaidY
	srNctaidZ
	srNwarpid
	srDynSmem
	srTotalSmem
	numSpecial
)

var specialNames = map[string]int{
	"%tid.x": srTidX, "%tid.y": srTidY, "%tid.z": srTidZ,
	"%ntid.x": srNtidX, "%ntid.y": srNtidY, "%ntid.z": srNtidZ,
	"%ctaid.x": srCtaidX, "%ctaid.y": srCtaidY, "%ctaid.z": srCtaidZ,
	"%nctaid.x": srNctaidX, "%nctaid.y": srNctaidY, "%nctaid.z": srNctaidZ,
	"%laneid": srLaneid, "%warpid": srWarpid, "%nwarpid": srNwarpid,
	"%lanemask_eq": srLanemaskEq, "%lanemask_le": srLanemaskLe, "%lanemask_lt": srLanemaskLt,
	"%lanemask_ge": srLanemaskGe, "%lanemask_gt": srLanemaskGt,
	"%dynamic_smem_size": srDynSmem, "%total_smem_size": srTotalSmem,
}
