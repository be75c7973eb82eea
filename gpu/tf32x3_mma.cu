/* gpu_3xtf32: FP32-class accuracy from TF32 tensor cores (CUTLASS example 27's 3xTF32). Every x and w is
 * split into big = tf32(v) and small = tf32(v - big) (rna rounding; v - big is exact), and each k-step
 * runs three mma.sync.m16n8k8 into the FP32 accumulator, small products first:
 *   acc = mma(w_small, x_big, acc); acc = mma(w_big, x_small, acc); acc = mma(w_big, x_big, acc)
 * small*small (about 2^-22 of a product) is dropped. Engine: gpu/mma_tf32.h, mode MMA_3X; block tile
 * 128 x 256, slabs of 8 channels. Statistical twin: cpu/split_3xtf32.c (the same split and product
 * classes, each k-step's eight products summed exactly and added to the accumulator with one rounding).
 *
 * Variants, not in the registry (scripts/fast_bench.c compares them; K = 3, 4 only):
 * c1d_gpu_3xtf32_slab: the same products, but every slab of 8 channels accumulates from +0 in the
 * tensor core and is then added to the running sum with one IEEE add, so that the tensor core's own
 * accumulation never spans more than 12 mma (warp tile 64 x 32).
 * c1d_gpu_3xtf32_nt4: gpu_3xtf32 with a 64 x 32 warp tile and two blocks per SM.
 * Limits: K <= 8; the slab within 227 KiB of shared memory. */
#include "gpu/mma_tf32.h"

static const char *x3_supported(const c1d_shape *s) { return mma_supported(s, MMA_3X, 8, 1, 1); }
static c1d_status x3_setup(const c1d_shape *s, c1d_exec *ex) {
  return mma_setup(s, ex, MMA_3X, 8, 1, 1, "gpu_3xtf32");
}
static c1d_status x3_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                         c1d_exec *ex) {
  return mma_run<MMA_3X, 8, 1, true>(s, x, w, b, y, ex, "gpu_3xtf32");
}

extern "C" const c1d_impl c1d_gpu_3xtf32 = {
    .name = "gpu_3xtf32",
    .summary = "3xtf32; x, w split into tf32 big+small, small*big + big*small + big*big by mma.sync, "
               "fp32 accumulate",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_3XTF32,
    .twin = "split_3xtf32",
    .twin_bit_exact = 0,
    .mutant = 0,
    .supported = x3_supported,
    .setup = x3_setup,
    .teardown = mma_teardown,
    .run = x3_run,
};

static const char *x3s_supported(const c1d_shape *s) {
  return mma_supported(s, MMA_3X_SLAB, 4, 1, 0);
}
static c1d_status x3s_setup(const c1d_shape *s, c1d_exec *ex) {
  return mma_setup(s, ex, MMA_3X_SLAB, 4, 1, 0, "gpu_3xtf32_slab");
}
static c1d_status x3s_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                          c1d_exec *ex) {
  return mma_run<MMA_3X_SLAB, 4, 1, false>(s, x, w, b, y, ex, "gpu_3xtf32_slab");
}

extern "C" const c1d_impl c1d_gpu_3xtf32_slab = {
    .name = "gpu_3xtf32_slab",
    .summary = "3xtf32 with a fresh tensor-core accumulator per 8-channel slab, added in IEEE fp32 "
               "(K = 3, 4 only)",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_3XTF32,
    .twin = "split_3xtf32",
    .twin_bit_exact = 0,
    .mutant = 0,
    .supported = x3s_supported,
    .setup = x3s_setup,
    .teardown = mma_teardown,
    .run = x3s_run,
};

/* Variant (not registered): gpu_3xtf32 with a 64 x 32 warp tile and two blocks per SM. */
static const char *x3n_supported(const c1d_shape *s) { return mma_supported(s, MMA_3X, 4, 2, 0); }
static c1d_status x3n_setup(const c1d_shape *s, c1d_exec *ex) {
  return mma_setup(s, ex, MMA_3X, 4, 2, 0, "gpu_3xtf32_nt4");
}
static c1d_status x3n_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                          c1d_exec *ex) {
  return mma_run<MMA_3X, 4, 2, false>(s, x, w, b, y, ex, "gpu_3xtf32_nt4");
}

extern "C" const c1d_impl c1d_gpu_3xtf32_nt4 = {
    .name = "gpu_3xtf32_nt4",
    .summary = "gpu_3xtf32 with a 64x32 warp tile and two blocks per SM (K = 3, 4 only)",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_3XTF32,
    .twin = "split_3xtf32",
    .twin_bit_exact = 0,
    .mutant = 0,
    .supported = x3n_supported,
    .setup = x3n_setup,
    .teardown = mma_teardown,
    .run = x3n_run,
};
