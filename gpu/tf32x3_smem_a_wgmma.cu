/* gpu_3xtf32_smem_a: gpu_3xtf32 with operand A (the im2col of x, split into TF32 big and small) staged
 * by each warpgroup into shared memory in wgmma's 128-byte swizzle, built once per slab before its two
 * chains (gpu/wgmma_conv.h, SA). Same arithmetic and order as gpu_3xtf32 (chains of two k-steps from
 * +0, truncated in the tensor core, added to the fp32 sum with __fadd_rn), same limits. A variant kept
 * for comparison (notes/fast-kernels.md). */
#include "gpu/wgmma_conv.h"

static const char *supported(const c1d_shape *s) { return wgc_supported(s, 1, 1); }
static c1d_status setup(const c1d_shape *s, c1d_exec *ex) { return wgc_setup(s, ex, 1, 1, "gpu_3xtf32_smem_a"); }
static c1d_status run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                      c1d_exec *ex) {
  return wgc_run<true, true>(s, x, w, b, y, ex, "gpu_3xtf32_smem_a");
}

extern "C" const c1d_impl c1d_gpu_3xtf32_smem_a = {
    .name = "gpu_3xtf32_smem_a",
    .summary = "3xtf32; gpu_3xtf32 with the split im2col of x staged in shared memory (wgmma A and B from smem)",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_3XTF32,
    .twin = "split_3xtf32",
    .twin_bit_exact = 0,
    .tier = C1D_TIER_VARIANT,
    .supported = supported,
    .setup = setup,
    .teardown = wgc_teardown,
    .run = run,
};
