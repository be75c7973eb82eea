/* A correct output from a library: im2col in float32, then OpenBLAS's SGEMM per batch element,
 * y[n] (O x L) = W (O x C*K) * col[n] (C*K x L) + y[n] prefilled with the bias (beta = 1). OpenBLAS
 * chooses its own blocking and summation order: that is the point. One OpenBLAS thread, so that the
 * output does not depend on the machine's core count. */
#include <cblas.h>
#include <stdlib.h>

#include "bench/power_internal.h"

c1d_status power_sgemm(const c1d_shape *s, const float *x, const float *w, const float *b, float *y) {
  const int64_t CK = s->C * s->K, L = s->L;
  float *col = malloc((size_t)(CK * L) * sizeof *col);
  if (!col) return c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate im2col (%lld floats)",
                            (long long)(CK * L));
  openblas_set_num_threads(1);
  for (int64_t n = 0; n < s->N; n++) {
    for (int64_t c = 0; c < s->C; c++)
      for (int64_t k = 0; k < s->K; k++) {
        float *dst = col + (c * s->K + k) * L;
        for (int64_t t = 0; t < L; t++) {
          const int64_t src = c1d_source_time(s, t, k);
          dst[t] = src >= 0 ? x[c1d_x_index(s, n, c, src)] : 0.0f;
        }
      }
    float *yn = y + c1d_y_index(s, n, 0, 0);
    for (int64_t o = 0; o < s->O; o++)
      for (int64_t t = 0; t < L; t++) yn[o * L + t] = b ? b[o] : 0.0f;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)s->O, (int)L, (int)CK, 1.0f, w, (int)CK,
                col, (int)L, 1.0f, yn, (int)L);
  }
  free(col);
  return C1D_OK;
}
