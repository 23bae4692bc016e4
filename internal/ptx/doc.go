// Package ptx interprets NVIDIA PTX text on the CPU, bit for bit as an
// sm_80 GPU executes it, for the integer and IEEE-float subset that LLVM 14's
// NVPTX back-end emits at -O3. It is the test oracle for memowm's CUDA
// kernels (cuda/kernels/*.cu) and an "emulated device" backend: kernels are
// compiled with
//
//	clang-14 --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 -O3 -S -o out.ptx in.cu
//
// and the resulting PTX is parsed (Parse), placed on an emulated device
// (NewMachine, Alloc, Write, Load) and launched (Launch), and the outputs are
// compared with the Go reference functions.
//
// # Invariants
//
//   - Strict: anything whose GPU result is not modelled exactly is rejected
//     at Parse with "ptx: line N: ..." — never guessed. Faults at run time
//     (out-of-bounds or misaligned access, division by zero, a barrier some
//     thread can never reach, resource limits) return an *ExecError naming
//     the kernel, block, thread and PTX line. No input or launch panics.
//   - Parse pre-decodes every instruction (opcode, types, register indices);
//     Launch does no string work. Immediates, special registers and symbol
//     addresses are pseudo-registers filled before a thread starts.
//
// # Schedule
//
// Blocks are independent and run on SetParallel (default GOMAXPROCS)
// goroutines. Within a block threads run one at a time, in linear thread
// order, until each reaches bar.sync, a warp collective, or exits. Then the
// warp collectives whose participants all wait at them are performed for
// their warps at once (warp.go), and the scheduler runs again; only when no
// thread waits at a warp collective does the barrier release. This is a
// valid schedule for race-free kernels. A barrier is an error if a thread
// of the block has exited or waits at a different bar.sync (bar.sync is
// .aligned), or if its thread count is not the whole block. When several
// blocks fault, the lowest-numbered one is reported.
//
// Warps are 32 consecutive linear thread ids (the last one of a block may be
// partial). shfl.sync, vote.sync and bar.warp.sync wait for the non-exited
// lanes of their membermask (same instruction and same mask; any
// bar.warp.sync sites match); mma.sync and ldmatrix (.aligned) for all 32
// lanes; activemask returns the lanes waiting at it once nothing else in the
// warp can proceed. Faults (*ExecError): a membermask without the executing
// lane, naming lanes past the end of the block, or disagreeing between
// lanes; a shfl reading an exited lane or one outside the mask (undefined in
// the ISA); mma/ldmatrix in a partial warp or after a lane exited; and any
// collective that can never complete (a lane waits at bar.sync or at
// another collective).
//
// # Memory
//
// Global allocations are 256-byte aligned from 0x1_0000_0000 with 64 KiB
// unmapped gaps; .global/.const module variables are allocated by Load
// (Loaded.Symbol mirrors cuModuleGetGlobal) and .const ones are read-only.
// Shared and local state-space addresses are offsets from 0; their generic
// (cvta) windows start at 0x7e00_0000_0000_0000 and 0x7f00_0000_0000_0000.
// Shared memory is zeroed per block, local memory per thread; limits are
// 48 KiB static shared, 227 KiB static+dynamic, 1024 threads per block.
// Global atomics are serialised by one lock.
//
// # Supported
//
// Registers .pred .b16/.u16/.s16 .b32 .b64 .f32 .f64 (%r<N> and single
// names, nested { } scopes). Integer: add sub (.cc, addc/subc, .sat.s32),
// mul/mad .lo .hi .wide, div rem abs neg min max and or xor not cnot shl shr
// (amounts >= width clamp: 0, or sign fill for shr.s) bfe bfi prmt (default
// mode) clz popc brev shf.l/.r .wrap/.clamp selp slct setp (all comparisons,
// .and/.or/.xor, p|q) set, mov (incl. vector pack/unpack, symbol addresses),
// cvt (int<->int with .sat; int<->float .rn .rz .rm .rp; float->int .rni
// .rzi .rmi .rpi, saturating, NaN -> 0; f32<->f64; same-size round to
// integral), cvta/cvta.to, isspacep, ld/st/ldu .param .global(.nc) .shared
// .local .const and generic, .v2/.v4, [reg+imm] [var+imm]; atom/red .global
// .shared and generic: add min max exch cas and or xor inc dec (add.f32/f64);
// dp4a; bar.sync/barrier.sync 0; membar/fence (no-ops); bra; ret/exit;
// predicated @p/@!p; 32-bit address registers for .shared and .local.
// Float (.f32/.f64, round to nearest even, subnormals kept): add sub mul
// (with or without .rn) fma.rn mad.rn div.rn sqrt.rn rcp.rn abs neg min max
// copysign testp. NaN results are the canonical 0x7fffffff (.f32) /
// 0x7fff_ffff_ffff_ffff (.f64); abs/neg/copysign are sign-bit operations;
// min/max return the non-NaN operand and order -0 < +0.
//
// Warp level: shfl.sync.{up,down,bfly,idx}.b32 (with d|p), vote.sync
// .all/.any/.uni.pred and .ballot.b32 (with !p), activemask.b32,
// bar.warp.sync, ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared}.b16,
// and mma.sync.aligned.row.col: .m16n8k32 and .m16n8k16 .s32.{s8,u8}.{s8,u8}
// .s32 (exact; wrapping, or .satfinite clamping) and .m16n8k8
// .f32.tf32.tf32.f32, whose operands are truncated to tf32 (low 13 bits
// ignored, as the hardware does) and whose D elements are the exact sum
// c + sum a*b rounded once to float32 (nearest even): the ISA leaves the
// accumulation order and rounding unspecified, so a GPU may differ in the
// last bit(s). Fragment layouts and their sources are in mma.go.
//
// Float contraction: ptxas fuses a plain mul.f32/.f64 (no .rn) feeding a
// plain add/sub into one fma by default; this interpreter rounds each
// instruction separately. Module.ContractionHazards lists such multiplies;
// results are bit-exact only when it is empty. clang's -ffp-contract=on (or
// off) makes LLVM mark unfused operations .rn, which ptxas never fuses.
//
// .func definitions are parsed over and never run: a call is rejected, so
// device functions must be inlined (LLVM does at -O3).
//
// # Rejected
//
// match, redux, elect, stmatrix, wmma; shfl and vote without .sync; mma
// shapes and types other than the three above (f16, bf16, f64, int4, b1,
// fp8, .m8n8k*); cvt to .tf32; call (device functions must be inlined),
// .ftz, .approx and div.full, directed rounding of arithmetic (.rz/.rm/.rp
// on add/mul/fma/div/sqrt), f16/bf16 types, barriers other than 0 or with a
// partial count, %clock/%smid-style nondeterministic special registers,
// .address_size 32, textures/surfaces and anything not listed above.
package ptx
