//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 forms of expf and geluf (mathf.go), lane by lane the same
// operations in the same order, so the results are bit-identical to the Go
// code (TestSIMDMatchesScalar). Constants are the float32 bits of the
// constants in mathf.go.

DATA mathc<>+0(SB)/4, $0x3fb8aa3b // log2e
DATA mathc<>+4(SB)/4, $0x3f317200 // ln2hi
DATA mathc<>+8(SB)/4, $0x35bfbe8e // ln2lo
DATA mathc<>+12(SB)/4, $0x4b400000 // magic 1.5*2^23
DATA mathc<>+16(SB)/4, $0x42b00000 // expHi 88
DATA mathc<>+20(SB)/4, $0xc2ad0000 // expLo -86.5
DATA mathc<>+24(SB)/4, $0x39500d01 // 1/5040
DATA mathc<>+28(SB)/4, $0x3ab60b61 // 1/720
DATA mathc<>+32(SB)/4, $0x3c088889 // 1/120
DATA mathc<>+36(SB)/4, $0x3d2aaaab // 1/24
DATA mathc<>+40(SB)/4, $0x3e2aaaab // 1/6
DATA mathc<>+44(SB)/4, $0x3f000000 // 0.5
DATA mathc<>+48(SB)/4, $0x3f800000 // 1
DATA mathc<>+52(SB)/4, $0x40000000 // 2
DATA mathc<>+56(SB)/4, $0x7f800000 // +Inf
DATA mathc<>+60(SB)/4, $0x3b6b69e8 // 21844/6081075
DATA mathc<>+64(SB)/4, $0x3c11371b // 1382/155925
DATA mathc<>+68(SB)/4, $0x3cb327a4 // 62/2835
DATA mathc<>+72(SB)/4, $0x3d5d0dd1 // 17/315
DATA mathc<>+76(SB)/4, $0x3e088889 // 2/15
DATA mathc<>+80(SB)/4, $0x3eaaaaab // 1/3
DATA mathc<>+84(SB)/4, $0x41180000 // 9.5
DATA mathc<>+88(SB)/4, $0x3d372713 // 0.044715
DATA mathc<>+92(SB)/4, $0x3f4c422a // sqrt(2/pi)
DATA mathc<>+96(SB)/4, $0x7fffffff // abs mask
DATA mathc<>+100(SB)/4, $0x80000000 // sign mask
GLOBL mathc<>(SB), RODATA|NOPTR, $104

// EXPF: R = expf(X). Temps Z24-Z26, K1-K3. X is kept.
#define EXPF(X, R) \
	VMULPS.BCST  mathc<>+0(SB), X, Z24; \
	VADDPS.BCST  mathc<>+12(SB), Z24, Z24; \
	VSUBPS.BCST  mathc<>+12(SB), Z24, Z25; \
	VPSUBD.BCST  mathc<>+12(SB), Z24, Z24; \
	VMULPS.BCST  mathc<>+4(SB), Z25, Z26; \
	VSUBPS       Z26, X, Z26; \
	VMULPS.BCST  mathc<>+8(SB), Z25, Z25; \
	VSUBPS       Z25, Z26, Z26; \
	VBROADCASTSS mathc<>+24(SB), R; \
	VMULPS       Z26, R, R; \
	VADDPS.BCST  mathc<>+28(SB), R, R; \
	VMULPS       Z26, R, R; \
	VADDPS.BCST  mathc<>+32(SB), R, R; \
	VMULPS       Z26, R, R; \
	VADDPS.BCST  mathc<>+36(SB), R, R; \
	VMULPS       Z26, R, R; \
	VADDPS.BCST  mathc<>+40(SB), R, R; \
	VMULPS       Z26, R, R; \
	VADDPS.BCST  mathc<>+44(SB), R, R; \
	VMULPS       Z26, R, R; \
	VADDPS.BCST  mathc<>+48(SB), R, R; \
	VMULPS       Z26, R, R; \
	VADDPS.BCST  mathc<>+48(SB), R, R; \
	VPSLLD       $23, Z24, Z24; \
	VPADDD       Z24, R, R; \
	VCMPPS.BCST  $0x1d, mathc<>+20(SB), X, K1; \
	VMOVAPS.Z    R, K1, R; \
	VCMPPS.BCST  $0x1e, mathc<>+16(SB), X, K2; \
	VBROADCASTSS mathc<>+56(SB), K2, R; \
	VCMPPS       $3, X, X, K3; \
	VMOVAPS      X, K3, R

// TANHF: R = tanhf(X). Temps Z24-Z31, K1-K3. X is kept.
#define TANHF(X, R) \
	VPANDD.BCST  mathc<>+96(SB), X, Z27; \
	VMULPS       Z27, Z27, Z28; \
	VBROADCASTSS mathc<>+60(SB), Z29; \
	VMULPS       Z28, Z29, Z29; \
	VSUBPS.BCST  mathc<>+64(SB), Z29, Z29; \
	VMULPS       Z28, Z29, Z29; \
	VADDPS.BCST  mathc<>+68(SB), Z29, Z29; \
	VMULPS       Z28, Z29, Z29; \
	VSUBPS.BCST  mathc<>+72(SB), Z29, Z29; \
	VMULPS       Z28, Z29, Z29; \
	VADDPS.BCST  mathc<>+76(SB), Z29, Z29; \
	VMULPS       Z28, Z29, Z29; \
	VSUBPS.BCST  mathc<>+80(SB), Z29, Z29; \
	VMULPS       Z28, Z29, Z29; \
	VMULPS       Z27, Z29, Z29; \
	VADDPS       Z29, Z27, Z29; \
	VADDPS       Z27, Z27, Z30; \
	EXPF(Z30, Z31); \
	VADDPS.BCST  mathc<>+48(SB), Z31, Z31; \
	VBROADCASTSS mathc<>+52(SB), Z30; \
	VDIVPS       Z31, Z30, Z30; \
	VBROADCASTSS mathc<>+48(SB), R; \
	VSUBPS       Z30, R, R; \
	VCMPPS.BCST  $0x11, mathc<>+44(SB), Z27, K1; \
	VMOVAPS      Z29, K1, R; \
	VCMPPS.BCST  $0x1d, mathc<>+84(SB), Z27, K2; \
	VBROADCASTSS mathc<>+48(SB), K2, R; \
	VPXORD       Z30, Z30, Z30; \
	VCMPPS       $0x11, Z30, X, K3; \
	VPXORD.BCST  mathc<>+100(SB), R, K3, R; \
	VCMPPS       $3, X, X, K1; \
	VMOVAPS      X, K1, R

// func expShift16(x *float32, shift float32, n int)
// x[i] = expf(x[i] - shift) for i < n; n is a multiple of 16.
TEXT ·expShift16(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), DI
	VBROADCASTSS shift+8(FP), Z5
	MOVQ         n+16(FP), CX
	SHRQ         $4, CX

eloop:
	TESTQ   CX, CX
	JEQ     edone
	VMOVUPS (DI), Z0
	VSUBPS  Z5, Z0, Z0
	EXPF(Z0, Z1)
	VMOVUPS Z1, (DI)
	ADDQ    $64, DI
	DECQ    CX
	JMP     eloop

edone:
	VZEROUPPER
	RET

// func geluBias16(dst, x, b *float32, n int)
// dst[i] = geluf(x[i] + b[i]) for i < n; n is a multiple of 16. dst may be
// x (in place).
TEXT ·geluBias16(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), R8
	MOVQ x+8(FP), DI
	MOVQ b+16(FP), SI
	MOVQ n+24(FP), CX
	SHRQ $4, CX

gloop:
	TESTQ       CX, CX
	JEQ         gdone
	VMOVUPS     (DI), Z0
	VADDPS      (SI), Z0, Z0
	VMULPS      Z0, Z0, Z1
	VMULPS      Z0, Z1, Z1
	VMULPS.BCST mathc<>+88(SB), Z1, Z1
	VADDPS      Z1, Z0, Z1
	VMULPS.BCST mathc<>+92(SB), Z1, Z1
	TANHF(Z1, Z2)
	VMULPS.BCST mathc<>+44(SB), Z0, Z3
	VADDPS.BCST mathc<>+48(SB), Z2, Z2
	VMULPS      Z2, Z3, Z3
	VMOVUPS     Z3, (R8)
	ADDQ        $64, R8
	ADDQ        $64, DI
	ADDQ        $64, SI
	DECQ        CX
	JMP         gloop

gdone:
	VZEROUPPER
	RET
