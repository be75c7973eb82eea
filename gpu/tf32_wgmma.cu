/* gpu_tf32: TF32 tensor cores as cuDNN uses them when TF32 is allowed, written out for Hopper. x and w
 * are rounded to TF32 once (cvt.rna.tf32.f32: nearest, ties away; w in the weight rewrite of each run, x
 * as its fragments leave shared memory), then an implicit GEMM on warpgroup wgmma m64n256k8 accumulates
 * in FP32, starting from b[o] (gpu/wgmma_conv.h: 128 times x 256 channels a block, the weights and the x
 * windows by the bulk tensor copy, three slabs of 32 reduction entries in flight ahead of the one in use;
 * 0.423 ms at the headline shape on an H200, notes/fast-kernels.md round 6).
 * sm_90a only.
 * Accuracy: the input rounding dominates (relative L2 about 3e-4 on normal data); the tensor core sums
 * each k-step of 8 products in its own (non-IEEE) way, so the CPU model `tf32_inputs` (TF32 inputs, FP32
 * fma in the naive order) is a statistical twin: same relative L2 within a few percent, not the same bits.
 * The mma.sync kernel it replaced (0.90 ms) and the first wgmma engine (0.70 ms) are in notes/fast-kernels.md.
 * Limits: K <= 8; a Hopper GPU; the slab within 227 KiB of shared memory. */
#include "gpu/wgmma_conv.h"

static const char *tf32_supported(const c1d_shape *s) { return wgc_supported(s, 0); }
static c1d_status tf32_setup(const c1d_shape *s, c1d_exec *ex) { return wgc_setup(s, ex, 0, "gpu_tf32"); }
static c1d_status tf32_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                           c1d_exec *ex) {
  return wgc_run<false>(s, x, w, b, y, ex, "gpu_tf32");
}

extern "C" const c1d_impl c1d_gpu_tf32 = {
    .name = "gpu_tf32",
    .summary = "tf32; inputs rounded (rna), wgmma m64n256k8 implicit GEMM (Hopper), fp32 accumulate from b",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_TF32,
    .twin = "tf32_inputs",
    .twin_bit_exact = 0,
    .supported = tf32_supported,
    .setup = tf32_setup,
    .teardown = wgc_teardown,
    .run = tf32_run,
};
