/* Mutants of the operator as people write it (groups, depthwise, initial states, SiLU, bf16/fp16
 * tensors): grouped_naive's arithmetic with one deliberate bug each, and the low-precision models the
 * explainer must name by their stage. Plain element loops: clarity over speed. */
#include <stddef.h>

#include "numerics/activation.h"
#include "numerics/arith.h"
#include "reference/dtype.h"
#include "tests/zoo/zoo.h"

typedef struct lowp_bug {
  int states_ignored; /* the history before t = 0 read as zeros */
  int group_offset;   /* group g reads the channels of group g + 1 */
  int silu_twice;     /* the activation applied twice */
  int stored_before;  /* the sum rounded to y's type before SiLU: two operators, a result rounded twice */
  int skip_last_tap;  /* the tap loop stops one short: the newest tap (x at t) left out */
} lowp_bug;

static c1d_status run_lowp_bug(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                               const float *st, lowp_bug g) {
  const int64_t cg = c1d_cin_per_group(s);
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t no = 0; no < s->N * s->O; no++) {
    const int64_t n = no / s->O, o = no % s->O, c0 = c1d_group_first_c(s, o);
    const int64_t xc0 = g.group_offset ? (c0 + cg) % s->C : c0;
    for (int64_t t = 0; t < s->L; t++) {
      float acc = s->bias ? b[o] : 0.0f;
      for (int64_t j = 0; j < cg; j++)
        for (int64_t k = 0; k < s->K - g.skip_last_tap; k++) {
          const int64_t src = c1d_source_time(s, t, k);
          const float xv = src < 0 && g.states_ignored ? 0.0f : c1d_x_at(s, x, st, n, xc0 + j, src);
          acc = c1d_fma(xv, w[c1d_w_index(s, o, c0 + j, k)], acc);
        }
      if (g.stored_before) acc = c1d_round_to_dtype(s->dt.y, acc);
      if (s->act == C1D_ACT_SILU) acc = c1d_silu_f32(acc);
      if (g.silu_twice) acc = c1d_silu_f32(acc);
      y[c1d_y_index(s, n, o, t)] = c1d_round_to_dtype(s->dt.y, acc);
    }
  }
  return C1D_OK;
}

#define LOWP_MUTANT(ident, summary_text, ...)                                                       \
  static c1d_status ident##_run(const c1d_shape *s, const float *x, const float *w, const float *b, \
                                float *y, c1d_exec *ex) {                                            \
    lowp_bug g = {__VA_ARGS__};                                                                       \
    return run_lowp_bug(s, x, w, b, y, ex ? ex->states : NULL, g);                                    \
  }                                                                                                   \
  static const c1d_impl ident = {.name = #ident,                                                      \
                                 .summary = summary_text,                                             \
                                 .backend = C1D_BACKEND_CPU,                                          \
                                 .precision = C1D_PREC_WRONG,                                         \
                                 .tier = C1D_TIER_MUTANT,                                             \
                                 .run = ident##_run,                                                  \
                                 .caps = C1D_CAP_GROUPS | C1D_CAP_STATES | C1D_CAP_SILU | C1D_CAP_DTYPES};

LOWP_MUTANT(zoo_states_ignored, "initial states ignored: the history before t = 0 read as zeros",
            .states_ignored = 1)
LOWP_MUTANT(zoo_group_offset, "group g reads the input channels of group g + 1", .group_offset = 1)
LOWP_MUTANT(zoo_silu_twice, "SiLU applied twice", .silu_twice = 1)
LOWP_MUTANT(zoo_dw_tap_skipped, "the tap loop stops one short: the newest tap (x at t) left out",
            .skip_last_tap = 1)
LOWP_MUTANT(zoo_silu_on_stored_sum, "the conv's sum stored in y's type, then SiLU on it (F.silu(conv1d(x)))",
            .stored_before = 1)

static int has_states(const c1d_shape *s) { return s->states; }
static int several_groups(const c1d_shape *s) { return c1d_groups(s) > 1; }
static int several_taps(const c1d_shape *s) { return s->K > 1; }
static int has_silu(const c1d_shape *s) { return s->act == C1D_ACT_SILU; }
static int fp16_output(const c1d_shape *s) { return s->dt.y == C1D_DTYPE_F16; }
static int silu_narrow_output(const c1d_shape *s) { return s->act == C1D_ACT_SILU && s->dt.y != C1D_DTYPE_F32; }
static int bf16_operands(const c1d_shape *s) { return s->dt.x == C1D_DTYPE_BF16 && s->dt.w == C1D_DTYPE_BF16; }

extern const c1d_impl c1d_cpu_bf16_products, c1d_cpu_fp16_accumulation;

const c1d_zoo_entry c1d_lowp_zoo[] = {
    {&zoo_states_ignored, C1D_VERDICT_BUG_LOCALIZED, C1D_REGION_LEFT_EDGE, has_states, NULL},
    {&zoo_group_offset, C1D_VERDICT_BUG_GLOBAL, C1D_REGION_NONE, several_groups, NULL},
    {&zoo_silu_twice, C1D_VERDICT_BUG_GLOBAL, C1D_REGION_NONE, has_silu, NULL},
    {&zoo_dw_tap_skipped, C1D_VERDICT_BUG_LOCALIZED, C1D_REGION_TAP, several_taps, NULL},
    {&c1d_cpu_bf16_products, C1D_VERDICT_REDUCED_PRECISION, C1D_REGION_NONE, bf16_operands, "products"},
    {&c1d_cpu_fp16_accumulation, C1D_VERDICT_REDUCED_PRECISION, C1D_REGION_NONE, fp16_output, "accumulation"},
    {&zoo_silu_on_stored_sum, C1D_VERDICT_REDUCED_PRECISION, C1D_REGION_NONE, silu_narrow_output, "output"},
};
const int c1d_lowp_zoo_count = (int)(sizeof c1d_lowp_zoo / sizeof c1d_lowp_zoo[0]);
