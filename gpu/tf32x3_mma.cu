/* gpu_3xtf32: FP32-class accuracy from TF32 tensor cores (CUTLASS example 27's 3xTF32), with the sum
 * kept out of the tensor core. Every x and w is split into big = tf32(v) and small = tf32(v - big) (rna;
 * v - big is exact); small*small (about 2^-22 of a product) is dropped. Per k-step of 8 reduction terms
 * and per 16x8 tile:
 *   t = mma(w_small, x_big, 0); t = mma(w_big, x_small, t); t = mma(w_big, x_big, t);   acc = acc + t
 * The tensor core rounds each mma toward zero (measured), so it only ever truncates one k-step's partial
 * t; the running sum acc (starting at b[o]) is rounded to nearest by __fadd_rn. Engine: gpu/mma_tf32.h,
 * mode MMA_3X_FOLD; slabs of 8 channels.
 * Statistical twin: cpu/split_3xtf32.c (the same split, product classes, k-steps, truncation of t and
 * IEEE sum), compared by relative L2: 2.23e-7 against the model's 2.25e-7 (H200, C*K = 1024).
 * Block tile 128 x 256 (warp tile 64 x 64, one block per SM), or for K = 3, 4 128 x 128 (warp tile
 * 64 x 32, two blocks per SM): X3_NT4_FOR_K4.
 *
 * Variants, not in the registry (scripts/fast_bench.c measures them; K = 3, 4 only):
 * c1d_gpu_3xtf32_plain: the three mma straight into acc, as CUTLASS does. 384 truncations of the sum
 *   per output at the headline shape: relative L2 7.2e-6 against the float64 oracle (model:
 *   split_3xtf32_plain).
 * c1d_gpu_3xtf32_slab: a fresh tensor-core accumulator per 8-channel slab, added to acc in IEEE fp32
 *   (second accumulator set, so a 64 x 32 warp tile; model split_3xtf32_slab).
 * Limits: K <= 8; the slab within 227 KiB of shared memory. */
#include "gpu/mma_tf32.h"

/* 1: K = 3, 4 run the 64 x 32 warp-tile instance at two blocks per SM (gpu_3xtf32_nt4's code), other K
 * the 64 x 64 one; 0: every K the 64 x 64 one. Chosen by measurement on an H200 at the headline shape
 * (notes/fast-kernels.md): 64 x 32 at two blocks per SM 2.509 / 2.486 ms, 64 x 64 at one 2.525 / 2.509. */
#define X3_NT4_FOR_K4 1

static int x3_use_nt4(const c1d_shape *s) { return X3_NT4_FOR_K4 && mma_kp(s->K) == 4; }

static const char *x3_supported(const c1d_shape *s) {
  return x3_use_nt4(s) ? mma_supported(s, MMA_3X_FOLD, 4, 2, 0) : mma_supported(s, MMA_3X_FOLD, 8, 1, 1);
}
static c1d_status x3_setup(const c1d_shape *s, c1d_exec *ex) {
  return x3_use_nt4(s) ? mma_setup(s, ex, MMA_3X_FOLD, 4, 2, 0, "gpu_3xtf32")
                       : mma_setup(s, ex, MMA_3X_FOLD, 8, 1, 1, "gpu_3xtf32");
}
static c1d_status x3_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                         c1d_exec *ex) {
  if (x3_use_nt4(s)) return mma_run<MMA_3X_FOLD, 4, 2, false>(s, x, w, b, y, ex, "gpu_3xtf32");
  return mma_run<MMA_3X_FOLD, 8, 1, true>(s, x, w, b, y, ex, "gpu_3xtf32");
}

extern "C" const c1d_impl c1d_gpu_3xtf32 = {
    .name = "gpu_3xtf32",
    .summary = "3xtf32; x, w split into tf32 big+small, per k-step small*big + big*small + big*big by "
               "mma.sync, then added to the fp32 sum (rn)",
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

// --- variants -------------------------------------------------------------------------------------------

static const char *x3p_supported(const c1d_shape *s) { return mma_supported(s, MMA_3X, 8, 1, 0); }
static c1d_status x3p_setup(const c1d_shape *s, c1d_exec *ex) {
  return mma_setup(s, ex, MMA_3X, 8, 1, 0, "gpu_3xtf32_plain");
}
static c1d_status x3p_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                          c1d_exec *ex) {
  return mma_run<MMA_3X, 8, 1, false>(s, x, w, b, y, ex, "gpu_3xtf32_plain");
}

extern "C" const c1d_impl c1d_gpu_3xtf32_plain = {
    .name = "gpu_3xtf32_plain",
    .summary = "3xtf32 with the sum in the tensor core (CUTLASS's order; truncated 3 times per k-step)",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_3XTF32,
    .twin = "split_3xtf32_plain",
    .twin_bit_exact = 0,
    .mutant = 0,
    .supported = x3p_supported,
    .setup = x3p_setup,
    .teardown = mma_teardown,
    .run = x3p_run,
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
    .summary = "3xtf32 with a fresh tensor-core accumulator per 8-channel slab, added in IEEE fp32",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_3XTF32,
    .twin = "split_3xtf32_slab",
    .twin_bit_exact = 0,
    .mutant = 0,
    .supported = x3s_supported,
    .setup = x3s_setup,
    .teardown = mma_teardown,
    .run = x3s_run,
};

/* c1d_gpu_3xtf32_nt4 (variant, K = 3, 4 only): gpu_3xtf32's order with a 64 x 32 warp tile and two
 * blocks per SM (128 registers). */
static const char *x3n_supported(const c1d_shape *s) { return mma_supported(s, MMA_3X_FOLD, 4, 2, 0); }
static c1d_status x3n_setup(const c1d_shape *s, c1d_exec *ex) {
  return mma_setup(s, ex, MMA_3X_FOLD, 4, 2, 0, "gpu_3xtf32_nt4");
}
static c1d_status x3n_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                          c1d_exec *ex) {
  return mma_run<MMA_3X_FOLD, 4, 2, false>(s, x, w, b, y, ex, "gpu_3xtf32_nt4");
}

extern "C" const c1d_impl c1d_gpu_3xtf32_nt4 = {
    .name = "gpu_3xtf32_nt4",
    .summary = "gpu_3xtf32 with a 64x32 warp tile, two blocks per SM",
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
