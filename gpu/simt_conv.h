/* The register-tiled SIMT engine of gpu_fp32_fast and gpu_kahan_fast: an implicit GEMM with M = O,
 * N = output times, reduction over (c, k), on the FP32 FMA units.
 *
 * Block: 256 threads computing BM = 16*TM output channels x BN = 128 times of one batch row n. Warp w
 * owns channels [(w%4)*4*TM, +4*TM) and times [(w/4)*64, +64) of the block; lane l owns the TM channels
 * (w%4)*4*TM + (l%4) + 4*j, j < TM (so the four channel groups of a warp read adjacent 16-byte weight
 * vectors: one conflict-free wavefront), and the TN = 8 consecutive times (w/4)*64 + (l/4)*8 + i (so
 * its K taps reuse one register window of 8+PADA inputs).
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
#define SIMT_BN 128
#define SIMT_TN 8
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

/* Floats of shared memory per pipeline stage. */
static inline int64_t simt_stage_floats(const c1d_shape *s, int bm, int cs_log2) {
  const int64_t cs = INT64_C(1) << cs_log2;
  return cs * c1d_window_stride(s, SIMT_BN) + cs * bm * simt_kp(s->K);
}

static inline int64_t simt_smem_bytes(const c1d_shape *s, int bm, int cs_log2) {
  return SIMT_STAGES * simt_stage_floats(s, bm, cs_log2) * (int64_t)sizeof(float);
}

/* NULL, or why the engine with BM = bm cannot run the shape. */
static inline const char *simt_supported(const c1d_shape *s, int bm) {
  if (c1d_pad(s) > (INT64_C(1) << 20) || simt_smem_bytes(s, bm, 0) > C1D_SMEM_OPTIN_MAX)
    return "one input channel's window of 128+(K-1)*D inputs and its weights, three stages deep, "
           "exceed the 227 KiB of shared memory a block may use";
  return NULL;
}

static inline simt_geom simt_make_geom(const c1d_shape *s, int bm, const float *x, const float *w,
                                       const float *y) {
  simt_geom g;
  g.cs_log2 = SIMT_MAX_CS_LOG2;
  while (g.cs_log2 > 0 && simt_smem_bytes(s, bm, g.cs_log2) > SIMT_SMEM_TARGET) g.cs_log2--;
  g.xw = (int)c1d_window_stride(s, SIMT_BN);
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
template <int BM>
static __device__ __forceinline__ void simt_stage_w(float *ws, const float *__restrict__ w,
                                                    const c1d_shape &s, const simt_geom &g, int64_t o0,
                                                    int64_t c0) {
  const int cs = 1 << g.cs_log2, K = (int)s.K, kp = g.kp;
  if (g.wvec) { /* kp == K, a multiple of 4: chunks of 4 taps, channel-fastest (contiguous in w) */
    const int q4 = kp >> 2;
    for (int i = threadIdx.x; i < BM * cs * q4; i += SIMT_THREADS) {
      const int q = i % q4, rest = i / q4, c = rest & (cs - 1), ol = rest >> g.cs_log2;
      const bool ok = o0 + ol < s.O && c0 + c < s.C;
      const float *src = ok ? w + c1d_w_index(&s, o0 + ol, c0 + c, 4 * q) : w;
      c1d_cp_async16(ws + (c * BM + ol) * kp + 4 * q, src, ok);
    }
  } else {
    for (int i = threadIdx.x; i < BM * cs * kp; i += SIMT_THREADS) {
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

/* One channel of a slab, K and D known: the thread's register window and TM x TN x K fmas. */
template <int TM, int KT, int DT, bool KAHAN>
static __device__ __forceinline__ void simt_channel_fixed(const float *xrow, const float *wrow,
                                                          float (&acc)[TM][SIMT_TN],
                                                          float (&comp)[TM][SIMT_TN]) {
  constexpr int KP = KT == 3 ? 4 : KT;
  constexpr int PADT = (KT - 1) * DT, PADA = (PADT + 3) & ~3, NXW = SIMT_TN + PADA;
  constexpr int X0 = PADA - PADT; /* window element of tap 0 at the thread's first time */
  float xv[NXW];
#pragma unroll
  for (int q = 0; q < NXW / 4; q++) {
    const float4 f = *reinterpret_cast<const float4 *>(xrow + 4 * q);
    xv[4 * q] = f.x, xv[4 * q + 1] = f.y, xv[4 * q + 2] = f.z, xv[4 * q + 3] = f.w;
  }
  if constexpr (!KAHAN) {
#pragma unroll
    for (int j = 0; j < TM; j++) {
      float wv[KP];
      simt_load_taps<KP>(wrow + 4 * j * KP, wv);
#pragma unroll
      for (int k = 0; k < KT; k++)
#pragma unroll
        for (int i = 0; i < SIMT_TN; i++) acc[j][i] = c1d_fma(xv[X0 + i + k * DT], wv[k], acc[j][i]);
    }
  } else {
#pragma unroll
    for (int j = 0; j < TM; j++) {
      float wv[KP];
      simt_load_taps<KP>(wrow + 4 * j * KP, wv);
      float p[SIMT_TN];
#pragma unroll
      for (int i = 0; i < SIMT_TN; i++) p[i] = -comp[j][i];
#pragma unroll
      for (int k = 0; k < KT; k++)
#pragma unroll
        for (int i = 0; i < SIMT_TN; i++) p[i] = c1d_fma(xv[X0 + i + k * DT], wv[k], p[i]);
#pragma unroll
      for (int i = 0; i < SIMT_TN; i++) {
        const float t = c1d_add(acc[j][i], p[i]);
        comp[j][i] = c1d_sub(c1d_sub(t, acc[j][i]), p[i]);
        acc[j][i] = t;
      }
    }
  }
}

/* One channel, K and D from the shape: each tap's inputs read from shared memory. */
template <int TM, bool KAHAN>
static __device__ __forceinline__ void simt_channel_general(const float *xrow, const float *wrow,
                                                            int K, int D, int kp,
                                                            float (&acc)[TM][SIMT_TN],
                                                            float (&comp)[TM][SIMT_TN]) {
  float p[TM][SIMT_TN];
  if constexpr (KAHAN) {
#pragma unroll
    for (int j = 0; j < TM; j++)
#pragma unroll
      for (int i = 0; i < SIMT_TN; i++) p[j][i] = -comp[j][i];
  }
  for (int k = 0; k < K; k++) {
    float wv[TM], xv[SIMT_TN];
#pragma unroll
    for (int j = 0; j < TM; j++) wv[j] = wrow[4 * j * kp + k];
#pragma unroll
    for (int i = 0; i < SIMT_TN; i++) xv[i] = xrow[i + k * D];
#pragma unroll
    for (int j = 0; j < TM; j++)
#pragma unroll
      for (int i = 0; i < SIMT_TN; i++) {
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
      for (int i = 0; i < SIMT_TN; i++) {
        const float t = c1d_add(acc[j][i], p[j][i]);
        comp[j][i] = c1d_sub(c1d_sub(t, acc[j][i]), p[j][i]);
        acc[j][i] = t;
      }
  }
}

// --- kernel ---------------------------------------------------------------------------------------

template <int TM, int KT, int DT, bool KAHAN>
__global__ void __launch_bounds__(SIMT_THREADS, 2)
    simt_conv_kernel(const c1d_shape s, const simt_geom g, const float *__restrict__ x,
                     const float *__restrict__ w, const float *__restrict__ b,
                     float *__restrict__ y) {
  constexpr int BM = 16 * TM;
  extern __shared__ float4 simt_smem_raw[];
  float *const smem = reinterpret_cast<float *>(simt_smem_raw);
  const int cs = 1 << g.cs_log2;
  const int stage_floats = cs * g.xw + cs * BM * g.kp; /* x rows first: both parts 16-byte aligned */
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int ol = (warp & 3) * 4 * TM + (lane & 3); /* + 4*j */
  const int tl = (warp >> 2) * 64 + (lane >> 2) * SIMT_TN;
  const int K = KT > 0 ? KT : (int)s.K;
  const int D = KT > 0 ? DT : (K > 1 ? (int)s.D : 0); /* with K = 1, D is never used */
  const int pad = (K - 1) * D;
  const int64_t nslab = (s.C + cs - 1) >> g.cs_log2;

  C1D_FOR_BLOCK_Z(n, s.N)
  C1D_FOR_BLOCK_Y(ob, c1d_ceil_div(s.O, BM))
  C1D_FOR_BLOCK_X(tb, c1d_ceil_div(s.L, SIMT_BN)) {
    const int64_t o0 = ob * BM, t0 = tb * SIMT_BN;
    float acc[TM][SIMT_TN], comp[TM][SIMT_TN];
#pragma unroll
    for (int j = 0; j < TM; j++) {
      const int64_t o = o0 + ol + 4 * j;
      const float init = (s.bias && o < s.O) ? b[o] : 0.0f;
#pragma unroll
      for (int i = 0; i < SIMT_TN; i++) acc[j][i] = init, comp[j][i] = 0.0f;
    }

    /* prologue: STAGES-1 slabs in flight (empty groups past the end keep the count uniform) */
#pragma unroll
    for (int sl = 0; sl < SIMT_STAGES - 1; sl++) {
      if (sl < nslab) {
        float *st = smem + sl * stage_floats;
        c1d_stage_x_window(st, x, s, n, (int64_t)sl * cs, cs, t0, SIMT_BN, g.xw, g.pada, g.xvec);
        simt_stage_w<BM>(st + cs * g.xw, w, s, g, o0, (int64_t)sl * cs);
      }
      c1d_cp_async_commit();
    }

    for (int64_t sl = 0; sl < nslab; sl++) {
      c1d_cp_async_wait<SIMT_STAGES - 2>(); /* this thread's copies of slab sl have landed */
      __syncthreads();                      /* everyone's have; slab sl-1's buffer is free */
      {
        const int64_t nx = sl + SIMT_STAGES - 1;
        if (nx < nslab) {
          float *st = smem + (int)(nx % SIMT_STAGES) * stage_floats;
          c1d_stage_x_window(st, x, s, n, nx * cs, cs, t0, SIMT_BN, g.xw, g.pada, g.xvec);
          simt_stage_w<BM>(st + cs * g.xw, w, s, g, o0, nx * cs);
        }
        c1d_cp_async_commit();
      }
      const float *xs = smem + (int)(sl % SIMT_STAGES) * stage_floats;
      const float *ws = xs + cs * g.xw;
      const int64_t c0 = sl * cs;
      const int ccn = (int)(s.C - c0 < cs ? s.C - c0 : cs); /* the naive order stops at C */
      if constexpr (KT > 0) {
        constexpr int KP = KT == 3 ? 4 : KT;
        for (int c = 0; c < ccn; c++)
          simt_channel_fixed<TM, KT, DT, KAHAN>(xs + c * g.xw + tl, ws + (c * BM + ol) * KP, acc,
                                                comp);
      } else {
        for (int c = 0; c < ccn; c++)
          simt_channel_general<TM, KAHAN>(xs + c * g.xw + tl + g.pada - pad, ws + (c * BM + ol) * g.kp,
                                          K, D, g.kp, acc, comp);
      }
    }
    c1d_cp_async_wait<0>();
    __syncthreads(); /* the next tile's prologue overwrites the buffers */

    /* epilogue */
#pragma unroll
    for (int j = 0; j < TM; j++) {
      const int64_t o = o0 + ol + 4 * j;
      if (o >= s.O) continue;
      float *yr = y + c1d_y_index(&s, n, o, 0);
      const int64_t t = t0 + tl;
      if (g.yvec) { /* t and L multiples of 4: each float4 lies wholly inside or outside */
#pragma unroll
        for (int q = 0; q < SIMT_TN / 4; q++)
          if (t + 4 * q < s.L)
            *reinterpret_cast<float4 *>(yr + t + 4 * q) =
                make_float4(acc[j][4 * q], acc[j][4 * q + 1], acc[j][4 * q + 2], acc[j][4 * q + 3]);
      } else {
#pragma unroll
        for (int i = 0; i < SIMT_TN; i++)
          if (t + i < s.L) yr[t + i] = acc[j][i];
      }
    }
  }
}

/* Launches the instance; sets its dynamic shared-memory limit first. */
template <int TM, int KT, int DT, bool KAHAN>
static c1d_status simt_launch(const c1d_shape *s, const simt_geom *g, const float *x, const float *w,
                              const float *b, float *y, cudaStream_t stream, const char *name) {
  c1d_status st = C1D_OK;
  constexpr int BM = 16 * TM;
  const size_t smem = (size_t)simt_smem_bytes(s, BM, g->cs_log2);
  const dim3 grid = c1d_grid(c1d_ceil_div(s->L, SIMT_BN), c1d_ceil_div(s->O, BM), s->N);
  C1D_CUDA(cudaFuncSetAttribute(simt_conv_kernel<TM, KT, DT, KAHAN>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  simt_conv_kernel<TM, KT, DT, KAHAN><<<grid, SIMT_THREADS, smem, stream>>>(*s, *g, x, w, b, y);
  C1D_LAUNCHED(name);
done:
  return st;
}

#endif
