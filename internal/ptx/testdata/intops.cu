// Integer arithmetic of every width and signedness, as C spells it.
#include "prelude.h"
#define NOPS 24

template <typename S, typename U, int W>
__device__ __attribute__((always_inline)) void intops(u64* out, const u64* in, int n) {
  int i = CTAID_X * NTID_X + TID_X;
  if (i >= n) return;
  U ux = (U)in[2 * i], uy = (U)in[2 * i + 1];
  S x = (S)ux, y = (S)uy;
  const S MN = (S)((U)1 << (W - 1));
  u64* o = out + (u64)i * NOPS;
  o[0] = (U)(ux + uy);
  o[1] = (U)(ux - uy);
  o[2] = (U)(ux * uy);
  o[3] = (i64)(S)(y == 0 ? (S)0 : (x == MN && y == (S)-1) ? x : (S)(x / y));
  o[4] = (i64)(S)(y == 0 ? (S)0 : (x == MN && y == (S)-1) ? (S)0 : (S)(x % y));
  o[5] = (U)(uy == 0 ? (U)0 : (U)(ux / uy));
  o[6] = (U)(uy == 0 ? (U)0 : (U)(ux % uy));
  o[7] = x < y;
  o[8] = ux < uy;
  o[9] = x >= y;
  o[10] = ux <= uy;
  o[11] = (i64)(x < y ? x : y);
  o[12] = (U)(ux > uy ? ux : uy);
  o[13] = (i64)(S)(x >> (uy & (W - 1)));
  o[14] = (U)(ux << (uy & (W - 1)));
  o[15] = (U)(ux >> (uy & (W - 1)));
  o[16] = (U)(x < 0 ? (U)(0 - ux) : ux);
  o[17] = (U)((~ux & uy) ^ (ux | (U)0x5a));
  o[18] = (i64)x;
  o[19] = (i64)(i8)ux;
  o[20] = (u64)(u16)ux;
  o[21] = (i64)(i32)ux;
  o[22] = (u64)__builtin_popcountll((u64)ux);
  o[23] = (i64)(S)(x * (S)3 + (S)(y >> 1));
}

GLOBAL void intops8(u64* out, const u64* in, int n) { intops<i8, u8, 8>(out, in, n); }
GLOBAL void intops16(u64* out, const u64* in, int n) { intops<i16, u16, 16>(out, in, n); }
GLOBAL void intops32(u64* out, const u64* in, int n) { intops<i32, u32, 32>(out, in, n); }
GLOBAL void intops64(u64* out, const u64* in, int n) { intops<i64, u64, 64>(out, in, n); }

// High halves of products: 32x32 and 64x64 (-> 128).
GLOBAL void mulhi(u64* out, const u64* in, int n) {
  int i = CTAID_X * NTID_X + TID_X;
  if (i >= n) return;
  u64 a = in[2 * i], b = in[2 * i + 1];
  u64* o = out + 6 * i;
  o[0] = __nvvm_mulhi_ull(a, b);
  o[1] = (u64)__nvvm_mulhi_ll((i64)a, (i64)b);
  o[2] = __nvvm_mulhi_ui((u32)a, (u32)b);
  o[3] = (u64)(i64)__nvvm_mulhi_i((i32)a, (i32)b);
  o[4] = (u64)((i64)(i32)a * (i64)(i32)b);
  o[5] = (u64)(u32)a * (u64)(u32)b;
}
