/* tap_partial: one partial sum per kernel tap. Per output: partial[k] = +0, then for c = 0..C-1:
 * partial[k] = fma(x, w[o,c,k], partial[k]) (x = 0 in the padding); finally
 * y = ((b[o] + partial[0]) + partial[1]) + ... + partial[K-1], left to right (y = +0 + ... without bias).
 * Float32 throughout. Twin of gpu_tap_partial. */
#include <stdlib.h>

#include "cpu/rows.h"
#include "reference/impl.h"

static c1d_status tap_partial_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                                  float *y, c1d_exec *ex) {
  int failed = 0;
#pragma omp parallel reduction(| : failed)
  {
    float *partial = malloc((size_t)(s->K * s->L) * sizeof *partial); /* K rows of L */
    failed = partial == NULL;
#pragma omp for schedule(dynamic, 1)
    for (int64_t no = 0; no < s->N * s->O; no++) {
      if (failed) continue;
      const int64_t n = no / s->O, o = no % s->O;
      for (int64_t k = 0; k < s->K; k++) {
        float *row = partial + k * s->L;
        c1d_row_fill(row, 0.0f, s->L);
        for (int64_t c = 0; c < s->C; c++)
          c1d_row_fma(row, x + c1d_x_index(s, n, c, 0), w[c1d_w_index(s, o, c, k)],
                      -c1d_source_time(s, 0, k), s->L);
      }
      float *out = y + c1d_y_index(s, n, o, 0);
      c1d_row_fill(out, s->bias ? b[o] : 0.0f, s->L);
      for (int64_t k = 0; k < s->K; k++) c1d_row_add(out, partial + k * s->L, s->L);
    }
    free(partial);
  }
  if (failed)
    return c1d_fail(C1D_ERR_NO_MEMORY, "tap_partial: cannot allocate %lld partial sums per thread",
                    (long long)(s->K * s->L));
  return C1D_OK;
}

const c1d_impl c1d_cpu_tap_partial = {
    .name = "tap_partial",
    .summary = "fp32; one fma chain per tap over c, then b + partial[0] + ... + partial[K-1]",
    .backend = C1D_BACKEND_CPU,
    .precision = C1D_PREC_FP32,
    .run = tap_partial_run,
};
