//go:build amd64 && !purego

#include "textflag.h"

// func softmaxMaxAVX512(sc *int32, n int) int32
// n is a positive multiple of 16.
TEXT ·softmaxMaxAVX512(SB), NOSPLIT, $0-20
	MOVQ sc+0(FP), SI
	MOVQ n+8(FP), CX
	VMOVDQU32 (SI), Z0
	ADDQ $64, SI
	SUBQ $16, CX
maxloop:
	TESTQ CX, CX
	JZ maxdone
	VMOVDQU32 (SI), Z1
	VPMAXSD Z1, Z0, Z0
	ADDQ $64, SI
	SUBQ $16, CX
	JMP maxloop
maxdone:
	VEXTRACTI64X4 $1, Z0, Y1
	VPMAXSD Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPMAXSD X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VPMAXSD X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VPMAXSD X1, X0, X0
	VMOVD X0, AX
	MOVL AX, ret+16(FP)
	VZEROUPPER
	RET

// func softmaxExpAVX512(sc *int32, e *uint32, n int, table *int32, mx int32, m uint32, rnd uint32, sh uint64) (z uint32)
// e_k = table[min((uint32(mx - sc_k) m + rnd) >> sh, 4096)]; returns the
// uint32 sum of e. n is a positive multiple of 16.
TEXT ·softmaxExpAVX512(SB), NOSPLIT, $0-60
	MOVQ sc+0(FP), SI
	MOVQ e+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ table+24(FP), R8
	MOVL mx+32(FP), AX
	VPBROADCASTD AX, Z0
	MOVL m+36(FP), AX
	VPBROADCASTD AX, Z1
	MOVL rnd+40(FP), AX
	VPBROADCASTD AX, Z2
	MOVL $4096, AX
	VPBROADCASTD AX, Z3
	MOVQ sh+48(FP), AX
	VMOVQ AX, X4
	VPXORD Z7, Z7, Z7
exploop:
	VMOVDQU32 (SI), Z5
	VPSUBD Z5, Z0, Z5
	VPMULLD Z1, Z5, Z5
	VPADDD Z2, Z5, Z5
	VPSRLD X4, Z5, Z5
	VPMINUD Z3, Z5, Z5
	KXNORW K1, K1, K1
	VPXORD Z6, Z6, Z6
	VPGATHERDD (R8)(Z5*4), K1, Z6
	VMOVDQU32 Z6, (DI)
	VPADDD Z6, Z7, Z7
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JNZ exploop
	VEXTRACTI64X4 $1, Z7, Y1
	VPADDD Y1, Y7, Y7
	VEXTRACTI128 $1, Y7, X1
	VPADDD X1, X7, X7
	VPSHUFD $0x4e, X7, X1
	VPADDD X1, X7, X7
	VPSHUFD $0xb1, X7, X1
	VPADDD X1, X7, X7
	VMOVD X7, AX
	MOVL AX, z+56(FP)
	VZEROUPPER
	RET

// func softmaxPRowAVX512(p *int16, e *uint32, n int, inv uint32, r2 uint32, sh uint64)
// P = min(((e >> 4) inv + r2) >> sh, 16383), stored as int16. n is a
// positive multiple of 16.
TEXT ·softmaxPRowAVX512(SB), NOSPLIT, $0-40
	MOVQ p+0(FP), DI
	MOVQ e+8(FP), SI
	MOVQ n+16(FP), CX
	MOVL inv+24(FP), AX
	VPBROADCASTD AX, Z1
	MOVL r2+28(FP), AX
	VPBROADCASTD AX, Z2
	MOVQ sh+32(FP), AX
	VMOVQ AX, X4
	MOVL $16383, AX
	VPBROADCASTD AX, Z3
ploop:
	VMOVDQU32 (SI), Z5
	VPSRLD $4, Z5, Z5
	VPMULLD Z1, Z5, Z5
	VPADDD Z2, Z5, Z5
	VPSRLD X4, Z5, Z5
	VPMINUD Z3, Z5, Z5
	VPMOVDW Z5, (DI)
	ADDQ $64, SI
	ADDQ $32, DI
	SUBQ $16, CX
	JNZ ploop
	VZEROUPPER
	RET

// REQ: Z0 = rshr((acc + bias) M, sh) for 8 columns: 64-bit lanes, the
// product of the low 32 bits (VPMULDQ, exact as |acc + bias| < 2^31 and
// M < 2^31). SI acc, BX bias, R9 M, R10 rnd, R11 sh. Temps Z1.
#define REQ \
	VPMOVSXDQ (SI), Z0; \
	VPMOVSXDQ (BX), Z1; \
	VPADDQ Z1, Z0, Z0; \
	VPMULDQ (R9), Z0, Z0; \
	VPADDQ (R10), Z0, Z0; \
	VPSRAVQ (R11), Z0, Z0

#define ADVANCE \
	ADDQ $32, SI; \
	ADDQ $32, BX; \
	ADDQ $64, R9; \
	ADDQ $64, R10; \
	ADDQ $64, R11

// func requant8AVX512(out *int8, acc *int32, bias *int32, m, rnd, sh *int64, n int)
// out = clamp(rshr((acc + bias) m, sh), +-127); n a positive multiple of 8.
TEXT ·requant8AVX512(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ acc+8(FP), SI
	MOVQ bias+16(FP), BX
	MOVQ m+24(FP), R9
	MOVQ rnd+32(FP), R10
	MOVQ sh+40(FP), R11
	MOVQ n+48(FP), CX
	MOVQ $127, AX
	VPBROADCASTQ AX, Z2
	NEGQ AX
	VPBROADCASTQ AX, Z3
rq8loop:
	REQ
	VPMINSQ Z2, Z0, Z0
	VPMAXSQ Z3, Z0, Z0
	VPMOVQB Z0, (DI)
	ADVANCE
	ADDQ $8, DI
	SUBQ $8, CX
	JNZ rq8loop
	VZEROUPPER
	RET

// func residAVX512(x *int32, acc *int32, bias *int32, m, rnd, sh *int64, n int, lim int64)
// x = clamp(x + rshr((acc + bias) m, sh), +-lim); n a positive multiple of 8.
TEXT ·residAVX512(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), DI
	MOVQ acc+8(FP), SI
	MOVQ bias+16(FP), BX
	MOVQ m+24(FP), R9
	MOVQ rnd+32(FP), R10
	MOVQ sh+40(FP), R11
	MOVQ n+48(FP), CX
	MOVQ lim+56(FP), AX
	VPBROADCASTQ AX, Z2
	NEGQ AX
	VPBROADCASTQ AX, Z3
residloop:
	REQ
	VPMOVSXDQ (DI), Z4
	VPADDQ Z4, Z0, Z0
	VPMINSQ Z2, Z0, Z0
	VPMAXSQ Z3, Z0, Z0
	VPMOVQD Z0, (DI)
	ADVANCE
	ADDQ $32, DI
	SUBQ $8, CX
	JNZ residloop
	VZEROUPPER
	RET

// func geluAVX512(out *int8, acc *int32, bias *int32, m, rnd, sh *int64, n int, table *int32)
// out = table[clamp(rshr((acc + bias) m, sh), +-2048) + 2048]; n a positive
// multiple of 16 (two groups of 8 columns, one 16-lane gather).
TEXT ·geluAVX512(SB), NOSPLIT, $0-64
	MOVQ out+0(FP), DI
	MOVQ acc+8(FP), SI
	MOVQ bias+16(FP), BX
	MOVQ m+24(FP), R9
	MOVQ rnd+32(FP), R10
	MOVQ sh+40(FP), R11
	MOVQ n+48(FP), CX
	MOVQ table+56(FP), R8
	MOVQ $2048, AX
	VPBROADCASTQ AX, Z2
	NEGQ AX
	VPBROADCASTQ AX, Z3
	MOVQ $2048, AX
	VPBROADCASTQ AX, Z4
geluloop:
	REQ
	VPMINSQ Z2, Z0, Z0
	VPMAXSQ Z3, Z0, Z0
	VPADDQ Z4, Z0, Z0
	VPMOVQD Z0, Y6
	ADVANCE
	REQ
	VPMINSQ Z2, Z0, Z0
	VPMAXSQ Z3, Z0, Z0
	VPADDQ Z4, Z0, Z0
	VPMOVQD Z0, Y7
	ADVANCE
	VINSERTI64X4 $1, Y7, Z6, Z6
	KXNORW K1, K1, K1
	VPXORD Z5, Z5, Z5
	VPGATHERDD (R8)(Z6*4), K1, Z5
	VPMOVDB Z5, (DI)
	ADDQ $16, DI
	SUBQ $16, CX
	JNZ geluloop
	VZEROUPPER
	RET

// LNCORE: Z0 = clamp(rshr(rshr((x - mu) inv, 32) g, 30) + b, +-lim) for 8
// columns. SI x (int32), R9 g (int64), BX b (int32); Z2 mu, Z3 inv, Z4
// 2^31, Z5 2^29, Z6 lim, Z7 -lim. Temps Z1.
#define LNCORE \
	VPMOVSXDQ (SI), Z0; \
	VPSUBQ Z2, Z0, Z0; \
	VPMULLQ Z3, Z0, Z0; \
	VPADDQ Z4, Z0, Z0; \
	VPSRAQ $32, Z0, Z0; \
	VPMULLQ (R9), Z0, Z0; \
	VPADDQ Z5, Z0, Z0; \
	VPSRAQ $30, Z0, Z0; \
	VPMOVSXDQ (BX), Z1; \
	VPADDQ Z1, Z0, Z0; \
	VPMINSQ Z6, Z0, Z0; \
	VPMAXSQ Z7, Z0, Z0

// func lnAVX512(out unsafe.Pointer, x *int32, gain *int64, b *int32, n int, mu, inv, lim int64, wide bool)
// out (int8, or int16 when wide) = LNCORE of each column; n a positive
// multiple of 8.
TEXT ·lnAVX512(SB), NOSPLIT, $0-65
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ gain+16(FP), R9
	MOVQ b+24(FP), BX
	MOVQ n+32(FP), CX
	MOVQ mu+40(FP), AX
	VPBROADCASTQ AX, Z2
	MOVQ inv+48(FP), AX
	VPBROADCASTQ AX, Z3
	MOVQ $0x80000000, AX
	VPBROADCASTQ AX, Z4
	MOVQ $0x20000000, AX
	VPBROADCASTQ AX, Z5
	MOVQ lim+56(FP), AX
	VPBROADCASTQ AX, Z6
	NEGQ AX
	VPBROADCASTQ AX, Z7
	MOVBLZX wide+64(FP), DX
	TESTQ DX, DX
	JNZ ln16loop
ln8loop:
	LNCORE
	VPMOVQB Z0, (DI)
	ADDQ $32, SI
	ADDQ $64, R9
	ADDQ $32, BX
	ADDQ $8, DI
	SUBQ $8, CX
	JNZ ln8loop
	VZEROUPPER
	RET
ln16loop:
	LNCORE
	VPMOVQW Z0, (DI)
	ADDQ $32, SI
	ADDQ $64, R9
	ADDQ $32, BX
	ADDQ $16, DI
	SUBQ $8, CX
	JNZ ln16loop
	VZEROUPPER
	RET

// func pvAVX512(out *int32, p *int16, vp *int16, pairs int, blocks int, stride int)
// For each block b < blocks of 16 columns: out[16b : 16b+16] = sum over
// pairs i of p[2i] vp[i][..][0] + p[2i+1] vp[i][..][1] (VPDPWSSD), vp's pair
// rows stride bytes apart, block b at byte offset 64b of each. Exact int32
// sums (the products and their sums fit: P <= 16383, |v| <= 127, at most
// 2048 keys).
TEXT ·pvAVX512(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ vp+16(FP), BX
	MOVQ pairs+24(FP), CX
	MOVQ blocks+32(FP), R9
	MOVQ stride+40(FP), R10
pvblock:
	VPXORD Z0, Z0, Z0
	VPXORD Z2, Z2, Z2
	MOVQ SI, R11
	MOVQ BX, R12
	MOVQ CX, R13
	SHRQ $1, R13
	JZ pvone
pvloop2:
	VPBROADCASTD (R11), Z1
	VPDPWSSD (R12), Z1, Z0
	ADDQ R10, R12
	VPBROADCASTD 4(R11), Z3
	VPDPWSSD (R12), Z3, Z2
	ADDQ R10, R12
	ADDQ $8, R11
	DECQ R13
	JNZ pvloop2
pvone:
	TESTQ $1, CX
	JZ pvstore
	VPBROADCASTD (R11), Z1
	VPDPWSSD (R12), Z1, Z0
pvstore:
	VPADDD Z2, Z0, Z0
	VMOVDQU32 Z0, (DI)
	ADDQ $64, DI
	ADDQ $64, BX
	DECQ R9
	JNZ pvblock
	VZEROUPPER
	RET

// func pv32AVX512(out *int32, p *int16, vp *int16, pairs int)
// pvAVX512 for a head width of 32 (two blocks) with four accumulators:
// two pairs of keys per step, each into both blocks.
TEXT ·pv32AVX512(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ vp+16(FP), BX
	MOVQ pairs+24(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ CX, R13
	SHRQ $1, R13
	JZ pv32one
pv32loop:
	VPBROADCASTD (SI), Z4
	VPBROADCASTD 4(SI), Z5
	VPDPWSSD (BX), Z4, Z0
	VPDPWSSD 64(BX), Z4, Z1
	VPDPWSSD 128(BX), Z5, Z2
	VPDPWSSD 192(BX), Z5, Z3
	ADDQ $256, BX
	ADDQ $8, SI
	DECQ R13
	JNZ pv32loop
pv32one:
	TESTQ $1, CX
	JZ pv32store
	VPBROADCASTD (SI), Z4
	VPDPWSSD (BX), Z4, Z0
	VPDPWSSD 64(BX), Z4, Z1
pv32store:
	VPADDD Z2, Z0, Z0
	VPADDD Z3, Z1, Z1
	VMOVDQU32 Z0, (DI)
	VMOVDQU32 Z1, 64(DI)
	VZEROUPPER
	RET
