// int8.cu: the world model's int8 profile (worldmodel.ProfileInt8) on an
// NVIDIA GPU. Every kernel computes exactly the integers of the Go function
// it names (package worldmodel unless said otherwise); sums are integers, so
// any order gives the same value. Regenerate int8.ptx with cuda/gen.sh.
//
// Launch contract (package cuda's Int8): 1-D blocks; kernels with a block
// reduction (ln_rows, attention) take a power-of-two block of at most 256
// threads and every thread reaches every barrier (no early return before
// one).
#include "tiles.h"

// ---- the rules of int8_ops.go ----

// rshr: x >> s rounded half up.
DEV i64 rshr(i64 x, u32 s) {
  if (s == 0) return x;
  return (i64)((u64)x + (1ULL << (s - 1))) >> s;
}

DEV i64 clamp64(i64 v, i64 lim) { return v > lim ? lim : (v < -lim ? -lim : v); }

// mult.apply
DEV i64 mult_apply(i64 v, i64 M, u32 sh) { return rshr((i64)((u64)v * (u64)M), sh); }

// mult.applyWide: v * M in 128 bits, saturating at 2^64 - 1.
DEV u64 mult_wide(u64 v, i64 M, u32 sh) {
  if (v < (1ULL << 32)) return (u64)mult_apply((i64)v, M, sh);
  u64 hi = mulhi64(v, (u64)M), lo = v * (u64)M;
  if (sh == 0) return hi != 0 ? ~0ULL : lo;
  u64 lo2 = lo + (1ULL << (sh - 1));
  hi += lo2 < lo;
  if ((hi >> sh) != 0) return ~0ULL;
  return hi << (64 - sh) | lo2 >> sh;
}

// isqrt: floor(sqrt(x)); the float root only starts the search.
DEV u64 isqrt(u64 x) {
  u64 r = (u64)__builtin_sqrt((double)x);
  if (r > 0xffffffffULL) r = 0xffffffffULL;
  while (r * r > x) r--;
  while (r < 0xffffffffULL && (r + 1) * (r + 1) <= x) r++;
  return r;
}

// floorDivRound: a / b rounded half up, b > 0.
DEV i64 floor_div_round(i64 a, i64 b) {
  i64 n = 2 * a + b;
  i64 q = n / (2 * b);
  if (n % (2 * b) < 0) q--;
  return q;
}

// ---- the network (Int8CPU.forward) ----

// ln_rows: qLN.to8 (out16 = 0) or qLN.to16 (out16 = 1) of each row of x
// (rows, W); one block per row.
GLOBAL void ln_rows(void* out, int out16, const i32* __restrict__ x, const i64* __restrict__ G,
                    const i32* __restrict__ B, i64 eps, i64 lim, int W) {
  __shared__ i64 red[256];
  i64 row = BID_X;
  const i32* xr = x + row * W;
  i64 s = 0;
  for (int i = TID; i < W; i += NTID) s += xr[i];
  i64 mu = floor_div_round(block_sum(s, red), W);
  i64 ss = 0;
  for (int i = TID; i < W; i += NTID) {
    i64 d = (i64)xr[i] - mu;
    ss += d * d;
  }
  i64 sd = (i64)isqrt((u64)(floor_div_round(block_sum(ss, red), W) + eps));
  if (sd < 1) sd = 1;
  i64 inv = (1LL << 46) / sd;
  for (int i = TID; i < W; i += NTID) {
    i64 n = rshr(((i64)xr[i] - mu) * inv, 32);
    i64 y = clamp64(rshr(n * G[i], 30) + B[i], lim);
    if (out16) ((i16*)out)[row * W + i] = (i16)y;
    else ((i8*)out)[row * W + i] = (i8)y;
  }
}

// gemm_s8: acc (rows, N) = a (rows, K; row stride lda) w (K, N), int32
// sums (igemm.MulRef). 64x64 output tiles, 256 threads of 4x4 outputs,
// k in steps of 32 through shared memory, four products per dp4a.
GLOBAL void gemm_s8(i32* __restrict__ acc, const i8* __restrict__ a, int lda, const i8* __restrict__ w,
                    int rows, int K, int N) {
  __shared__ u32 As[64 * 8]; // [row][k/4]
  __shared__ u32 Bs[64 * 8]; // [col][k/4]
  int t = TID, tx = t % 16, ty = t / 16;
  int r0 = BID_Y * 64, n0 = BID_X * 64;
  i32 c[4][4];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) c[i][j] = 0;
  u8* as = (u8*)As;
  u8* bs = (u8*)Bs;
  for (int k0 = 0; k0 < K; k0 += 32) {
    load_s8_tiles<256>(as, bs, a, lda, w, rows, K, N, r0, n0, k0);
    SYNC();
    for (int q = 0; q < 8; q++) {
      i32 av[4], bv[4];
      for (int i = 0; i < 4; i++) av[i] = (i32)As[(ty * 4 + i) * 8 + q];
      for (int j = 0; j < 4; j++) bv[j] = (i32)Bs[(tx * 4 + j) * 8 + q];
      for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) c[i][j] = dp4a(av[i], bv[j], c[i][j]);
    }
    SYNC();
  }
  for (int i = 0; i < 4; i++) {
    int r = r0 + ty * 4 + i;
    if (r >= rows) continue;
    for (int j = 0; j < 4; j++) {
      int n = n0 + tx * 4 + j;
      if (n < N) acc[(i64)r * N + n] = c[i][j];
    }
  }
}

// requant8: out = clamp(Mult[n](acc + Bias[n]), +-127) (requant8).
GLOBAL void requant8(i8* out, const i32* __restrict__ acc, const i32* __restrict__ bias,
                     const i64* __restrict__ M, const i32* __restrict__ sh, int total, int N) {
  int i = BID_X * NTID + TID;
  if (i >= total) return;
  int n = i % N;
  out[i] = (i8)clamp64(mult_apply((i64)acc[i] + bias[n], M[n], (u32)sh[n]), 127);
}

// add_resid: x = clamp(x + Mult[n](acc + Bias[n]), +-lim) (addResid).
GLOBAL void add_resid(i32* x, const i32* __restrict__ acc, const i32* __restrict__ bias,
                      const i64* __restrict__ M, const i32* __restrict__ sh, int total, int N, i64 lim) {
  int i = BID_X * NTID + TID;
  if (i >= total) return;
  int n = i % N;
  x[i] = (i32)clamp64((i64)x[i] + mult_apply((i64)acc[i] + bias[n], M[n], (u32)sh[n]), lim);
}

// gelu8: out = GELU[clamp(Mult[n](acc + Bias[n]), +-half) + half] (geluRows).
GLOBAL void gelu8(i8* out, const i32* __restrict__ acc, const i32* __restrict__ bias,
                  const i64* __restrict__ M, const i32* __restrict__ sh, const i8* __restrict__ table,
                  int half, int total, int N) {
  int i = BID_X * NTID + TID;
  if (i >= total) return;
  int n = i % N;
  i64 u = clamp64(mult_apply((i64)acc[i] + bias[n], M[n], (u32)sh[n]), half);
  out[i] = table[u + half];
}

// gather_rows: dst row r = src row idx[r * stride] (rows of W int32).
GLOBAL void gather_rows(i32* dst, const i32* __restrict__ src, const i32* __restrict__ idx, int stride, int rows, int W) {
  int i = BID_X * NTID + TID;
  if (i >= rows * W) return;
  int r = i / W, d = i % W;
  dst[i] = src[(i64)idx[(i64)r * stride] * W + d];
}

// attention: Int8CPU.attentionHead for one query row and head (block
// (row, head)): scores against the row's keys (int32 dot products),
// softmaxP into Q14, the value sums and PV's requantisation. qmap holds,
// per output row, the query's row in qkv, its first key's row and its
// number of keys. Dynamic shared memory: 4 bytes per key.
GLOBAL void attention(i8* out, const i8* __restrict__ qkv, const i32* __restrict__ qmap, int W, int hd,
                      u32 softM, u32 softSh, i64 pvM, u32 pvSh, const i32* __restrict__ expt) {
  extern __shared__ u32 sc[];
  __shared__ i64 red[256];
  i64 r = BID_X;
  int h = BID_Y, t = TID, nt = NTID;
  i64 W3 = 3 * (i64)W;
  const i8* q = qkv + (i64)qmap[3 * r] * W3 + h * hd;
  i64 kb = qmap[3 * r + 1];
  int K = qmap[3 * r + 2];
  i64 mx = -(1LL << 62);
  for (int k = t; k < K; k += nt) {
    const i8* key = qkv + (kb + k) * W3 + W + h * hd;
    i32 s = 0;
    for (int d = 0; d < hd; d++) s += (i32)q[d] * (i32)key[d];
    sc[k] = (u32)s;
    if (s > mx) mx = s;
  }
  i32 m = (i32)block_max(mx, red);
  u32 rnd = softSh > 0 ? 1u << (softSh - 1) : 0;
  i64 z = 0;
  for (int k = t; k < K; k += nt) {
    u32 idx = ((u32)(m - (i32)sc[k]) * softM + rnd) >> softSh;
    if (idx > 4096) idx = 4096;
    u32 e = (u32)expt[idx];
    sc[k] = e;
    z += e;
  }
  u32 Z = (u32)block_sum(z, red);
  u32 b = 31 - clz32(Z);
  u32 inv = (u32)((1ULL << (b + 15)) / Z), r2 = 1u << (b - 4);
  for (int k = t; k < K; k += nt) {
    u32 p = ((sc[k] >> 4) * inv + r2) >> (b - 3);
    sc[k] = p < 16383 ? p : 16383;
  }
  SYNC();
  for (int d = t; d < hd; d += nt) {
    const i8* v = qkv + kb * W3 + 2 * W + h * hd + d;
    i32 s = 0;
    for (int k = 0; k < K; k++) s += (i32)sc[k] * (i32)v[k * W3];
    out[r * W + h * hd + d] = (i8)clamp64(mult_apply(s, pvM, pvSh), 127);
  }
}

// ---- the head (Int8CPU.heads, gateTable, tableOf) ----

// mode_of: entropy.Mode (the first largest).
DEV int mode_of(const u32* f, int C) {
  int best = 0;
  for (int c = 1; c < C; c++)
    if (f[c] > f[best]) best = c;
  return best;
}

// fix_total: entropy.FixTotal.
DEV void fix_total(u32* f, u64 got, u64 total, int C) {
  if (got == total) return;
  int m = mode_of(f, C);
  if (got < total) {
    f[m] += (u32)(total - got);
    return;
  }
  u64 excess = got - total;
  if ((u64)f[m] - 1 >= excess) {
    f[m] -= (u32)excess;
    return;
  }
  while (excess > 0) {
    int k = mode_of(f, C);
    u64 take = (u64)f[k] - 1;
    if (take > excess) take = excess;
    f[k] -= (u32)take;
    excess -= take;
  }
}

// table_of: tableOf.
DEV int table_of(u32* f, const u64* w, u64 S2, u32 prec, int C) {
  u64 R = (1ULL << 61) / S2;
  u32 s = 61 - prec;
  u64 half = 1ULL << (s - 1), got = 0;
  int mode = 0;
  for (int c = 0; c < C; c++) {
    u32 fc = (u32)((w[c] * R + half) >> s);
    if (fc == 0) fc = 1;
    f[c] = fc;
    got += fc;
    if (fc > f[mode]) mode = c;
  }
  u64 total = 1ULL << prec;
  fix_total(f, got, total, C);
  return got <= total ? mode : mode_of(f, C);
}

// log2q24: entropy's log2Q24 with its table t.
DEV u32 log2q24(u32 x, const u32* t) {
  if (x == 0) return 0;
  u32 k = 31 - clz32(x);
  u32 m = x << (31 - k);
  u32 idx = (m >> 21) & 1023;
  u64 frac = m & ((1u << 21) - 1);
  u32 a = t[idx], b = t[idx + 1];
  return (k << 24) + a + (u32)(((u64)(b - a) * frac + (1ULL << 20)) >> 21);
}

// entropy_q16: entropy.EntropyQ16.
DEV u32 entropy_q16(const u32* f, int C, const u32* t) {
  u64 total = 0;
  for (int c = 0; c < C; c++) total += f[c];
  if (total == 0) return 0;
  u32 lt = log2q24((u32)total, t);
  u64 num = 0;
  for (int c = 0; c < C; c++)
    if (f[c] != 0) num += (u64)f[c] * (u64)(lt - log2q24(f[c], t));
  u64 h = (total & (total - 1)) == 0 ? num >> ctz64(total) : num / total;
  return (u32)((h + 128) >> 8);
}

// heads: one thread per (history b, coordinate j): the logits, the
// exponential weights, the copy gate, the frequency table (gateTable), its
// mode and its entropy. hf is (B*S, W) int16; prev (B, J) the histories'
// last codes; lbuf and wbuf (B*J*C) scratch.
GLOBAL void heads(u32* freq, u8* modes, u32* ent, i64* lbuf, u64* wbuf, const i16* __restrict__ hf,
                  const u8* __restrict__ prev, const i16* __restrict__ emb, const i64* __restrict__ bias,
                  const i64* __restrict__ expM, const i32* __restrict__ expSh, const i16* __restrict__ copyw,
                  const i64* __restrict__ copyb, const i64* __restrict__ gateM, const i32* __restrict__ gateSh,
                  const i32* __restrict__ expt, const i64* __restrict__ sigt, const u32* __restrict__ log2t,
                  int B, int J, int S, int G, int C, int E, int W, u32 prec) {
  i64 t = (i64)BID_X * NTID + TID;
  if (t >= (i64)B * J) return;
  i64 b = t / J;
  int j = (int)(t % J), sl = j / G, g = j % G;
  const i16* piece = hf + (b * S + sl) * W + g * E;
  i64* l = lbuf + t * C;
  u64* w = wbuf + t * C;
  u32* f = freq + t * C;
  i64 mx = (i64)(1ULL << 63);
  // The sums wrap as Go's int64 do (a bundle's Bias is not bounded): in
  // u64, where C defines wrapping.
  for (int c = 0; c < C; c++) {
    const i16* e = emb + ((i64)j * C + c) * E;
    u64 v = (u64)bias[(i64)j * C + c];
    for (int d = 0; d < E; d++) v += (u64)(i64)((i32)piece[d] * (i32)e[d]);
    l[c] = (i64)v;
    if ((i64)v > mx) mx = (i64)v;
  }
  u64 Z = 0;
  for (int c = 0; c < C; c++) {
    u64 d = (u64)mx - (u64)l[c];
    u64 idx = d < (1ULL << 32) ? (u64)mult_apply((i64)d, expM[j], (u32)expSh[j]) : mult_wide(d, expM[j], (u32)expSh[j]);
    u64 e = idx < 4096 ? (u64)expt[idx] : 0;
    w[c] = e;
    Z += e;
  }
  u64 gu = (u64)copyb[j];
  for (int d = 0; d < E; d++) gu += (u64)(i64)((i32)piece[d] * (i32)copyw[(i64)j * E + d]);
  i64 gv = (i64)gu;
  u64 gw = mult_wide(gv < 0 ? 0ULL - gu : gu, gateM[j], (u32)gateSh[j]);
  i64 gi = (i64)(gw < 1024 ? gw : 1024);
  if (gv < 0) gi = -gi;
  u64 a = (u64)sigt[gi + 1024];
  // gateTable
  u32 sh = (u32)(64 - clz64(Z) + 16 - 32);
  u64 nb = 65536 - a, S2 = 0;
  int pc = prev[t];
  for (int c = 0; c < C; c++) {
    u64 v = w[c] * nb;
    if (c == pc) v += a * Z;
    v >>= sh;
    w[c] = v;
    S2 += v;
  }
  modes[t] = (u8)table_of(f, w, S2, prec, C);
  ent[t] = entropy_q16(f, C, log2t);
}
