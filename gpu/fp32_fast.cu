/* gpu_fp32_fast: the fastest FP32 kernel convlab has, and still the naive order. A register-tiled
 * implicit GEMM on the FMA units (gpu/simt_conv.h): a block of 256 threads computes 128 output channels
 * x 128 times, each thread an 8 x 8 tile (8 channels x 8 consecutive times); slabs of 8 input channels
 * with their (K-1)*D halo and the block's weights stream through three shared-memory buffers by cp.async
 * (16-byte copies where aligned); the K taps of a channel reuse one register window of inputs.
 * Per output the arithmetic is exactly cpu/naive.c's:
 *   acc = b[o] (or +0); for c = 0..C-1, for k = 0..K-1: acc = fma(x, w[o,c,k], acc)
 * (x = +0 before t = 0, the fma still performed), so it equals gpu_naive and the CPU naive twin bit for
 * bit; the speed comes from data reuse alone. Instances with K and D fixed at compile time: (4,1), (3,1),
 * (2,1); every other (K, D) runs the general instance (same bits, taps read from shared memory).
 * Limits: simt_supported() (the slab must fit in 227 KiB of shared memory; pad <= 2^20). */
#include "gpu/simt_conv.h"

#define FAST_TM 8
#define FAST_BM (16 * FAST_TM)

static const char *fp32_fast_supported(const c1d_shape *s) { return simt_supported(s, FAST_BM); }

static c1d_status launch_fp32_fast(const c1d_shape *s, const float *x, const float *w, const float *b,
                                   float *y, c1d_exec *ex) {
  const char *why = fp32_fast_supported(s);
  if (why) return c1d_fail(C1D_ERR_UNSUPPORTED, "gpu_fp32_fast: %s (K=%lld, D=%lld)", why,
                           (long long)s->K, (long long)s->D);
  const simt_geom g = simt_make_geom(s, FAST_BM, x, w, y);
  const cudaStream_t stream = c1d_stream_of(ex);
  const int64_t D = s->K > 1 ? s->D : 1;
  if (ex) {
    ex->algo[0] = '\0';
    snprintf(ex->math, sizeof ex->math, "%s", "FMA (fp32), naive order");
    ex->used_tf32 = 0;
  }
  if (s->K == 4 && D == 1)
    return simt_launch<FAST_TM, 4, 1, false>(s, &g, x, w, b, y, stream, "simt_conv_kernel<8,4,1>");
  if (s->K == 3 && D == 1)
    return simt_launch<FAST_TM, 3, 1, false>(s, &g, x, w, b, y, stream, "simt_conv_kernel<8,3,1>");
  if (s->K == 2 && D == 1)
    return simt_launch<FAST_TM, 2, 1, false>(s, &g, x, w, b, y, stream, "simt_conv_kernel<8,2,1>");
  return simt_launch<FAST_TM, 0, 0, false>(s, &g, x, w, b, y, stream, "simt_conv_kernel<8,0,0>");
}

extern "C" const c1d_impl c1d_gpu_fp32_fast = {
    .name = "gpu_fp32_fast",
    .summary = "fp32; register-tiled implicit GEMM (8x8 per thread, cp.async slabs); the naive order",
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
