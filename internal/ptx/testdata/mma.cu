// Tensor-core kernels: mma.sync and ldmatrix through inline asm, as CUTLASS
// writes them.
#include "prelude.h"
#define INLINE __attribute__((always_inline)) inline
#define LANE (TID_X & 31)

// One warp-level product per warp: lane l of warp w loads its fragment
// registers a[4*(32w+l)..], b[2*(32w+l)..], c[4*(32w+l)..] and stores d.
#define MMA_K32(name, at, bt, sat)                                                          \
  GLOBAL void name(i32* d, const u32* a, const u32* b, const i32* c) {                      \
    u32 t = CTAID_X * NTID_X + TID_X;                                                       \
    i32 r0 = c[4 * t], r1 = c[4 * t + 1], r2 = c[4 * t + 2], r3 = c[4 * t + 3];             \
    asm volatile("mma.sync.aligned.m16n8k32.row.col" sat ".s32." at "." bt ".s32 "          \
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"          \
                 : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3)                                   \
                 : "r"(a[4 * t]), "r"(a[4 * t + 1]), "r"(a[4 * t + 2]), "r"(a[4 * t + 3]),  \
                   "r"(b[2 * t]), "r"(b[2 * t + 1]));                                       \
    d[4 * t] = r0, d[4 * t + 1] = r1, d[4 * t + 2] = r2, d[4 * t + 3] = r3;                 \
  }
MMA_K32(mma_k32_ss, "s8", "s8", "")
MMA_K32(mma_k32_uu, "u8", "u8", "")
MMA_K32(mma_k32_us, "u8", "s8", "")
MMA_K32(mma_k32_ss_sat, "s8", "s8", ".satfinite")

#define MMA_K16(name, at, bt)                                                               \
  GLOBAL void name(i32* d, const u32* a, const u32* b, const i32* c) {                      \
    u32 t = CTAID_X * NTID_X + TID_X;                                                       \
    i32 r0 = c[4 * t], r1 = c[4 * t + 1], r2 = c[4 * t + 2], r3 = c[4 * t + 3];             \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.s32." at "." bt ".s32 "                 \
                 "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"                      \
                 : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3)                                   \
                 : "r"(a[4 * t]), "r"(a[4 * t + 1]), "r"(b[2 * t]));                        \
    d[4 * t] = r0, d[4 * t + 1] = r1, d[4 * t + 2] = r2, d[4 * t + 3] = r3;                 \
  }
MMA_K16(mma_k16_ss, "s8", "s8")
MMA_K16(mma_k16_su, "s8", "u8")

// tf32: the fragment registers hold raw fp32 bits (the tensor core ignores
// their low 13 bits); c and d are f32.
GLOBAL void mma_tf32(float* d, const u32* a, const u32* b, const float* c) {
  u32 t = CTAID_X * NTID_X + TID_X;
  float r0 = c[4 * t], r1 = c[4 * t + 1], r2 = c[4 * t + 2], r3 = c[4 * t + 3];
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(r0), "+f"(r1), "+f"(r2), "+f"(r3)
               : "r"(a[4 * t]), "r"(a[4 * t + 1]), "r"(a[4 * t + 2]), "r"(a[4 * t + 3]),
                 "r"(b[2 * t]), "r"(b[2 * t + 1]));
  d[4 * t] = r0, d[4 * t + 1] = r1, d[4 * t + 2] = r2, d[4 * t + 3] = r3;
}

__device__ INLINE void mma_s8(i32* acc, const u32* a, u32 b0, u32 b1) {
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The 32-bit .shared address of a shared-memory pointer (CUTLASS's
// cvta_to_shared without the nvcc intrinsic).
__device__ INLINE u32 smem_addr(const void* p) {
  u32 r;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
  return r;
}

__device__ INLINE void ldsm_x4(u32* r, u32 addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

// C[M][N] = A[M][K] * B[N][K]^T for int8 A and B (B is the column-major
// operand), int32 C. A block of 4 warps computes a 32x32 tile of C through
// 32x32-byte shared tiles; each warp a 16x16 quarter as two m16n8k32 mma.
// With ldsm set the fragments come from ldmatrix, else from 32-bit shared
// loads. Shapes need not be multiples of the tile: edges are zero-filled.
#define BM 32
#define BN 32
#define BK 32
#define SK (BK + 16) // row stride of the shared tiles: 16-byte aligned rows
GLOBAL void gemm_i8(i32* C, const i8* A, const i8* B, int M, int N, int K, int ldsm) {
  __shared__ __attribute__((aligned(16))) i8 As[BM * SK];
  __shared__ __attribute__((aligned(16))) i8 Bs[BN * SK];
  int tid = TID_X, warp = tid >> 5, lane = tid & 31, g = lane >> 2, q = lane & 3;
  int wm = (warp >> 1) * 16, wn = (warp & 1) * 16;
  int m0 = CTAID_Y * BM, n0 = CTAID_X * BN;
  i32 acc[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int e = tid; e < BM * BK; e += 128) {
      int r = e / BK, c = e % BK, gk = k0 + c;
      As[r * SK + c] = (m0 + r < M && gk < K) ? A[(m0 + r) * K + gk] : 0;
      Bs[r * SK + c] = (n0 + r < N && gk < K) ? B[(n0 + r) * K + gk] : 0;
    }
    SYNC();
    u32 a[4], b[4];
    if (ldsm) {
      // Lanes 8j..8j+7 address the rows of matrix j: A rows wm+0..15 at
      // byte 0 and 16; B rows wn+0..15 likewise.
      int r = lane & 7;
      ldsm_x4(a, smem_addr(&As[(wm + r + 8 * ((lane >> 3) & 1)) * SK + 16 * (lane >> 4)]));
      ldsm_x4(b, smem_addr(&Bs[(wn + r + 8 * (lane >> 4)) * SK + 16 * ((lane >> 3) & 1)]));
    } else {
      a[0] = *(const u32*)&As[(wm + g) * SK + 4 * q];
      a[1] = *(const u32*)&As[(wm + g + 8) * SK + 4 * q];
      a[2] = *(const u32*)&As[(wm + g) * SK + 16 + 4 * q];
      a[3] = *(const u32*)&As[(wm + g + 8) * SK + 16 + 4 * q];
      for (int j = 0; j < 2; j++) {
        b[2 * j] = *(const u32*)&Bs[(wn + 8 * j + g) * SK + 4 * q];
        b[2 * j + 1] = *(const u32*)&Bs[(wn + 8 * j + g) * SK + 16 + 4 * q];
      }
    }
    mma_s8(acc[0], a, b[0], b[1]);
    mma_s8(acc[1], a, b[2], b[3]);
    SYNC();
  }
  for (int j = 0; j < 2; j++) {
    for (int i = 0; i < 4; i++) {
      int row = m0 + wm + g + 8 * (i >> 1), col = n0 + wn + 8 * j + 2 * q + (i & 1);
      if (row < M && col < N) C[row * N + col] = acc[j][i];
    }
  }
}

// ldmatrix of four 8x8 b16 matrices stored with a row stride of 24
// elements (48 bytes): out[32*(4v+j)+l] is register j of lane l for the
// variants v = x1, x2, x4, x4.trans (through a generic address).
GLOBAL void ldsm_test(u32* out, const u16* in) {
  __shared__ __attribute__((aligned(16))) u16 s[32 * 24];
  u32 l = TID_X;
  for (int e = l; e < 32 * 8; e += 32) s[(e / 8) * 24 + e % 8] = in[e];
  SYNC();
  u32 r[4];
  u32 base = smem_addr(s);
  u32 row = base + 48 * l; // lane l addresses row l (matrix l/8, row l%8)
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(row));
  out[l] = r[0];
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared::cta.b16 {%0, %1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(row));
  out[128 + l] = r[0], out[160 + l] = r[1];
  ldsm_x4(r, row);
  for (int j = 0; j < 4; j++) out[256 + 32 * j + l] = r[j];
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "l"(&s[24 * l]));
  for (int j = 0; j < 4; j++) out[384 + 32 * j + l] = r[j];
}

// Faults: an mma that only the lower half-warp reaches, mma in a warp of
// fewer than 32 threads, and ldmatrix at a misaligned row.
GLOBAL void mma_divergent(i32* d, const u32* a) {
  i32 acc[4] = {0, 0, 0, 0};
  if (LANE < 16) mma_s8(acc, a, a[1], a[2]);
  d[TID_X] = acc[0];
}

GLOBAL void mma_all(i32* d, const u32* a) {
  i32 acc[4] = {0, 0, 0, 0};
  mma_s8(acc, a, a[1], a[2]);
  d[TID_X] = acc[0];
}

GLOBAL void ldsm_misaligned(u32* out, int off) {
  __shared__ __attribute__((aligned(16))) u16 s[32 * 16];
  u32 r[4];
  ldsm_x4(r, smem_addr(s) + 32 * LANE + (LANE == 9 ? off : 0));
  out[TID_X] = r[0] + r[3];
}
