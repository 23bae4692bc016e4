// arch: sm_80
// train_tc.cu: the training products of train.cu on tensor cores, TF32
// (mma.sync m16n8k8 .tf32, f32 accumulation), for GPUs of compute
// capability 8.0 and later. Same kernels, parameters and launch shapes as
// train.cu's tr_gemm_*, with the suffix _tc; package cuda's Blocks uses them
// when the device loads this module and TF32 is on (SetTF32). TF32 keeps 10
// of f32's 23 mantissa bits of each input (the tensor cores ignore the low
// 13), so the products round more coarsely than the FMA tiles: their
// parity test states the looser tolerance.
#include "tiles.h"

DEV u32 u_of(float f) { return __builtin_bit_cast(u32, f); }

// mma_tf32: d = a b + c for one warp's m16n8k8 tile (PTX ISA fragments, g =
// lane / 4, q = lane % 4: a holds A[g + 8 (i&1)][q + 4 (i>>1)], b holds
// B[q + 4 i][g], c and d hold C[g + 8 (i>>1)][2 q + (i&1)]).
DEV void mma_tf32(float* d, const u32* a, const u32* b, const float* c) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
        "f"(c[3]));
}

// gemm_tile_tc: C (M, N) = op(A) op(B) [+ bias] [+ C], op a transpose when
// TA/TB; a 64x64 tile of C per 256 threads, k in steps of 16 through shared
// memory, eight warps of 16x32 outputs (four m16n8k8 tiles each, two k8
// steps per 16).
template <bool TA, bool TB>
DEV void gemm_tile_tc(float* __restrict__ C, int ldc, const float* __restrict__ A, int lda,
                      const float* __restrict__ B, int ldb, const float* __restrict__ bias, int acc, int M, int N,
                      int K) {
  __shared__ float As[16][72]; // [k][m]
  __shared__ float Bs[16][72]; // [k][n]
  int t = TID, lane = t % 32, warp = t / 32;
  int g = lane / 4, q = lane % 4;
  int wm = (warp / 2) * 16, wn = (warp % 2) * 32;
  int m0 = BID_Y * 64, n0 = BID_X * 64;
  float c[4][4];
  for (int j = 0; j < 4; j++)
    for (int e = 0; e < 4; e++) c[j][e] = 0.0f;
  for (int k0 = 0; k0 < K; k0 += 16) {
    load_f32_tiles<TA, TB, 72>(&As[0][0], &Bs[0][0], A, lda, B, ldb, M, N, K, m0, n0, k0);
    SYNC();
    for (int kk = 0; kk < 16; kk += 8) {
      u32 af[4];
      af[0] = u_of(As[kk + q][wm + g]);
      af[1] = u_of(As[kk + q][wm + g + 8]);
      af[2] = u_of(As[kk + q + 4][wm + g]);
      af[3] = u_of(As[kk + q + 4][wm + g + 8]);
      for (int j = 0; j < 4; j++) {
        u32 bf[2];
        bf[0] = u_of(Bs[kk + q][wn + j * 8 + g]);
        bf[1] = u_of(Bs[kk + q + 4][wn + j * 8 + g]);
        mma_tf32(c[j], af, bf, c[j]);
      }
    }
    SYNC();
  }
  for (int j = 0; j < 4; j++)
    for (int e = 0; e < 4; e++) {
      int r = m0 + wm + g + (e >= 2 ? 8 : 0);
      int n = n0 + wn + j * 8 + q * 2 + (e & 1);
      if (r < M && n < N) store_f32(C, ldc, bias, acc, r, n, c[j][e]);
    }
}

// tr_gemm_nn_tc, tr_gemm_tn_tc, tr_gemm_nt_tc, tr_gemm_tn_split_tc:
// train.cu's products (tiles.h's TR_GEMM_KERNELS) in TF32.
TR_GEMM_KERNELS(_tc, gemm_tile_tc)
