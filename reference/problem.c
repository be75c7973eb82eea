/* Shape validation: each bad value gets its own message, so a user sees which flag or file to fix. */
#include "reference/problem.h"

#include <stdio.h>
#include <string.h>

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
  if (s->G < 0 || (s->G > 1 && (s->C % s->G || s->O % s->G)))
    return c1d_fail(C1D_ERR_INVALID_SHAPE, "groups G=%lld must divide C=%lld and O=%lld", (long long)s->G,
                    (long long)s->C, (long long)s->O);
  if (s->states != 0 && s->states != 1)
    return c1d_fail(C1D_ERR_INVALID_SHAPE, "states flag must be 0 or 1 (got %d)", s->states);
  if (s->states && c1d_pad(s) == 0)
    return c1d_fail(C1D_ERR_INVALID_SHAPE, "initial states need a history: (K-1)*D is 0 (K=%lld)",
                    (long long)s->K);
  if ((unsigned)s->act >= C1D_ACT_COUNT)
    return c1d_fail(C1D_ERR_INVALID_SHAPE, "unknown activation %d", (int)s->act);
  const c1d_dtype types[5] = {s->dt.x, s->dt.w, s->dt.b, s->dt.s, s->dt.y};
  for (int i = 0; i < 5; i++)
    if ((unsigned)types[i] >= C1D_DTYPE_COUNT)
      return c1d_fail(C1D_ERR_INVALID_SHAPE, "unknown element type %d", (int)types[i]);
  if (s->layout != C1D_LAYOUT_NCL && s->layout != C1D_LAYOUT_NLC)
    return c1d_fail(C1D_ERR_INVALID_SHAPE, "unknown layout %d", (int)s->layout);
  const int64_t cg = s->C / (s->G > 1 ? s->G : 1);
  if (bounded_mul(cg, s->K) < 0 || cg * s->K > (INT64_C(1) << 31))
    return c1d_fail(C1D_ERR_OVERFLOW, "reduction length %s = %lld*%lld exceeds 2^31",
                    s->G > 1 ? "(C/G)*K" : "C*K", (long long)cg, (long long)s->K);
  if (s->states && bounded_count3(s->N, s->C, (s->K - 1) * s->D) < 0)
    return c1d_fail(C1D_ERR_OVERFLOW, "element count of s (N*C*(K-1)*D) exceeds the limit of %lld",
                    (long long)C1D_MAX_ELEMENTS);
  return C1D_OK;
}

static const char *type_name(c1d_dtype d) { return d == C1D_DTYPE_BF16 ? "bf16" : d == C1D_DTYPE_F16 ? "f16" : "f32"; }

void c1d_shape_format(const c1d_shape *s, char *buf, int size) {
  int len = snprintf(buf, (size_t)size, "N=%lld C=%lld O=%lld L=%lld K=%lld D=%lld bias=%d", (long long)s->N,
                     (long long)s->C, (long long)s->O, (long long)s->L, (long long)s->K, (long long)s->D,
                     s->bias);
  if (len < size && s->G > 1) len += snprintf(buf + len, (size_t)(size - len), " G=%lld", (long long)s->G);
  if (len < size && s->states) len += snprintf(buf + len, (size_t)(size - len), " states");
  if (len < size && s->act == C1D_ACT_SILU) len += snprintf(buf + len, (size_t)(size - len), " silu");
  /* Types of the tensors the problem has: --dtype all=bf16 without a bias gives b no type to show. */
  const struct { const char *name; c1d_dtype d; int present; } t[5] = {
      {"x", s->dt.x, 1}, {"w", s->dt.w, 1}, {"b", s->dt.b, s->bias}, {"s", s->dt.s, s->states}, {"y", s->dt.y, 1}};
  for (int i = 0; i < 5; i++)
    if (len < size && t[i].present && t[i].d != C1D_DTYPE_F32)
      len += snprintf(buf + len, (size_t)(size - len), " %s=%s", t[i].name, type_name(t[i].d));
  if (len < size && s->layout == C1D_LAYOUT_NLC) snprintf(buf + len, (size_t)(size - len), " nlc");
}

double c1d_flops(const c1d_shape *s) {
  return 2.0 * (double)s->N * (double)s->O * (double)s->L * (double)c1d_cin_per_group(s) * (double)s->K;
}
