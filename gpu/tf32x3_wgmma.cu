/* gpu_3xtf32: FP32-class accuracy from TF32 tensor cores (CUTLASS example 27's 3xTF32), with the sum
 * kept out of the tensor core. Every x and w is split into big = tf32(v) and small = tf32(v - big) (rna;
 * v - big is exact); small*small (about 2^-22 of a product) is dropped. Per chain of two k-steps (16
 * reduction terms) and per output:
 *   t = +0; per k-step: t = wgmma(x_big, w_small, t); t = wgmma(x_small, w_big, t); t = wgmma(x_big, w_big, t);
 *   then acc = acc + t
 * The tensor core rounds each k-step's result toward zero, so it only ever truncates a chain's partial t;
 * the running sum acc (starting at b[o]) is rounded to nearest by __fadd_rn. Engine: gpu/wgmma_conv.h
 * (warpgroup wgmma m64n128k8, 128 times x 128 channels a block; sm_90a only).
 * Statistical twin: cpu/split_3xtf32.c (the same split, product classes, chains, truncation of t and IEEE
 * sum). The mma.sync kernel it replaces (2.36 ms at the headline shape, the same order) and every
 * variant measured on the way are in notes/fast-kernels.md.
 * Limits: K <= 8; a Hopper GPU; the slab within 227 KiB of shared memory. */
#include "gpu/wgmma_conv.h"

static const char *x3_supported(const c1d_shape *s) { return wgc_supported(s, 1); }
static c1d_status x3_setup(const c1d_shape *s, c1d_exec *ex) { return wgc_setup(s, ex, 1, "gpu_3xtf32"); }
static c1d_status x3_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                         c1d_exec *ex) {
  return wgc_run<true>(s, x, w, b, y, ex, "gpu_3xtf32");
}

extern "C" const c1d_impl c1d_gpu_3xtf32 = {
    .name = "gpu_3xtf32",
    .summary = "3xtf32; x, w split into tf32 big+small, small*big + big*small + big*big by wgmma over "
               "chains of two k-steps, then added to the fp32 sum (rn)",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_3XTF32,
    .twin = "split_3xtf32",
    .twin_bit_exact = 0,
    .supported = x3_supported,
    .setup = x3_setup,
    .teardown = wgc_teardown,
    .run = x3_run,
};
