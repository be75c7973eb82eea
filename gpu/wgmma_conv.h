/* The tensor-core engine of gpu_tf32 and gpu_3xtf32 on Hopper: an implicit GEMM on warpgroup wgmma
 * (TF32, m64nNk8) with M = output times, N = output channels and the reduction index r = c*KP + k over
 * channels and taps (KP = K padded to 1, 2, 4 or 8, so that a k-step of 8 covers whole channels; padded
 * taps carry zero weights and read tap K-1's input, so they add 0 * x). sm_90a only (gpu/wgmma.h).
 *
 * B (weights) is rewritten once per run by wgc_weights_kernel into [part][o][r] (O and C padded with
 * zeros), already rounded to TF32 (rna, as c1d_round_tf32_rna) and, for 3xTF32, split into
 * big = tf32(w) and small = tf32(w - big). The bulk tensor copy brings a block's slab of it (BN rows x 32
 * reduction entries per part) into shared memory in the 128-byte swizzle wgmma reads.
 * A (im2col of x) is never built: each slab's x window is read by the lanes in wgmma's A-fragment order
 * and rounded (and split) in registers. The window comes by the bulk tensor copy too, one box of
 * CPS channels x (128 + pad) times for both warpgroups, whose zero fill outside the tensor is the causal
 * pad and the channel padding ("tensor-copy x": rows of x 16-byte aligned, a pad of at most 120); else
 * each warpgroup stages its own window by cp.async (gpu/conv_stage.h) and meets at a named barrier.
 * The tensor-copy path measured 1.46x faster than cp.async on the H200 (0.425 against 0.619 ms for
 * gpu_tf32, notes/fast-kernels.md round 6): on the cp.async path a warp runs ~300 dependent instructions
 * per slab (address arithmetic, a named barrier) with two warps per scheduler to hide them; the copy
 * engine takes that work off the warps.
 *
 * The named tiles: WGC_THREADS = 256 (two warpgroups, each 64 times of the block's 128), BN output
 * channels (the wgmma N: 256 for 1xTF32, 128 for 3xTF32, whose chain partial needs a second set of
 * accumulators), slabs of 32 reduction entries (4 k-steps) through 3 to 6 buffers (5 by default, as many
 * as fit; C1D_WGC_STAGES caps them: 4, 5 and 6 measured the same), one block per SM. The warpgroups run
 * on their own: each waits on its slab's full barrier (and on the cp.async path first stages its own
 * x window, then meets its 128 threads at a named barrier), and releases the buffer through its empty
 * barrier once its wgmmas are done; thread 0 refills a buffer when both have released it. So one
 * warpgroup's fragment loads and waits overlap the other's wgmmas, with no block-wide barrier.
 * Clusters sharing the weight slabs by multicast measured slower (fba4872, notes/fast-kernels.md).
 * The tensor core sums each k-step's eight products exactly and rounds the result toward zero
 * (mma.sync measured: notes/fast-kernels.md; wgmma agrees: its errors match the models that assume it):
 *   1xTF32 (gpu_tf32):   acc = b[o]; per k-step acc = wgmma(x_big, w_big, acc)
 *   3xTF32 (gpu_3xtf32): acc = b[o]; per chain of two k-steps: t = +0; per k-step
 *                        t = wgmma(x_big, w_small, t); t = wgmma(x_small, w_big, t);
 *                        t = wgmma(x_big, w_big, t); then acc = acc + t (IEEE __fadd_rn)
 * Limits (wgc_supported): K <= 8; a Hopper GPU (compute capability 9.0); the slab's windows within
 * 227 KiB of shared memory. CUDA C++. */
#ifndef C1D_GPU_WGMMA_CONV_H
#define C1D_GPU_WGMMA_CONV_H

#include <cuda.h>
#include <cudaTypedefs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/conv_stage.h"
#include "gpu/device.h"
#include "gpu/launch.h"
#include "gpu/wgmma.h"
#include "numerics/arith.h"

#define WGC_THREADS 256  /* two warpgroups */
#define WGC_BM 128       /* output times per block, 64 per warpgroup */
#define WGC_SLAB 32      /* reduction entries per slab: 4 k-steps, one 128-byte swizzle row */
#define WGC_DEFAULT_STAGES 5

/* The two named configurations: 1xTF32 128 times x 256 channels, 3xTF32 128 x 128. */
template <bool X3>
struct wgc_tile {
  static constexpr int BN = X3 ? 128 : 256; /* output channels per block (wgmma N) */
  static constexpr int NPARTS = X3 ? 2 : 1; /* big (and small) weights */
  static constexpr int NREG = BN / 2;       /* accumulator floats per thread */
  static constexpr int WBYTES = NPARTS * BN * WGC_SLAB * 4; /* weight tiles per stage */
};

// --- the plan: every size that setup and run must agree on --------------------------------------

typedef struct wgc_plan {
  int x3;            /* 3xTF32? */
  int kp, cps;       /* padded taps; channels per slab (32 / kp) */
  int64_t cpad, r;   /* channels padded to a whole slab; reduction length cpad * kp */
  int64_t opad;      /* O padded to BN */
  int64_t nslab;     /* r / 32 */
  int xw, pada;      /* a warpgroup's x window row stride (floats), causal pad rounded up to 4 */
  int stages;        /* buffers (3..6); slabs issued ahead = stages - 2 */
  int stage_bytes;   /* weights + two x windows, rounded up to 1024 */
  int64_t smem;      /* dynamic shared memory: stages, their barriers, 1024 bytes of alignment slack */
  int xt;            /* x windows by the bulk tensor copy (one window of 128 + pad times per block, row
                      * stride xw); else by cp.async (one window of 64 + pad per warpgroup) */
} wgc_plan;

static inline int wgc_kp(int64_t K) { return K <= 1 ? 1 : K <= 2 ? 2 : K <= 4 ? 4 : 8; }

/* Whether the tensor-copy x path can take the shape: rows of x whose byte stride is a multiple of 16 (and
 * x itself 16-byte aligned: checked per run), a window box of at most 256 times, 32-bit coordinates.
 * C1D_WGC_XCOPY=cp forces the cp.async path (the tests compare the two). */
static inline int wgc_xt_possible(const c1d_shape *s) {
  const char *e = getenv("C1D_WGC_XCOPY");
  if (e && !strcmp(e, "cp")) return 0;
  return s->L % 4 == 0 && c1d_window_stride(s, WGC_BM) <= 256 && s->L < INT32_MAX - 512 && s->C < INT32_MAX &&
         s->N < INT32_MAX;
}

static inline wgc_plan wgc_make_plan(const c1d_shape *s, int x3, int xt) {
  wgc_plan p;
  const int bn = x3 ? wgc_tile<true>::BN : wgc_tile<false>::BN;
  const int wbytes = x3 ? wgc_tile<true>::WBYTES : wgc_tile<false>::WBYTES;
  p.x3 = x3;
  p.kp = wgc_kp(s->K);
  p.cps = WGC_SLAB / p.kp;
  p.cpad = c1d_ceil_div(s->C, p.cps) * p.cps;
  p.r = p.cpad * p.kp;
  p.opad = c1d_ceil_div(s->O, bn) * bn;
  p.nslab = p.r / WGC_SLAB;
  p.xt = xt;
  p.xw = (int)c1d_window_stride(s, xt ? WGC_BM : WGC_BM / 2);
  p.pada = (int)c1d_pad_aligned(s);
  const int64_t stage = wbytes + (xt ? 1 : 2) * (int64_t)p.cps * p.xw * 4;
  p.stage_bytes = stage > INT32_MAX / 8 ? INT32_MAX / 8 : (int)((stage + 1023) / 1024 * 1024);
  /* C1D_WGC_STAGES=3..6 caps the buffers (measured in notes/fast-kernels.md) */
  const char *e = getenv("C1D_WGC_STAGES");
  const int cap = e && e[0] >= '3' && e[0] <= '6' && !e[1] ? e[0] - '0' : WGC_DEFAULT_STAGES;
  for (p.stages = cap; p.stages > 3; p.stages--)
    if (p.stages * (int64_t)p.stage_bytes + 16 * p.stages + 1024 <= C1D_SMEM_OPTIN_MAX) break;
  p.smem = p.stages * (int64_t)p.stage_bytes + 16 * p.stages + 1024;
  return p;
}

/* NULL, or why the engine cannot run the shape here. */
static inline const char *wgc_supported(const c1d_shape *s, int x3) {
  if (s->K > 8) return "K > 8: the tensor-core kernels cover at most 8 taps per channel";
  if (c1d_pad(s) > (INT64_C(1) << 20) || wgc_make_plan(s, x3, 0).smem > C1D_SMEM_OPTIN_MAX)
    return "the staged windows of (K-1)*D + 64 inputs per channel, three stages deep, exceed the "
           "227 KiB of shared memory a block may use";
  if (s->O > INT32_MAX || wgc_make_plan(s, x3, 0).r > INT32_MAX)
    return "O or C*K beyond the bulk tensor copy's 32-bit coordinates";
  if (!c1d_gpu_unavailable()) {
    c1d_gpu_info info;
    if (c1d_gpu_get_info(&info) == C1D_OK && !(info.cc_major == 9 && info.cc_minor == 0))
      return "needs a Hopper GPU (compute capability 9.0): wgmma and the bulk tensor copy are sm_90a";
  }
  return NULL;
}

// --- weights: TF32 big (and small) parts, [part][o][r] -----------------------------------------------

static __global__ void wgc_weights_kernel(const c1d_shape s, int kp, int nparts, int64_t opad, int64_t r,
                                          const float *__restrict__ w, float *__restrict__ wp) {
  const int64_t total = opad * r;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t o = i / r, ri = i % r, c = ri / kp, k = ri % kp;
    const float v = (o < s.O && c < s.C && k < s.K) ? w[c1d_w_index(&s, o, c, k)] : 0.0f;
    float big, small;
    c1d_split_tf32(v, &big, &small);
    wp[i] = big;
    if (nparts == 2) wp[total + i] = small;
  }
}

// --- the convolution kernel ---------------------------------------------------------------------------

static __device__ __forceinline__ uint32_t wgc_tf32_rna(float v) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(v));
  return r;
}

/* One warpgroup's A fragments of k-step ks of the staged window xs (1xTF32: rounded; 3xTF32: big and
 * small parts). off[h]: the lane's offset for columns q + 4h. */
static __device__ __forceinline__ void wgc_load_a(const float *xs, const int (&off)[2], uint32_t (&big)[4]) {
#pragma unroll
  for (int e = 0; e < 4; e++) big[e] = wgc_tf32_rna(xs[off[e >> 1] + 8 * (e & 1)]);
}
static __device__ __forceinline__ void wgc_load_a_split(const float *xs, const int (&off)[2], uint32_t (&big)[4],
                                                        uint32_t (&small)[4]) {
#pragma unroll
  for (int e = 0; e < 4; e++) {
    const float v = xs[off[e >> 1] + 8 * (e & 1)];
    big[e] = wgc_tf32_rna(v);
    small[e] = wgc_tf32_rna(c1d_sub(v, __uint_as_float(big[e])));
  }
}

/* Keeps A-fragment registers live (and unchanged) until after the wg_wait that completes their wgmmas. */
template <int M>
static __device__ __forceinline__ void wgc_hold_u(uint32_t (&a)[M][4]) {
#pragma unroll
  for (int i = 0; i < M; i++)
#pragma unroll
    for (int e = 0; e < 4; e++) asm volatile("" : "+r"(a[i][e])::"memory");
}

/* cp.async.wait_group with the plan's run-time depth (slabs ahead - 1 = stages - 3). */
static __device__ __forceinline__ void wgc_cp_wait(int stages) {
  if (stages >= 6) c1d_cp_async_wait<3>();
  else if (stages == 5) c1d_cp_async_wait<2>();
  else if (stages == 4) c1d_cp_async_wait<1>();
  else c1d_cp_async_wait<0>();
}

template <bool X3, int KP, bool XT>
__global__ void __launch_bounds__(WGC_THREADS, 1)
    wgc_conv_kernel(const __grid_constant__ CUtensorMap wmap, const __grid_constant__ CUtensorMap xmap,
                    const c1d_shape s, const wgc_plan p, const int xvec, const float *__restrict__ x,
                    const float *__restrict__ b, float *__restrict__ y) {
  using T = wgc_tile<X3>;
  constexpr int CPS = WGC_SLAB / KP, NREG = T::NREG, BN = T::BN, HALF = WGC_BM / 2;
  extern __shared__ uint8_t wgc_smem_raw[];
  uint8_t *const base =
      wgc_smem_raw + ((1024 - ((uint32_t)__cvta_generic_to_shared(wgc_smem_raw) & 1023)) & 1023);
  const int S = p.stages, PD = p.stages - 2;
  uint64_t *const full = reinterpret_cast<uint64_t *>(base + S * p.stage_bytes), *const empty = full + S;
  const int tid = threadIdx.x, wg = tid >> 7, wtid = tid & 127, warp = (tid >> 5) & 3, lane = tid & 31,
            g = lane >> 2, q = lane & 3;
  const int K = (int)s.K, D = K > 1 ? (int)s.D : 0, pad = (K - 1) * D;
  const int xbytes = CPS * p.xw * 4; /* the block's window (XT), or one warpgroup's */
  /* The lane's offsets in its warpgroup's window: k-step ks of a slab, column q + 4h, row g (+8). With
   * XT both warpgroups read one window, the second from 64 times on. */
  int off[4][2];
#pragma unroll
  for (int ks = 0; ks < 4; ks++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int r = 8 * ks + q + 4 * h, c_rel = r / KP, k = r % KP;
      off[ks][h] = c_rel * p.xw + (k < K ? k : K - 1) * D + p.pada - pad + warp * 16 + g + (XT ? wg * HALF : 0);
    }
  if (tid == 0) {
    for (int st = 0; st < S; st++) wg_bar_init(&full[st], 1), wg_bar_init(&empty[st], 2);
    wg_bar_fence_init();
  }
  __syncthreads();
  /* Slabs issued by this block so far, and the buffer and phase parity of the next slab to issue and to
   * consume (the same in every thread; kept by increments: a division by the run-time S per slab cost
   * about 40 instructions). */
  uint32_t issued = 0, ist = 0, iphase = 0, cst = 0, cphase = 0;
  const int nslab = (int)p.nslab;

  C1D_FOR_BLOCK_Z(n, s.N)
  C1D_FOR_BLOCK_Y(ob, c1d_ceil_div(s.O, BN))
  C1D_FOR_BLOCK_X(tb, c1d_ceil_div(s.L, WGC_BM)) {
    const int64_t o0 = ob * BN, t0 = tb * WGC_BM, tw = t0 + wg * HALF;
    float acc[NREG];
    wg_wait<0>(); /* nothing is pending here; it ends ptxas's wgmma pipeline analysis at the tile (a
                   * variant that kept wgmmas in flight across slabs was serialised without it, C7515) */
#pragma unroll
    for (int j = 0; j < NREG / 4; j++)
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const int64_t o = o0 + 8 * j + 2 * q + (e & 1);
        acc[4 * j + e] = (s.bias && o < s.O) ? b[o] : 0.0f;
      }
    /* Slab sl: its weights (thread 0, once both warpgroups released the buffer's last use) and this
     * warpgroup's x window. */
    auto issue = [&](int sl) {
      const uint32_t st = ist;
      uint8_t *sb = base + st * p.stage_bytes;
      if (tid == 0) {
        if (issued >= (uint32_t)S) wg_bar_wait(&empty[st], iphase ^ 1u); /* its previous use is released */
        wg_bar_expect(&full[st], T::WBYTES + (XT ? xbytes : 0));
        wg_tma_load_3d(sb, &wmap, &full[st], sl * WGC_SLAB, (int)o0, 0);
        /* x: channels [sl*CPS, +CPS) of row n, times from t0 - pada; zeros outside the tensor */
        if constexpr (XT) wg_tma_load_3d(sb + T::WBYTES, &xmap, &full[st], (int)(t0 - p.pada), sl * CPS, (int)n);
      }
      if constexpr (!XT)
        c1d_stage_x_window_by(reinterpret_cast<float *>(sb + T::WBYTES + wg * xbytes), x, s, n,
                              (int64_t)sl * CPS, CPS, tw, HALF, p.xw, p.pada, xvec, wtid, 128);
      issued++;
      if (++ist == (uint32_t)S) ist = 0, iphase ^= 1u;
    };
    for (int sl = 0; sl < PD; sl++) {
      if (sl < nslab) issue(sl);
      if constexpr (!XT) c1d_cp_async_commit();
    }
#pragma unroll 1
    for (int sl = 0; sl < nslab; sl++) {
      if constexpr (!XT) {
        wgc_cp_wait(S);  /* this thread's copies of slab sl have landed */
        wg_sync(1 + wg); /* the warpgroup's have; its reads of the window refilled next are done */
      }
      if (sl + PD < nslab) issue(sl + PD);
      if constexpr (!XT) c1d_cp_async_commit();
      const uint32_t st = cst, parity = cphase;
      if (++cst == (uint32_t)S) cst = 0, cphase ^= 1u;
      const uint8_t *sb = base + st * p.stage_bytes;
      const float *xs = reinterpret_cast<const float *>(sb + T::WBYTES + (XT ? 0 : wg * xbytes));
      wg_bar_wait(&full[st], parity);
      if constexpr (!X3) {
        uint32_t a[4][4];
#pragma unroll
        for (int ks = 0; ks < 4; ks++) wgc_load_a(xs, off[ks], a[ks]);
        uint64_t desc[4];
#pragma unroll
        for (int ks = 0; ks < 4; ks++) desc[ks] = wg_desc_pin(wg_desc_sw128(sb) + 2 * ks);
        wg_hold(acc);
        wg_fence();
#pragma unroll
        for (int ks = 0; ks < 4; ks++) wg_mma_64x256x8(acc, a[ks], desc[ks], 1);
        wg_commit();
        wg_wait<0>();
        wg_hold(acc);
        wgc_hold_u(a);
      } else {
        float t[NREG];
        /* A fragments of both chains: the second chain's are loaded and split while the first chain's
         * wgmmas run */
        uint32_t ab[2][2][4], as[2][2][4];
#pragma unroll
        for (int c = 0; c < 2; c++) wgc_load_a_split(xs, off[c], ab[0][c], as[0][c]);
#pragma unroll
        for (int ch = 0; ch < 2; ch++) {
          uint64_t dbig[2], dsmall[2];
#pragma unroll
          for (int c = 0; c < 2; c++) {
            dbig[c] = wg_desc_pin(wg_desc_sw128(sb) + 2 * (2 * ch + c));
            dsmall[c] = wg_desc_pin(wg_desc_sw128(sb + BN * WGC_SLAB * 4) + 2 * (2 * ch + c));
          }
          wg_fence();
#pragma unroll
          for (int c = 0; c < 2; c++) {
            wg_mma_64x128x8(t, ab[ch][c], dsmall[c], c); /* x_big * w_small (t = +0 first) */
            wg_mma_64x128x8(t, as[ch][c], dbig[c], 1);   /* x_small * w_big */
            wg_mma_64x128x8(t, ab[ch][c], dbig[c], 1);   /* x_big * w_big */
          }
          wg_commit();
          if (ch == 0)
#pragma unroll
            for (int c = 0; c < 2; c++) wgc_load_a_split(xs, off[2 + c], ab[1][c], as[1][c]);
          wg_wait<0>();
          wg_hold(t);
          wgc_hold_u(ab[ch]);
          wgc_hold_u(as[ch]);
#pragma unroll
          for (int i = 0; i < NREG; i++) acc[i] = c1d_add(acc[i], t[i]);
        }
      }
      if (wtid == 0) wg_bar_arrive(&empty[st]); /* this warpgroup's wgmmas no longer read the buffer */
    }
    if constexpr (!XT) {
      c1d_cp_async_wait<0>();
      wg_sync(1 + wg); /* the next tile's prologue overwrites this warpgroup's windows */
    }

    /* epilogue: d[4j+e] is (time 16*warp + g + 8*(e/2) of the warpgroup, channel 8j + 2q + e%2) */
#pragma unroll
    for (int j = 0; j < NREG / 4; j++)
#pragma unroll
      for (int e = 0; e < 4; e++) {
        const int64_t o = o0 + 8 * j + 2 * q + (e & 1);
        const int64_t t = tw + warp * 16 + g + 8 * (e >> 1);
        if (o < s.O && t < s.L) y[c1d_y_index(&s, n, o, t)] = acc[4 * j + e];
      }
  }
}

// --- host side: state, setup, run ---------------------------------------------------------------------

typedef struct wgc_state {
  CUtensorMap wmap;                         /* first: the state is 64-byte aligned */
  CUtensorMap xmap;                         /* x's, encoded by the run that first sees x's address */
  const float *xmap_x;                      /* the x xmap was encoded for, or NULL */
  PFN_cuTensorMapEncodeTiled_v12000 encode; /* the driver's encoder, looked up once in setup */
  float *wp;                                /* [part][opad][r] TF32 weights */
  wgc_plan plan;                            /* the cp.async plan */
  wgc_plan plan_xt;                         /* the tensor-copy plan, where xt_possible */
  int xt_possible;                          /* wgc_xt_possible(shape); a run also needs x 16-byte aligned */
} wgc_state;

static inline void wgc_teardown(c1d_exec *ex) {
  wgc_state *st = (wgc_state *)ex->state;
  if (!st) return;
  c1d_gpu_free(st->wp);
  free(st);
  ex->state = NULL;
}

/* cuTensorMapEncodeTiled, through the runtime's driver entry point (no -lcuda); NULL if the driver has
 * none. */
static inline PFN_cuTensorMapEncodeTiled_v12000 wgc_encoder(void) {
  void *fn = NULL;
  cudaDriverEntryPointQueryResult q;
  const cudaError_t e =
      cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q);
  return e == cudaSuccess && q == cudaDriverEntryPointSuccess ? (PFN_cuTensorMapEncodeTiled_v12000)fn : NULL;
}

/* The tensor map of the prepared weights: dims (r, opad, parts), box (32, BN, parts): a block's slab,
 * 128-byte swizzle. */
static inline c1d_status wgc_encode_wmap(wgc_state *st, const char *name) {
  const wgc_plan *p = &st->plan;
  const int nparts = p->x3 ? 2 : 1, bn = p->x3 ? wgc_tile<true>::BN : wgc_tile<false>::BN;
  const cuuint64_t dims[3] = {(cuuint64_t)p->r, (cuuint64_t)p->opad, (cuuint64_t)nparts};
  const cuuint64_t strides[2] = {(cuuint64_t)p->r * 4, (cuuint64_t)(p->r * p->opad) * 4};
  const cuuint32_t box[3] = {WGC_SLAB, (cuuint32_t)bn, (cuuint32_t)nparts}, elem[3] = {1, 1, 1};
  const CUresult r = st->encode(&st->wmap, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, st->wp, dims, strides, box, elem,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return c1d_fail(C1D_ERR_CUDA, "%s: cuTensorMapEncodeTiled failed (CUresult %d)", name, (int)r);
  return C1D_OK;
}

/* x's tensor map for the tensor-copy plan: dims (L, C, N), box (xw, cps, 1), no swizzle: a slab's window,
 * rows xw floats apart. Coordinates outside the tensor (times before 0, channels past C) read as zeros.
 * Encoded once per address of x. 0 if the driver refuses (the run then takes the cp.async path). */
static inline int wgc_xmap_for(wgc_state *st, const c1d_shape *s, const float *x) {
  if (st->xmap_x == x) return 1;
  const wgc_plan *p = &st->plan_xt;
  const cuuint64_t dims[3] = {(cuuint64_t)s->L, (cuuint64_t)s->C, (cuuint64_t)s->N};
  const cuuint64_t strides[2] = {(cuuint64_t)s->L * 4, (cuuint64_t)(s->L * s->C) * 4};
  const cuuint32_t box[3] = {(cuuint32_t)p->xw, (cuuint32_t)p->cps, 1}, elem[3] = {1, 1, 1};
  st->xmap_x = NULL;
  if (st->encode(&st->xmap, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, (void *)x, dims, strides, box, elem,
                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
    return 0;
  st->xmap_x = x;
  return 1;
}

static inline c1d_status wgc_setup(const c1d_shape *s, c1d_exec *ex, int x3, const char *name) {
  const char *why = wgc_supported(s, x3);
  if (why) return c1d_fail(C1D_ERR_UNSUPPORTED, "%s: %s", name, why);
  wgc_state *st = NULL;
  if (posix_memalign((void **)&st, 64, sizeof *st) != 0 || !st)
    return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate the %s state", name);
  memset(st, 0, sizeof *st);
  st->plan = wgc_make_plan(s, x3, 0);
  st->xt_possible = wgc_xt_possible(s);
  if (st->xt_possible) st->plan_xt = wgc_make_plan(s, x3, 1);
  ex->state = st;
  st->encode = wgc_encoder();
  if (!st->encode) {
    wgc_teardown(ex);
    return c1d_fail(C1D_ERR_CUDA, "%s: the driver has no cuTensorMapEncodeTiled", name);
  }
  const size_t bytes = (size_t)(x3 ? 2 : 1) * (size_t)st->plan.opad * (size_t)st->plan.r * sizeof(float);
  c1d_status rc = c1d_gpu_malloc((void **)&st->wp, bytes, "the TF32 weights of the tensor-core kernel");
  if (rc == C1D_OK) rc = wgc_encode_wmap(st, name);
  if (rc != C1D_OK) wgc_teardown(ex);
  return rc;
}

template <bool X3, int KP, bool XT>
static c1d_status wgc_launch_conv(const c1d_shape *s, const wgc_state *ws, const wgc_plan *p, const float *x,
                                  const float *b, float *y, cudaStream_t stream) {
  c1d_status st = C1D_OK;
  const dim3 grid = c1d_grid(c1d_ceil_div(s->L, WGC_BM), c1d_ceil_div(s->O, wgc_tile<X3>::BN), s->N);
  C1D_CUDA(cudaFuncSetAttribute(wgc_conv_kernel<X3, KP, XT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)p->smem));
  wgc_conv_kernel<X3, KP, XT><<<grid, WGC_THREADS, (size_t)p->smem, stream>>>(
      ws->wmap, ws->xmap, *s, *p, c1d_x_rows_aligned(s, x), x, b, y);
  C1D_LAUNCHED("wgc_conv_kernel");
done:
  return st;
}

template <bool X3, int KP>
static c1d_status wgc_launch_by_path(const c1d_shape *s, const wgc_state *ws, const wgc_plan *p, const float *x,
                                     const float *b, float *y, cudaStream_t stream) {
  return p->xt ? wgc_launch_conv<X3, KP, true>(s, ws, p, x, b, y, stream)
               : wgc_launch_conv<X3, KP, false>(s, ws, p, x, b, y, stream);
}

/* The run: weights into TF32 parts, then the convolution, its x windows by the tensor copy where the
 * shape and x's address allow. */
template <bool X3>
static c1d_status wgc_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                          c1d_exec *ex, const char *name) {
  c1d_status st = C1D_OK;
  wgc_state *ws = ex ? (wgc_state *)ex->state : NULL;
  if (!ws) return c1d_fail(C1D_ERR_INTERNAL, "%s run without setup", name);
  const wgc_plan *p = ws->xt_possible && c1d_x_rows_aligned(s, x) && wgc_xmap_for(ws, s, x) ? &ws->plan_xt
                                                                                          : &ws->plan;
  const cudaStream_t stream = c1d_stream_of(ex);
  const int64_t total = p->opad * p->r, blocks = c1d_ceil_div(total, 256);
  wgc_weights_kernel<<<(unsigned)(blocks < 65535 ? blocks : 65535), 256, 0, stream>>>(
      *s, p->kp, X3 ? 2 : 1, p->opad, p->r, w, ws->wp);
  C1D_LAUNCHED("wgc_weights_kernel");
  switch (p->kp) {
    case 1: st = wgc_launch_by_path<X3, 1>(s, ws, p, x, b, y, stream); break;
    case 2: st = wgc_launch_by_path<X3, 2>(s, ws, p, x, b, y, stream); break;
    case 4: st = wgc_launch_by_path<X3, 4>(s, ws, p, x, b, y, stream); break;
    default: st = wgc_launch_by_path<X3, 8>(s, ws, p, x, b, y, stream); break;
  }
  if (st != C1D_OK) return st;
  snprintf(ex->algo, sizeof ex->algo, "x by %s, %d stages", p->xt ? "tensor copy" : "cp.async", p->stages);
  snprintf(ex->math, sizeof ex->math, "%s",
           X3 ? "3xTF32 tensor cores (wgmma: small*big + big*small + big*big)"
              : "TF32 tensor cores (wgmma m64n256k8, rna inputs)");
  ex->used_tf32 = 1;
done:
  return st;
}

#endif
