/* Names of the precision classes, as reports print them. */
#include "reference/impl.h"

#include <stdio.h>
#include <string.h>

const char *c1d_precision_name(c1d_precision p) {
  switch (p) {
    case C1D_PREC_FP64: return "fp64";
    case C1D_PREC_FP32: return "fp32";
    case C1D_PREC_FP32_COMP: return "fp32-compensated";
    case C1D_PREC_TF32: return "tf32";
    case C1D_PREC_TF32_ALLOWED: return "tf32-allowed";
    case C1D_PREC_3XTF32: return "3xtf32";
    case C1D_PREC_BF16: return "bf16";
    case C1D_PREC_FP16: return "fp16";
    case C1D_PREC_WRONG: return "wrong";
  }
  return "?";
}

const char *c1d_tier_name(c1d_tier t) {
  switch (t) {
    case C1D_TIER_MAIN: return "main";
    case C1D_TIER_VARIANT: return "variant";
    case C1D_TIER_MUTANT: return "mutant";
  }
  return "?";
}

const char *c1d_impl_unsupported(const c1d_impl *impl, const c1d_shape *s) {
  const unsigned c = impl->caps;
  const int depthwise = c1d_groups(s) == s->C && s->C == s->O;
  if ((c & C1D_CAP_DEPTHWISE_ONLY) && !depthwise) return "depthwise problems only (G = C = O)";
  if (c1d_groups(s) > 1 && !(c & C1D_CAP_GROUPS)) return "no groups (G > 1)";
  if (s->states && !(c & C1D_CAP_STATES)) return "no initial states";
  if (s->act == C1D_ACT_SILU && !(c & C1D_CAP_SILU)) return "no SiLU";
  const int lowp = s->dt.x || s->dt.w || s->dt.b || s->dt.s || s->dt.y;
  if (lowp && !(c & C1D_CAP_DTYPES)) return "fp32 tensors only";
  return impl->supported ? impl->supported(s) : NULL;
}

void c1d_caps_format(unsigned caps, char *buf, int size) {
  snprintf(buf, (size_t)size, "%s%s%s%s%s%s", caps & C1D_CAP_DEPTHWISE_ONLY ? "depthwise " : "",
           caps & C1D_CAP_GROUPS ? "groups " : "", caps & C1D_CAP_STATES ? "states " : "",
           caps & C1D_CAP_SILU ? "silu " : "", caps & C1D_CAP_DTYPES ? "bf16/fp16 " : "",
           caps & C1D_CAP_CHANNEL_LAST ? "nlc " : "");
  const size_t n = strlen(buf);
  if (n == 0)
    snprintf(buf, (size_t)size, "plain");
  else
    buf[n - 1] = '\0';
}
