/* fp16_accumulation: a model of a kernel that keeps its sums in fp16: grouped_naive's order, each
 * acc = fma(x, w, acc) rounded to fp16 at once, SiLU in float32, one rounding to y's type. Its error
 * grows with the number of terms like float32's, 2^13 times larger; fp16 storage of a float32 result
 * does not grow. The explainer must name it reduced-precision in the accumulation. */
#include <stddef.h>

#include "numerics/activation.h"
#include "numerics/arith.h"
#include "reference/dtype.h"
#include "reference/impl.h"

static c1d_status fp16_accumulation_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                                        float *y, c1d_exec *ex) {
  const float *st = ex ? ex->states : NULL;
  const int64_t cg = c1d_cin_per_group(s);
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t no = 0; no < s->N * s->O; no++) {
    const int64_t n = no / s->O, o = no % s->O, c0 = c1d_group_first_c(s, o);
    for (int64_t t = 0; t < s->L; t++) {
      float acc = c1d_round_fp16(s->bias ? b[o] : 0.0f);
      for (int64_t c = c0; c < c0 + cg; c++)
        for (int64_t k = 0; k < s->K; k++) {
          const float xv = c1d_x_at(s, x, st, n, c, c1d_source_time(s, t, k));
          acc = c1d_round_fp16(c1d_fma(xv, w[c1d_w_index(s, o, c, k)], acc));
        }
      if (s->act == C1D_ACT_SILU) acc = c1d_silu_f32(acc);
      y[c1d_y_index(s, n, o, t)] = c1d_round_to_dtype(s->dt.y, acc);
    }
  }
  return C1D_OK;
}

const c1d_impl c1d_cpu_fp16_accumulation = {
    .name = "fp16_accumulation",
    .summary = "model: sums kept in fp16 (each fma rounded to fp16; grouped_naive's order), fp32 SiLU, "
               "one rounding to y's type",
    .backend = C1D_BACKEND_CPU,
    .precision = C1D_PREC_FP16,
    .tier = C1D_TIER_VARIANT,
    .run = fp16_accumulation_run,
    .caps = C1D_CAP_GROUPS | C1D_CAP_STATES | C1D_CAP_SILU | C1D_CAP_DTYPES,
};
