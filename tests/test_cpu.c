/* cpu: every CPU implementation against the float64 oracle. Integer-valued inputs make float32 exact,
 * so there any difference is a bug; on random inputs each element must stay within the deterministic
 * bound gamma_n * m. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/inputs.h"
#include "harness/registry.h"
#include "numerics/arith.h"
#include "numerics/bounds.h"
#include "reference/oracle.h"
#include "tests/support/cases.h"

extern const c1d_impl c1d_cpu_naive, c1d_cpu_tap_partial, c1d_cpu_kahan, c1d_cpu_tf32_inputs;

static const c1d_impl *const cpu_impls[] = {&c1d_cpu_naive, &c1d_cpu_tap_partial, &c1d_cpu_kahan,
                                            &c1d_cpu_tf32_inputs};
enum { N_IMPLS = sizeof cpu_impls / sizeof cpu_impls[0] };

/* Odd sizes, K 1..9, D 1..4, bias on and off, C=1, L shorter than the receptive field. */
static const c1d_shape shapes[] = {
    {1, 1, 1, 1, 1, 1, 0},    {2, 3, 5, 17, 3, 2, 1},   {1, 1, 7, 33, 4, 1, 0},
    {3, 7, 9, 31, 9, 1, 1},   {2, 5, 3, 6, 4, 3, 0},    {1, 16, 16, 64, 2, 4, 1},
    {2, 37, 29, 101, 5, 3, 1}, {1, 64, 8, 40, 7, 2, 0}, {1, 2, 2, 3, 6, 4, 1},
    {1, 256, 4, 96, 4, 1, 0},
};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };

ParameterizedTestParameters(cpu, equals_oracle_exactly_on_integer_inputs) {
  static int idx[N_SHAPES];
  for (int i = 0; i < N_SHAPES; i++) idx[i] = i;
  return cr_make_param_array(int, idx, N_SHAPES);
}

ParameterizedTest(int *si, cpu, equals_oracle_exactly_on_integer_inputs) {
  const c1d_shape *s = &shapes[*si];
  case_data d = make_case(s, C1D_DIST_INTEGER, 100 + *si);
  for (int i = 0; i < N_IMPLS; i++) {
    run_impl(cpu_impls[i], s, &d);
    for (int64_t e = 0; e < c1d_y_count(s); e++)
      cr_assert_eq((double)d.y[e], d.ref[e], "%s shape %d element %lld: %.9g vs %.17g",
                   cpu_impls[i]->name, *si, (long long)e, d.y[e], d.ref[e]);
  }
  free_case(&d);
}

ParameterizedTestParameters(cpu, stays_within_the_deterministic_bound_on_random_inputs) {
  static int idx[N_SHAPES];
  for (int i = 0; i < N_SHAPES; i++) idx[i] = i;
  return cr_make_param_array(int, idx, N_SHAPES);
}

ParameterizedTest(int *si, cpu, stays_within_the_deterministic_bound_on_random_inputs) {
  const c1d_shape *s = &shapes[*si];
  const c1d_dist dists[] = {C1D_DIST_NORMAL, C1D_DIST_UNIFORM, C1D_DIST_ILL_CONDITIONED};
  for (int di = 0; di < 3; di++) {
    case_data d = make_case(s, dists[di], 200 + *si);
    /* The fp32 implementations; tf32_inputs is held to its own bound below. */
    for (int i = 0; i < 3; i++) {
      run_impl(cpu_impls[i], s, &d);
      for (int64_t e = 0; e < c1d_y_count(s); e++) {
        int64_t n = c1d_terms_at(s, e % s->L) + 1;
        double bound = c1d_bound_det(n, d.mag[e], C1D_U_FP32);
        cr_assert_leq(fabs((double)d.y[e] - d.ref[e]), bound, "%s %s shape %d element %lld",
                      cpu_impls[i]->name, c1d_dist_name(dists[di]), *si, (long long)e);
      }
    }
    run_impl(&c1d_cpu_tf32_inputs, s, &d);
    for (int64_t e = 0; e < c1d_y_count(s); e++) {
      int64_t n = c1d_terms_at(s, e % s->L) + 1;
      double bound = c1d_bound_tf32(n, d.mag[e], C1D_U_TF32, C1D_U_FP32);
      cr_assert_leq(fabs((double)d.y[e] - d.ref[e]), bound, "tf32_inputs element %lld",
                    (long long)e);
    }
    free_case(&d);
  }
}

Test(cpu, kahan_error_does_not_grow_with_the_reduction_length) {
  /* C*K = 16384 terms: plain fp32 error grows like sqrt(n)*u, Kahan's stays near u. */
  const c1d_shape s = {1, 4096, 2, 64, 4, 1, 0};
  case_data d = make_case(&s, C1D_DIST_NORMAL, 5);
  double err_naive = 0, err_kahan = 0, norm = 0;
  run_impl(&c1d_cpu_naive, &s, &d);
  for (int64_t e = 0; e < c1d_y_count(&s); e++) err_naive += pow(d.y[e] - d.ref[e], 2);
  run_impl(&c1d_cpu_kahan, &s, &d);
  for (int64_t e = 0; e < c1d_y_count(&s); e++) {
    err_kahan += pow(d.y[e] - d.ref[e], 2);
    norm += d.ref[e] * d.ref[e];
  }
  cr_assert_lt(sqrt(err_kahan / norm), 1.5e-7, "kahan rel L2 %.3g", sqrt(err_kahan / norm));
  cr_assert_lt(err_kahan * 4, err_naive, "kahan %.3g vs naive %.3g", err_kahan, err_naive);
  free_case(&d);
}

Test(cpu, tf32_inputs_equals_naive_on_tf32_rounded_inputs) {
  const c1d_shape s = {2, 9, 5, 50, 3, 2, 1};
  case_data d = make_case(&s, C1D_DIST_NORMAL, 9);
  run_impl(&c1d_cpu_tf32_inputs, &s, &d);
  float *model = malloc((size_t)c1d_y_count(&s) * sizeof(float));
  memcpy(model, d.y, (size_t)c1d_y_count(&s) * sizeof(float));
  for (int64_t i = 0; i < c1d_x_count(&s); i++) d.x[i] = c1d_round_tf32_rna(d.x[i]);
  for (int64_t i = 0; i < c1d_w_count(&s); i++) d.w[i] = c1d_round_tf32_rna(d.w[i]);
  run_impl(&c1d_cpu_naive, &s, &d);
  cr_assert_eq(memcmp(model, d.y, (size_t)c1d_y_count(&s) * sizeof(float)), 0);
  free(model);
  free_case(&d);
}

Test(cpu, naive_follows_the_documented_order_bit_for_bit) {
  /* One element by hand: acc = b, then fma over c outer, k inner, a zero where t+k*D-(K-1)*D < 0. */
  const c1d_shape s = {1, 3, 2, 7, 3, 2, 1};
  case_data d = make_case(&s, C1D_DIST_NORMAL, 13);
  run_impl(&c1d_cpu_naive, &s, &d);
  for (int64_t o = 0; o < s.O; o++)
    for (int64_t t = 0; t < s.L; t++) {
      float acc = d.b[o];
      for (int64_t c = 0; c < s.C; c++)
        for (int64_t k = 0; k < s.K; k++) {
          int64_t src = c1d_source_time(&s, t, k);
          acc = fmaf(src >= 0 ? d.x[c1d_x_index(&s, 0, c, src)] : 0.0f,
                     d.w[c1d_w_index(&s, o, c, k)], acc);
        }
      cr_assert_eq(c1d_float_bits(acc), c1d_float_bits(d.y[c1d_y_index(&s, 0, o, t)]));
    }
  free_case(&d);
}

Test(cpu, writes_every_element) {
  const c1d_shape s = {2, 3, 5, 19, 4, 3, 0};
  case_data d = make_case(&s, C1D_DIST_UNIFORM, 21);
  for (int i = 0; i < N_IMPLS; i++) {
    run_impl(cpu_impls[i], &s, &d);
    for (int64_t e = 0; e < c1d_y_count(&s); e++)
      cr_assert(isfinite(d.y[e]), "%s left element %lld unwritten", cpu_impls[i]->name,
                (long long)e);
  }
  free_case(&d);
}

Test(registry, lists_every_cpu_implementation_once) {
  int count = 0;
  const c1d_impl *const *all = c1d_registry(&count);
  for (int i = 0; i < N_IMPLS; i++) {
    int seen = 0;
    for (int j = 0; j < count; j++) seen += all[j] == cpu_impls[i];
    cr_assert_eq(seen, 1, "%s", cpu_impls[i]->name);
    cr_assert_eq(c1d_find_impl(cpu_impls[i]->name), cpu_impls[i]);
    cr_assert_null(c1d_impl_unavailable(cpu_impls[i]));
  }
  cr_assert_null(c1d_find_impl("no_such_impl"));
}
