//go:build amd64 && !purego

#include "textflag.h"
#include "reduce_amd64.h"

// norm.go's row kernels on 16 lanes (AVX-512F); w is a multiple of 16.

DATA normconst<>+0(SB)/4, $1.0
GLOBL normconst<>(SB), RODATA|NOPTR, $4

// MEANRSTD sets Z0 to the mean of the row at SI (DX vectors) and Z2 to
// 1/sqrt(var + eps), with Z20 = 1/w, Z21 = eps, Z22 = 1; it uses AX, BX,
// Z1, Z3.
#define MEANRSTD \
	VXORPS      Z0, Z0, Z0; \
	MOVQ        SI, AX; \
	MOVQ        DX, BX; \
msum: \
	VADDPS      (AX), Z0, Z0; \
	ADDQ        $64, AX; \
	DECQ        BX; \
	JNE         msum; \
	HREDUCE(VADDPS, Z0, Z1); \
	VMULPS      Z20, Z0, Z0; \
	VXORPS      Z2, Z2, Z2; \
	MOVQ        SI, AX; \
	MOVQ        DX, BX; \
mvar: \
	VMOVUPS     (AX), Z3; \
	VSUBPS      Z0, Z3, Z3; \
	VFMADD231PS Z3, Z3, Z2; \
	ADDQ        $64, AX; \
	DECQ        BX; \
	JNE         mvar; \
	HREDUCE(VADDPS, Z2, Z1); \
	VFMADD213PS Z21, Z20, Z2; \
	VSQRTPS     Z2, Z2; \
	VDIVPS      Z2, Z22, Z2

// func layerNormRows16(out, x, gain, b *float32, rows, w int, invW, eps float32)
TEXT ·layerNormRows16(SB), NOSPLIT, $0-56
	MOVQ         out+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         gain+16(FP), R8
	MOVQ         b+24(FP), R9
	MOVQ         rows+32(FP), CX
	MOVQ         w+40(FP), DX
	VBROADCASTSS invW+48(FP), Z20
	VBROADCASTSS eps+52(FP), Z21
	VBROADCASTSS normconst<>+0(SB), Z22
	MOVQ         DX, R11
	SHLQ         $2, R11
	SHRQ         $4, DX
	TESTQ        CX, CX
	JEQ          lndone
	TESTQ        DX, DX
	JEQ          lndone

lnrow:
	MEANRSTD
	XORQ AX, AX
	MOVQ DX, BX

lnout:
	VMOVUPS     (SI)(AX*1), Z3
	VSUBPS      Z0, Z3, Z3
	VMULPS      Z2, Z3, Z3
	VMOVUPS     (R9)(AX*1), Z4
	VFMADD231PS (R8)(AX*1), Z3, Z4
	VMOVUPS     Z4, (DI)(AX*1)
	ADDQ        $64, AX
	DECQ        BX
	JNE         lnout
	ADDQ        R11, SI
	ADDQ        R11, DI
	DECQ        CX
	JNE         lnrow

lndone:
	VZEROUPPER
	RET

// func layerNormBackRows16(dx, xhat, dg, db, x, dy, gain *float32, rows, w int, invW, eps float32)
TEXT ·layerNormBackRows16(SB), NOSPLIT, $0-80
	MOVQ         dx+0(FP), DI
	MOVQ         xhat+8(FP), R12
	MOVQ         dg+16(FP), R8
	MOVQ         db+24(FP), R9
	MOVQ         x+32(FP), SI
	MOVQ         dy+40(FP), R10
	MOVQ         gain+48(FP), R13
	MOVQ         rows+56(FP), CX
	MOVQ         w+64(FP), DX
	VBROADCASTSS invW+72(FP), Z20
	VBROADCASTSS eps+76(FP), Z21
	VBROADCASTSS normconst<>+0(SB), Z22
	MOVQ         DX, R11
	SHLQ         $2, R11
	SHRQ         $4, DX
	TESTQ        CX, CX
	JEQ          lbdone
	TESTQ        DX, DX
	JEQ          lbdone

lbrow:
	MEANRSTD
	VXORPS Z5, Z5, Z5 // m1
	VXORPS Z6, Z6, Z6 // m2
	XORQ   AX, AX
	MOVQ   DX, BX

lbsums:
	VMOVUPS     (SI)(AX*1), Z3
	VSUBPS      Z0, Z3, Z3
	VMULPS      Z2, Z3, Z3         // h
	VMOVUPS     Z3, (R12)(AX*1)
	VMOVUPS     (R10)(AX*1), Z4    // dy
	VMOVUPS     (R8)(AX*1), Z7
	VFMADD231PS Z3, Z4, Z7         // dg += dy h
	VMOVUPS     Z7, (R8)(AX*1)
	VADDPS      (R9)(AX*1), Z4, Z7 // db += dy
	VMOVUPS     Z7, (R9)(AX*1)
	VMULPS      (R13)(AX*1), Z4, Z4 // dy g
	VADDPS      Z4, Z5, Z5
	VFMADD231PS Z3, Z4, Z6
	ADDQ        $64, AX
	DECQ        BX
	JNE         lbsums
	HREDUCE(VADDPS, Z5, Z1)
	HREDUCE(VADDPS, Z6, Z1)
	VMULPS      Z20, Z5, Z5
	VMULPS      Z20, Z6, Z6
	XORQ        AX, AX
	MOVQ        DX, BX

lbdx:
	VMOVUPS      (R10)(AX*1), Z4
	VMULPS       (R13)(AX*1), Z4, Z4
	VSUBPS       Z5, Z4, Z4
	VMOVUPS      (R12)(AX*1), Z3
	VFNMADD231PS Z6, Z3, Z4
	VMULPS       Z2, Z4, Z4
	VMOVUPS      Z4, (DI)(AX*1)
	ADDQ         $64, AX
	DECQ         BX
	JNE          lbdx
	ADDQ         R11, SI
	ADDQ         R11, DI
	ADDQ         R11, R12
	ADDQ         R11, R10
	DECQ         CX
	JNE          lbrow

lbdone:
	VZEROUPPER
	RET

// func add16(dst, src *float32, n int)
// dst[i] += src[i] for i < n (a multiple of 16).
TEXT ·add16(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JEQ  adone
	CMPQ CX, $4
	JB   aone

afour:
	VMOVUPS (DI), Z0
	VMOVUPS 64(DI), Z1
	VMOVUPS 128(DI), Z2
	VMOVUPS 192(DI), Z3
	VADDPS  (SI), Z0, Z0
	VADDPS  64(SI), Z1, Z1
	VADDPS  128(SI), Z2, Z2
	VADDPS  192(SI), Z3, Z3
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    $256, DI
	ADDQ    $256, SI
	SUBQ    $4, CX
	CMPQ    CX, $4
	JAE     afour
	TESTQ   CX, CX
	JEQ     adone

aone:
	VMOVUPS (DI), Z0
	VADDPS  (SI), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, DI
	ADDQ    $64, SI
	DECQ    CX
	JNE     aone

adone:
	VZEROUPPER
	RET

// func residual16(dst, src, y, b, mask *float32, rows, w int)
// dst = src + (y + b) * mask over rows x w, b added to each row.
TEXT ·residual16(SB), NOSPLIT, $0-56
	MOVQ  dst+0(FP), DI
	MOVQ  src+8(FP), SI
	MOVQ  y+16(FP), R8
	MOVQ  b+24(FP), R9
	MOVQ  mask+32(FP), R10
	MOVQ  rows+40(FP), CX
	MOVQ  w+48(FP), DX
	MOVQ  DX, R11
	SHLQ  $2, R11
	SHRQ  $4, DX
	TESTQ CX, CX
	JEQ   rdone
	TESTQ DX, DX
	JEQ   rdone

rrow:
	XORQ AX, AX
	MOVQ DX, BX

rvec:
	VMOVUPS     (R8)(AX*1), Z0
	VADDPS      (R9)(AX*1), Z0, Z0
	VMOVUPS     (SI)(AX*1), Z1
	VFMADD231PS (R10)(AX*1), Z0, Z1
	VMOVUPS     Z1, (DI)(AX*1)
	ADDQ        $64, AX
	DECQ        BX
	JNE         rvec
	ADDQ        R11, DI
	ADDQ        R11, SI
	ADDQ        R11, R8
	ADDQ        R11, R10
	DECQ        CX
	JNE         rrow

rdone:
	VZEROUPPER
	RET

// func axpyDot16(gr, w, d *float32, n int, f float32) float32
// gr[i] += f d[i] for i < n (a multiple of 16); returns the sum of w[i] d[i].
TEXT ·axpyDot16(SB), NOSPLIT, $0-44
	MOVQ         gr+0(FP), DI
	MOVQ         w+8(FP), SI
	MOVQ         d+16(FP), R8
	MOVQ         n+24(FP), CX
	VBROADCASTSS f+32(FP), Z20
	VXORPS       Z0, Z0, Z0
	VXORPS       Z1, Z1, Z1
	SHRQ         $4, CX
	JEQ          xddone

xdloop:
	VMOVUPS     (R8), Z2
	VMOVUPS     (DI), Z3
	VFMADD231PS Z2, Z20, Z3
	VMOVUPS     Z3, (DI)
	VFMADD231PS (SI), Z2, Z0
	ADDQ        $64, DI
	ADDQ        $64, SI
	ADDQ        $64, R8
	DECQ        CX
	JNE         xdloop

xddone:
	HREDUCE(VADDPS, Z0, Z1)
	VMOVSS X0, ret+40(FP)
	VZEROUPPER
	RET
