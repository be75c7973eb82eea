/* A correct output from a library: im2col in float32, then OpenBLAS's SGEMM per batch element and group,
 * y[n, group g] (O/G x L) = W_g (O/G x (C/G)*K) * col[n, g] ((C/G)*K x L) + y prefilled with the bias
 * (beta = 1); the columns read the initial states before t = 0 when there are states. SiLU follows
 * (libm's expf). OpenBLAS chooses its own blocking and summation order: that is the point. One
 * OpenBLAS thread, so that the output does not depend on the machine's core count. */
#include <cblas.h>
#include <stdlib.h>

#include "bench/power_internal.h"

float *power_im2col_and_bias(const c1d_shape *s, const float *x, const float *b, const float *st, int64_t n,
                             float *col, float *y) {
  const int64_t L = s->L;
  for (int64_t c = 0; c < s->C; c++)
    for (int64_t k = 0; k < s->K; k++) {
      float *dst = col + (c * s->K + k) * L;
      for (int64_t t = 0; t < L; t++) dst[t] = c1d_x_at(s, x, st, n, c, c1d_source_time(s, t, k));
    }
  float *yn = y + c1d_y_index(s, n, 0, 0);
  for (int64_t o = 0; o < s->O; o++)
    for (int64_t t = 0; t < L; t++) yn[o * L + t] = b ? b[o] : 0.0f;
  return yn;
}

c1d_status power_sgemm(const c1d_shape *s, const float *x, const float *w, const float *b, const float *st,
                       float *y) {
  const int64_t CK = s->C * s->K, L = s->L, G = c1d_groups(s), og = c1d_cout_per_group(s);
  const int64_t gk = c1d_terms(s); /* (C/G)*K: the reduction of one group */
  float *col = malloc((size_t)(CK * L) * sizeof *col);
  if (!col) return c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate im2col (%lld floats)",
                            (long long)(CK * L));
  openblas_set_num_threads(1);
  for (int64_t n = 0; n < s->N; n++) {
    float *yn = power_im2col_and_bias(s, x, b, st, n, col, y);
    /* Group g's rows of col start at its first channel, c0 * K; its weights are rows g*og.. of w. */
    for (int64_t g = 0; g < G; g++)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)og, (int)L, (int)gk, 1.0f, w + g * og * gk,
                  (int)gk, col + g * gk * L, (int)L, 1.0f, yn + g * og * L, (int)L);
  }
  if (s->act == C1D_ACT_SILU)
    for (int64_t i = 0; i < c1d_y_count(s); i++) y[i] = power_silu_libm(y[i]);
  free(col);
  return C1D_OK;
}
