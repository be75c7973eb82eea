/* gpu_kahan_fast: compensated summation at register-tiled speed. The engine of gpu_fp32_fast
 * (gpu/simt_conv.h) with 4 x 8 outputs per thread (a sum and a compensation each) and a blocked Kahan
 * order: per input channel the K taps are summed by an fma chain that starts from -comp, and that
 * partial enters the running sum through one Kahan step:
 *   sum = b[o] (or +0), comp = +0; for c = 0..C-1:
 *     p = -comp; for k = 0..K-1: p = fma(x, w[o,c,k], p);     (x = +0 before t = 0)
 *     t = sum + p; comp = (t - sum) - p; sum = t
 * K+3 operations per channel instead of gpu_kahan's 5 per product. The fma chain rounds at the
 * magnitude of one channel's partial, not of the running sum, and the sum itself is compensated, so the
 * error does not grow with C (about 4e-8 relative L2 on normal data, against naive's 5e-7). Bit-exact twin: cpu/kahan_blocked.c. Instances: (K, D) = (4, 1) and the general one.
 * Limits: simt_supported() with 64 output channels per block. */
#include "gpu/simt_conv.h"

#define KFAST_TM 4
#define KFAST_BM (16 * KFAST_TM)
/* K = 4, D = 1 runs simt_cfg_fixed_8w (compile-time staging), the fastest of the three engine versions
 * measured on an H200 at the headline shape (5.759 ms; notes/fast-kernels.md); other shapes the general
 * instance. Same bits in all. */

static const char *kahan_fast_supported(const c1d_shape *s) { return simt_supported(s, KFAST_BM, 128); }

static c1d_status launch_kahan_fast(const c1d_shape *s, const float *x, const float *w, const float *b,
                                    float *y, c1d_exec *ex) {
  const char *why = kahan_fast_supported(s);
  if (why) return c1d_fail(C1D_ERR_UNSUPPORTED, "gpu_kahan_fast: %s (K=%lld, D=%lld)", why,
                           (long long)s->K, (long long)s->D);
  const simt_geom g = simt_make_geom(s, KFAST_BM, 128, x, w, y);
  const cudaStream_t stream = c1d_stream_of(ex);
  if (ex) {
    ex->algo[0] = '\0';
    snprintf(ex->math, sizeof ex->math, "%s", "FMA (fp32), blocked Kahan per channel");
    ex->used_tf32 = 0;
  }
  if (s->K == 4 && s->D == 1)
    return simt_launch<KFAST_TM, 8, 4, 1, true, simt_cfg_fixed_8w>(s, &g, x, w, b, y, stream,
                                                     "simt_conv_kernel<kahan,K=4,D=1>");
  return simt_launch<KFAST_TM, 8, 0, 0, true, simt_cfg_general>(s, &g, x, w, b, y, stream,
                                                 "simt_conv_kernel<kahan,general>");
}

extern "C" const c1d_impl c1d_gpu_kahan_fast = {
    .name = "gpu_kahan_fast",
    .summary = "fp32 blocked Kahan: per channel an fma chain over K taps from -comp, then one Kahan "
               "step; register-tiled",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP32_COMP,
    .twin = "kahan_blocked",
    .twin_bit_exact = 1,
    .supported = kahan_fast_supported,
    .setup = NULL,
    .teardown = NULL,
    .run = launch_kahan_fast,
};
