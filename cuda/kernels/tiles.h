// tiles.h: what the kernels of int8.cu, int8_tc.cu, train.cu and
// train_tc.cu share: the block reductions, the loads of one k-step's tiles
// into shared memory, and the f32 products' epilogue and entry points (one
// set per tile routine: FMA tiles in train.cu, TF32 tensor cores in
// train_tc.cu).
#pragma once
#include "prelude.h"

// block_sum, block_max: the sum (largest) of every thread's v, for all
// threads; red holds NTID values, NTID a power of two, and every thread
// calls.
template <typename T> DEV T block_sum(T v, T* red) {
  int t = TID;
  red[t] = v;
  SYNC();
  for (int k = NTID / 2; k > 0; k >>= 1) {
    if (t < k) red[t] += red[t + k];
    SYNC();
  }
  T s = red[0];
  SYNC();
  return s;
}

template <typename T> DEV T block_max(T v, T* red) {
  int t = TID;
  red[t] = v;
  SYNC();
  for (int k = NTID / 2; k > 0; k >>= 1) {
    if (t < k && red[t + k] > red[t]) red[t] = red[t + k];
    SYNC();
  }
  T s = red[0];
  SYNC();
  return s;
}

// load_s8_tiles: the int8 products' k-step k0 into shared memory, by NT
// threads: as[r*32 + k] = a's row r0+r, column k0+k (row stride lda); bs[n*32
// + k] = w's row k0+k, column n0+n (w is (K, N)); zeros past the edges.
template <int NT>
DEV void load_s8_tiles(u8* as, u8* bs, const i8* __restrict__ a, int lda, const i8* __restrict__ w, int rows, int K,
                       int N, int r0, int n0, int k0) {
  for (int e = TID; e < 64 * 32; e += NT) {
    int r = e / 32, k = e % 32;
    i8 v = 0;
    if (r0 + r < rows && k0 + k < K) v = a[(i64)(r0 + r) * lda + k0 + k];
    as[r * 32 + k] = (u8)v;
    int kk = e / 64, n = e % 64;
    i8 u = 0;
    if (k0 + kk < K && n0 + n < N) u = w[(i64)(k0 + kk) * N + n0 + n];
    bs[n * 32 + kk] = (u8)u;
  }
}

// load_f32_tiles: the f32 products' k-step k0 (16 deep) into shared memory,
// by 256 threads: As[k*LD + m] = op(A)[m0+m][k0+k], Bs[k*LD + n] =
// op(B)[k0+k][n0+n], op a transpose when TA (TB); zeros past the edges.
template <bool TA, bool TB, int LD>
DEV void load_f32_tiles(float* As, float* Bs, const float* __restrict__ A, int lda, const float* __restrict__ B,
                        int ldb, int M, int N, int K, int m0, int n0, int k0) {
  for (int e = TID; e < 64 * 16; e += 256) {
    int m, k;
    if (TA) {
      k = e / 64, m = e % 64;
    } else {
      m = e / 16, k = e % 16;
    }
    float v = 0.0f;
    if (m0 + m < M && k0 + k < K) v = TA ? A[(i64)(k0 + k) * lda + m0 + m] : A[(i64)(m0 + m) * lda + k0 + k];
    As[k * LD + m] = v;
    int n;
    if (TB) {
      n = e / 16, k = e % 16;
    } else {
      k = e / 64, n = e % 64;
    }
    float u = 0.0f;
    if (n0 + n < N && k0 + k < K) u = TB ? B[(i64)(n0 + n) * ldb + k0 + k] : B[(i64)(k0 + k) * ldb + n0 + n];
    Bs[k * LD + n] = u;
  }
}

// store_f32: C[r][n] = v [+ bias[n]] [+ C[r][n] when acc].
DEV void store_f32(float* C, int ldc, const float* __restrict__ bias, int acc, int r, int n, float v) {
  if (bias) v += bias[n];
  float* o = C + (i64)r * ldc + n;
  if (acc) v += *o;
  *o = v;
}

// TR_GEMM_KERNELS defines the training products' four kernels with the tile
// routine TILE (template <bool TA, bool TB>, gemm_tile's parameters) and the
// name suffix SUF: tr_gemm_nn (C = A B [+ bias] [+ C], the forward's x W +
// b), tr_gemm_tn (C = A^T B [+ C], weight gradients x^T dy), tr_gemm_nt (C =
// A B^T [+ C], input gradients dy W^T) and tr_gemm_tn_split (split-K weight
// gradients, for outputs with few tiles and a long inner dimension, the
// batch's rows: grid z takes rows [z kc, (z+1) kc) and writes its partial
// product (M, N) to part z of Cs; tr_colsum_final adds the parts in order,
// with no float atomics, so every run gives the same bits).
#define TR_GEMM_KERNELS(SUF, TILE)                                                                                 \
  GLOBAL void tr_gemm_nn##SUF(float* C, int ldc, const float* A, int lda, const float* B, int ldb,                \
                              const float* bias, int acc, int M, int N, int K) {                                  \
    TILE<false, false>(C, ldc, A, lda, B, ldb, bias, acc, M, N, K);                                              \
  }                                                                                                              \
  GLOBAL void tr_gemm_tn##SUF(float* C, int ldc, const float* A, int lda, const float* B, int ldb,                \
                              const float* bias, int acc, int M, int N, int K) {                                  \
    TILE<true, false>(C, ldc, A, lda, B, ldb, bias, acc, M, N, K);                                               \
  }                                                                                                              \
  GLOBAL void tr_gemm_nt##SUF(float* C, int ldc, const float* A, int lda, const float* B, int ldb,                \
                              const float* bias, int acc, int M, int N, int K) {                                  \
    TILE<false, true>(C, ldc, A, lda, B, ldb, bias, acc, M, N, K);                                               \
  }                                                                                                              \
  GLOBAL void tr_gemm_tn_split##SUF(float* Cs, const float* A, int lda, const float* B, int ldb, int M, int N,    \
                                    int K, int kc) {                                                             \
    int z = (int)__nvvm_read_ptx_sreg_ctaid_z();                                                                 \
    int k0 = z * kc;                                                                                             \
    int kz = K - k0 < kc ? K - k0 : kc;                                                                          \
    TILE<true, false>(Cs + (i64)z * M * N, N, A + (i64)k0 * lda, lda, B + (i64)k0 * ldb, ldb, 0, 0, M, N, kz);   \
  }
