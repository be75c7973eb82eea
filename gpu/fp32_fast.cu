/* gpu_fp32_fast: the fastest FP32 kernel convlab has, and still the naive order. A register-tiled
 * implicit GEMM on the FMA units (gpu/simt_conv.h): a block of 256 threads computes 128 output channels
 * x 128 times, each thread an 8 x 8 tile (8 channels x 8 consecutive times); slabs of 8 input channels
 * with their (K-1)*D halo and the block's weights stream through three shared-memory buffers by cp.async
 * (16-byte copies where aligned, copy loops with compile-time geometry); the K taps of a channel reuse
 * one register window of inputs.
 * Per output the arithmetic is exactly cpu/naive.c's:
 *   acc = b[o] (or +0); for c = 0..C-1, for k = 0..K-1: acc = fma(x, w[o,c,k], acc)
 * (x = +0 before t = 0, the fma still performed), so it equals gpu_naive and the CPU naive twin bit for
 * bit; the speed comes from data reuse alone. Instances with K and D fixed at compile time: (4,1), (3,1),
 * (2,1); every other (K, D) runs the general instance (same bits, taps read from shared memory).
 * Limits: simt_supported() (the slab must fit in 227 KiB of shared memory; pad <= 2^20). */
#include "gpu/simt_conv.h"

/* The registered gpu_fp32_fast: thread tile FAST_TM channels x FAST_TN times and engine variant
 * FAST_VARIANT (gpu/simt_conv.h: 0 run-time staging geometry, 1 compile-time geometry, 2 = 1 plus the
 * next channel's window prefetched into registers), chosen by measurement on an H200
 * (notes/fast-kernels.md, headline shape): 8x8 v0 3.357 ms, v1 3.224, v2 3.642; 8x16 v2 3.663;
 * 4x16 v2 3.630. Every tile and variant gives the same bits. */
#define FAST_TM 8
#define FAST_TN 8
#define FAST_VARIANT 1

/* The general instance (any K, D) always runs 8 x 8 tiles of 128 x 128 blocks, variant 0; the fixed
 * instances have pads of at most 3, which every tile fits. */
static const char *fp32_fast_supported(const c1d_shape *s) { return simt_supported(s, 128, 128); }

template <int TM, int TN, int VAR>
static c1d_status launch_fp32_fast_var(const c1d_shape *s, const float *x, const float *w,
                                       const float *b, float *y, c1d_exec *ex) {
  const char *why = fp32_fast_supported(s);
  if (why) return c1d_fail(C1D_ERR_UNSUPPORTED, "gpu_fp32_fast: %s (K=%lld, D=%lld)", why,
                           (long long)s->K, (long long)s->D);
  const cudaStream_t stream = c1d_stream_of(ex);
  const int64_t D = s->K > 1 ? s->D : 1;
  if (ex) {
    ex->algo[0] = '\0';
    snprintf(ex->math, sizeof ex->math, "%s", "FMA (fp32), naive order");
    ex->used_tf32 = 0;
  }
  const simt_geom g = simt_make_geom(s, 16 * TM, 16 * TN, x, w, y);
  if (s->K == 4 && D == 1)
    return simt_launch<TM, TN, 4, 1, false, VAR>(s, &g, x, w, b, y, stream, "simt_conv_kernel<K=4,D=1>");
  if (s->K == 3 && D == 1)
    return simt_launch<TM, TN, 3, 1, false, VAR>(s, &g, x, w, b, y, stream, "simt_conv_kernel<K=3,D=1>");
  if (s->K == 2 && D == 1)
    return simt_launch<TM, TN, 2, 1, false, VAR>(s, &g, x, w, b, y, stream, "simt_conv_kernel<K=2,D=1>");
  const simt_geom g8 = simt_make_geom(s, 128, 128, x, w, y);
  return simt_launch<8, 8, 0, 0, false, 0>(s, &g8, x, w, b, y, stream, "simt_conv_kernel<general>");
}

static c1d_status launch_fp32_fast(const c1d_shape *s, const float *x, const float *w, const float *b,
                                   float *y, c1d_exec *ex) {
  return launch_fp32_fast_var<FAST_TM, FAST_TN, FAST_VARIANT>(s, x, w, b, y, ex);
}

extern "C" const c1d_impl c1d_gpu_fp32_fast = {
    .name = "gpu_fp32_fast",
    .summary = "fp32; register-tiled implicit GEMM (cp.async slabs, register windows); the naive order",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP32,
    .twin = "naive",
    .twin_bit_exact = 1,
    .mutant = 0,
    .supported = fp32_fast_supported,
    .setup = NULL,
    .teardown = NULL,
    .run = launch_fp32_fast,
};

// --- the variants, not registered (tests and scripts/fast_bench.c reach them by symbol) ------------

#define FAST_VARIANT_IMPL(sym, nm, TM, TN, VAR)                                                 \
  static c1d_status sym##_run(const c1d_shape *s, const float *x, const float *w, const float *b, \
                              float *y, c1d_exec *ex) {                                         \
    return launch_fp32_fast_var<TM, TN, VAR>(s, x, w, b, y, ex);                                \
  }                                                                                             \
  extern "C" const c1d_impl sym = {                                                             \
      .name = nm,                                                                               \
      .summary = "gpu_fp32_fast with tile " #TM "x" #TN ", engine variant " #VAR,               \
      .backend = C1D_BACKEND_GPU,                                                               \
      .precision = C1D_PREC_FP32,                                                               \
      .twin = "naive",                                                                          \
      .twin_bit_exact = 1,                                                                      \
      .mutant = 0,                                                                              \
      .supported = fp32_fast_supported,                                                         \
      .setup = NULL,                                                                            \
      .teardown = NULL,                                                                         \
      .run = sym##_run,                                                                         \
  };
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v0, "gpu_fp32_fast_v0", 8, 8, 0)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v1, "gpu_fp32_fast_v1", 8, 8, 1)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v2, "gpu_fp32_fast_v2", 8, 8, 2)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v3, "gpu_fp32_fast_v3", 8, 16, 2)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v4, "gpu_fp32_fast_v4", 4, 16, 2)
/* Round 3 (gpu/simt_conv.h variants 3..6, 8x8 tiles): v5 lanes as 8 channel groups x 4 time groups
 * (conflict-free window loads), v6 full-slab channel loop unrolled, v7 both, v8 v7 at one block per SM.
 * Measured (H200, headline): v5 3.302 ms, v6 3.296, v7 3.219, v8 3.536 against v1 3.221: none registered. */
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v5, "gpu_fp32_fast_v5", 8, 8, 3)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v6, "gpu_fp32_fast_v6", 8, 8, 4)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v7, "gpu_fp32_fast_v7", 8, 8, 5)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v8, "gpu_fp32_fast_v8", 8, 8, 6)
