/* split_3xtf32: the model of gpu_3xtf32 (3xTF32 on tensor cores). x and w are split into
 * big = tf32(v) and small = tf32(v - big) (rna; c1d_split_tf32). The reduction index r = c*KP + k runs
 * in k-steps of 8 as the kernel's does (KP = K padded to 1, 2, 4 or 8, or to a multiple of 8 past 8;
 * padded taps add nothing). One mma is modelled as the tensor core was measured to behave
 * (notes/fast-kernels.md): its eight products summed exactly (in double: each product of two 11-bit
 * significands is exact), added to its accumulator input, and the result rounded toward zero.
 * Per output: acc = b[o] (or +0); per chain of two k-steps (gpu_3xtf32's chains, which never straddle
 * its 4-k-step slabs): t = +0; per k-step, for each product class in the kernel's order (w_small*x_big,
 * w_big*x_small, w_big*x_big): t = rz(t + sum of its 8 products); then acc = acc + t (float32,
 * nearest-even). small*small is dropped, as in the kernel.
 * The hardware's exact alignment of the eight products is not modelled, so this predicts the kernel's
 * error statistically (relative L2), not its bits. The models of the placements measured on the way
 * (the sum in the tensor core, per slab, one k-step per chain, the small classes apart) are in
 * notes/fast-kernels.md. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/rows.h"
#include "numerics/arith.h"
#include "reference/impl.h"

/* k-steps per truncated partial t. */
#define SPLIT_CHAIN 2

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

static c1d_status split_3xtf32_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                                   float *y, c1d_exec *ex) {
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
    float *part = malloc((size_t)L * sizeof *part);
    failed = sum == NULL || part == NULL;
#pragma omp for schedule(dynamic, 1)
    for (int64_t no = 0; no < s->N * s->O; no++) {
      if (failed) continue;
      const int64_t n = no / s->O, o = no % s->O;
      float *acc = y + c1d_y_index(s, n, o, 0);
      for (int64_t t = 0; t < L; t++) acc[t] = s->bias ? b[o] : 0.0f;
      for (int64_t ks = 0; ks < steps; ks++) {
        const int64_t r0 = ks * 8;
        if (ks % SPLIT_CHAIN == 0)
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
          row_mma_add(part, sum, L);
        }
        if ((ks + 1) % SPLIT_CHAIN == 0 || ks + 1 == steps)
          for (int64_t t = 0; t < L; t++) acc[t] = c1d_add(acc[t], part[t]);
      }
    }
    free(sum);
    free(part);
  }
  if (failed) st = c1d_fail(C1D_ERR_NO_MEMORY, "split_3xtf32: cannot allocate its rows");
done:
  free(xb);
  free(xsm);
  free(wb);
  free(wsm);
  return st;
}

const c1d_impl c1d_cpu_split_3xtf32 = {
    .name = "split_3xtf32",
    .summary = "model of 3xTF32: x, w split into tf32 big+small; per chain of two 8-term k-steps the "
               "classes small*big, big*small, big*big summed exactly, truncated (as the tensor core), "
               "then added to the fp32 sum",
    .backend = C1D_BACKEND_CPU,
    .precision = C1D_PREC_3XTF32,
    .run = split_3xtf32_run,
};
