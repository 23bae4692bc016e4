//go:build amd64 && !purego

#include "textflag.h"

// func kernel8x32(c *float32, ldc int, a *float32, lda int, b *float32, inner int, acc int)
//
// The 8 x 32 block at c (row stride ldc) gets, for each l < inner in order,
// c[r][j] = c[r][j] + float32(a[r][l] * b[l][j]), starting from c's values
// when acc != 0 and from 0 otherwise. b is a packed panel: inner rows of 32
// contiguous floats. a has row stride lda. Strides are in elements.
//
// Z0..Z15 hold the block: row r in Z(2r) (columns 0-15) and Z(2r+1)
// (16-31). Per l: Z16, Z17 = b[l]; per row, broadcast a[r][l] into Z18,
// multiply into Z19/Z20 (rounded), add to the accumulators (rounded): the
// plain loop's order, lane by lane.
TEXT ·kernel8x32(SB), NOSPLIT, $0-56
	MOVQ c+0(FP), DI
	MOVQ ldc+8(FP), R8
	MOVQ a+16(FP), SI
	MOVQ lda+24(FP), R9
	MOVQ b+32(FP), DX
	MOVQ inner+40(FP), CX
	MOVQ acc+48(FP), AX
	SHLQ $2, R8
	SHLQ $2, R9
	LEAQ (SI)(R9*1), R11
	LEAQ (R11)(R9*1), R12
	LEAQ (R12)(R9*1), R13
	MOVQ R9, BX
	SHLQ $2, BX         // BX = 4 rows of a, in bytes
	TESTQ AX, AX
	JEQ   zero
	MOVQ  DI, AX
	VMOVUPS (AX), Z0
	VMOVUPS 64(AX), Z1
	ADDQ    R8, AX
	VMOVUPS (AX), Z2
	VMOVUPS 64(AX), Z3
	ADDQ    R8, AX
	VMOVUPS (AX), Z4
	VMOVUPS 64(AX), Z5
	ADDQ    R8, AX
	VMOVUPS (AX), Z6
	VMOVUPS 64(AX), Z7
	ADDQ    R8, AX
	VMOVUPS (AX), Z8
	VMOVUPS 64(AX), Z9
	ADDQ    R8, AX
	VMOVUPS (AX), Z10
	VMOVUPS 64(AX), Z11
	ADDQ    R8, AX
	VMOVUPS (AX), Z12
	VMOVUPS 64(AX), Z13
	ADDQ    R8, AX
	VMOVUPS (AX), Z14
	VMOVUPS 64(AX), Z15
	JMP     loop

zero:
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

loop:
	TESTQ CX, CX
	JEQ   done
	VMOVUPS      (DX), Z16
	VMOVUPS      64(DX), Z17
	VBROADCASTSS (SI), Z18
	VMULPS       Z16, Z18, Z19
	VMULPS       Z17, Z18, Z20
	VADDPS       Z19, Z0, Z0
	VADDPS       Z20, Z1, Z1
	VBROADCASTSS (R11), Z18
	VMULPS       Z16, Z18, Z19
	VMULPS       Z17, Z18, Z20
	VADDPS       Z19, Z2, Z2
	VADDPS       Z20, Z3, Z3
	VBROADCASTSS (R12), Z18
	VMULPS       Z16, Z18, Z19
	VMULPS       Z17, Z18, Z20
	VADDPS       Z19, Z4, Z4
	VADDPS       Z20, Z5, Z5
	VBROADCASTSS (R13), Z18
	VMULPS       Z16, Z18, Z19
	VMULPS       Z17, Z18, Z20
	VADDPS       Z19, Z6, Z6
	VADDPS       Z20, Z7, Z7
	VBROADCASTSS (SI)(BX*1), Z18
	VMULPS       Z16, Z18, Z21
	VMULPS       Z17, Z18, Z22
	VADDPS       Z21, Z8, Z8
	VADDPS       Z22, Z9, Z9
	VBROADCASTSS (R11)(BX*1), Z18
	VMULPS       Z16, Z18, Z21
	VMULPS       Z17, Z18, Z22
	VADDPS       Z21, Z10, Z10
	VADDPS       Z22, Z11, Z11
	VBROADCASTSS (R12)(BX*1), Z18
	VMULPS       Z16, Z18, Z21
	VMULPS       Z17, Z18, Z22
	VADDPS       Z21, Z12, Z12
	VADDPS       Z22, Z13, Z13
	VBROADCASTSS (R13)(BX*1), Z18
	VMULPS       Z16, Z18, Z21
	VMULPS       Z17, Z18, Z22
	VADDPS       Z21, Z14, Z14
	VADDPS       Z22, Z15, Z15
	ADDQ         $4, SI
	ADDQ         $4, R11
	ADDQ         $4, R12
	ADDQ         $4, R13
	ADDQ         $128, DX
	DECQ         CX
	JMP          loop

done:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ    R8, DI
	VMOVUPS Z2, (DI)
	VMOVUPS Z3, 64(DI)
	ADDQ    R8, DI
	VMOVUPS Z4, (DI)
	VMOVUPS Z5, 64(DI)
	ADDQ    R8, DI
	VMOVUPS Z6, (DI)
	VMOVUPS Z7, 64(DI)
	ADDQ    R8, DI
	VMOVUPS Z8, (DI)
	VMOVUPS Z9, 64(DI)
	ADDQ    R8, DI
	VMOVUPS Z10, (DI)
	VMOVUPS Z11, 64(DI)
	ADDQ    R8, DI
	VMOVUPS Z12, (DI)
	VMOVUPS Z13, 64(DI)
	ADDQ    R8, DI
	VMOVUPS Z14, (DI)
	VMOVUPS Z15, 64(DI)
	VZEROUPPER
	RET
