//go:build amd64 && !purego

#include "textflag.h"

// func adamw16(w, grad, m, v *float32, n int, h *AdamHyper)
// AdamW's update on n floats (a multiple of 16); h points at GScale, B1,
// B2, Step, InvBC2, Eps, Decay (7 float32s in that order).
TEXT ·adamw16(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), DI
	MOVQ grad+8(FP), SI
	MOVQ m+16(FP), R8
	MOVQ v+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ h+40(FP), AX
	VBROADCASTSS 0(AX), Z20  // GScale
	VBROADCASTSS 4(AX), Z21  // B1
	VBROADCASTSS 8(AX), Z23  // B2
	VBROADCASTSS 12(AX), Z27 // Step
	VBROADCASTSS 16(AX), Z25 // InvBC2
	VBROADCASTSS 20(AX), Z26 // Eps
	VBROADCASTSS 24(AX), Z28 // Decay
	MOVL         $0x3f800000, BX
	VPBROADCASTD BX, Z29        // 1.0
	VSUBPS       Z21, Z29, Z22  // 1 - B1
	VSUBPS       Z23, Z29, Z24  // 1 - B2
	SHRQ         $4, CX
	JEQ          done

loop:
	VMOVUPS     (SI), Z0
	VMULPS      Z20, Z0, Z0    // gi
	VMULPS      (R8), Z21, Z1  // B1 m
	VFMADD231PS Z0, Z22, Z1    // + (1 - B1) gi
	VMULPS      Z0, Z0, Z2     // gi^2
	VMULPS      (R9), Z23, Z3  // B2 v
	VFMADD231PS Z2, Z24, Z3    // + (1 - B2) gi^2
	VMOVUPS     Z1, (R8)
	VMOVUPS     Z3, (R9)
	VSQRTPS     Z3, Z4
	VFMADD213PS Z26, Z25, Z4   // sqrt(v) InvBC2 + Eps
	VDIVPS      Z4, Z1, Z5     // m / that
	VMULPS      Z27, Z5, Z5    // Step m / that
	VMULPS      (DI), Z28, Z6  // w Decay
	VSUBPS      Z5, Z6, Z6
	VMOVUPS     Z6, (DI)
	ADDQ        $64, DI
	ADDQ        $64, SI
	ADDQ        $64, R8
	ADDQ        $64, R9
	DECQ        CX
	JNE         loop

done:
	VZEROUPPER
	RET
