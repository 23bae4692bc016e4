// Warp collectives: shfl.sync, vote.sync, activemask, and the faults of the
// warp-synchronous model. Written with inline asm as CUTLASS does: clang-14
// offers the __nvvm_*_sync builtins only with a newer PTX target feature.
#include "prelude.h"
#define INLINE __attribute__((always_inline)) inline
#define FULL 0xffffffffu
#define LANE (TID_X & 31)

// The four shfl modes with the predicate destination.
#define SHFL(mode)                                                                 \
  __device__ INLINE u32 shfl_##mode(u32 v, u32 b, u32 c, u32 m, u32* p) {          \
    u32 r, q;                                                                      \
    asm volatile("{ .reg .pred q; shfl.sync." #mode ".b32 %0|q, %2, %3, %4, %5; "  \
                 "selp.u32 %1, 1, 0, q; }"                                         \
                 : "=r"(r), "=r"(q) : "r"(v), "r"(b), "r"(c), "r"(m));             \
    *p = q;                                                                        \
    return r;                                                                      \
  }
SHFL(idx)
SHFL(up)
SHFL(down)
SHFL(bfly)

__device__ INLINE u32 shfl_down_np(u32 v, u32 b, u32 c, u32 m) {
  u32 r;
  asm volatile("shfl.sync.down.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(v), "r"(b), "r"(c), "r"(m));
  return r;
}
__device__ INLINE u32 shfl_idx_np(u32 v, u32 b, u32 c, u32 m) {
  u32 r;
  asm volatile("shfl.sync.idx.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(v), "r"(b), "r"(c), "r"(m));
  return r;
}
__device__ INLINE float shfl_bfly_f(float v, u32 b, u32 c, u32 m) {
  float r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, %3, %4;" : "=f"(r) : "f"(v), "r"(b), "r"(c), "r"(m));
  return r;
}

#define VOTE(mode)                                                                   \
  __device__ INLINE u32 vote_##mode(int x, u32 m) {                                  \
    u32 r;                                                                           \
    asm volatile("{ .reg .pred p, q; setp.ne.s32 p, %1, 0; vote.sync." #mode ".pred q, p, %2; " \
                 "selp.u32 %0, 1, 0, q; }"                                           \
                 : "=r"(r) : "r"(x), "r"(m));                                        \
    return r;                                                                        \
  }
VOTE(all)
VOTE(any)
VOTE(uni)

__device__ INLINE u32 ballot(int x, u32 m) {
  u32 r;
  asm volatile("{ .reg .pred p; setp.ne.s32 p, %1, 0; vote.sync.ballot.b32 %0, p, %2; }" : "=r"(r) : "r"(x), "r"(m));
  return r;
}
__device__ INLINE u32 ballot_not(int x, u32 m) {
  u32 r;
  asm volatile("{ .reg .pred p; setp.ne.s32 p, %1, 0; vote.sync.ballot.b32 %0, !p, %2; }" : "=r"(r) : "r"(x), "r"(m));
  return r;
}
__device__ INLINE u32 activemask() {
  u32 r;
  asm volatile("activemask.b32 %0;" : "=r"(r));
  return r;
}
// Distinct asm text per branch, so that clang cannot hoist them into one.
__device__ INLINE u32 activemask_xor(u32 k) {
  u32 r;
  asm volatile("{ .reg .b32 t; activemask.b32 t; xor.b32 %0, t, %1; }" : "=r"(r) : "r"(k));
  return r;
}
__device__ INLINE u32 activemask_add(u32 k) {
  u32 r;
  asm volatile("{ .reg .b32 t; activemask.b32 t; add.s32 %0, t, %1; }" : "=r"(r) : "r"(k));
  return r;
}

// Every shfl mode with per-thread b and c operands: out[8i..8i+7] holds the
// idx, up, down and bfly results and their predicates.
GLOBAL void shfl_modes(u32* out, const u32* in) {
  u32 i = CTAID_X * NTID_X + TID_X;
  u32 a = in[3 * i], b = in[3 * i + 1], c = in[3 * i + 2];
  u32 p[4], r[4];
  r[0] = shfl_idx(a, b, c, FULL, &p[0]);
  r[1] = shfl_up(a, b, c, FULL, &p[1]);
  r[2] = shfl_down(a, b, c, FULL, &p[2]);
  r[3] = shfl_bfly(a, b, c, FULL, &p[3]);
  for (int k = 0; k < 4; k++) {
    out[8 * i + k] = r[k];
    out[8 * i + 4 + k] = p[k];
  }
}

// A shfl.down sum tree over each warp (every lane's partial sum is kept),
// then lane 0's total broadcast with shfl.idx, and a float butterfly sum
// over segments of `width` lanes.
GLOBAL void warp_reduce(i32* sums, i32* bcast, float* fsum, const i32* in, const float* fin, u32 width) {
  u32 i = CTAID_X * NTID_X + TID_X;
  i32 v = in[i];
  for (u32 o = 16; o > 0; o >>= 1) v += (i32)shfl_down_np((u32)v, o, 31, FULL);
  sums[i] = v;
  bcast[i] = (i32)shfl_idx_np((u32)v, 0, 31, FULL);
  float f = fin[i];
  u32 c = ((32 - width) << 8) | 31;
  for (u32 o = 1; o < width; o <<= 1) f += shfl_bfly_f(f, o, c, FULL);
  fsum[i] = f;
}

// Votes after the threads >= n have exited: out[8i..] = ballot(x>0),
// ballot(!(x>0)), all(x>0), any(x<0), uni(x>0), activemask, a ballot over
// the own half-warp and, in divergent branches, activemask again.
GLOBAL void votes(u32* out, const i32* in, int n) {
  int i = CTAID_X * NTID_X + TID_X;
  if (i >= n) return;
  int x = in[i];
  out[8 * i] = ballot(x > 0, FULL);
  out[8 * i + 1] = ballot_not(x > 0, FULL);
  out[8 * i + 2] = vote_all(x > 0, FULL);
  out[8 * i + 3] = vote_any(x < 0, FULL);
  out[8 * i + 4] = vote_uni(x > 0, FULL);
  out[8 * i + 5] = activemask();
  u32 half = LANE < 16 ? 0x0000ffffu : 0xffff0000u;
  out[8 * i + 6] = ballot(x & 1, half);
  if (x & 2) {
    out[8 * i + 7] = activemask_xor(0x5a5a0000u);
  } else {
    out[8 * i + 7] = activemask_add((u32)i);
  }
}

// Faults. Lane 5 exits, the others read lane src.
GLOBAL void shfl_exited(u32* out, u32 src) {
  if (LANE == 5) return;
  out[TID_X] = shfl_idx_np(TID_X, src, 31, FULL);
}

// Every lane uses membermask m, except lane 3 which uses m3, and reads the
// next lane of its mask (cyclically).
GLOBAL void shfl_mask(u32* out, u32 m, u32 m3) {
  u32 mask = LANE == 3 ? m3 : m;
  u32 hi = mask & (0xfffffffeu << LANE);
  u32 src = __builtin_ctz(hi ? hi : mask);
  out[TID_X] = shfl_idx_np(TID_X, src, 31, mask);
}

// The lower half-warp shuffles with the whole warp while the upper half
// waits at a block barrier.
GLOBAL void shfl_vs_barrier(u32* out) {
  if (LANE < 16) {
    out[TID_X] = shfl_idx_np(TID_X, 0, 31, FULL);
  } else {
    out[TID_X] = 1;
    SYNC();
  }
}

// Two branches reach different vote instructions with overlapping masks.
GLOBAL void vote_divergent(u32* out) {
  if (LANE & 1) {
    out[TID_X] = ballot(1, FULL) + 7;
  } else {
    out[TID_X] = ballot(0, FULL) * 3;
  }
}

// __syncwarp at two different sites (distinct asm text, so that clang keeps
// both): odd and even lanes store, meet, and read their neighbour's value.
// Threads >= n have exited.
GLOBAL void syncwarp_xchg(u32* out, const u32* in, int n) {
  __shared__ u32 s[64];
  int t = TID_X;
  if (t >= n) return;
  if (LANE & 1) {
    s[t] = in[t] * 3;
    asm volatile("bar.warp.sync %0;" ::"r"(FULL) : "memory");
  } else {
    s[t] = in[t] + 1;
    asm volatile("{ bar.warp.sync %0; }" ::"r"(FULL) : "memory");
  }
  out[t] = s[t ^ 1];
}
