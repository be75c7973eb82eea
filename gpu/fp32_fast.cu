/* gpu_fp32_fast: the fastest FP32 kernel convlab has, and still the naive order. A register-tiled
 * implicit GEMM on the FMA units (gpu/simt_conv.h): for K = 2, 3, 4 with D = 1 a block of 128 threads
 * (4 warps, three blocks per SM) computes 64 output channels x 128 times, each thread an 8 x 8 tile
 * (8 channels x 8 consecutive times); slabs of 8 input channels with their (K-1)*D halo and the block's
 * weights stream through three shared-memory buffers by cp.async (16-byte copies where aligned; in tiles
 * wholly inside the tensors each thread's copies are fixed per tile and issued without predicates,
 * simt_body_pre2); the K taps of a channel reuse one register window of inputs.
 * Per output the arithmetic is exactly cpu/naive.c's:
 *   acc = b[o] (or +0); for c = 0..C-1, for k = 0..K-1: acc = fma(x, w[o,c,k], acc)
 * (x = +0 before t = 0, the fma still performed), so it equals gpu_naive and the CPU naive twin bit for
 * bit; the speed comes from data reuse alone. Instances with K and D fixed at compile time: (4,1), (3,1),
 * (2,1); every other (K, D) runs the general instance (same bits, taps read from shared memory).
 * Limits: simt_supported() (the slab must fit in 227 KiB of shared memory; pad <= 2^20). */
#include "gpu/simt_conv.h"

/* The registered gpu_fp32_fast: thread tile FAST_TM channels x FAST_TN times and engine variant
 * FAST_VARIANT (gpu/simt_conv.h), chosen by measurement on an H200 (notes/fast-kernels.md, headline
 * shape, cuDNN FP32 4.82 ms in the same runs): rounds 2-3 (256 threads, 2 blocks/SM) 8x8 v0 3.357 ms,
 * v1 3.224 (registered until round 4), v2 3.642; 8x16 3.663; 4x16 3.630; round 4: engine variant 19
 * (= gpu_fp32_fast_v21: 4 warps, 3 blocks/SM, lean slab loop) 2.905 ms = 1.66x cuDNN FP32, 72.6 % of
 * the 65.2 TFLOP/s FP32 ceiling. Every tile and variant gives the same bits. */
#define FAST_TM 8
#define FAST_TN 8
#define FAST_VARIANT 19

/* The general instance (any K, D) always runs 8 x 8 tiles of 128 x 128 blocks, variant 0; the fixed
 * instances have pads of at most 3, which every tile (up to 128 x 192) fits. */
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
  const simt_geom g = simt_make_geom(s, simt_bm<TM, VAR>::value, simt_bn<TN, VAR>::value, x, w, y);
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
/* Round 4 (gpu/simt_conv.h variants 7..26, 8x8 tiles; notes/fast-kernels.md). Measured on an H200 at the
 * headline shape (medians of 20; v1 3.221 and 3.221 ms in the same runs):
 * block shapes and occupancy points: v9 4 warps 64x128 at 3 blocks/SM 3.328 ms, v10 = v9 unrolled 3.398,
 * v11 = v9 with the 8x4 lane map 3.345, v12 = v11 unrolled 3.410, v13 12 warps 128x192 at 1 block/SM
 * 3.457, v14 = v13 unrolled 3.455, v15 4 warps 128x64 at 3 blocks/SM 3.642, v16 = v9 taps outermost
 * 3.330. */
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v9, "gpu_fp32_fast_v9", 8, 8, 7)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v10, "gpu_fp32_fast_v10", 8, 8, 8)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v11, "gpu_fp32_fast_v11", 8, 8, 9)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v12, "gpu_fp32_fast_v12", 8, 8, 10)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v13, "gpu_fp32_fast_v13", 8, 8, 11)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v14, "gpu_fp32_fast_v14", 8, 8, 12)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v15, "gpu_fp32_fast_v15", 8, 8, 13)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v16, "gpu_fp32_fast_v16", 8, 8, 14)
/* Precomputed staging (simt_pre): v17 = v1 with it 3.209 ms, v18 = v9 (3 blocks/SM) with it 3.122,
 * v19 = v7 with it 3.149, v20 = v10 with it 3.191. */
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v17, "gpu_fp32_fast_v17", 8, 8, 15)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v18, "gpu_fp32_fast_v18", 8, 8, 16)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v19, "gpu_fp32_fast_v19", 8, 8, 17)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v20, "gpu_fp32_fast_v20", 8, 8, 18)
/* simt_body_pre2 (lean slab loop): v21 4 warps 64x128 (3 blocks/SM), U=1: 2.905 ms (registered as
 * gpu_fp32_fast); v22 = v21, U=2 2.958; v23 8 warps 128x128 (2 blocks/SM) 3.426; v24 = v23, U=2 3.295;
 * v25 = v21 with the 8x4 lane map 2.979; v26 = v21, U=4 2.920; v27 = v21 with the next channel's window
 * in registers 3.158; v28 = v23 with the 8x4 lane map 3.445. */
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v21, "gpu_fp32_fast_v21", 8, 8, 19)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v22, "gpu_fp32_fast_v22", 8, 8, 20)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v23, "gpu_fp32_fast_v23", 8, 8, 21)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v24, "gpu_fp32_fast_v24", 8, 8, 22)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v25, "gpu_fp32_fast_v25", 8, 8, 23)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v26, "gpu_fp32_fast_v26", 8, 8, 24)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v27, "gpu_fp32_fast_v27", 8, 8, 25)
FAST_VARIANT_IMPL(c1d_gpu_fp32_fast_v28, "gpu_fp32_fast_v28", 8, 8, 26)
