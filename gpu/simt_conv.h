/* The register-tiled SIMT engine of gpu_fp32_fast and gpu_kahan_fast: an implicit GEMM with M = O,
 * N = output times, reduction over (c, k), on the FP32 FMA units.
 *
 * Block: WM x WN warps computing BM = 4*WM*TM output channels x BN = 8*WN*TN times of one batch row n.
 * Warp w owns channels [(w%WM)*4*TM, +4*TM) and times [(w/WM)*8*TN, +8*TN) of the block; lane l owns the
 * TM channels (w%WM)*4*TM + (l%4) + 4*j, j < TM (so the four channel groups of a warp read adjacent
 * 16-byte weight vectors), and the TN consecutive times (w/WM)*8*TN + (l/4)*TN + i (so its K taps reuse
 * one register window of TN+PADA inputs).
 * The named configurations (simt_cfg_*; the tuning history behind them is in notes/fast-kernels.md):
 *   simt_cfg_general     8 warps (4 x 2), staging geometry from the shape, taps from shared memory:
 *                        any K and D (both kernels' general instance);
 *   simt_cfg_fixed_8w    8 warps (4 x 2), staging geometry fixed at compile time (gpu_kahan_fast);
 *   simt_cfg_lean_4w     4 warps (2 x 2), three blocks per SM, the lean slab loop: each thread's copies
 *                        fixed per tile (simt_pre), and in tiles wholly inside the tensors issued without
 *                        predicates from running pointers (gpu_fp32_fast: 2.905 ms at the headline shape).
 * Pipeline: slabs of CS input channels (their x windows with the causal halo, gpu/conv_stage.h, and the
 * block's weights, laid out [c][o][KP] with KP = K padded to 4 for K = 3) go through STAGES shared-memory
 * buffers by cp.async (16-byte copies where aligned, 4-byte copies otherwise), one barrier per slab.
 *
 * Order per output (the reason this file exists): channel c ascending, tap k ascending, every operation an
 * explicit c1d_fma/c1d_add/c1d_sub, zero padding staged as +0 and multiplied:
 *   naive (KAHAN = false): acc = b[o] or +0; for c: for k: acc = fma(x, w[o,c,k], acc)
 *     = cpu/naive.c bit for bit;
 *   blocked Kahan (KAHAN = true): sum = b[o] or +0, comp = +0; for c: { p = -comp; for k:
 *     p = fma(x, w[o,c,k], p); t = sum + p; comp = (t - sum) - p; sum = t }  = cpu/kahan_blocked.c.
 * The register window needs K and D at compile time (KT, DT > 0); KT = 0 is the general instance, which
 * reads each tap's inputs from shared memory (same order, same bits, slower).
 * Limits: the staged slab (STAGES buffers of at least one channel) must fit in the 227 KiB of shared
 * memory a block may opt into: simt_supported() says so otherwise. Index arithmetic in int64. */
#ifndef C1D_GPU_SIMT_CONV_H
#define C1D_GPU_SIMT_CONV_H

#include <stdio.h>

#include "gpu/conv_stage.h"
#include "gpu/launch.h"
#include "numerics/arith.h"

#define SIMT_THREADS 256
#define SIMT_STAGES 3
#define SIMT_MAX_CS_LOG2 3           /* at most 8 channels per slab */
#define SIMT_SMEM_TARGET (100 * 1024) /* fits two blocks per SM when possible */

typedef struct simt_geom {
  int cs_log2; /* channels per slab = 1 << cs_log2 */
  int xw;      /* x row stride in shared memory (floats) */
  int pada;    /* causal pad rounded up to 4 */
  int kp;      /* weight stride per (c, o) in shared memory */
  int xvec;    /* x rows 16-byte aligned: 16-byte copies */
  int wvec;    /* K % 4 == 0 and w 16-byte aligned: 16-byte weight copies */
  int yvec;    /* L % 4 == 0 and y 16-byte aligned: 16-byte stores */
} simt_geom;

static inline __host__ __device__ int simt_kp(int64_t K) { return K == 3 ? 4 : (int)K; }

/* Floats of shared memory per pipeline stage, for blocks of bm channels x bn times. */
static inline int64_t simt_stage_floats(const c1d_shape *s, int bm, int bn, int cs_log2) {
  const int64_t cs = INT64_C(1) << cs_log2;
  return cs * c1d_window_stride(s, bn) + cs * bm * simt_kp(s->K);
}

static inline int64_t simt_smem_bytes(const c1d_shape *s, int bm, int bn, int cs_log2) {
  return SIMT_STAGES * simt_stage_floats(s, bm, bn, cs_log2) * (int64_t)sizeof(float);
}

/* NULL, or why the engine with bm x bn blocks cannot run the shape. */
static inline const char *simt_supported(const c1d_shape *s, int bm, int bn) {
  if (c1d_pad(s) > (INT64_C(1) << 20) || simt_smem_bytes(s, bm, bn, 0) > C1D_SMEM_OPTIN_MAX)
    return "one input channel's window of (K-1)*D inputs beyond a tile and its weights, three stages "
           "deep, exceed the 227 KiB of shared memory a block may use";
  return NULL;
}

static inline simt_geom simt_make_geom(const c1d_shape *s, int bm, int bn, const float *x,
                                       const float *w, const float *y) {
  simt_geom g;
  g.cs_log2 = SIMT_MAX_CS_LOG2;
  while (g.cs_log2 > 0 && simt_smem_bytes(s, bm, bn, g.cs_log2) > SIMT_SMEM_TARGET) g.cs_log2--;
  g.xw = (int)c1d_window_stride(s, bn);
  g.pada = (int)c1d_pad_aligned(s);
  g.kp = simt_kp(s->K);
  g.xvec = c1d_x_rows_aligned(s, x);
  g.wvec = s->K % 4 == 0 && ((uintptr_t)w & 15) == 0;
  g.yvec = s->L % 4 == 0 && ((uintptr_t)y & 15) == 0;
  return g;
}

// --- device parts ---------------------------------------------------------------------------------

/* Issues the copies of the block's weights w[o0.., c0.., :] into ws, laid out [c][o][kp]; zeros for
 * o >= O, c >= C and padded taps. */
template <int BM, int THREADS = SIMT_THREADS>
static __device__ __forceinline__ void simt_stage_w(float *ws, const float *__restrict__ w,
                                                    const c1d_shape &s, const simt_geom &g, int64_t o0,
                                                    int64_t c0) {
  const int cs = 1 << g.cs_log2, K = (int)s.K, kp = g.kp;
  if (g.wvec) { /* kp == K, a multiple of 4: chunks of 4 taps, channel-fastest (contiguous in w) */
    const int q4 = kp >> 2;
    for (int i = threadIdx.x; i < BM * cs * q4; i += THREADS) {
      const int q = i % q4, rest = i / q4, c = rest & (cs - 1), ol = rest >> g.cs_log2;
      const bool ok = o0 + ol < s.O && c0 + c < s.C;
      const float *src = ok ? w + c1d_w_index(&s, o0 + ol, c0 + c, 4 * q) : w;
      c1d_cp_async16(ws + (c * BM + ol) * kp + 4 * q, src, ok);
    }
  } else {
    for (int i = threadIdx.x; i < BM * cs * kp; i += THREADS) {
      const int k = i % kp, rest = i / kp, c = rest & (cs - 1), ol = rest >> g.cs_log2;
      const bool ok = o0 + ol < s.O && c0 + c < s.C && k < K;
      const float *src = ok ? w + c1d_w_index(&s, o0 + ol, c0 + c, k) : w;
      c1d_cp_async4(ws + (c * BM + ol) * kp + k, src, ok);
    }
  }
}

/* Loads KP consecutive floats of shared memory (KP = 1, 2 or a multiple of 4) as wide as possible. */
template <int KP>
static __device__ __forceinline__ void simt_load_taps(const float *p, float (&v)[KP]) {
  if constexpr (KP % 4 == 0) {
#pragma unroll
    for (int q = 0; q < KP / 4; q++) {
      const float4 f = *reinterpret_cast<const float4 *>(p + 4 * q);
      v[4 * q] = f.x, v[4 * q + 1] = f.y, v[4 * q + 2] = f.z, v[4 * q + 3] = f.w;
    }
  } else if constexpr (KP == 2) {
    const float2 f = *reinterpret_cast<const float2 *>(p);
    v[0] = f.x, v[1] = f.y;
  } else {
#pragma unroll
    for (int q = 0; q < KP; q++) v[q] = p[q];
  }
}

/* Window geometry of the compile-time instances: PADT = (K-1)*D, PADA rounded up to 4, NXW inputs per
 * thread window, X0 the window element of tap 0 at the thread's first time, XW the row stride. */
template <int KT, int DT, int TN, int BN = 16 * TN>
struct simt_fixed {
  static constexpr int KP = KT == 3 ? 4 : KT;
  static constexpr int PADT = (KT - 1) * DT, PADA = (PADT + 3) & ~3, NXW = TN + PADA;
  static constexpr int X0 = PADA - PADT;
  static constexpr int WIN = BN + PADA;
  static constexpr int XW = WIN + ((8 - WIN % 32) + 32) % 32; /* = c1d_window_stride */
};

template <int NXW>
static __device__ __forceinline__ void simt_load_window(const float *xrow, float (&xv)[NXW]) {
#pragma unroll
  for (int q = 0; q < NXW / 4; q++) {
    const float4 f = *reinterpret_cast<const float4 *>(xrow + 4 * q);
    xv[4 * q] = f.x, xv[4 * q + 1] = f.y, xv[4 * q + 2] = f.z, xv[4 * q + 3] = f.w;
  }
}

/* One channel, K and D known, its window already in registers: TM x TN x K fmas (naive) or TM x TN
 * fma chains and Kahan steps (blocked Kahan). */
template <int TM, int TN, int KT, int DT, bool KAHAN, int CG = 4>
static __device__ __forceinline__ void simt_channel_compute(
    const float (&xv)[simt_fixed<KT, DT, TN>::NXW], const float *wrow, float (&acc)[TM][TN],
    float (&comp)[TM][TN]) {
  using F = simt_fixed<KT, DT, TN>;
  if constexpr (!KAHAN) {
#pragma unroll
    for (int j = 0; j < TM; j++) {
      float wv[F::KP];
      simt_load_taps<F::KP>(wrow + CG * j * F::KP, wv);
#pragma unroll
      for (int k = 0; k < KT; k++)
#pragma unroll
        for (int i = 0; i < TN; i++)
          acc[j][i] = c1d_fma(xv[F::X0 + i + k * DT], wv[k], acc[j][i]);
    }
  } else {
#pragma unroll
    for (int j = 0; j < TM; j++) {
      float wv[F::KP];
      simt_load_taps<F::KP>(wrow + CG * j * F::KP, wv);
      float p[TN];
#pragma unroll
      for (int i = 0; i < TN; i++) p[i] = -comp[j][i];
#pragma unroll
      for (int k = 0; k < KT; k++)
#pragma unroll
        for (int i = 0; i < TN; i++) p[i] = c1d_fma(xv[F::X0 + i + k * DT], wv[k], p[i]);
#pragma unroll
      for (int i = 0; i < TN; i++) {
        const float t = c1d_add(acc[j][i], p[i]);
        comp[j][i] = c1d_sub(c1d_sub(t, acc[j][i]), p[i]);
        acc[j][i] = t;
      }
    }
  }
}

template <int TM, int TN, int KT, int DT, bool KAHAN, int CG = 4>
static __device__ __forceinline__ void simt_channel_fixed(const float *xrow, const float *wrow,
                                                          float (&acc)[TM][TN], float (&comp)[TM][TN]) {
  float xv[simt_fixed<KT, DT, TN>::NXW];
  simt_load_window(xrow, xv);
  simt_channel_compute<TM, TN, KT, DT, KAHAN, CG>(xv, wrow, acc, comp);
}

/* Staging with the geometry known at compile time (simt_cfg_fixed_8w, simt_cfg_lean_4w): CS = 8 channels, the window and
 * the weight layout fixed, so the copy loops divide by constants. vec flags as in simt_geom. */
template <int BM, int TN, int KT, int DT, int BN = 16 * TN, int THREADS = SIMT_THREADS>
static __device__ __forceinline__ void simt_stage_fixed(float *st, const float *__restrict__ x,
                                                        const float *__restrict__ w, const c1d_shape &s,
                                                        bool xvec, bool wvec, int64_t n, int64_t c0,
                                                        int64_t t0, int64_t o0) {
  using F = simt_fixed<KT, DT, TN, BN>;
  constexpr int CS = 1 << SIMT_MAX_CS_LOG2;
  if (xvec) {
    constexpr int Q4 = F::WIN / 4;
#pragma unroll 1
    for (int i = threadIdx.x; i < CS * Q4; i += THREADS) {
      const int c = i / Q4, q = i - c * Q4;
      const int64_t t = t0 - F::PADA + 4 * q;
      const bool ok = c0 + c < s.C && t >= 0 && t < s.L;
      c1d_cp_async16(st + c * F::XW + 4 * q, ok ? x + c1d_x_index(&s, n, c0 + c, t) : x, ok);
    }
  } else {
#pragma unroll 1
    for (int i = threadIdx.x; i < CS * F::WIN; i += THREADS) {
      const int c = i / F::WIN, j = i - c * F::WIN;
      const int64_t t = t0 - F::PADA + j;
      const bool ok = c0 + c < s.C && t >= 0 && t < s.L;
      c1d_cp_async4(st + c * F::XW + j, ok ? x + c1d_x_index(&s, n, c0 + c, t) : x, ok);
    }
  }
  float *ws = st + CS * F::XW;
  if constexpr (F::KP % 4 == 0 && F::KP == KT) {
    if (wvec) {
      constexpr int W4 = F::KP / 4;
  #pragma unroll 1
    for (int i = threadIdx.x; i < BM * CS * W4; i += THREADS) {
        const int q = i % W4, c = (i / W4) % CS, ol = i / (W4 * CS);
        const bool ok = o0 + ol < s.O && c0 + c < s.C;
        c1d_cp_async16(ws + (c * BM + ol) * F::KP + 4 * q,
                       ok ? w + c1d_w_index(&s, o0 + ol, c0 + c, 4 * q) : w, ok);
      }
      return;
    }
  }
#pragma unroll 1
  for (int i = threadIdx.x; i < BM * CS * F::KP; i += THREADS) {
    const int k = i % F::KP, c = (i / F::KP) % CS, ol = i / (F::KP * CS);
    const bool ok = o0 + ol < s.O && c0 + c < s.C && k < KT;
    c1d_cp_async4(ws + (c * BM + ol) * F::KP + k, ok ? w + c1d_w_index(&s, o0 + ol, c0 + c, k) : w, ok);
  }
}

/* Precomputed staging (simt_cfg_lean_4w): the copies of a thread are the same for every slab of a tile
 * but for the slab's channel offset. x (16-byte copies only): warp v stages rows v*RPW .. v*RPW+RPW-1 of
 * the slab, lane l its chunks l, l+32, ...; w (16-byte copies only, K = KP = 4*k): thread t stages
 * channel t % CS of the slab, outputs t / CS + r * THREADS / CS. Same bytes, same places as
 * simt_stage_fixed; other cases (4-byte copies) fall back to it. */
template <int BM, int TN, int KT, int DT, int BN, int THREADS>
struct simt_pre {
  using F = simt_fixed<KT, DT, TN, BN>;
  static constexpr int CS = 1 << SIMT_MAX_CS_LOG2, NW = THREADS / 32, RPW = NW <= CS ? CS / NW : 1, Q4 = F::WIN / 4;
  static constexpr int QM = (Q4 + 31) / 32;         /* x chunks per lane per row (the last partial) */
  static constexpr int W4 = F::KP >= 4 ? F::KP / 4 : 1, RW = BM * CS * W4 / THREADS; /* w chunks per thread */
  int64_t xoff; /* element offset in x of (n, row RPW*warp, t0 - PADA + 4*lane) at slab 0 */
  int64_t woff; /* element offset in w of (o0 + t/(CS*W4), (t/W4) % CS, 4*(t%W4)) at slab 0 */
  unsigned tok;  /* bit m: chunk m of the lane lies in [0, L) */
  unsigned ook;  /* bit r: output channel of w chunk r < O */

  __device__ __forceinline__ void init(const c1d_shape &s, int64_t n, int64_t t0, int64_t o0) {
    static_assert(CS % NW == 0 && (BM * CS * W4) % THREADS == 0 && THREADS % (CS * W4) == 0, "simt_pre");
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    xoff = c1d_x_index(&s, n, (int64_t)warp * RPW, t0 - F::PADA + 4 * lane);
    tok = 0;
#pragma unroll
    for (int m = 0; m < QM; m++) {
      const int64_t t = t0 - F::PADA + 4 * (lane + 32 * m);
      if (lane + 32 * m < Q4 && t >= 0 && t < s.L) tok |= 1u << m;
    }
    const int tid = threadIdx.x, q = tid % W4, c = (tid / W4) % CS, o = tid / (W4 * CS);
    woff = c1d_w_index(&s, o0 + o, c, 4 * q);
    ook = 0;
#pragma unroll
    for (int r = 0; r < RW; r++)
      if (o0 + o + r * (THREADS / (CS * W4)) < s.O) ook |= 1u << r;
  }

  __device__ __forceinline__ void stage(float *st, const float *__restrict__ x, const float *__restrict__ w,
                                        const c1d_shape &s, bool xvec, bool wvec, int64_t n, int64_t c0,
                                        int64_t t0, int64_t o0) const {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (xvec && wvec) {
      const float *xs = x + (xoff + c0 * s.L);
#pragma unroll
      for (int rr = 0; rr < RPW; rr++) {
        const bool cok = c0 + warp * RPW + rr < s.C;
#pragma unroll
        for (int m = 0; m < QM; m++) {
          if (m == QM - 1 && Q4 % 32 != 0 && lane + 32 * m >= Q4) continue;
          const bool ok = cok && ((tok >> m) & 1u);
          c1d_cp_async16(st + (warp * RPW + rr) * F::XW + 4 * (lane + 32 * m),
                         ok ? xs + rr * s.L + 128 * m : x, ok);
        }
      }
      float *ws = st + CS * F::XW;
      const int tid = threadIdx.x, q = tid % W4, c = (tid / W4) % CS, o = tid / (W4 * CS);
      const bool cok = c0 + c < s.C;
      const float *wsrc = w + (woff + c0 * s.K);
      const int64_t rstride = (int64_t)(THREADS / (CS * W4)) * s.C * s.K;
#pragma unroll
      for (int r = 0; r < RW; r++) {
        const bool ok = cok && ((ook >> r) & 1u);
        c1d_cp_async16(ws + (c * BM + o + r * (THREADS / (CS * W4))) * F::KP + 4 * q, ok ? wsrc + r * rstride : w, ok);
      }
    } else {
      simt_stage_fixed<BM, TN, KT, DT, BN, THREADS>(st, x, w, s, xvec, wvec, n, c0, t0, o0);
    }
  }
};

/* One channel, K and D from the shape: each tap's inputs read from shared memory. */
template <int TM, int TN, bool KAHAN>
static __device__ __forceinline__ void simt_channel_general(const float *xrow, const float *wrow,
                                                            int K, int D, int kp, float (&acc)[TM][TN],
                                                            float (&comp)[TM][TN]) {
  float p[TM][TN];
  if constexpr (KAHAN) {
#pragma unroll
    for (int j = 0; j < TM; j++)
#pragma unroll
      for (int i = 0; i < TN; i++) p[j][i] = -comp[j][i];
  }
  for (int k = 0; k < K; k++) {
    float wv[TM], xv[TN];
#pragma unroll
    for (int j = 0; j < TM; j++) wv[j] = wrow[4 * j * kp + k];
#pragma unroll
    for (int i = 0; i < TN; i++) xv[i] = xrow[i + k * D];
#pragma unroll
    for (int j = 0; j < TM; j++)
#pragma unroll
      for (int i = 0; i < TN; i++) {
        if constexpr (KAHAN)
          p[j][i] = c1d_fma(xv[i], wv[j], p[j][i]);
        else
          acc[j][i] = c1d_fma(xv[i], wv[j], acc[j][i]);
      }
  }
  if constexpr (KAHAN) {
#pragma unroll
    for (int j = 0; j < TM; j++)
#pragma unroll
      for (int i = 0; i < TN; i++) {
        const float t = c1d_add(acc[j][i], p[j][i]);
        comp[j][i] = c1d_sub(c1d_sub(t, acc[j][i]), p[j][i]);
        acc[j][i] = t;
      }
  }
}

// --- kernel ---------------------------------------------------------------------------------------

/* The named configurations (see the file comment). CG: channel groups per warp (lanes l%CG); WM x WN
 * warps; MINB: blocks per SM for __launch_bounds__ (0: by the tile, two for tiles of up to 64 outputs);
 * FIXED: compile-time staging geometry; LEAN: simt_body_lean. */
struct simt_cfg_general {
  static constexpr int CG = 4, WM = 4, WN = 2, MINB = 0;
  static constexpr bool FIXED = false, LEAN = false;
  static constexpr int THREADS = 32 * WM * WN;
};
struct simt_cfg_fixed_8w {
  static constexpr int CG = 4, WM = 4, WN = 2, MINB = 0;
  static constexpr bool FIXED = true, LEAN = false;
  static constexpr int THREADS = 32 * WM * WN;
};
struct simt_cfg_lean_4w {
  static constexpr int CG = 4, WM = 2, WN = 2, MINB = 3;
  static constexpr bool FIXED = true, LEAN = true;
  static constexpr int THREADS = 32 * WM * WN;
};

/* Block tile of an instance: BM channels x BN times. */
template <int TM, class CFG>
struct simt_bm {
  static constexpr int value = CFG::WM * CFG::CG * TM;
};
template <int TN, class CFG>
struct simt_bn {
  static constexpr int value = CFG::WN * (32 / CFG::CG) * TN;
};

/* A thread's finished TM x TN outputs to y: rows o_first + CG*j, times t_first.. (those inside the
 * tensor); float4 stores where g.yvec (t and L multiples of 4: each float4 lies wholly inside or outside). */
template <int TM, int TN, int CG>
static __device__ __forceinline__ void simt_store_tile(const c1d_shape &s, const simt_geom &g,
                                                       float *__restrict__ y, int64_t n, int64_t o_first,
                                                       int64_t t, const float (&acc)[TM][TN]) {
#pragma unroll
  for (int j = 0; j < TM; j++) {
    const int64_t o = o_first + CG * j;
    if (o >= s.O) continue;
    float *yr = y + c1d_y_index(&s, n, o, 0);
    if (g.yvec) {
#pragma unroll
      for (int q = 0; q < TN / 4; q++)
        if (t + 4 * q < s.L)
          *reinterpret_cast<float4 *>(yr + t + 4 * q) =
              make_float4(acc[j][4 * q], acc[j][4 * q + 1], acc[j][4 * q + 2], acc[j][4 * q + 3]);
    } else {
#pragma unroll
      for (int i = 0; i < TN; i++)
        if (t + i < s.L) yr[t + i] = acc[j][i];
    }
  }
}

/* The lean slab loop of simt_cfg_lean_4w (naive order, K and D fixed, 8-channel slabs): int stage
 * indices, compile-time strides, running 64-bit source pointers, and for tiles wholly inside the tensors
 * copies without predicates. Same copies into the same places as simt_stage_fixed, same operations per
 * output as every other configuration. */
template <int TM, int TN, int KT, int DT, class CFG>
static __device__ __forceinline__ void simt_body_lean(const c1d_shape &s, const simt_geom &g,
                                                      const float *__restrict__ x,
                                                      const float *__restrict__ w,
                                                      const float *__restrict__ b, float *__restrict__ y) {
  constexpr int BM = simt_bm<TM, CFG>::value, BN = simt_bn<TN, CFG>::value, THREADS = CFG::THREADS;
  constexpr int CG = CFG::CG, WO = CFG::WM;
  using F = simt_fixed<KT, DT, TN, BN>;
  using P = simt_pre<BM, TN, KT, DT, BN, THREADS>;
  constexpr int CS = 1 << SIMT_MAX_CS_LOG2;
  constexpr int STAGE = CS * F::XW + CS * BM * F::KP; /* floats per stage (= the host's) */
  extern __shared__ float4 simt_smem_raw[];
  float *const smem = reinterpret_cast<float *>(simt_smem_raw);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int ol = (warp % WO) * CG * TM + (lane % CG);
  const int tl = (warp / WO) * (32 / CG) * TN + (lane / CG) * TN;
  const int nslab = (int)((s.C + CS - 1) / CS);
  const bool vec = g.xvec && g.wvec && (KT == F::KP) && (F::KP % 4 == 0);
  float comp[TM][TN]; /* unused (naive order) */

  C1D_FOR_BLOCK_Z(n, s.N)
  C1D_FOR_BLOCK_Y(ob, c1d_ceil_div(s.O, BM))
  C1D_FOR_BLOCK_X(tb, c1d_ceil_div(s.L, BN)) {
    const int64_t o0 = ob * BM, t0 = tb * BN;
    float acc[TM][TN];
#pragma unroll
    for (int j = 0; j < TM; j++) {
      const int64_t o = o0 + ol + CG * j;
      const float init = (s.bias && o < s.O) ? b[o] : 0.0f;
#pragma unroll
      for (int i = 0; i < TN; i++) acc[j][i] = init;
    }
    P pre;
    pre.init(s, n, t0, o0);
    /* every copy of every slab of this tile in bounds: no predicates, running source pointers */
    const bool fast = vec && t0 - F::PADA >= 0 && t0 + BN <= s.L && o0 + BM <= s.O && s.C % CS == 0;
    const float *xq = fast ? x + pre.xoff : x, *wq = fast ? w + pre.woff : w;
    const int64_t xstep = CS * s.L, wstep = CS * s.K, rstride = (int64_t)(THREADS / (CS * P::W4)) * s.C * s.K;
    const int wc = (threadIdx.x / P::W4) % CS, wo = threadIdx.x / (P::W4 * CS), wqq = threadIdx.x % P::W4;
    auto stage = [&](int sl, int buf) {
      float *st = smem + buf * STAGE;
      if (fast) {
#pragma unroll
        for (int rr = 0; rr < P::RPW; rr++)
#pragma unroll
          for (int m = 0; m < P::QM; m++) {
            if (m == P::QM - 1 && P::Q4 % 32 != 0 && lane + 32 * m >= P::Q4) continue;
            c1d_cp_async16(st + (warp * P::RPW + rr) * F::XW + 4 * (lane + 32 * m), xq + rr * s.L + 128 * m, true);
          }
        float *ws = st + CS * F::XW;
#pragma unroll
        for (int r = 0; r < P::RW; r++)
          c1d_cp_async16(ws + (wc * BM + wo + r * (THREADS / (CS * P::W4))) * F::KP + 4 * wqq, wq + r * rstride, true);
        xq += xstep, wq += wstep;
      } else {
        pre.stage(st, x, w, s, g.xvec, vec, n, (int64_t)sl * CS, t0, o0);
      }
    };
    int wbuf = 0, rbuf = 0;
#pragma unroll
    for (int sl = 0; sl < SIMT_STAGES - 1; sl++) {
      if (sl < nslab) stage(sl, wbuf);
      c1d_cp_async_commit();
      wbuf = wbuf == SIMT_STAGES - 1 ? 0 : wbuf + 1;
    }
#pragma unroll 1
    for (int sl = 0; sl < nslab; sl++) {
      c1d_cp_async_wait<SIMT_STAGES - 2>();
      __syncthreads();
      if (sl + SIMT_STAGES - 1 < nslab) stage(sl + SIMT_STAGES - 1, wbuf);
      c1d_cp_async_commit();
      wbuf = wbuf == SIMT_STAGES - 1 ? 0 : wbuf + 1;
      const float *xs = smem + rbuf * STAGE + tl;
      const float *ws = smem + rbuf * STAGE + CS * F::XW + ol * F::KP;
      rbuf = rbuf == SIMT_STAGES - 1 ? 0 : rbuf + 1;
      const int64_t crest = s.C - (int64_t)sl * CS;
      if (crest >= CS) {
#pragma unroll 1
        for (int c = 0; c < CS; c++)
          simt_channel_fixed<TM, TN, KT, DT, false, CG>(xs + c * F::XW, ws + c * BM * F::KP, acc, comp);
      } else {
        const int ccn = (int)crest;
#pragma unroll 1
        for (int c = 0; c < ccn; c++)
          simt_channel_fixed<TM, TN, KT, DT, false, CG>(xs + c * F::XW, ws + c * BM * F::KP, acc, comp);
      }
    }
    c1d_cp_async_wait<0>();
    __syncthreads();

    simt_store_tile<TM, TN, CG>(s, g, y, n, o0 + ol, t0 + tl, acc);
  }
}

template <int TM, int TN, int KT, int DT, bool KAHAN, class CFG>
__global__ void __launch_bounds__(CFG::THREADS, CFG::MINB ? CFG::MINB : (TM * TN > 64 ? 1 : 2))
    simt_conv_kernel(const c1d_shape s, const simt_geom g, const float *__restrict__ x,
                     const float *__restrict__ w, const float *__restrict__ b,
                     float *__restrict__ y) {
  constexpr int BM = simt_bm<TM, CFG>::value, BN = simt_bn<TN, CFG>::value;
  constexpr int THREADS = CFG::THREADS;
  if constexpr (KT > 0 && !KAHAN && CFG::LEAN) {
    simt_body_lean<TM, TN, KT, DT, CFG>(s, g, x, w, b, y);
    return;
  }
  extern __shared__ float4 simt_smem_raw[];
  float *const smem = reinterpret_cast<float *>(simt_smem_raw);
  const int cs = 1 << g.cs_log2;
  const int stage_floats = cs * g.xw + cs * BM * g.kp; /* x rows first: both parts 16-byte aligned */
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  static_assert(KT > 0 || (CFG::CG == 4 && THREADS == 256), "the general instance: 8 warps");
  constexpr int CG = CFG::CG, WO = CFG::WM; /* WO warps along the channels */
  const int ol = (warp % WO) * CG * TM + (lane % CG); /* + CG*j */
  const int tl = (warp / WO) * (32 / CG) * TN + (lane / CG) * TN;
  const int K = KT > 0 ? KT : (int)s.K;
  const int D = KT > 0 ? DT : (K > 1 ? (int)s.D : 0); /* with K = 1, D is never used */
  const int pad = (K - 1) * D;
  const int64_t nslab = (s.C + cs - 1) >> g.cs_log2;

  C1D_FOR_BLOCK_Z(n, s.N)
  C1D_FOR_BLOCK_Y(ob, c1d_ceil_div(s.O, BM))
  C1D_FOR_BLOCK_X(tb, c1d_ceil_div(s.L, BN)) {
    const int64_t o0 = ob * BM, t0 = tb * BN;
    float acc[TM][TN], comp[TM][TN];
#pragma unroll
    for (int j = 0; j < TM; j++) {
      const int64_t o = o0 + ol + CG * j;
      const float init = (s.bias && o < s.O) ? b[o] : 0.0f;
#pragma unroll
      for (int i = 0; i < TN; i++) acc[j][i] = init, comp[j][i] = 0.0f;
    }

    /* Issues slab sl's copies into its buffer. */
    auto stage = [&](int64_t sl) {
      float *st = smem + (int)(sl % SIMT_STAGES) * stage_floats;
      if constexpr (CFG::FIXED) {
        simt_stage_fixed<BM, TN, KT, DT, BN, THREADS>(st, x, w, s, g.xvec, g.wvec, n, sl * cs, t0, o0);
      } else {
        c1d_stage_x_window(st, x, s, n, sl * cs, cs, t0, BN, g.xw, g.pada, g.xvec);
        simt_stage_w<BM, THREADS>(st + cs * g.xw, w, s, g, o0, sl * cs);
      }
    };
    /* prologue: STAGES-1 slabs in flight (empty groups past the end keep the count uniform) */
#pragma unroll
    for (int sl = 0; sl < SIMT_STAGES - 1; sl++) {
      if (sl < nslab) stage(sl);
      c1d_cp_async_commit();
    }

    for (int64_t sl = 0; sl < nslab; sl++) {
      c1d_cp_async_wait<SIMT_STAGES - 2>(); /* this thread's copies of slab sl have landed */
      __syncthreads();                      /* everyone's have; slab sl-1's buffer is free */
      if (sl + SIMT_STAGES - 1 < nslab) stage(sl + SIMT_STAGES - 1);
      c1d_cp_async_commit();
      const float *xs = smem + (int)(sl % SIMT_STAGES) * stage_floats;
      const float *ws = xs + cs * g.xw;
      const int64_t c0 = sl * cs;
      const int ccn = (int)(s.C - c0 < cs ? s.C - c0 : cs); /* the naive order stops at C */
      if constexpr (KT > 0) {
        constexpr int KP = KT == 3 ? 4 : KT;
        for (int c = 0; c < ccn; c++)
          simt_channel_fixed<TM, TN, KT, DT, KAHAN, CG>(xs + c * g.xw + tl, ws + (c * BM + ol) * KP, acc,
                                                        comp);
      } else {
        for (int c = 0; c < ccn; c++)
          simt_channel_general<TM, TN, KAHAN>(xs + c * g.xw + tl + g.pada - pad, ws + (c * BM + ol) * g.kp,
                                          K, D, g.kp, acc, comp);
      }
    }
    c1d_cp_async_wait<0>();
    __syncthreads(); /* the next tile's prologue overwrites the buffers */

    simt_store_tile<TM, TN, CG>(s, g, y, n, o0 + ol, t0 + tl, acc); /* epilogue */
  }
}

/* Launches the instance; sets its dynamic shared-memory limit first. Compile-time staging needs
 * 8-channel slabs and the stride the host computed. */
template <int TM, int TN, int KT, int DT, bool KAHAN, class CFG>
static c1d_status simt_launch(const c1d_shape *s, const simt_geom *g, const float *x, const float *w,
                              const float *b, float *y, cudaStream_t stream, const char *name) {
  c1d_status st = C1D_OK;
  constexpr int BM = simt_bm<TM, CFG>::value, BN = simt_bn<TN, CFG>::value;
  const size_t smem = (size_t)simt_smem_bytes(s, BM, BN, g->cs_log2);
  const dim3 grid = c1d_grid(c1d_ceil_div(s->L, BN), c1d_ceil_div(s->O, BM), s->N);
  if constexpr (CFG::FIXED) {
    if (g->cs_log2 != SIMT_MAX_CS_LOG2 || g->xw != simt_fixed<KT, DT, TN, BN>::XW ||
        g->pada != simt_fixed<KT, DT, TN, BN>::PADA)
      return c1d_fail(C1D_ERR_INTERNAL, "%s: staging geometry differs from the compiled one", name);
  }
  C1D_CUDA(cudaFuncSetAttribute(simt_conv_kernel<TM, TN, KT, DT, KAHAN, CFG>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  if constexpr (CFG::MINB > 2)
    C1D_CUDA(cudaFuncSetAttribute(simt_conv_kernel<TM, TN, KT, DT, KAHAN, CFG>,
                                  cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared));
  simt_conv_kernel<TM, TN, KT, DT, KAHAN, CFG><<<grid, CFG::THREADS, smem, stream>>>(*s, *g, x, w, b, y);
  C1D_LAUNCHED(name);
done:
  return st;
}

#endif
