/* Element types; see dtype.h. */
#include "reference/dtype.h"

#include <math.h>
#include <string.h>

const char *c1d_dtype_name(c1d_dtype d) {
  switch (d) {
    case C1D_DTYPE_F32: return "f32";
    case C1D_DTYPE_BF16: return "bf16";
    case C1D_DTYPE_F16: return "f16";
    default: return "?";
  }
}

c1d_status c1d_dtype_parse(const char *text, c1d_dtype *out) {
  static const struct {
    const char *name;
    c1d_dtype d;
  } names[] = {{"f32", C1D_DTYPE_F32},   {"fp32", C1D_DTYPE_F32}, {"float32", C1D_DTYPE_F32},
               {"bf16", C1D_DTYPE_BF16}, {"bfloat16", C1D_DTYPE_BF16}, {"f16", C1D_DTYPE_F16},
               {"fp16", C1D_DTYPE_F16},  {"float16", C1D_DTYPE_F16}};
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(text, names[i].name)) {
      *out = names[i].d;
      return C1D_OK;
    }
  return c1d_fail(C1D_ERR_USAGE, "unknown element type '%.40s' (choose f32, bf16 or f16)", text);
}

int c1d_dtype_size(c1d_dtype d) { return d == C1D_DTYPE_F32 ? 4 : 2; }

int c1d_dtype_holds(c1d_dtype d, const float *v, int64_t n) {
  if (d == C1D_DTYPE_F32) return 1;
  for (int64_t i = 0; i < n; i++) {
    const float r = c1d_round_to_dtype(d, v[i]);
    if (!(r == v[i] || (isnan(r) && isnan(v[i])))) return 0;
  }
  return 1;
}
