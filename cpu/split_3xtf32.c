/* split_3xtf32: the model of gpu_3xtf32 (3xTF32 on tensor cores). x and w are split into
 * big = tf32(v) and small = tf32(v - big) (rna; c1d_split_tf32). The reduction index r = c*KP + k runs
 * in k-steps of 8 as the kernel's does (KP = K padded to 1, 2, 4 or 8, or to a multiple of 8 past 8;
 * padded taps add nothing). One mma is modelled as the tensor core was measured to behave
 * (notes/fast-kernels.md): its eight products summed exactly (in double: each product of two 11-bit
 * significands is exact), added to its accumulator input, and the result rounded toward zero.
 * Per output: acc = b[o] (or +0); per chain of k-steps (two for K = 3, 4 as gpu_3xtf32's MMA_3X_C2,
 * one otherwise): t = +0; per k-step, for each product class in the kernel's order (w_small*x_big,
 * w_big*x_small, w_big*x_big): t = rz(t + sum of its 8 products); then acc = acc + t (float32,
 * nearest-even). small*small is dropped, as in the kernel.
 * The hardware's exact alignment of the eight products is not modelled, so this predicts the kernel's
 * error statistically (relative L2), not its bits.
 * Variants, not registered (scripts/fast_bench.c and the tests use them): split_3xtf32_fold models
 * gpu_3xtf32_nt4 (one k-step per chain for every K), split_3xtf32_plain models
 * gpu_3xtf32_plain (every class added straight into acc with rz: acc = rz(acc + sum)), and
 * split_3xtf32_slab models gpu_3xtf32_slab (t restarts at +0 every 8 channels instead of every k-step). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/rows.h"
#include "numerics/arith.h"
#include "reference/impl.h"

#define SPLIT_SLAB_CHANNELS 8

/* Where the running sum lives: in the tensor core (PLAIN), in fp32 registers fed per k-step (FOLD) or
 * per 8-channel slab (SLAB). */
typedef enum split_mode { SPLIT_PLAIN, SPLIT_FOLD, SPLIT_SLAB, SPLIT_SPL } split_mode;
/* SPLIT_FOLD with chain = 2 or 4: t restarts at +0 every `chain` k-steps (the kernel's chains never
 * straddle its 8-channel slabs, and neither do these: chain divides KP). SPLIT_SPL: the two small
 * classes go straight into a second accumulator sp with rz (it lives in the tensor core for all of C),
 * w_big*x_big per k-step into t = rz(+0 + sum), acc = acc + t; at the end acc = acc + sp. */

static int64_t split_kp(int64_t K) {
  if (K <= 1) return 1;
  if (K <= 2) return 2;
  if (K <= 4) return 4;
  return (K + 7) / 8 * 8;
}

/* v rounded to float32 toward zero (finite v): the nearest float, one step toward zero where that
 * rounded up in magnitude (for a nonzero float, its bits minus one; Inf becomes FLT_MAX). Branch-free
 * bit arithmetic, so that the row loop below vectorises. */
static inline float round_toward_zero(double v) {
  const float f = (float)v; /* nearest */
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  u -= (uint32_t)(fabs((double)f) > fabs(v));
  float r;
  memcpy(&r, &u, sizeof r);
  return r;
}

/* dst[t] = rz(dst[t] + s[t]): one mma's accumulation. */
C1D_CLONES static void row_mma_add(float *restrict dst, const double *restrict s, int64_t L) {
  for (int64_t t = 0; t < L; t++) dst[t] = round_toward_zero((double)dst[t] + s[t]);
}

/* s[t] += a * v(t), v(t) = row[t - shift] and 0 for t < shift. */
C1D_CLONES static void row_product_add(double *restrict s, const float *restrict row, float a, int64_t shift,
                            int64_t L) {
  if (a == 0.0f) return; /* a zero weight part adds exact zeros */
  const int64_t t0 = shift < L ? shift : L;
  const float *xs = row - shift;
  for (int64_t t = t0; t < L; t++) s[t] += (double)a * (double)xs[t];
}

static c1d_status split_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                            split_mode mode, int chain) {
  const int64_t nx = c1d_x_count(s), nw = c1d_w_count(s), L = s->L, KP = split_kp(s->K);
  const int64_t R = s->C * KP, steps = (R + 7) / 8;
  float *xb = malloc((size_t)nx * sizeof *xb), *xsm = malloc((size_t)nx * sizeof *xsm);
  float *wb = malloc((size_t)nw * sizeof *wb), *wsm = malloc((size_t)nw * sizeof *wsm);
  c1d_status st = C1D_OK;
  int failed = 0;
  if (!xb || !xsm || !wb || !wsm) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "split_3xtf32: cannot allocate %.1f MB for the split inputs",
                  (double)(nx + nw) * 8e-6);
    goto done;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < nx; i++) c1d_split_tf32(x[i], &xb[i], &xsm[i]);
  for (int64_t i = 0; i < nw; i++) c1d_split_tf32(w[i], &wb[i], &wsm[i]);

#pragma omp parallel reduction(| : failed)
  {
    double *sum = malloc((size_t)L * sizeof *sum);
    float *part = malloc((size_t)L * sizeof *part), *sp = malloc((size_t)L * sizeof *sp);
    failed = sum == NULL || part == NULL || sp == NULL;
#pragma omp for schedule(dynamic, 1)
    for (int64_t no = 0; no < s->N * s->O; no++) {
      if (failed) continue;
      const int64_t n = no / s->O, o = no % s->O;
      float *acc = y + c1d_y_index(s, n, o, 0);
      for (int64_t t = 0; t < L; t++) acc[t] = s->bias ? b[o] : 0.0f;
      float *target = mode == SPLIT_PLAIN ? acc : part;
      for (int64_t t = 0; t < L; t++) sp[t] = 0.0f;
      for (int64_t ks = 0; ks < steps; ks++) {
        const int64_t r0 = ks * 8;
        if ((mode == SPLIT_FOLD && ks % chain == 0) || mode == SPLIT_SPL ||
            (mode == SPLIT_SLAB && r0 % (SPLIT_SLAB_CHANNELS * KP) == 0))
          for (int64_t t = 0; t < L; t++) part[t] = 0.0f;
        for (int cls = 0; cls < 3; cls++) { /* w_small*x_big, w_big*x_small, w_big*x_big */
          for (int64_t t = 0; t < L; t++) sum[t] = 0.0;
          for (int64_t r = r0; r < r0 + 8 && r < R; r++) {
            const int64_t c = r / KP, k = r % KP;
            if (k >= s->K) continue;
            const int64_t wi = c1d_w_index(s, o, c, k), xi = c1d_x_index(s, n, c, 0);
            const float a = cls == 0 ? wsm[wi] : wb[wi];
            const float *row = cls == 1 ? xsm + xi : xb + xi;
            row_product_add(sum, row, a, -c1d_source_time(s, 0, k), L);
          }
          row_mma_add(mode == SPLIT_SPL && cls < 2 ? sp : target, sum, L);
        }
        const int64_t r_next = r0 + 8;
        if ((mode == SPLIT_FOLD && ((ks + 1) % chain == 0 || ks + 1 == steps)) || mode == SPLIT_SPL ||
            (mode == SPLIT_SLAB && (r_next % (SPLIT_SLAB_CHANNELS * KP) == 0 || r_next >= R)))
          for (int64_t t = 0; t < L; t++) acc[t] = c1d_add(acc[t], part[t]);
      }
      if (mode == SPLIT_SPL)
        for (int64_t t = 0; t < L; t++) acc[t] = c1d_add(acc[t], sp[t]);
    }
    free(sum);
    free(part);
    free(sp);
  }
  if (failed) st = c1d_fail(C1D_ERR_NO_MEMORY, "split_3xtf32: cannot allocate its rows");
done:
  free(xb);
  free(xsm);
  free(wb);
  free(wsm);
  return st;
}

/* gpu_3xtf32 chains two k-steps per truncated partial for K = 3, 4 (KP = 4), one for other K. */
static c1d_status split_3xtf32_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                                   float *y, c1d_exec *ex) {
  return split_run(s, x, w, b, y, SPLIT_FOLD, split_kp(s->K) == 4 ? 2 : 1);
}

static c1d_status split_3xtf32_fold_run(const c1d_shape *s, const float *x, const float *w,
                                        const float *b, float *y, c1d_exec *ex) {
  return split_run(s, x, w, b, y, SPLIT_FOLD, 1);
}

static c1d_status split_3xtf32_slab_run(const c1d_shape *s, const float *x, const float *w,
                                        const float *b, float *y, c1d_exec *ex) {
  return split_run(s, x, w, b, y, SPLIT_SLAB, 1);
}

static c1d_status split_3xtf32_plain_run(const c1d_shape *s, const float *x, const float *w,
                                         const float *b, float *y, c1d_exec *ex) {
  return split_run(s, x, w, b, y, SPLIT_PLAIN, 1);
}

const c1d_impl c1d_cpu_split_3xtf32 = {
    .name = "split_3xtf32",
    .summary = "model of 3xTF32: x, w split into tf32 big+small; per chain of 8-term k-steps (two for "
               "K = 3, 4) the classes small*big, big*small, big*big summed exactly, truncated (as the "
               "tensor core), then added to the fp32 sum",
    .backend = C1D_BACKEND_CPU,
    .precision = C1D_PREC_3XTF32,
    .run = split_3xtf32_run,
};

const c1d_impl c1d_cpu_split_3xtf32_fold = {
    .name = "split_3xtf32_fold",
    .summary = "model of gpu_3xtf32_nt4: split_3xtf32 with one k-step per truncated partial for every K",
    .backend = C1D_BACKEND_CPU,
    .precision = C1D_PREC_3XTF32,
    .run = split_3xtf32_fold_run,
};

const c1d_impl c1d_cpu_split_3xtf32_plain = {
    .name = "split_3xtf32_plain",
    .summary = "model of gpu_3xtf32_plain: split_3xtf32's classes truncated straight into the sum",
    .backend = C1D_BACKEND_CPU,
    .precision = C1D_PREC_3XTF32,
    .run = split_3xtf32_plain_run,
};

const c1d_impl c1d_cpu_split_3xtf32_slab = {
    .name = "split_3xtf32_slab",
    .summary = "model of gpu_3xtf32_slab: split_3xtf32's steps into a per-8-channel slab sum, then "
               "added in fp32",
    .backend = C1D_BACKEND_CPU,
    .precision = C1D_PREC_3XTF32,
    .run = split_3xtf32_slab_run,
};

/* Models of the tuning-round-3 kernels (gpu/tf32x3_mma.cu), not registered. */
static c1d_status split_3xtf32_c2_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                                      float *y, c1d_exec *ex) {
  return split_run(s, x, w, b, y, SPLIT_FOLD, 2);
}
static c1d_status split_3xtf32_c4_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                                      float *y, c1d_exec *ex) {
  return split_run(s, x, w, b, y, SPLIT_FOLD, 4);
}
static c1d_status split_3xtf32_spl_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                                       float *y, c1d_exec *ex) {
  return split_run(s, x, w, b, y, SPLIT_SPL, 1);
}

const c1d_impl c1d_cpu_split_3xtf32_c2 = {
    .name = "split_3xtf32_c2",
    .summary = "model of 3xTF32 with the truncated partial t spanning two k-steps",
    .backend = C1D_BACKEND_CPU,
    .precision = C1D_PREC_3XTF32,
    .run = split_3xtf32_c2_run,
};
const c1d_impl c1d_cpu_split_3xtf32_c4 = {
    .name = "split_3xtf32_c4",
    .summary = "model of 3xTF32 with the truncated partial t spanning four k-steps",
    .backend = C1D_BACKEND_CPU,
    .precision = C1D_PREC_3XTF32,
    .run = split_3xtf32_c4_run,
};
const c1d_impl c1d_cpu_split_3xtf32_spl = {
    .name = "split_3xtf32_spl",
    .summary = "model of 3xTF32 with the small products in a truncating accumulator, big*big folded per k-step",
    .backend = C1D_BACKEND_CPU,
    .precision = C1D_PREC_3XTF32,
    .run = split_3xtf32_spl_run,
};
