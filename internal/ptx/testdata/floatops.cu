// IEEE float arithmetic, comparisons and conversions with explicit rounding.
#include "prelude.h"
#define NF32 40
#define NF64 36

__device__ __attribute__((always_inline)) float f32(u32 b) { return __builtin_bit_cast(float, b); }
__device__ __attribute__((always_inline)) u32 b32(float f) { return __builtin_bit_cast(u32, f); }
__device__ __attribute__((always_inline)) double f64(u64 b) { return __builtin_bit_cast(double, b); }
__device__ __attribute__((always_inline)) u64 b64(double f) { return __builtin_bit_cast(u64, f); }
// LLVM 14 lowers the __nvvm_*2f_rz / *2d_rz builtins to .rn conversions, so
// the round-toward-zero integer conversions are spelled in PTX directly.
__device__ __attribute__((always_inline)) float i2f_rz(i32 v) {
  float r;
  asm("cvt.rz.f32.s32 %0, %1;" : "=f"(r) : "r"(v));
  return r;
}
__device__ __attribute__((always_inline)) float ull2f_rz(u64 v) {
  float r;
  asm("cvt.rz.f32.u64 %0, %1;" : "=f"(r) : "l"(v));
  return r;
}
__device__ __attribute__((always_inline)) double ll2d_rz(i64 v) {
  double r;
  asm("cvt.rz.f64.s64 %0, %1;" : "=d"(r) : "l"(v));
  return r;
}

GLOBAL void fops32(u32* out, const u32* in, int n) {
  int i = CTAID_X * NTID_X + TID_X;
  if (i >= n) return;
  u32 ua = in[3 * i], ub = in[3 * i + 1], uc = in[3 * i + 2];
  float x = f32(ua), y = f32(ub), z = f32(uc);
  u32* o = out + NF32 * i;
  o[0] = b32(x + y);
  o[1] = b32(x - y);
  o[2] = b32(x * y);
  o[3] = b32(x / y);
  o[4] = b32(__builtin_sqrtf(x));
  o[5] = b32(__builtin_fmaf(x, y, z));
  o[6] = b32(__nvvm_fmin_f(x, y));
  o[7] = b32(__nvvm_fmax_f(x, y));
  o[8] = b32(__nvvm_rcp_rn_f(x));
  o[9] = b32(-x);
  o[10] = b32(__builtin_fabsf(x));
  o[11] = b32(__builtin_copysignf(x, y));
  o[12] = (u32)__nvvm_f2i_rn(x);
  o[13] = (u32)__nvvm_f2i_rz(x);
  o[14] = (u32)__nvvm_f2i_rm(x);
  o[15] = (u32)__nvvm_f2i_rp(x);
  o[16] = __nvvm_f2ui_rz(x);
  o[17] = __nvvm_f2ui_rn(x);
  u64 ll = (u64)__nvvm_f2ll_rp(x);
  o[18] = (u32)ll;
  o[19] = (u32)(ll >> 32);
  u64 ull = __nvvm_f2ull_rm(x);
  o[20] = (u32)ull;
  o[21] = (u32)(ull >> 32);
  o[22] = b32(__nvvm_i2f_rn((int)uc));
  o[23] = b32(i2f_rz((int)uc));
  o[24] = b32(__nvvm_i2f_rm((int)uc));
  o[25] = b32(__nvvm_i2f_rp((int)uc));
  o[26] = b32(__nvvm_ui2f_rn(uc));
  o[27] = b32(__nvvm_ui2f_rp(uc));
  o[28] = b32(__builtin_rintf(x));
  o[29] = b32(__builtin_truncf(x));
  o[30] = b32(__builtin_floorf(x));
  o[31] = b32(__builtin_ceilf(x));
  o[32] = x < y;
  o[33] = x <= y;
  o[34] = x == y;
  o[35] = x != y;
  o[36] = !(x >= y);
  o[37] = x != x;
  o[38] = b32((float)(i16)uc);
  o[39] = (u32)(i32)(i16)(i32)x;
}

GLOBAL void fops64(u64* out, const u64* in, int n) {
  int i = CTAID_X * NTID_X + TID_X;
  if (i >= n) return;
  u64 ua = in[3 * i], ub = in[3 * i + 1], uc = in[3 * i + 2];
  double x = f64(ua), y = f64(ub), z = f64(uc);
  u64* o = out + NF64 * i;
  o[0] = b64(x + y);
  o[1] = b64(x - y);
  o[2] = b64(x * y);
  o[3] = b64(x / y);
  o[4] = b64(__builtin_sqrt(x));
  o[5] = b64(__builtin_fma(x, y, z));
  o[6] = b64(__nvvm_fmin_d(x, y));
  o[7] = b64(__nvvm_fmax_d(x, y));
  o[8] = b64(__nvvm_rcp_rn_d(x));
  o[9] = b64(-x);
  o[10] = b64(__builtin_fabs(x));
  o[11] = b32(__nvvm_d2f_rn(x));
  o[12] = b32(__nvvm_d2f_rz(x));
  o[13] = b32(__nvvm_d2f_rm(x));
  o[14] = b32(__nvvm_d2f_rp(x));
  o[15] = b64((double)f32((u32)uc));
  o[16] = (u64)(i64)__nvvm_d2i_rn(x);
  o[17] = (u64)(i64)__nvvm_d2i_rz(x);
  o[18] = (u64)__nvvm_d2ll_rm(x);
  o[19] = (u64)__nvvm_d2ll_rp(x);
  o[20] = __nvvm_d2ull_rn(x);
  o[21] = __nvvm_d2ui_rz(x);
  o[22] = b64(__nvvm_ll2d_rn((i64)uc));
  o[23] = b64(ll2d_rz((i64)uc));
  o[24] = b64(__nvvm_ll2d_rm((i64)uc));
  o[25] = b64(__nvvm_ll2d_rp((i64)uc));
  o[26] = b64(__nvvm_ull2d_rn(uc));
  o[27] = b32(__nvvm_ll2f_rn((i64)uc));
  o[28] = b32(ull2f_rz(uc));
  o[29] = b64(__builtin_rint(x));
  o[30] = b64(__builtin_floor(x));
  o[31] = x < y;
  o[32] = x != y;
  o[33] = !(x <= y);
  o[34] = x != x;
  o[35] = b64(__nvvm_fma_rn_d(x, x, -y));
}
