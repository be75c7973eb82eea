/* Test problems of any kind on the CPU; see lowp_cases.h. */
#include "tests/support/lowp_cases.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/oracle.h"

void setup_lowp_inputs(lowp_problem *p, const c1d_shape *s, c1d_dist dist, uint64_t seed) {
  memset(p, 0, sizeof *p);
  p->s = *s;
  const int64_t ny = c1d_y_count(s);
  p->x = malloc((size_t)c1d_x_count(s) * sizeof(float));
  p->w = malloc((size_t)c1d_w_count(s) * sizeof(float));
  p->b = malloc((size_t)(s->O + 1) * sizeof(float));
  p->st = malloc((size_t)(c1d_s_count(s) + 1) * sizeof(float));
  p->y = malloc((size_t)ny * sizeof(float));
  p->ref = malloc((size_t)ny * sizeof(double));
  p->mag = malloc((size_t)ny * sizeof(double));
  p->pre = malloc((size_t)ny * sizeof(double));
  cr_assert(p->x && p->w && p->b && p->st && p->y && p->ref && p->mag && p->pre);
  c1d_generate(s, dist, seed, p->x, p->w, p->b);
  if (s->states) c1d_generate_states(s, dist, seed, p->st);
}

void setup_lowp(lowp_problem *p, const c1d_shape *s, c1d_dist dist, uint64_t seed) {
  setup_lowp_inputs(p, s, dist, seed);
  cr_assert_eq(c1d_oracle_f64_ex(s, p->x, p->w, lowp_bias(p), lowp_states(p), p->ref, p->mag, p->pre, NULL, NULL),
               C1D_OK, "%s", c1d_error_detail());
  const c1d_explainer_inputs in = {.x = p->x, .w = p->w, .b = lowp_bias(p), .st = lowp_states(p),
                                   .ref = p->ref, .mag = p->mag, .pre = p->pre};
  cr_assert_eq(c1d_explainer_prepare_ex(&p->ex, s, &in), C1D_OK, "%s", c1d_error_detail());
}

void teardown_lowp(lowp_problem *p) {
  c1d_explainer_release(&p->ex);
  free(p->x), free(p->w), free(p->b), free(p->st), free(p->y), free(p->ref), free(p->mag), free(p->pre);
}

const float *lowp_bias(const lowp_problem *p) { return p->s.bias ? p->b : NULL; }
const float *lowp_states(const lowp_problem *p) { return p->s.states ? p->st : NULL; }

void run_lowp_cpu(lowp_problem *p, const c1d_impl *impl, float *out) {
  for (int64_t i = 0; i < c1d_y_count(&p->s); i++) out[i] = NAN;
  c1d_exec exec;
  memset(&exec, 0, sizeof exec);
  exec.states = lowp_states(p);
  cr_assert_eq(impl->run(&p->s, p->x, p->w, lowp_bias(p), out, &exec), C1D_OK, "%s: %s", impl->name,
               c1d_error_detail());
}

c1d_explanation explain_lowp_output(lowp_problem *p, const float *y) {
  c1d_explanation e;
  cr_assert_eq(c1d_explainer_explain(&p->ex, y, 0, 0, &e), C1D_OK, "%s", c1d_error_detail());
  return e;
}

c1d_explanation explain_lowp(lowp_problem *p, const c1d_impl *impl) {
  run_lowp_cpu(p, impl, p->y);
  return explain_lowp_output(p, p->y);
}
