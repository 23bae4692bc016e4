// PTX instructions whose semantics C does not spell: inline asm.
#include "prelude.h"
#define NP32 34

GLOBAL void ptxops32(u32* out, const u32* in, int n) {
  int i = CTAID_X * NTID_X + TID_X;
  if (i >= n) return;
  u32 a = in[3 * i], b = in[3 * i + 1], c = in[3 * i + 2];
  u32 r[NP32];
  asm("shl.b32 %0, %1, %2;" : "=r"(r[0]) : "r"(a), "r"(c));
  asm("shr.u32 %0, %1, %2;" : "=r"(r[1]) : "r"(a), "r"(c));
  asm("shr.s32 %0, %1, %2;" : "=r"(r[2]) : "r"(a), "r"(c));
  asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r[3]) : "r"(a), "r"(b), "r"(c));
  asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r[4]) : "r"(a), "r"(b), "r"(c));
  asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r[5]) : "r"(a), "r"(b), "r"(c), "r"(c >> 8));
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r[6]) : "r"(a), "r"(b), "r"(c));
  asm("shf.l.wrap.b32 %0, %1, %2, %3;" : "=r"(r[7]) : "r"(a), "r"(b), "r"(c));
  asm("shf.l.clamp.b32 %0, %1, %2, %3;" : "=r"(r[8]) : "r"(a), "r"(b), "r"(c));
  asm("shf.r.wrap.b32 %0, %1, %2, %3;" : "=r"(r[9]) : "r"(a), "r"(b), "r"(c));
  asm("shf.r.clamp.b32 %0, %1, %2, %3;" : "=r"(r[10]) : "r"(a), "r"(b), "r"(c));
  asm("clz.b32 %0, %1;" : "=r"(r[11]) : "r"(a));
  asm("popc.b32 %0, %1;" : "=r"(r[12]) : "r"(a));
  asm("brev.b32 %0, %1;" : "=r"(r[13]) : "r"(a));
  asm("mul.hi.s32 %0, %1, %2;" : "=r"(r[14]) : "r"(a), "r"(b));
  asm("mad.hi.u32 %0, %1, %2, %3;" : "=r"(r[15]) : "r"(a), "r"(b), "r"(c));
  asm("mad.lo.s32 %0, %1, %2, %3;" : "=r"(r[16]) : "r"(a), "r"(b), "r"(c));
  asm("cnot.b32 %0, %1;" : "=r"(r[17]) : "r"(c & 1 ? a : 0u));
  asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(r[18]) : "r"(a), "r"(b), "r"(c));
  asm("dp4a.u32.u32 %0, %1, %2, %3;" : "=r"(r[19]) : "r"(a), "r"(b), "r"(c));
  asm("dp4a.s32.u32 %0, %1, %2, %3;" : "=r"(r[20]) : "r"(a), "r"(b), "r"(c));
  asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(r[21]) : "r"(a), "r"(b), "r"(c));
  asm("add.sat.s32 %0, %1, %2;" : "=r"(r[22]) : "r"(a), "r"(b));
  asm("sub.sat.s32 %0, %1, %2;" : "=r"(r[23]) : "r"(a), "r"(b));
  asm("slct.u32.s32 %0, %1, %2, %3;" : "=r"(r[24]) : "r"(a), "r"(b), "r"(c));
  asm("{ .reg .pred p, q; setp.lt.s32 p|q, %1, %2; selp.b32 %0, 7, 9, q; }" : "=r"(r[25]) : "r"(a), "r"(b));
  asm("{ .reg .pred p; setp.ne.u32 p, %3, 0; setp.gt.and.u32 p, %1, %2, !p; selp.b32 %0, 1, 0, p; }" : "=r"(r[26]) : "r"(a), "r"(b), "r"(c & 1));
  asm("set.lt.u32.s32 %0, %1, %2;" : "=r"(r[27]) : "r"(a), "r"(b));
  asm("{ .reg .b64 t; mov.b64 t, {%1, %2}; shr.b64 t, t, 12; mov.b64 {%0, _}, t; }" : "=r"(r[28]) : "r"(a), "r"(b));
  asm("abs.s32 %0, %1;" : "=r"(r[29]) : "r"(a));
  asm("rem.s32 %0, %1, %2;" : "=r"(r[30]) : "r"(a), "r"(b | 1));
  asm("{ .reg .u32 lo, hi; add.cc.u32 lo, %1, %2; addc.u32 hi, 0, 0; sub.cc.u32 lo, lo, %3; subc.u32 hi, hi, 0; xor.b32 %0, lo, hi; }"
      : "=r"(r[31]) : "r"(a), "r"(b), "r"(c));
  asm("{ .reg .b16 h; cvt.u16.u32 h, %1; shr.s16 h, h, %2; cvt.s32.s16 %0, h; }" : "=r"(r[32]) : "r"(a), "r"(c));
  asm("{ .reg .b16 h, k; cvt.u16.u32 h, %1; cvt.u16.u32 k, %2; mul.wide.s16 %0, h, k; }" : "=r"(r[33]) : "r"(a), "r"(b));
  for (int k = 0; k < NP32; k++) out[NP32 * i + k] = r[k];
}

#define NP64 14
GLOBAL void ptxops64(u64* out, const u64* in, int n) {
  int i = CTAID_X * NTID_X + TID_X;
  if (i >= n) return;
  u64 a = in[3 * i], b = in[3 * i + 1], c = in[3 * i + 2];
  u32 s = (u32)c;
  u64 r[NP64];
  asm("shl.b64 %0, %1, %2;" : "=l"(r[0]) : "l"(a), "r"(s));
  asm("shr.u64 %0, %1, %2;" : "=l"(r[1]) : "l"(a), "r"(s));
  asm("shr.s64 %0, %1, %2;" : "=l"(r[2]) : "l"(a), "r"(s));
  asm("bfe.u64 %0, %1, %2, %3;" : "=l"(r[3]) : "l"(a), "r"((u32)b), "r"(s));
  asm("bfe.s64 %0, %1, %2, %3;" : "=l"(r[4]) : "l"(a), "r"((u32)b), "r"(s));
  asm("bfi.b64 %0, %1, %2, %3, %4;" : "=l"(r[5]) : "l"(a), "l"(b), "r"(s), "r"(s >> 8));
  asm("mul.hi.s64 %0, %1, %2;" : "=l"(r[6]) : "l"(a), "l"(b));
  asm("mad.hi.u64 %0, %1, %2, %3;" : "=l"(r[7]) : "l"(a), "l"(b), "l"(c));
  {
    u32 z;
    asm("clz.b64 %0, %1;" : "=r"(z) : "l"(a));
    r[8] = z;
    asm("popc.b64 %0, %1;" : "=r"(z) : "l"(a));
    r[9] = z;
  }
  asm("brev.b64 %0, %1;" : "=l"(r[10]) : "l"(a));
  asm("{ .reg .u64 lo, hi; add.cc.u64 lo, %1, %2; addc.cc.u64 hi, %1, %3; addc.u64 %0, 0, 0; xor.b64 %0, %0, lo; xor.b64 %0, %0, hi; }"
      : "=l"(r[11]) : "l"(a), "l"(b), "l"(c));
  asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(r[12]) : "r"((u32)a), "r"((u32)b), "l"(c));
  asm("{ .reg .s64 t; min.s64 t, %1, %2; max.u64 %0, t, %3; }" : "=l"(r[13]) : "l"(a), "l"(b), "l"(c));
  for (int k = 0; k < NP64; k++) out[NP64 * i + k] = r[k];
}
