// Tiled int8 matrix product with dp4a: C[M][N] = sum_k A[M][K] * B[N][K].
// A and B are int8, K is a multiple of 4 and is read as packed int32 words.
#include "prelude.h"
#define T 16

__device__ __attribute__((always_inline)) i32 dp4a(i32 a, i32 b, i32 c) {
  i32 d;
  asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

GLOBAL void gemm_i8(i32* C, const i32* A, const i32* B, int M, int N, int K4) {
  __shared__ i32 As[T][T + 1];
  __shared__ i32 Bs[T][T + 1];
  int row = CTAID_Y * T + TID_Y, col = CTAID_X * T + TID_X;
  i32 acc = 0;
  for (int k0 = 0; k0 < K4; k0 += T) {
    int ka = k0 + TID_X;
    As[TID_Y][TID_X] = (row < M && ka < K4) ? A[row * K4 + ka] : 0;
    int brow = CTAID_X * T + TID_Y;
    Bs[TID_Y][TID_X] = (brow < N && ka < K4) ? B[brow * K4 + ka] : 0;
    SYNC();
#pragma unroll 4
    for (int k = 0; k < T; k++) acc = dp4a(As[TID_Y][k], Bs[TID_X][k], acc);
    SYNC();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}
