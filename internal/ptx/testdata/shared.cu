// Shared memory, barriers, dynamic shared memory, atomics, multi-dim grids.
#include "prelude.h"

// Per-block sum of W int32 values with a static shared tree reduction.
GLOBAL void blocksum(i64* out, const i32* x, int W) {
  __shared__ i64 s[256];
  i64 a = 0;
  for (int i = TID_X; i < W; i += NTID_X) a += x[CTAID_X * W + i];
  s[TID_X] = a;
  SYNC();
  for (int k = NTID_X / 2; k > 0; k >>= 1) {
    if (TID_X < k) s[TID_X] += s[TID_X + k];
    SYNC();
  }
  if (TID_X == 0) out[CTAID_X] = s[0];
}

// The same with dynamic shared memory (NTID_X int64 slots) plus a second
// static array, so the dynamic window must sit after the static one.
extern __shared__ __attribute__((aligned(16))) unsigned char dyn[];
GLOBAL void dynsum(i64* out, u32* maxout, const i32* x, int W) {
  __shared__ u32 m[32];
  i64* s = (i64*)dyn;
  if (TID_X < 32) m[TID_X] = 0;
  i64 a = 0;
  u32 mx = 0;
  for (int i = TID_X; i < W; i += NTID_X) {
    i32 v = x[CTAID_X * W + i];
    a += v;
    u32 av = v < 0 ? -(u32)v : (u32)v;
    mx = av > mx ? av : mx;
  }
  s[TID_X] = a;
  SYNC();
  __nvvm_atom_max_gen_ui(&m[TID_X % 32], mx);
  for (int k = NTID_X / 2; k > 0; k >>= 1) {
    if (TID_X < k) s[TID_X] += s[TID_X + k];
    SYNC();
  }
  if (TID_X == 0) {
    u32 r = 0;
    for (int j = 0; j < 32; j++) r = m[j] > r ? m[j] : r;
    out[CTAID_X] = s[0];
    maxout[CTAID_X] = r;
  }
}

// Histogram of bytes: shared-memory atomics, then global atomics.
GLOBAL void histogram(u32* hist, const u8* x, int n) {
  __shared__ u32 h[256];
  for (int i = TID_X; i < 256; i += NTID_X) h[i] = 0;
  SYNC();
  for (int i = CTAID_X * NTID_X + TID_X; i < n; i += NTID_X * NCTAID_X) __nvvm_atom_add_gen_i((int*)&h[x[i]], 1);
  SYNC();
  for (int i = TID_X; i < 256; i += NTID_X)
    if (h[i]) __nvvm_atom_add_gen_i((int*)&hist[i], (int)h[i]);
}

// Global atomics of several kinds on a few counters.
GLOBAL void atomics(u64* c64, i32* c32, const i32* x, int n) {
  int i = CTAID_X * NTID_X + TID_X;
  if (i >= n) return;
  i32 v = x[i];
  __nvvm_atom_add_gen_ll((long long*)&c64[0], (long long)v);
  __nvvm_atom_min_gen_i(&c32[0], v);
  __nvvm_atom_max_gen_i(&c32[1], v);
  __nvvm_atom_xor_gen_i(&c32[2], v);
  __nvvm_atom_or_gen_i(&c32[3], v & 0xff0f);
  __nvvm_atom_and_gen_i(&c32[4], v | 0x00f0);
  // A CAS loop: c32[5] = max(c32[5], v*3) with wrapping multiplication.
  i32 want = (i32)((u32)v * 3u);
  i32 old = c32[5];
  while (old < want) {
    i32 seen = __nvvm_atom_cas_gen_i(&c32[5], old, want);
    if (seen == old) break;
    old = seen;
  }
  __nvvm_atom_inc_gen_ui((u32*)&c32[6], 1000u);
}

// Writes a value from every coordinate of a 3-D grid of 3-D blocks.
GLOBAL void grid3d(u32* out) {
  u32 x = CTAID_X * NTID_X + TID_X, y = CTAID_Y * NTID_Y + TID_Y, z = CTAID_Z * NTID_Z + TID_Z;
  u32 W = NCTAID_X * NTID_X, H = NCTAID_Y * NTID_Y;
  out[(z * H + y) * W + x] = (x * 7 + y * 131 + z * 1031) ^ (TID_X << 20) ^ (CTAID_Z << 27);
}

// Transpose through a padded shared tile on a 2-D grid of 2-D blocks.
GLOBAL void transpose(u32* out, const u32* in, int rows, int cols) {
  __shared__ u32 tile[16][17];
  int c = CTAID_X * 16 + TID_X, r = CTAID_Y * 16 + TID_Y;
  if (r < rows && c < cols) tile[TID_Y][TID_X] = in[r * cols + c];
  SYNC();
  int oc = CTAID_Y * 16 + TID_X, orow = CTAID_X * 16 + TID_Y;
  if (orow < cols && oc < rows) out[orow * rows + oc] = tile[TID_X][TID_Y];
}
