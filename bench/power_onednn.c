/* The oneDNN order of the power benchmark: convlab's onednn_fp32 row (cpu/onednn_fp32.c) on the causal
 * input as PyTorch users give it to a library: x with its (K-1)*D leading columns (the initial states, or
 * zeros) concatenated in front, convolved without padding, the first (K-1)*D outputs dropped. */
#include <stdlib.h>
#include <string.h>

#include "bench/power_internal.h"
#include "reference/impl.h"

extern const c1d_impl c1d_cpu_onednn_fp32;

int power_onednn_available(void) {
  const c1d_shape s = {1, 1, 1, 1, 1, 1, 0};
  return c1d_cpu_onednn_fp32.supported(&s) == NULL;
}

c1d_status power_onednn(const c1d_shape *s, const float *x, const float *w, const float *b, const float *st,
                        float *y) {
  const int64_t P = c1d_pad(s), Lc = s->L + P;
  c1d_shape sc = *s; /* the concatenated problem: L + P positions, its first P outputs dropped */
  sc.L = Lc;
  sc.act = C1D_ACT_NONE;
  sc.states = 0;
  float *xc = malloc((size_t)(s->N * s->C * Lc) * sizeof *xc);
  float *yc = malloc((size_t)(s->N * s->O * Lc) * sizeof *yc);
  c1d_status status = C1D_OK;
  if (!xc || !yc) {
    status = c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate oneDNN's concatenated input");
    goto done;
  }
  for (int64_t n = 0; n < s->N; n++)
    for (int64_t c = 0; c < s->C; c++)
      for (int64_t t = 0; t < Lc; t++) xc[(n * s->C + c) * Lc + t] = c1d_x_at(s, x, st, n, c, t - P);
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  if ((status = c1d_cpu_onednn_fp32.setup(&sc, &ex)) != C1D_OK) goto done;
  status = c1d_cpu_onednn_fp32.run(&sc, xc, w, b, yc, &ex);
  c1d_cpu_onednn_fp32.teardown(&ex);
  if (status != C1D_OK) goto done;
  for (int64_t no = 0; no < s->N * s->O; no++) memcpy(y + no * s->L, yc + no * Lc + P, (size_t)s->L * sizeof *y);
  if (s->act == C1D_ACT_SILU)
    for (int64_t i = 0; i < c1d_y_count(s); i++) y[i] = power_silu_libm(y[i]);
done:
  free(xc);
  free(yc);
  return status;
}
