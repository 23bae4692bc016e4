//go:build amd64 && !purego

#include "textflag.h"
#include "reduce_amd64.h"

// Elementwise training kernels, 16 lanes at a time (AVX-512F). Constants
// are broadcast from vecconst.

DATA vecconst<>+0(SB)/4, $0.7978845608028654   // c = sqrt(2/pi)
DATA vecconst<>+4(SB)/4, $0.044715             // k3
DATA vecconst<>+8(SB)/4, $0.134145             // 3 k3
DATA vecconst<>+12(SB)/4, $0.5
DATA vecconst<>+16(SB)/4, $1.0
DATA vecconst<>+20(SB)/4, $0.01                // below this |u| gelu' takes tanh(z) = z
DATA vecconst<>+24(SB)/4, $0x7fffffff          // |x| mask
DATA vecconst<>+28(SB)/4, $1.4426950408889634  // log2(e)
DATA vecconst<>+32(SB)/4, $0.6931471805599453  // 2^f = 1 + f (c1 + f (c2 + ... c6)), ck = ln2^k/k!
DATA vecconst<>+36(SB)/4, $0.2402265069591007
DATA vecconst<>+40(SB)/4, $0.05550410866482158
DATA vecconst<>+44(SB)/4, $0.009618129107628477
DATA vecconst<>+48(SB)/4, $0.0013333558146428443
DATA vecconst<>+52(SB)/4, $0.00015403530393381606
DATA vecconst<>+56(SB)/4, $0xff800000          // -inf
GLOBL vecconst<>(SB), RODATA|NOPTR, $60

// func geluBackward16(du, dy, pre, act, b *float32, n int)
//
// For i < n (a multiple of 16), with u = pre[i] + b[i] and t = tanh(c (u +
// k3 u^3)) read back from act[i] = 0.5 u (1 + t) as 2 act/u - 1 (or, for
// |u| <= 0.01, t = c u (1 + k3 u^2)):
//
//	du[i] = dy[i] (0.5 (1 + t) + 0.5 u (1 - t^2) c (1 + 3 k3 u^2))
TEXT ·geluBackward16(SB), NOSPLIT, $0-48
	MOVQ du+0(FP), DI
	MOVQ dy+8(FP), SI
	MOVQ pre+16(FP), R8
	MOVQ act+24(FP), R9
	MOVQ b+32(FP), R10
	MOVQ n+40(FP), CX
	VBROADCASTSS vecconst<>+0(SB), Z16  // c
	VBROADCASTSS vecconst<>+4(SB), Z17  // k3
	VBROADCASTSS vecconst<>+8(SB), Z18  // 3 k3
	VBROADCASTSS vecconst<>+12(SB), Z19 // 0.5
	VBROADCASTSS vecconst<>+16(SB), Z20 // 1
	VBROADCASTSS vecconst<>+20(SB), Z21 // 0.01
	VPBROADCASTD vecconst<>+24(SB), Z22 // abs mask
	SHRQ $4, CX
	JEQ  gdone

gloop:
	VMOVUPS (R8), Z0
	VADDPS  (R10), Z0, Z0     // u
	VMOVUPS (R9), Z1          // act
	VADDPS  Z1, Z1, Z1
	VDIVPS  Z0, Z1, Z1        // 2 act / u
	VSUBPS  Z20, Z1, Z1       // t (large |u|)
	VMULPS  Z0, Z0, Z2        // u^2
	VMOVAPS Z2, Z3
	VFMADD213PS Z20, Z17, Z3  // 1 + k3 u^2
	VMULPS  Z0, Z3, Z3
	VMULPS  Z16, Z3, Z3       // t (small |u|)
	VPANDD  Z22, Z0, Z4       // |u|
	VCMPPS  $0x1e, Z21, Z4, K1 // |u| > 0.01
	VMOVAPS Z1, K1, Z3        // t
	VMULPS  Z3, Z3, Z5        // t^2
	VSUBPS  Z5, Z20, Z5       // 1 - t^2
	VFMADD213PS Z20, Z18, Z2  // 1 + 3 k3 u^2
	VMULPS  Z0, Z2, Z2
	VMULPS  Z5, Z2, Z2
	VMULPS  Z16, Z2, Z2       // u (1 - t^2) c (1 + 3 k3 u^2)
	VADDPS  Z20, Z3, Z3       // 1 + t
	VADDPS  Z3, Z2, Z2
	VMULPS  Z19, Z2, Z2       // gelu'(u)
	VMULPS  (SI), Z2, Z2
	VMOVUPS Z2, (DI)
	ADDQ    $64, DI
	ADDQ    $64, SI
	ADDQ    $64, R8
	ADDQ    $64, R9
	ADDQ    $64, R10
	DECQ    CX
	JNE     gloop

gdone:
	VZEROUPPER
	RET

// EXP sets x = e^x (x <= 0 here; within about 2e-7 relative), with tmp.
// e^x = 2^t, t = x log2(e) = n + f, n = round(t), |f| <= 1/2: the
// polynomial for 2^f, scaled by 2^n (VSCALEFPS). Z24..Z30 hold log2(e),
// c1..c6; Z20 holds 1.
#define EXP(x, tmp) \
	VMULPS      Z24, x, x; \
	VRNDSCALEPS $0, x, tmp; \
	VSUBPS      tmp, x, x; \
	VMOVAPS     Z30, Z31; \
	VFMADD213PS Z29, x, Z31; \
	VFMADD213PS Z28, x, Z31; \
	VFMADD213PS Z27, x, Z31; \
	VFMADD213PS Z26, x, Z31; \
	VFMADD213PS Z25, x, Z31; \
	VFMADD213PS Z20, x, Z31; \
	VSCALEFPS   tmp, Z31, x

// EXPCONST loads EXP's constants: 1 into Z20, log2(e) and c1..c6 into
// Z24..Z30.
#define EXPCONST \
	VBROADCASTSS vecconst<>+16(SB), Z20; \
	VBROADCASTSS vecconst<>+28(SB), Z24; \
	VBROADCASTSS vecconst<>+32(SB), Z25; \
	VBROADCASTSS vecconst<>+36(SB), Z26; \
	VBROADCASTSS vecconst<>+40(SB), Z27; \
	VBROADCASTSS vecconst<>+44(SB), Z28; \
	VBROADCASTSS vecconst<>+48(SB), Z29; \
	VBROADCASTSS vecconst<>+52(SB), Z30

// func softmaxStrip16(x *float32, rows, stride int, scale float32)
//
// Sets each of the 16 columns at x (rows rows, stride floats apart) to the
// softmax over the rows of scale times its values (scale > 0).
TEXT ·softmaxStrip16(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), DI
	MOVQ rows+8(FP), CX
	MOVQ stride+16(FP), R8
	VBROADCASTSS scale+24(FP), Z10
	SHLQ $2, R8
	EXPCONST
	TESTQ CX, CX
	JEQ   sdone
	// Column maxima.
	VBROADCASTSS vecconst<>+56(SB), Z0
	MOVQ DI, SI
	MOVQ CX, DX

smax:
	VMAXPS (SI), Z0, Z0
	ADDQ   R8, SI
	DECQ   DX
	JNE    smax
	VMULPS Z10, Z0, Z0       // scale * max
	// e = exp(scale x - scale max), summed.
	VPXORD Z1, Z1, Z1
	MOVQ DI, SI
	MOVQ CX, DX

sexp:
	VMOVUPS     (SI), Z2
	VFMSUB213PS Z0, Z10, Z2  // scale x - scale max
	EXP(Z2, Z3)
	VMOVUPS     Z2, (SI)
	VADDPS      Z2, Z1, Z1
	ADDQ        R8, SI
	DECQ        DX
	JNE         sexp
	VDIVPS      Z1, Z20, Z1  // 1 / sum
	MOVQ DI, SI
	MOVQ CX, DX

snorm:
	VMULPS  (SI), Z1, Z2
	VMOVUPS Z2, (SI)
	ADDQ    R8, SI
	DECQ    DX
	JNE     snorm

sdone:
	VZEROUPPER
	RET

// func softmaxBackStrip16(dp, p *float32, rows, stride int, scale float32)
//
// For the 16 columns at dp and p (rows rows, stride floats apart), p a
// softmax down each column and dp its gradient, sets
// dp = p (dp - sum_rows(dp p)) scale.
TEXT ·softmaxBackStrip16(SB), NOSPLIT, $0-36
	MOVQ dp+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ rows+16(FP), CX
	MOVQ stride+24(FP), R8
	VBROADCASTSS scale+32(FP), Z10
	SHLQ $2, R8
	TESTQ CX, CX
	JEQ   bdone
	VPXORD Z0, Z0, Z0
	MOVQ DI, AX
	MOVQ SI, BX
	MOVQ CX, DX

bdot:
	VMOVUPS     (BX), Z1
	VFMADD231PS (AX), Z1, Z0
	ADDQ        R8, AX
	ADDQ        R8, BX
	DECQ        DX
	JNE         bdot

bset:
	VMOVUPS (DI), Z1
	VSUBPS  Z0, Z1, Z1
	VMULPS  (SI), Z1, Z1
	VMULPS  Z10, Z1, Z1
	VMOVUPS Z1, (DI)
	ADDQ    R8, DI
	ADDQ    R8, SI
	DECQ    CX
	JNE     bset

bdone:
	VZEROUPPER
	RET

// func expRows16(e, x *float32, rows, w int, mx, sum *float32)
//
// For each row r of x (rows rows of w floats, w a multiple of 16): mx[r] =
// the row's maximum, e's row = exp(x - mx[r]), sum[r] = the sum of e's row.
TEXT ·expRows16(SB), NOSPLIT, $0-48
	MOVQ e+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ rows+16(FP), CX
	MOVQ w+24(FP), DX
	MOVQ mx+32(FP), R9
	MOVQ sum+40(FP), R10
	EXPCONST
	MOVQ  DX, R11
	SHLQ  $2, R11
	SHRQ  $4, DX
	TESTQ CX, CX
	JEQ   edone
	TESTQ DX, DX
	JEQ   edone

erow:
	VBROADCASTSS vecconst<>+56(SB), Z0
	MOVQ SI, AX
	MOVQ DX, BX

emax:
	VMAXPS (AX), Z0, Z0
	ADDQ   $64, AX
	DECQ   BX
	JNE    emax
	HREDUCE(VMAXPS, Z0, Z1)
	VPXORD Z1, Z1, Z1
	MOVQ   SI, AX
	MOVQ   DI, R8
	MOVQ   DX, BX

eexp:
	VMOVUPS (AX), Z2
	VSUBPS  Z0, Z2, Z2
	EXP(Z2, Z3)
	VMOVUPS Z2, (R8)
	VADDPS  Z2, Z1, Z1
	ADDQ    $64, AX
	ADDQ    $64, R8
	DECQ    BX
	JNE     eexp
	HREDUCE(VADDPS, Z1, Z3)
	VMOVSS X0, (R9)
	VMOVSS X1, (R10)
	ADDQ   $4, R9
	ADDQ   $4, R10
	ADDQ   R11, SI
	ADDQ   R11, DI
	DECQ   CX
	JNE    erow

edone:
	VZEROUPPER
	RET
