//go:build amd64 && !purego

#include "textflag.h"

// The micro-kernels: a 14 x 32 block of c in Z0..Z27 (row r in Z(2r),
// columns 0-15, and Z(2r+1), columns 16-31). Per step p of the inner
// dimension, Z28 and Z29 hold the packed b row p, Z30 and Z31 a broadcast a
// value, and each accumulator gets one fused multiply-add (VFMADD231PS, one
// rounding), steps in order. The two kernels differ only in where a's values
// are read: kernel14x32 from a panel (14 floats per step, ast bytes apart),
// kernel14x32r from 14 rows of a (lda bytes apart, 4 bytes per step).

// FMA2 adds the broadcast x times the b row to the accumulators of one row.
#define FMA2(x, acc0, acc1) \
	VFMADD231PS x, Z28, acc0; \
	VFMADD231PS x, Z29, acc1

// STEP is one inner step: the b row at byte offset bo of DX, the 14 a values
// at m0..m13.
#define STEP(bo, m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13) \
	VMOVUPS      bo(DX), Z28; \
	VMOVUPS      bo+64(DX), Z29; \
	VBROADCASTSS m0, Z30; \
	VBROADCASTSS m1, Z31; \
	FMA2(Z30, Z0, Z1); \
	FMA2(Z31, Z2, Z3); \
	VBROADCASTSS m2, Z30; \
	VBROADCASTSS m3, Z31; \
	FMA2(Z30, Z4, Z5); \
	FMA2(Z31, Z6, Z7); \
	VBROADCASTSS m4, Z30; \
	VBROADCASTSS m5, Z31; \
	FMA2(Z30, Z8, Z9); \
	FMA2(Z31, Z10, Z11); \
	VBROADCASTSS m6, Z30; \
	VBROADCASTSS m7, Z31; \
	FMA2(Z30, Z12, Z13); \
	FMA2(Z31, Z14, Z15); \
	VBROADCASTSS m8, Z30; \
	VBROADCASTSS m9, Z31; \
	FMA2(Z30, Z16, Z17); \
	FMA2(Z31, Z18, Z19); \
	VBROADCASTSS m10, Z30; \
	VBROADCASTSS m11, Z31; \
	FMA2(Z30, Z20, Z21); \
	FMA2(Z31, Z22, Z23); \
	VBROADCASTSS m12, Z30; \
	VBROADCASTSS m13, Z31; \
	FMA2(Z30, Z24, Z25); \
	FMA2(Z31, Z26, Z27)

// STEPP: a step from a panel at SI (byte offset ao).
#define STEPP(ao, bo) STEP(bo, ao+0(SI), ao+4(SI), ao+8(SI), ao+12(SI), ao+16(SI), ao+20(SI), ao+24(SI), ao+28(SI), ao+32(SI), ao+36(SI), ao+40(SI), ao+44(SI), ao+48(SI), ao+52(SI))

// STEPR: a step from rows: rows 0-6 at SI, 7-13 at R12, R9 = lda, R10 =
// 3 lda, R11 = 5 lda (bytes); ao is the byte offset along the rows.
#define STEPR(ao, bo) STEP(bo, ao(SI), ao(SI)(R9*1), ao(SI)(R9*2), ao(SI)(R10*1), ao(SI)(R9*4), ao(SI)(R11*1), ao(SI)(R10*2), ao(R12), ao(R12)(R9*1), ao(R12)(R9*2), ao(R12)(R10*1), ao(R12)(R9*4), ao(R12)(R11*1), ao(R12)(R10*2))

#define LOADROW(r0, r1) \
	VMOVUPS (AX), r0; \
	VMOVUPS 64(AX), r1; \
	ADDQ    R8, AX

#define STOREROW(r0, r1) \
	VMOVUPS r0, (DI); \
	VMOVUPS r1, 64(DI); \
	ADDQ    R8, DI

// func kernel14x32(kc int, a, b, c *float32, ldc int, load int, ast int, bst int)
//
// a is a panel: step p's 14 values at a + p*ast bytes (ast = 56 for a packed
// panel; 4*lda for the columns of a stored transposed). b's step p is the 32
// floats at b + p*bst bytes (128 packed; 4*ldb in place).
TEXT ·kernel14x32(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), DI
	MOVQ ldc+32(FP), R8
	MOVQ load+40(FP), AX
	MOVQ ast+48(FP), R9
	MOVQ bst+56(FP), R14
	SHLQ $2, R8
	TESTQ AX, AX
	JEQ   pzero
	MOVQ  DI, AX
	LOADROW(Z0, Z1)
	LOADROW(Z2, Z3)
	LOADROW(Z4, Z5)
	LOADROW(Z6, Z7)
	LOADROW(Z8, Z9)
	LOADROW(Z10, Z11)
	LOADROW(Z12, Z13)
	LOADROW(Z14, Z15)
	LOADROW(Z16, Z17)
	LOADROW(Z18, Z19)
	LOADROW(Z20, Z21)
	LOADROW(Z22, Z23)
	LOADROW(Z24, Z25)
	LOADROW(Z26, Z27)
	JMP   pstart

pzero:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27

pstart:
	TESTQ CX, CX
	JEQ   pstore

ploop:
	STEPP(0, 0)
	ADDQ R14, DX
	ADDQ R9, SI
	DECQ CX
	JNE  ploop

pstore:
	STOREROW(Z0, Z1)
	STOREROW(Z2, Z3)
	STOREROW(Z4, Z5)
	STOREROW(Z6, Z7)
	STOREROW(Z8, Z9)
	STOREROW(Z10, Z11)
	STOREROW(Z12, Z13)
	STOREROW(Z14, Z15)
	STOREROW(Z16, Z17)
	STOREROW(Z18, Z19)
	STOREROW(Z20, Z21)
	STOREROW(Z22, Z23)
	STOREROW(Z24, Z25)
	STOREROW(Z26, Z27)
	VZEROUPPER
	RET

// func kernel14x32r(kc int, a, b, c *float32, ldc int, load int, lda int, bst int)
//
// a is 14 rows of lda floats: row i's step p at a + 4*(i*lda + p) bytes; b
// as in kernel14x32.
TEXT ·kernel14x32r(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), DI
	MOVQ ldc+32(FP), R8
	MOVQ load+40(FP), AX
	MOVQ lda+48(FP), R9
	MOVQ bst+56(FP), R14
	SHLQ $2, R8
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10
	LEAQ (R9)(R9*4), R11
	LEAQ (SI)(R9*8), R12
	SUBQ R9, R12
	TESTQ AX, AX
	JEQ   rzero
	MOVQ  DI, AX
	LOADROW(Z0, Z1)
	LOADROW(Z2, Z3)
	LOADROW(Z4, Z5)
	LOADROW(Z6, Z7)
	LOADROW(Z8, Z9)
	LOADROW(Z10, Z11)
	LOADROW(Z12, Z13)
	LOADROW(Z14, Z15)
	LOADROW(Z16, Z17)
	LOADROW(Z18, Z19)
	LOADROW(Z20, Z21)
	LOADROW(Z22, Z23)
	LOADROW(Z24, Z25)
	LOADROW(Z26, Z27)
	JMP   rstart

rzero:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27

rstart:
	// Two steps per iteration, then the odd one.
	MOVQ CX, BX
	SHRQ $1, BX
	JEQ  rtail

rloop:
	STEPR(0, 0)
	ADDQ R14, DX
	STEPR(4, 0)
	ADDQ R14, DX
	ADDQ $8, SI
	ADDQ $8, R12
	DECQ BX
	JNE  rloop

rtail:
	TESTQ $1, CX
	JEQ   rstore
	STEPR(0, 0)

rstore:
	STOREROW(Z0, Z1)
	STOREROW(Z2, Z3)
	STOREROW(Z4, Z5)
	STOREROW(Z6, Z7)
	STOREROW(Z8, Z9)
	STOREROW(Z10, Z11)
	STOREROW(Z12, Z13)
	STOREROW(Z14, Z15)
	STOREROW(Z16, Z17)
	STOREROW(Z18, Z19)
	STOREROW(Z20, Z21)
	STOREROW(Z22, Z23)
	STOREROW(Z24, Z25)
	STOREROW(Z26, Z27)
	VZEROUPPER
	RET

// The 8-row kernels: the same steps on an 8 x 32 block in Z0..Z15, for
// products whose row count 8 divides better than 14 (attention's 32-row
// blocks).

// STEP8 is one inner step of the 8-row kernels.
#define STEP8(bo, m0, m1, m2, m3, m4, m5, m6, m7) \
	VMOVUPS      bo(DX), Z28; \
	VMOVUPS      bo+64(DX), Z29; \
	VBROADCASTSS m0, Z30; \
	VBROADCASTSS m1, Z31; \
	FMA2(Z30, Z0, Z1); \
	FMA2(Z31, Z2, Z3); \
	VBROADCASTSS m2, Z30; \
	VBROADCASTSS m3, Z31; \
	FMA2(Z30, Z4, Z5); \
	FMA2(Z31, Z6, Z7); \
	VBROADCASTSS m4, Z30; \
	VBROADCASTSS m5, Z31; \
	FMA2(Z30, Z8, Z9); \
	FMA2(Z31, Z10, Z11); \
	VBROADCASTSS m6, Z30; \
	VBROADCASTSS m7, Z31; \
	FMA2(Z30, Z12, Z13); \
	FMA2(Z31, Z14, Z15)

#define STEPP8(ao, bo) STEP8(bo, ao+0(SI), ao+4(SI), ao+8(SI), ao+12(SI), ao+16(SI), ao+20(SI), ao+24(SI), ao+28(SI))

#define STEPR8(ao, bo) STEP8(bo, ao(SI), ao(SI)(R9*1), ao(SI)(R9*2), ao(SI)(R10*1), ao(SI)(R9*4), ao(SI)(R11*1), ao(SI)(R10*2), ao(R12))

// func kernel8x32(kc int, a, b, c *float32, ldc int, load int, ast int, bst int)
//
// kernel14x32 on 8 rows: a's step p is 8 floats at a + p*ast bytes.
TEXT ·kernel8x32(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), DI
	MOVQ ldc+32(FP), R8
	MOVQ load+40(FP), AX
	MOVQ ast+48(FP), R9
	MOVQ bst+56(FP), R14
	SHLQ $2, R8
	TESTQ AX, AX
	JEQ   qzero
	MOVQ  DI, AX
	LOADROW(Z0, Z1)
	LOADROW(Z2, Z3)
	LOADROW(Z4, Z5)
	LOADROW(Z6, Z7)
	LOADROW(Z8, Z9)
	LOADROW(Z10, Z11)
	LOADROW(Z12, Z13)
	LOADROW(Z14, Z15)
	JMP   qstart

qzero:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15

qstart:
	TESTQ CX, CX
	JEQ   qstore

qloop:
	STEPP8(0, 0)
	ADDQ R14, DX
	ADDQ R9, SI
	DECQ CX
	JNE  qloop

qstore:
	STOREROW(Z0, Z1)
	STOREROW(Z2, Z3)
	STOREROW(Z4, Z5)
	STOREROW(Z6, Z7)
	STOREROW(Z8, Z9)
	STOREROW(Z10, Z11)
	STOREROW(Z12, Z13)
	STOREROW(Z14, Z15)
	VZEROUPPER
	RET

// func kernel8x32r(kc int, a, b, c *float32, ldc int, load int, lda int, bst int)
//
// kernel14x32r on 8 rows.
TEXT ·kernel8x32r(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), DI
	MOVQ ldc+32(FP), R8
	MOVQ load+40(FP), AX
	MOVQ lda+48(FP), R9
	MOVQ bst+56(FP), R14
	SHLQ $2, R8
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10
	LEAQ (R9)(R9*4), R11
	LEAQ (SI)(R9*8), R12
	SUBQ R9, R12
	TESTQ AX, AX
	JEQ   szero
	MOVQ  DI, AX
	LOADROW(Z0, Z1)
	LOADROW(Z2, Z3)
	LOADROW(Z4, Z5)
	LOADROW(Z6, Z7)
	LOADROW(Z8, Z9)
	LOADROW(Z10, Z11)
	LOADROW(Z12, Z13)
	LOADROW(Z14, Z15)
	JMP   sstart

szero:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15

sstart:
	TESTQ CX, CX
	JEQ   sstore

sloop:
	STEPR8(0, 0)
	ADDQ R14, DX
	ADDQ $4, SI
	ADDQ $4, R12
	DECQ CX
	JNE  sloop

sstore:
	STOREROW(Z0, Z1)
	STOREROW(Z2, Z3)
	STOREROW(Z4, Z5)
	STOREROW(Z6, Z7)
	STOREROW(Z8, Z9)
	STOREROW(Z10, Z11)
	STOREROW(Z12, Z13)
	STOREROW(Z14, Z15)
	VZEROUPPER
	RET

// func fmaPeak(n int)
//
// n iterations of 24 independent 16-lane fused multiply-adds on registers
// only: the machine's FMA throughput, for the benchmark that states the peak.
TEXT ·fmaPeak(SB), NOSPLIT, $0-8
	MOVQ   n+0(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	TESTQ  CX, CX
	JEQ    peakdone

peakloop:
	VFMADD231PS Z24, Z25, Z0
	VFMADD231PS Z24, Z25, Z1
	VFMADD231PS Z24, Z25, Z2
	VFMADD231PS Z24, Z25, Z3
	VFMADD231PS Z24, Z25, Z4
	VFMADD231PS Z24, Z25, Z5
	VFMADD231PS Z24, Z25, Z6
	VFMADD231PS Z24, Z25, Z7
	VFMADD231PS Z24, Z25, Z8
	VFMADD231PS Z24, Z25, Z9
	VFMADD231PS Z24, Z25, Z10
	VFMADD231PS Z24, Z25, Z11
	VFMADD231PS Z24, Z25, Z12
	VFMADD231PS Z24, Z25, Z13
	VFMADD231PS Z24, Z25, Z14
	VFMADD231PS Z24, Z25, Z15
	VFMADD231PS Z24, Z25, Z16
	VFMADD231PS Z24, Z25, Z17
	VFMADD231PS Z24, Z25, Z18
	VFMADD231PS Z24, Z25, Z19
	VFMADD231PS Z24, Z25, Z20
	VFMADD231PS Z24, Z25, Z21
	VFMADD231PS Z24, Z25, Z22
	VFMADD231PS Z24, Z25, Z23
	DECQ        CX
	JNE         peakloop

peakdone:
	VZEROUPPER
	RET
