/* gpu_tf32_smem_a: gpu_tf32 with operand A (the im2col of x, rounded to TF32) staged by each warpgroup
 * into shared memory in wgmma's 128-byte swizzle, so that both operands come through descriptors and a
 * warpgroup keeps one slab's wgmmas in flight while it builds the next slab's tile (two A buffers;
 * gpu/wgmma_conv.h, SA). Same arithmetic as gpu_tf32 (inputs rna, fp32 accumulation from b in the
 * tensor core), same limits. A variant kept for comparison (notes/fast-kernels.md). */
#include "gpu/wgmma_conv.h"

static const char *supported(const c1d_shape *s) { return wgc_supported(s, 0, 1); }
static c1d_status setup(const c1d_shape *s, c1d_exec *ex) { return wgc_setup(s, ex, 0, 1, "gpu_tf32_smem_a"); }
static c1d_status run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                      c1d_exec *ex) {
  return wgc_run<false, true>(s, x, w, b, y, ex, "gpu_tf32_smem_a");
}

extern "C" const c1d_impl c1d_gpu_tf32_smem_a = {
    .name = "gpu_tf32_smem_a",
    .summary = "tf32; gpu_tf32 with the im2col of x staged in shared memory (wgmma A and B from smem)",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_TF32,
    .twin = "tf32_inputs",
    .twin_bit_exact = 0,
    .tier = C1D_TIER_VARIANT,
    .supported = supported,
    .setup = setup,
    .teardown = wgc_teardown,
    .run = run,
};
