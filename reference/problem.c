/* Shape validation: each bad value gets its own message, so a user sees which flag or file to fix. */
#include "reference/problem.h"

#include <stdio.h>

c1d_shape c1d_headline_shape(void) {
  c1d_shape s = {.N = 32, .C = 256, .O = 256, .L = 8192, .K = 4, .D = 1, .bias = 0};
  return s;
}

/* a*b, or -1 when the product would pass C1D_MAX_ELEMENTS (both factors are positive here). */
static int64_t bounded_mul(int64_t a, int64_t b) {
  if (a > C1D_MAX_ELEMENTS / b) return -1;
  return a * b;
}

static int64_t bounded_count3(int64_t a, int64_t b, int64_t c) {
  int64_t ab = bounded_mul(a, b);
  return ab < 0 ? -1 : bounded_mul(ab, c);
}

c1d_status c1d_shape_validate(const c1d_shape *s) {
  const struct { const char *name; int64_t value; } dims[] = {
      {"N (batch)", s->N}, {"C (in-channels)", s->C}, {"O (out-channels)", s->O},
      {"L (length)", s->L}, {"K (taps)", s->K}, {"D (dilation)", s->D},
  };
  for (unsigned i = 0; i < sizeof dims / sizeof dims[0]; i++)
    if (dims[i].value <= 0)
      return c1d_fail(C1D_ERR_INVALID_SHAPE, "%s must be positive (got %lld)", dims[i].name,
                      (long long)dims[i].value);
  if (s->bias != 0 && s->bias != 1)
    return c1d_fail(C1D_ERR_INVALID_SHAPE, "bias flag must be 0 or 1 (got %d)", s->bias);
  if (s->K - 1 > C1D_MAX_SPAN / s->D)
    return c1d_fail(C1D_ERR_INVALID_SHAPE,
                    "receptive field (K-1)*D is too large (K=%lld, D=%lld; limit %lld)",
                    (long long)s->K, (long long)s->D, (long long)C1D_MAX_SPAN);
  const struct { const char *name; int64_t count; } tensors[] = {
      {"x (N*C*L)", bounded_count3(s->N, s->C, s->L)},
      {"w (O*C*K)", bounded_count3(s->O, s->C, s->K)},
      {"y (N*O*L)", bounded_count3(s->N, s->O, s->L)},
  };
  for (unsigned i = 0; i < sizeof tensors / sizeof tensors[0]; i++)
    if (tensors[i].count < 0)
      return c1d_fail(C1D_ERR_OVERFLOW, "element count of %s exceeds the limit of %lld",
                      tensors[i].name, (long long)C1D_MAX_ELEMENTS);
  if (bounded_mul(s->C, s->K) < 0 || s->C * s->K > (INT64_C(1) << 31))
    return c1d_fail(C1D_ERR_OVERFLOW, "reduction length C*K = %lld*%lld exceeds 2^31",
                    (long long)s->C, (long long)s->K);
  return C1D_OK;
}

void c1d_shape_format(const c1d_shape *s, char *buf, int size) {
  snprintf(buf, (size_t)size, "N=%lld C=%lld O=%lld L=%lld K=%lld D=%lld bias=%d", (long long)s->N,
           (long long)s->C, (long long)s->O, (long long)s->L, (long long)s->K, (long long)s->D,
           s->bias);
}

double c1d_flops(const c1d_shape *s) {
  return 2.0 * (double)s->N * (double)s->O * (double)s->L * (double)s->C * (double)s->K;
}
