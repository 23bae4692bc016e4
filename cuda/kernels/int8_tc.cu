// arch: sm_80
// int8_tc.cu: the int8 profile's matrix product on tensor cores
// (mma.sync m16n8k32, int8 x int8 -> int32), for GPUs of compute
// capability 8.0 and later. Its sums are the exact int32 sums of
// igemm.MulRef, as gemm_s8's are; package cuda uses it when the device
// loads this module (cuda/gen.sh compiles it for sm_80).
#include "tiles.h"

// mma_s8: d = a b + c for one warp's m16n8k32 tile (PTX ISA fragment
// layouts: a four registers of four int8 of rows g and g+8, b two of column
// g, c and d four int32 of rows g and g+8, columns 2t and 2t+1, where
// g = lane / 4 and t = lane % 4).
DEV void mma_s8(i32* d, const u32* a, const u32* b, const i32* c) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]),
        "r"(c[3]));
}

// gemm_s8_tc: acc (rows, N) = a (rows, K; row stride lda) w (K, N), as
// gemm_s8 (same parameters and launch grid: 64x64 output tiles), with 128
// threads: four warps of 32x32 outputs, each 2 x 4 mma tiles per 32 k.
GLOBAL void gemm_s8_tc(i32* __restrict__ acc, const i8* __restrict__ a, int lda, const i8* __restrict__ w,
                       int rows, int K, int N) {
  __shared__ u32 As[64 * 8]; // [row][k/4]
  __shared__ u32 Bs[64 * 8]; // [col][k/4]
  int t = TID, lane = t % 32, warp = t / 32;
  int g = lane / 4, q = lane % 4;
  int wm = (warp / 2) * 32, wn = (warp % 2) * 32;
  int r0 = BID_Y * 64, n0 = BID_X * 64;
  i32 c[2][4][4];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 4; j++)
      for (int e = 0; e < 4; e++) c[i][j][e] = 0;
  u8* as = (u8*)As;
  u8* bs = (u8*)Bs;
  for (int k0 = 0; k0 < K; k0 += 32) {
    load_s8_tiles<128>(as, bs, a, lda, w, rows, K, N, r0, n0, k0);
    SYNC();
    u32 af[2][4], bf[4][2];
    for (int i = 0; i < 2; i++) {
      int r = wm + i * 16 + g;
      af[i][0] = As[r * 8 + q];
      af[i][1] = As[(r + 8) * 8 + q];
      af[i][2] = As[r * 8 + 4 + q];
      af[i][3] = As[(r + 8) * 8 + 4 + q];
    }
    for (int j = 0; j < 4; j++) {
      int n = wn + j * 8 + g;
      bf[j][0] = Bs[n * 8 + q];
      bf[j][1] = Bs[n * 8 + 4 + q];
    }
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 4; j++) mma_s8(c[i][j], af[i], bf[j], c[i][j]);
    SYNC();
  }
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 4; j++)
      for (int e = 0; e < 4; e++) {
        int r = r0 + wm + i * 16 + g + (e >= 2 ? 8 : 0);
        int n = n0 + wn + j * 8 + q * 2 + (e & 1);
        if (r < rows && n < N) acc[(i64)r * N + n] = c[i][j][e];
      }
}
