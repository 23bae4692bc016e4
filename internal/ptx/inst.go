package ptx

// opcode is a decoded instruction kind; the interpreter switches on it.
type opcode uint8

const (
	opNop opcode = iota
	opMov
	opMovPack
	opMovUnpack
	opAdd
	opSub
	opAddCC
	opAddC
	opSubCC
	opSubC
	opMulLo
	opMulHiS
	opMulHiU
	opMulWideS
	opMulWideU
	opMadLo
	opMadHiS
	opMadHiU
	opMadWideS
	opMadWideU
	opDivS
	opDivU
	opRemS
	opRemU
	opAbs
	opNeg
	opMinS
	opMinU
	opMaxS
	opMaxU
	opAnd
	opOr
	opXor
	opNot
	opCnot
	opShl
	opShrU
	opShrS
	opBfeU
	opBfeS
	opBfi
	opPrmt
	opClz
	opPopc
	opBrev
	opShfL
	opShfR
	opSelp
	opSlctI
	opSlctF
	opSetpI
	opSetpF
	opSetI
	opSetF
	opCvt
	opCvtaAdd
	opCvtaSub
	opLd
	opSt
	opAtom
	opBar
	opBra
	opExit
	opDp4a
	opTestp
	opCopysign
	opIsspacep
	opFAdd
	opFSub
	opFMul
	opFFma
	opFDiv
	opFSqrt
	opFRcp
	opFAbs
	opFNeg
	opFMin
	opFMax
	// Warp collectives: a thread reaching one stops (state stWarp) and the
	// scheduler performs the instruction for its warp at once (warp.go).
	opShfl
	opVote
	opActivemask
	opMma
	opLdmatrix
	opBarWarp
)

// Rounding modes (rnd field).
const (
	rndNone = iota
	rndRN
	rndRZ
	rndRM
	rndRP
	rndRNI
	rndRZI
	rndRMI
	rndRPI
)

// Comparison operators (cmp field).
const (
	cmpEQ = iota
	cmpNE
	cmpLT
	cmpLE
	cmpGT
	cmpGE
	cmpEQU
	cmpNEU
	cmpLTU
	cmpLEU
	cmpGTU
	cmpGEU
	cmpNUM
	cmpNAN
)

var cmpNames = map[string]uint8{
	"eq": cmpEQ, "ne": cmpNE, "lt": cmpLT, "le": cmpLE, "gt": cmpGT, "ge": cmpGE,
	"lo": cmpLT, "ls": cmpLE, "hi": cmpGT, "hs": cmpGE,
	"equ": cmpEQU, "neu": cmpNEU, "ltu": cmpLTU, "leu": cmpLEU, "gtu": cmpGTU, "geu": cmpGEU,
	"num": cmpNUM, "nan": cmpNAN,
}

// Boolean combine operators of setp/set (bop field).
const (
	bopNone = iota
	bopAnd
	bopOr
	bopXor
)

// Atomic operations (aop field).
const (
	aopAdd = iota
	aopMin
	aopMax
	aopExch
	aopCas
	aopAnd
	aopOr
	aopXor
	aopInc
	aopDec
)

// Instruction flags.
const (
	flSat = 1 << iota
	flWrap
	flRed     // red.*: atom without a destination
	flAligned // bar.sync / barrier.sync.aligned
	flCount   // bar.sync with a thread count in b
	flHasD    // atom has a destination
	flCC      // sets the carry flag
	flPlain   // float add/sub/mul without .rn: ptxas may contract it
	flTrans   // ldmatrix .trans
)

// Sub-modes of the warp collectives (wmode field).
const (
	shflUp = iota
	shflDown
	shflBfly
	shflIdx
)

const (
	voteAll = iota
	voteAny
	voteUni
	voteBallot
)

const (
	mmaI8K32  = iota // m16n8k32 .s8/.u8 -> .s32
	mmaI8K16         // m16n8k16 .s8/.u8 -> .s32
	mmaTF32K8        // m16n8k8 .tf32 -> .f32
)

// inst is one pre-decoded instruction. Every source operand is a register
// index; immediates, special registers and symbol addresses live in
// pseudo-registers filled before a thread starts.
type inst struct {
	op     opcode
	w      uint8 // bits of the primary type
	sh     uint8 // 64 - w: shift pair for sign extension
	sp     space
	rnd    uint8
	cmp    uint8
	bop    uint8
	aop    uint8
	vec    uint8
	wmode  uint8 // warp collective sub-mode (shfl/vote/mma kind)
	flags  uint16
	gneg   bool
	cneg   bool
	t, t2  ptype
	guard  int32 // predicate register, -1 when unguarded
	d, d2  int32 // destinations (-1: none / sink)
	a, b   int32
	c, e   int32
	dmask  uint64
	d2mask uint64
	v      [4]int32  // vector elements for ld/st/mov pack
	vmask  [4]uint64 // their register masks
	off    uint64    // address offset
	target int32     // branch target; for mma, the index of its operand list in Kernel.xops
	line   int32
}
