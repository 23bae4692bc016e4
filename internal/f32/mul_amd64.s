//go:build amd64 && !purego

#include "textflag.h"

// func kernel4x16(c *float32, ldc int, a *float32, lda int, b *float32, ldb int, inner int)
//
// Y0..Y7 hold c's block: row r in Y(2r) (columns 0-7) and Y(2r+1) (8-15).
// For each l in order: load b[l][0:16] into Y8, Y9; for each row r broadcast
// a[r][l] into Y10, multiply into Y11 (rounded), then add to the
// accumulator (rounded): the plain loop's s = s + float32(a*b), per lane.
TEXT ·kernel4x16(SB), NOSPLIT, $0-56
	MOVQ c+0(FP), DI
	MOVQ ldc+8(FP), R8
	MOVQ a+16(FP), SI
	MOVQ lda+24(FP), R9
	MOVQ b+32(FP), DX
	MOVQ ldb+40(FP), R10
	MOVQ inner+48(FP), CX
	SHLQ $2, R8
	SHLQ $2, R9
	SHLQ $2, R10
	LEAQ (SI)(R9*1), R11
	LEAQ (R11)(R9*1), R12
	LEAQ (R12)(R9*1), R13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ AX, AX

loop:
	TESTQ CX, CX
	JEQ   done
	VMOVUPS      (DX), Y8
	VMOVUPS      32(DX), Y9
	VBROADCASTSS (SI)(AX*1), Y10
	VMULPS       Y8, Y10, Y11
	VADDPS       Y11, Y0, Y0
	VMULPS       Y9, Y10, Y12
	VADDPS       Y12, Y1, Y1
	VBROADCASTSS (R11)(AX*1), Y10
	VMULPS       Y8, Y10, Y11
	VADDPS       Y11, Y2, Y2
	VMULPS       Y9, Y10, Y12
	VADDPS       Y12, Y3, Y3
	VBROADCASTSS (R12)(AX*1), Y10
	VMULPS       Y8, Y10, Y11
	VADDPS       Y11, Y4, Y4
	VMULPS       Y9, Y10, Y12
	VADDPS       Y12, Y5, Y5
	VBROADCASTSS (R13)(AX*1), Y10
	VMULPS       Y8, Y10, Y11
	VADDPS       Y11, Y6, Y6
	VMULPS       Y9, Y10, Y12
	VADDPS       Y12, Y7, Y7
	ADDQ         $4, AX
	ADDQ         R10, DX
	DECQ         CX
	JMP          loop

done:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ    R8, DI
	VMOVUPS Y2, (DI)
	VMOVUPS Y3, 32(DI)
	ADDQ    R8, DI
	VMOVUPS Y4, (DI)
	VMOVUPS Y5, 32(DI)
	ADDQ    R8, DI
	VMOVUPS Y6, (DI)
	VMOVUPS Y7, 32(DI)
	VZEROUPPER
	RET

// func kernel1x16(c *float32, a *float32, b *float32, ldb int, inner int)
//
// kernel4x16 for one row: Y0, Y1 hold c[0:16]; for each l in order,
// c = c + float32(a[l] b[l][0:16]) per lane (a multiply, then an add: no
// fused rounding).
TEXT ·kernel1x16(SB), NOSPLIT, $0-40
	MOVQ   c+0(FP), DI
	MOVQ   a+8(FP), SI
	MOVQ   b+16(FP), DX
	MOVQ   ldb+24(FP), R10
	MOVQ   inner+32(FP), CX
	SHLQ   $2, R10
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

loop1:
	TESTQ        CX, CX
	JEQ          done1
	VBROADCASTSS (SI), Y10
	VMULPS       (DX), Y10, Y11
	VADDPS       Y11, Y0, Y0
	VMULPS       32(DX), Y10, Y12
	VADDPS       Y12, Y1, Y1
	ADDQ         $4, SI
	ADDQ         R10, DX
	DECQ         CX
	JMP          loop1

done1:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VZEROUPPER
	RET
