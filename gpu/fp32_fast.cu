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

/* The tile: 8 x 8 outputs a thread; for K = 2, 3, 4 with D = 1 the configuration simt_cfg_lean_4w
 * (gpu/simt_conv.h: 4 warps, 64 x 128 outputs a block, three blocks per SM, the lean slab loop), chosen
 * by measurement on an H200 at the headline shape: 2.905 ms, 1.66x cuDNN's first deterministic FP32
 * algorithm, 72.6 % of the 65.2 TFLOP/s FP32 ceiling (notes/fast-kernels.md, tuning rounds 2-4, where the
 * other tiles and configurations measured are kept). Every configuration gives the same bits. */
#define FAST_TM 8
#define FAST_TN 8

/* The general instance (any K, D) runs 8 x 8 tiles of 128 x 128 blocks (simt_cfg_general); the fixed
 * instances have pads of at most 3, which every tile fits. */
static const char *fp32_fast_supported(const c1d_shape *s) { return simt_supported(s, 128, 128); }

static c1d_status launch_fp32_fast(const c1d_shape *s, const float *x, const float *w, const float *b,
                                   float *y, c1d_exec *ex) {
  using CFG = simt_cfg_lean_4w;
  constexpr int TM = FAST_TM, TN = FAST_TN;
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
  const simt_geom g = simt_make_geom(s, simt_bm<TM, CFG>::value, simt_bn<TN, CFG>::value, x, w, y);
  if (s->K == 4 && D == 1)
    return simt_launch<TM, TN, 4, 1, false, CFG>(s, &g, x, w, b, y, stream, "simt_conv_kernel<K=4,D=1>");
  if (s->K == 3 && D == 1)
    return simt_launch<TM, TN, 3, 1, false, CFG>(s, &g, x, w, b, y, stream, "simt_conv_kernel<K=3,D=1>");
  if (s->K == 2 && D == 1)
    return simt_launch<TM, TN, 2, 1, false, CFG>(s, &g, x, w, b, y, stream, "simt_conv_kernel<K=2,D=1>");
  const simt_geom g8 = simt_make_geom(s, 128, 128, x, w, y);
  return simt_launch<8, 8, 0, 0, false, simt_cfg_general>(s, &g8, x, w, b, y, stream, "simt_conv_kernel<general>");
}

extern "C" const c1d_impl c1d_gpu_fp32_fast = {
    .name = "gpu_fp32_fast",
    .summary = "fp32; register-tiled implicit GEMM (cp.async slabs, register windows); the naive order",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP32,
    .twin = "naive",
    .twin_bit_exact = 1,
    .supported = fp32_fast_supported,
    .setup = NULL,
    .teardown = NULL,
    .run = launch_fp32_fast,
};
