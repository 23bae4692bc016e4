// train.cu: the f32 training step's Transformer blocks (package cuda's
// Blocks, a worldmodel.BlockEngine): the forward of worldmodel's tape
// (tape.forward's block loop) keeping its activations, and the backward
// (tape.backward's block loop, grad_layers.go, attentionHeadBackward).
// Floats, not integers: the results agree with the CPU's within rounding,
// not bit for bit (training is not part of an inference profile). Every sum
// still runs in one fixed order (block reductions by a fixed tree, column
// sums in two fixed stages, no float atomics), so a launch gives the same
// bits every time on the same GPU. Regenerate train.ptx with cuda/gen.sh.
//
// Launch contract (train.go): 1-D blocks; kernels with a block reduction
// (tr_ln_*, tr_attn_*) take a power-of-two block of at most 256 threads and
// every thread reaches every barrier (no early return before one); the
// products take 256 threads per 64x64 tile. Row-major matrices; sizes in
// floats.
#include "tiles.h"

// ---- elementary functions (worldmodel/mathf.go's polynomials) ----

DEV float f_of(u32 u) { return __builtin_bit_cast(float, u); }
DEV u32 u_of(float f) { return __builtin_bit_cast(u32, f); }

// expf_: worldmodel's expf (Cody-Waite reduction, degree-7 Taylor
// polynomial, 2^k into the exponent): 0 below -86.5, +Inf above 88. The
// compiler may fuse its products into fma, which only changes rounding.
DEV float expf_(float x) {
  if (!(x >= -86.5f)) {
    if (x != x) return x;
    return 0.0f;
  }
  if (x > 88.0f) return f_of(0x7f800000u);
  const float magic = 12582912.0f;
  float t = x * 1.44269504088896341f + magic;
  float kf = t - magic;
  int k = (int)u_of(t) - (int)u_of(magic);
  float r = x - kf * 0.693145751953125f;
  r = r - kf * 1.42860682030941723e-6f;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return f_of((u32)((int)u_of(p) + (k << 23)));
}

// tanhf_: worldmodel's tanhf (odd Taylor polynomial below 0.5,
// 1 - 2/(e^{2a}+1) below 9.5, 1 beyond).
DEV float tanhf_(float x) {
  float a = f_of(u_of(x) & 0x7fffffffu);
  float y;
  if (a < 0.5f) {
    float u = a * a;
    float p = 21844.0f / 6081075;
    p = p * u - 1382.0f / 155925;
    p = p * u + 62.0f / 2835;
    p = p * u - 17.0f / 315;
    p = p * u + 2.0f / 15;
    p = p * u - 1.0f / 3;
    p = p * u;
    y = a + a * p;
  } else if (a < 9.5f) {
    float t = expf_(a + a);
    y = 1.0f - 2.0f / (t + 1.0f);
  } else if (a >= 9.5f) {
    y = 1.0f;
  } else {
    return x; // NaN
  }
  return x < 0.0f ? -y : y;
}

#define GELU_C 0.7978845608028654f
#define GELU_K 0.044715f

// gelu_: worldmodel's geluf, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
DEV float gelu_(float x) { return 0.5f * x * (1.0f + tanhf_(GELU_C * (x + GELU_K * x * x * x))); }

// gelu_grad: d gelu / dx (fgemm.GeluBackward's formula, with tanh
// recomputed instead of recovered from the output).
DEV float gelu_grad(float u) {
  float t = tanhf_(GELU_C * (u + GELU_K * u * u * u));
  return 0.5f * (1.0f + t) + 0.5f * u * (1.0f - t * t) * GELU_C * (1.0f + 3.0f * GELU_K * u * u);
}

// ---- dropout: a counter-based hash, so the backward regenerates the
// forward's mask instead of storing it ----

// drop_hash: 32 random bits for element idx of stream's mask in the step
// with seed: splitmix64's finalizer of seed ^ (stream, idx) times an odd
// constant (distinct (stream, idx) give distinct inputs).
DEV u32 drop_hash(u64 seed, u32 stream, u32 idx) {
  u64 z = seed ^ (((u64)stream << 32 | idx) * 0x9E3779B97F4A7C15ULL);
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ULL;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (u32)(z >> 32);
}

// drop_mul: v times element idx's mask: 0 when its hash is below thr (the
// drop rate times 2^32), scale (1/(1-rate)) otherwise; thr 0 is no dropout
// (v unchanged).
DEV float drop_mul(float v, u64 seed, u32 stream, u32 idx, u32 thr, float scale) {
  if (thr == 0) return v;
  return drop_hash(seed, stream, idx) >= thr ? v * scale : 0.0f;
}

// ---- matrix products ----

// gemm_tile: one 64x64 tile of C (M, N; row stride ldc) =
// op(A) (M, K) op(B) (K, N) [+ bias (N)] [+ C when acc], where op(A) is A
// (row stride lda) or, with TA, the transpose of A stored (K, M); op(B) is
// B or, with TB, the transpose of B stored (N, K). 256 threads, each 4x4
// outputs (rows ty + 16i, columns tx + 16j), k in steps of 16 through
// shared memory (padded rows: no bank conflicts when a transposed operand
// is stored). Each output's sum runs k upwards.
//
// Speed: plain FMAs, a fraction of a modern GPU's f32 peak; TF32
// mma.sync tiles (or cuBLASLt) are what would make it fast.
template <bool TA, bool TB>
DEV void gemm_tile(float* __restrict__ C, int ldc, const float* __restrict__ A, int lda,
                   const float* __restrict__ B, int ldb, const float* __restrict__ bias, int acc,
                   int M, int N, int K) {
  __shared__ float As[16][65]; // [k][m]
  __shared__ float Bs[16][65]; // [k][n]
  int t = TID, tx = t % 16, ty = t / 16;
  int m0 = BID_Y * 64, n0 = BID_X * 64;
  float c[4][4];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) c[i][j] = 0.0f;
  for (int k0 = 0; k0 < K; k0 += 16) {
    load_f32_tiles<TA, TB, 65>(&As[0][0], &Bs[0][0], A, lda, B, ldb, M, N, K, m0, n0, k0);
    SYNC();
    for (int k = 0; k < 16; k++) {
      float av[4], bv[4];
      for (int i = 0; i < 4; i++) av[i] = As[k][ty + 16 * i];
      for (int j = 0; j < 4; j++) bv[j] = Bs[k][tx + 16 * j];
      for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) c[i][j] += av[i] * bv[j];
    }
    SYNC();
  }
  for (int i = 0; i < 4; i++) {
    int r = m0 + ty + 16 * i;
    if (r >= M) continue;
    for (int j = 0; j < 4; j++) {
      int n = n0 + tx + 16 * j;
      if (n >= N) continue;
      store_f32(C, ldc, bias, acc, r, n, c[i][j]);
    }
  }
}

// tr_gemm_nn, tr_gemm_tn, tr_gemm_nt, tr_gemm_tn_split: the products on the
// FMA tiles above (tiles.h's TR_GEMM_KERNELS says what each computes).
TR_GEMM_KERNELS(, gemm_tile)

// ---- LayerNorm (fgemm.LayerNorm, layerNormBackward) ----

// tr_ln_fwd: out (rows, W) = (x - mean) rstd g + b per row, one block per
// row; mean and rstd = 1/sqrt(biased variance + eps) saved per row.
GLOBAL void tr_ln_fwd(float* out, float* mean, float* rstd, const float* __restrict__ x,
                      const float* __restrict__ g, const float* __restrict__ b, float eps, int W) {
  __shared__ float red[256];
  i64 row = BID_X;
  const float* xr = x + row * W;
  float s = 0.0f;
  for (int i = TID; i < W; i += NTID) s += xr[i];
  float mu = block_sum(s, red) / (float)W;
  float q = 0.0f;
  for (int i = TID; i < W; i += NTID) {
    float d = xr[i] - mu;
    q += d * d;
  }
  float rs = 1.0f / __builtin_sqrtf(block_sum(q, red) / (float)W + eps);
  for (int i = TID; i < W; i += NTID) out[row * W + i] = (xr[i] - mu) * rs * g[i] + b[i];
  if (TID == 0) {
    mean[row] = mu;
    rstd[row] = rs;
  }
}

// tr_ln_bwd: dx (rows, W) = rstd (dxhat - mean(dxhat) - xhat mean(dxhat
// xhat)) [+ add], dxhat = dy g, xhat = (x - mean) rstd, one block per row.
// add (rows, W) may be null; dx may be add.
GLOBAL void tr_ln_bwd(float* dx, const float* dy, const float* __restrict__ x, const float* __restrict__ mean,
                      const float* __restrict__ rstd, const float* __restrict__ g, const float* add, int W) {
  __shared__ float red[256];
  i64 row = BID_X;
  const float *xr = x + row * W, *dyr = dy + row * W;
  float mu = mean[row], rs = rstd[row];
  float s1 = 0.0f, s2 = 0.0f;
  for (int i = TID; i < W; i += NTID) {
    float d = dyr[i] * g[i];
    s1 += d;
    s2 += d * (xr[i] - mu) * rs;
  }
  float m1 = block_sum(s1, red) / (float)W;
  float m2 = block_sum(s2, red) / (float)W;
  for (int i = TID; i < W; i += NTID) {
    float h = (xr[i] - mu) * rs;
    float v = rs * (dyr[i] * g[i] - m1 - h * m2);
    if (add) v += add[row * W + i];
    dx[row * W + i] = v;
  }
}

// ---- column sums, deterministic in two stages ----

// tr_colsum_part: part[chunk][c] = sum of y's column c over the chunk's
// rows (chunk rows per chunk, top to bottom); grid (column blocks,
// chunks).
GLOBAL void tr_colsum_part(float* part, const float* __restrict__ y, int rows, int cols, int chunk) {
  int c = BID_X * NTID + TID, ch = BID_Y;
  if (c >= cols) return;
  int r0 = ch * chunk, r1 = r0 + chunk < rows ? r0 + chunk : rows;
  float s = 0.0f;
  for (int r = r0; r < r1; r++) s += y[(i64)r * cols + c];
  part[(i64)ch * cols + c] = s;
}

// tr_ln_part: the LayerNorm gain's and bias's gradients per chunk of rows:
// part[chunk][0][c] = sum dy xhat, part[chunk][1][c] = sum dy (column c of
// (rows, W)); grid (column blocks, chunks).
GLOBAL void tr_ln_part(float* part, const float* __restrict__ dy, const float* __restrict__ x,
                       const float* __restrict__ mean, const float* __restrict__ rstd, int rows, int W, int chunk) {
  int c = BID_X * NTID + TID, ch = BID_Y;
  if (c >= W) return;
  int r0 = ch * chunk, r1 = r0 + chunk < rows ? r0 + chunk : rows;
  float sg = 0.0f, sb = 0.0f;
  for (int r = r0; r < r1; r++) {
    float d = dy[(i64)r * W + c];
    sg += d * (x[(i64)r * W + c] - mean[r]) * rstd[r];
    sb += d;
  }
  part[(i64)ch * 2 * W + c] = sg;
  part[(i64)ch * 2 * W + W + c] = sb;
}

// tr_colsum_final: out[c] = the sum over chunks (in order) of
// part[chunk * stride + c].
GLOBAL void tr_colsum_final(float* out, const float* __restrict__ part, int stride, int chunks, int cols) {
  int c = BID_X * NTID + TID;
  if (c >= cols) return;
  float s = 0.0f;
  for (int k = 0; k < chunks; k++) s += part[(i64)k * stride + c];
  out[c] = s;
}

// ---- elementwise ----

// tr_resid: dst (rows, cols) = src + drop(y + b), drop with stream's mask
// (drop_mul); dst may be src.
GLOBAL void tr_resid(float* dst, const float* src, const float* __restrict__ y, const float* __restrict__ b,
                     int total, int cols, u64 seed, u32 stream, u32 thr, float scale) {
  int e = BID_X * NTID + TID;
  if (e >= total) return;
  dst[e] = src[e] + drop_mul(y[e] + b[e % cols], seed, stream, (u32)e, thr, scale);
}

// tr_mask: dst = drop(src) elementwise with stream's mask (maskTo); dst may
// be src.
GLOBAL void tr_mask(float* dst, const float* src, int total, u64 seed, u32 stream, u32 thr, float scale) {
  int e = BID_X * NTID + TID;
  if (e >= total) return;
  dst[e] = drop_mul(src[e], seed, stream, (u32)e, thr, scale);
}

// tr_bias_gelu: act (rows, cols) = gelu(pre + b).
GLOBAL void tr_bias_gelu(float* act, const float* __restrict__ pre, const float* __restrict__ b, int total,
                         int cols) {
  int e = BID_X * NTID + TID;
  if (e >= total) return;
  act[e] = gelu_(pre[e] + b[e % cols]);
}

// tr_gelu_bwd: du = dy gelu'(pre + b) (geluBackward).
GLOBAL void tr_gelu_bwd(float* du, const float* __restrict__ dy, const float* __restrict__ pre,
                        const float* __restrict__ b, int total, int cols) {
  int e = BID_X * NTID + TID;
  if (e >= total) return;
  du[e] = dy[e] * gelu_grad(pre[e] + b[e % cols]);
}

// tr_gather: dst row r = src row map[3r] (rows, W): the last block's
// residual rows (map: the attention's query maps).
GLOBAL void tr_gather(float* dst, const float* __restrict__ src, const i32* __restrict__ map, int rows, int W) {
  int e = BID_X * NTID + TID;
  if (e >= rows * W) return;
  int r = e / W, c = e % W;
  dst[e] = src[(i64)map[3 * r] * W + c];
}

// tr_scatter_add: dst row map[3r] += src row r: the last block's residual
// rows' gradient (the rows map[3r] are distinct).
GLOBAL void tr_scatter_add(float* dst, const float* __restrict__ src, const i32* __restrict__ map, int rows,
                           int W) {
  int e = BID_X * NTID + TID;
  if (e >= rows * W) return;
  int r = e / W, c = e % W;
  dst[(i64)map[3 * r] * W + c] += src[e];
}

// tr_zero: x[0:n] = 0.
GLOBAL void tr_zero(float* x, int n) {
  int e = BID_X * NTID + TID;
  if (e < n) x[e] = 0.0f;
}

// ---- attention (attentionHeadTrain, attentionHeadBackward) ----
//
// Block (output row, head h). qmap holds per output row its query's row in
// qkv (T, 3W), its first key's row and its number of keys K (the query's
// block and every earlier block of its history). P (H, R, maxT) holds the
// probabilities, row (h, r)'s first K entries; dS the same for the scores'
// gradient. Dynamic shared memory: 4 (maxT + 2 max(NTID, hd)) bytes.

// head_sum: out[d] (d < hd) = sum over k < K of w[k] val(k)[d], val(k) =
// base + k * stride (floats); partial sums of G = NTID/hd interleaved key
// groups (group g takes keys g, g+G, ...) added in group order, through
// part (G hd floats). Ends with a barrier; the caller stores out.
DEV void head_sum(float* part, const float* w, const float* __restrict__ base, i64 stride, int K, int hd) {
  int t = TID, nt = NTID;
  int G = nt / hd > 0 ? nt / hd : 1;
  for (int e = t; e < G * hd; e += nt) {
    int g = e / hd, d = e % hd;
    float s = 0.0f;
    for (int k = g; k < K; k += G) s += w[k] * base[k * stride + d];
    part[e] = s;
  }
  SYNC();
  for (int d = t; d < hd; d += nt) {
    float s = part[d];
    for (int g = 1; g < G; g++) s += part[g * hd + d];
    part[d] = s; // each d by one thread: reads of part[g*hd+d], g >= 1, are its own
  }
  SYNC();
}

// tr_attn_fwd: out (R, W) head h's columns = softmax(scale q K^T) V, and
// the probabilities into P.
GLOBAL void tr_attn_fwd(float* out, float* P, const float* __restrict__ qkv, const i32* __restrict__ qmap, int W,
                        int hd, int maxT, int R, float scale) {
  extern __shared__ float sh[];
  __shared__ float red[256];
  int row = BID_X, h = BID_Y, t = TID, nt = NTID;
  i64 W3 = 3 * (i64)W;
  const float* q = qkv + (i64)qmap[3 * row] * W3 + h * hd;
  i64 kb = qmap[3 * row + 1];
  int K = qmap[3 * row + 2];
  float* p = sh;
  float* part = sh + maxT;
  float mx = f_of(0xff800000u); // -Inf
  for (int k = t; k < K; k += nt) {
    const float* key = qkv + (kb + k) * W3 + W + h * hd;
    float s = 0.0f;
    for (int d = 0; d < hd; d++) s += q[d] * key[d];
    s *= scale;
    p[k] = s;
    if (s > mx) mx = s;
  }
  mx = block_max(mx, red);
  float z = 0.0f;
  for (int k = t; k < K; k += nt) {
    float e = expf_(p[k] - mx);
    p[k] = e;
    z += e;
  }
  float inv = 1.0f / block_sum(z, red);
  float* prow = P + ((i64)h * R + row) * maxT;
  for (int k = t; k < K; k += nt) {
    float v = p[k] * inv;
    p[k] = v;
    prow[k] = v;
  }
  SYNC();
  head_sum(part, p, qkv + kb * W3 + 2 * W + h * hd, W3, K, hd);
  for (int d = t; d < hd; d += nt) out[(i64)row * W + h * hd + d] = part[d];
}

// tr_attn_bwd_q: for output row r and head h, given dout (R, W): dP_k =
// dO . V_k, dS_k = P_k (dP_k - sum_k dP_k P_k) scale (into dS), and the
// query's gradient dQ = sum_k dS_k K_k into dqkv's q columns.
GLOBAL void tr_attn_bwd_q(float* dqkv, float* dS, const float* __restrict__ dout, const float* __restrict__ P,
                          const float* __restrict__ qkv, const i32* __restrict__ qmap, int W, int hd, int maxT, int R,
                          float scale) {
  extern __shared__ float sh[];
  __shared__ float red[256];
  int row = BID_X, h = BID_Y, t = TID, nt = NTID;
  i64 W3 = 3 * (i64)W;
  i64 qr = qmap[3 * row], kb = qmap[3 * row + 1];
  int K = qmap[3 * row + 2];
  const float* dO = dout + (i64)row * W + h * hd;
  const float* prow = P + ((i64)h * R + row) * maxT;
  float* ds = sh;
  float* part = sh + maxT;
  float dot = 0.0f;
  for (int k = t; k < K; k += nt) {
    const float* v = qkv + (kb + k) * W3 + 2 * W + h * hd;
    float s = 0.0f;
    for (int d = 0; d < hd; d++) s += dO[d] * v[d];
    ds[k] = s;
    dot += s * prow[k];
  }
  dot = block_sum(dot, red);
  float* dsrow = dS + ((i64)h * R + row) * maxT;
  for (int k = t; k < K; k += nt) {
    float v = prow[k] * (ds[k] - dot) * scale;
    ds[k] = v;
    dsrow[k] = v;
  }
  SYNC();
  head_sum(part, ds, qkv + kb * W3 + W + h * hd, W3, K, hd);
  for (int d = t; d < hd; d += nt) dqkv[qr * W3 + h * hd + d] = part[d];
}

// tr_attn_bwd_kv: for key row j (of qkv's T rows) and head h: dK_j = sum
// over the output rows r that attend to j of dS[r][j'] Q_r and dV_j = sum
// of P[r][j'] dO_r, into dqkv's k and v columns (j' is j's index among its
// history's keys). kmap holds per key row j' and the first output row and
// the number of them (consecutive output rows); qmap gives each output
// row's query row.
GLOBAL void tr_attn_bwd_kv(float* dqkv, const float* __restrict__ dS, const float* __restrict__ dout,
                           const float* __restrict__ P, const float* __restrict__ qkv, const i32* __restrict__ qmap,
                           const i32* __restrict__ kmap, int W, int hd, int maxT, int R) {
  extern __shared__ float sh[];
  i64 j = BID_X;
  int h = BID_Y, t = TID, nt = NTID;
  i64 W3 = 3 * (i64)W;
  int jj = kmap[3 * j], r0 = kmap[3 * j + 1], nr = kmap[3 * j + 2];
  float* pk = sh + 0; // (G, hd) dK partials
  int G = nt / hd > 0 ? nt / hd : 1;
  float* pv = sh + G * hd; // dV partials
  for (int e = t; e < G * hd; e += nt) {
    int g = e / hd, d = e % hd;
    float sk = 0.0f, sv = 0.0f;
    for (int i = g; i < nr; i += G) {
      int r = r0 + i;
      i64 o = ((i64)h * R + r) * maxT + jj;
      sk += dS[o] * qkv[(i64)qmap[3 * r] * W3 + h * hd + d];
      sv += P[o] * dout[(i64)r * W + h * hd + d];
    }
    pk[e] = sk;
    pv[e] = sv;
  }
  SYNC();
  for (int d = t; d < hd; d += nt) {
    float sk = pk[d], sv = pv[d];
    for (int g = 1; g < G; g++) {
      sk += pk[g * hd + d];
      sv += pv[g * hd + d];
    }
    dqkv[j * W3 + W + h * hd + d] = sk;
    dqkv[j * W3 + 2 * W + h * hd + d] = sv;
  }
}
