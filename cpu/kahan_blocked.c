/* kahan_blocked: Kahan summation over channels, an fma chain within each channel. Per output:
 *   sum = b[o] (or +0), comp = +0; for c = 0..C-1:
 *     p = -comp; for k = 0..K-1: p = fma(x, w[o,c,k], p)      (x = +0 before t = 0, fma still done)
 *     t = sum + p; comp = (t - sum) - p; sum = t
 * The compensation enters the next channel's chain as its starting value, which saves Kahan's separate
 * "y = v - comp". Only the K-term chains round at the magnitude of a channel's partial; the running sum
 * is compensated, so the error does not grow with C. Float32 throughout, every operation explicit
 * (numerics/arith.h). Bit-exact twin of gpu_kahan_fast. */
#include <stdlib.h>

#include "cpu/rows.h"
#include "numerics/arith.h"
#include "reference/impl.h"

/* p[t] = -comp[t] */
C1D_CLONES static void row_negate(float *restrict p, const float *restrict comp, int64_t L) {
  for (int64_t t = 0; t < L; t++) p[t] = -comp[t];
}

/* One Kahan step per t, adding the channel partial p[t] (which already carries -comp[t]). */
C1D_CLONES static void row_kahan_partial(float *restrict sum, float *restrict comp,
                                         const float *restrict p, int64_t L) {
  for (int64_t t = 0; t < L; t++) {
    const float s = c1d_add(sum[t], p[t]);
    comp[t] = c1d_sub(c1d_sub(s, sum[t]), p[t]);
    sum[t] = s;
  }
}

static c1d_status kahan_blocked_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                                    float *y, c1d_exec *ex) {
  int failed = 0;
#pragma omp parallel reduction(| : failed)
  {
    float *comp = malloc((size_t)s->L * sizeof *comp), *p = malloc((size_t)s->L * sizeof *p);
    failed = comp == NULL || p == NULL;
#pragma omp for schedule(dynamic, 1)
    for (int64_t no = 0; no < s->N * s->O; no++) {
      if (failed) continue;
      const int64_t n = no / s->O, o = no % s->O;
      float *sum = y + c1d_y_index(s, n, o, 0);
      c1d_row_fill(sum, s->bias ? b[o] : 0.0f, s->L);
      c1d_row_fill(comp, 0.0f, s->L);
      for (int64_t c = 0; c < s->C; c++) {
        row_negate(p, comp, s->L);
        for (int64_t k = 0; k < s->K; k++)
          c1d_row_fma(p, x + c1d_x_index(s, n, c, 0), w[c1d_w_index(s, o, c, k)],
                      -c1d_source_time(s, 0, k), s->L);
        row_kahan_partial(sum, comp, p, s->L);
      }
    }
    free(comp);
    free(p);
  }
  if (failed) return c1d_fail(C1D_ERR_NO_MEMORY, "kahan_blocked: cannot allocate two rows of %lld floats",
                              (long long)s->L);
  return C1D_OK;
}

const c1d_impl c1d_cpu_kahan_blocked = {
    .name = "kahan_blocked",
    .summary = "fp32 blocked Kahan: per channel an fma chain over K taps from -comp, then one Kahan step",
    .backend = C1D_BACKEND_CPU,
    .precision = C1D_PREC_FP32_COMP,
    .run = kahan_blocked_run,
};
