/* kahan: compensated summation. Per output: sum = b[o] (or +0), comp = 0; for c = 0..C-1, for
 * k = 0..K-1: p = x*w rounded to float32 (the products are NOT compensated), then one Kahan step
 * adds p to sum. Error about 2u*m plus the product roundings, independent of C*K.
 * Float32 throughout. Twin of gpu_kahan. */
#include <stdlib.h>

#include "cpu/rows.h"
#include "reference/impl.h"

static c1d_status kahan_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                            float *y, c1d_exec *ex) {
  int failed = 0;
#pragma omp parallel reduction(| : failed)
  {
    float *comp = malloc((size_t)s->L * sizeof *comp);
    failed = comp == NULL;
#pragma omp for schedule(dynamic, 1)
    for (int64_t no = 0; no < s->N * s->O; no++) {
      if (failed) continue;
      const int64_t n = no / s->O, o = no % s->O;
      float *sum = y + c1d_y_index(s, n, o, 0);
      c1d_row_fill(sum, s->bias ? b[o] : 0.0f, s->L);
      c1d_row_fill(comp, 0.0f, s->L);
      for (int64_t c = 0; c < s->C; c++)
        for (int64_t k = 0; k < s->K; k++)
          c1d_row_kahan(sum, comp, x + c1d_x_index(s, n, c, 0), w[c1d_w_index(s, o, c, k)],
                        -c1d_source_time(s, 0, k), s->L);
    }
    free(comp);
  }
  if (failed) return c1d_fail(C1D_ERR_NO_MEMORY, "kahan: cannot allocate a compensation row");
  return C1D_OK;
}

const c1d_impl c1d_cpu_kahan = {
    .name = "kahan",
    .summary = "fp32 Kahan-compensated sum of rounded products; b first, c outer, k inner",
    .backend = C1D_BACKEND_CPU,
    .precision = C1D_PREC_FP32_COMP,
    .run = kahan_run,
};
