/* cpu_fast_twins: the CPU twins of the fast GPU kernels. kahan_blocked (twin of gpu_kahan_fast) and the
 * 3xTF32 model split_3xtf32 (statistical twin of gpu_3xtf32).
 * On integer inputs (|v| <= 8: exact in float32 and in TF32, so every split has a zero small part and
 * every partial sum is below 2^24) each equals the float64 oracle exactly; on random inputs each stays
 * within its deterministic bound; kahan_blocked follows its documented order bit for bit, and its error,
 * like split_3xtf32's, stays at the float32 level when the reduction grows. No GPU needed. */
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

extern const c1d_impl c1d_cpu_naive, c1d_cpu_kahan_blocked, c1d_cpu_split_3xtf32;

static const c1d_impl *const twins[] = {&c1d_cpu_kahan_blocked, &c1d_cpu_split_3xtf32};
enum { N_TWINS = sizeof twins / sizeof twins[0] };

/* Odd sizes, K 1..9, D 1..4 and one wide dilation, bias on and off, C = 1, C past one slab of 8, L
 * shorter than the receptive field. */
static const c1d_shape shapes[] = {
    {1, 1, 1, 1, 1, 1, 0},    {2, 3, 5, 17, 3, 2, 1},   {1, 1, 7, 33, 4, 1, 0},
    {3, 7, 9, 31, 9, 1, 1},   {2, 5, 3, 6, 4, 3, 0},    {1, 16, 16, 64, 2, 4, 1},
    {2, 37, 29, 101, 5, 3, 1}, {1, 64, 8, 40, 7, 2, 0}, {1, 2, 2, 3, 6, 4, 1},
    {1, 256, 4, 96, 4, 1, 0}, {1, 19, 6, 300, 8, 1, 1}, {1, 5, 3, 700, 3, 150, 1},
};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };

static double rel_l2(const c1d_shape *s, const case_data *d) {
  double err = 0, norm = 0;
  for (int64_t e = 0; e < c1d_y_count(s); e++) {
    err += ((double)d->y[e] - d->ref[e]) * ((double)d->y[e] - d->ref[e]);
    norm += d->ref[e] * d->ref[e];
  }
  return sqrt(err / norm);
}

static int *shape_indices(void) {
  static int idx[N_SHAPES];
  for (int i = 0; i < N_SHAPES; i++) idx[i] = i;
  return idx;
}

// --- exactness and bounds ------------------------------------------------------------------------

ParameterizedTestParameters(cpu_fast_twins, equal_the_oracle_exactly_on_integer_inputs) {
  return cr_make_param_array(int, shape_indices(), N_SHAPES);
}

ParameterizedTest(int *si, cpu_fast_twins, equal_the_oracle_exactly_on_integer_inputs) {
  const c1d_shape *s = &shapes[*si];
  case_data d = make_case(s, C1D_DIST_INTEGER, 800 + *si);
  for (int i = 0; i < N_TWINS; i++) {
    run_impl(twins[i], s, &d);
    for (int64_t e = 0; e < c1d_y_count(s); e++)
      cr_assert_eq((double)d.y[e], d.ref[e], "%s shape %d element %lld: %.9g vs %.17g", twins[i]->name,
                   *si, (long long)e, d.y[e], d.ref[e]);
  }
  free_case(&d);
}

ParameterizedTestParameters(cpu_fast_twins, stay_within_their_bounds_on_random_inputs) {
  return cr_make_param_array(int, shape_indices(), N_SHAPES);
}

/* kahan_blocked: any fp32 order obeys gamma_n * m. The 3xTF32 models truncate (2u per operation) and
 * add the split's error: each product is off by at most about 3 * 2^-22 of |w*x| (two split roundings
 * and the dropped small*small), so they are held to (2^-20 + gamma_n(2u)) * m. */
ParameterizedTest(int *si, cpu_fast_twins, stay_within_their_bounds_on_random_inputs) {
  const c1d_shape *s = &shapes[*si];
  const c1d_dist dists[] = {C1D_DIST_NORMAL, C1D_DIST_UNIFORM, C1D_DIST_ILL_CONDITIONED};
  for (int di = 0; di < 3; di++) {
    case_data d = make_case(s, dists[di], 900 + *si);
    for (int i = 0; i < N_TWINS; i++) {
      run_impl(twins[i], s, &d);
      for (int64_t e = 0; e < c1d_y_count(s); e++) {
        const int64_t n = c1d_terms_at(s, e % s->L) + 1;
        /* the 3xTF32 models truncate (error below one ulp, 2u, per operation) */
        double bound = c1d_bound_det(n, d.mag[e], i > 0 ? 2 * C1D_U_FP32 : C1D_U_FP32);
        if (i > 0) bound += 0x1p-20 * d.mag[e];
        cr_assert_leq(fabs((double)d.y[e] - d.ref[e]), bound, "%s %s shape %d element %lld",
                      twins[i]->name, c1d_dist_name(dists[di]), *si, (long long)e);
      }
    }
    free_case(&d);
  }
}

// --- orders ----------------------------------------------------------------------------------------

Test(cpu_fast_twins, kahan_blocked_follows_the_documented_order_bit_for_bit) {
  /* By hand: sum = b, comp = 0; per channel p = -comp, fma over the taps, then one Kahan step. */
  const c1d_shape s = {2, 5, 3, 23, 3, 2, 1};
  case_data d = make_case(&s, C1D_DIST_NORMAL, 31);
  run_impl(&c1d_cpu_kahan_blocked, &s, &d);
  for (int64_t n = 0; n < s.N; n++)
    for (int64_t o = 0; o < s.O; o++)
      for (int64_t t = 0; t < s.L; t++) {
        float sum = d.b[o], comp = 0.0f;
        for (int64_t c = 0; c < s.C; c++) {
          float p = -comp;
          for (int64_t k = 0; k < s.K; k++) {
            const int64_t src = c1d_source_time(&s, t, k);
            p = fmaf(src >= 0 ? d.x[c1d_x_index(&s, n, c, src)] : 0.0f, d.w[c1d_w_index(&s, o, c, k)], p);
          }
          const float u = sum + p;
          comp = (u - sum) - p;
          sum = u;
        }
        cr_assert_eq(c1d_float_bits(sum), c1d_float_bits(d.y[c1d_y_index(&s, n, o, t)]),
                     "n=%lld o=%lld t=%lld", (long long)n, (long long)o, (long long)t);
      }
  free_case(&d);
}

Test(cpu_fast_twins, split_3xtf32_truncates_one_k_step_as_the_tensor_core_does) {
  /* TF32-representable inputs have zero small parts, and with C*K = 8 and no bias one k-step holds
   * every product: their exact sum truncated toward zero (the measured mma rounding) is the result. */
  const c1d_shape s = {1, 2, 3, 40, 4, 1, 0};
  case_data d = make_case(&s, C1D_DIST_NORMAL, 41);
  for (int64_t i = 0; i < c1d_x_count(&s); i++) d.x[i] = c1d_round_tf32_rna(d.x[i]);
  for (int64_t i = 0; i < c1d_w_count(&s); i++) d.w[i] = c1d_round_tf32_rna(d.w[i]);
  cr_assert_eq(c1d_oracle_f64(&s, d.x, d.w, d.b, d.ref, d.mag, NULL, NULL), C1D_OK);
  run_impl(&c1d_cpu_split_3xtf32, &s, &d);
  int truncated = 0;
  for (int64_t e = 0; e < c1d_y_count(&s); e++) {
    float want = (float)d.ref[e];
    if (fabs((double)want) > fabs(d.ref[e])) want = nextafterf(want, 0.0f);
    truncated += want != (float)d.ref[e];
    cr_assert_eq(c1d_float_bits(d.y[e]), c1d_float_bits(want), "element %lld: %.9g vs %.17g",
                 (long long)e, d.y[e], d.ref[e]);
  }
  cr_assert_gt(truncated, 0, "no element where truncation and rounding differ: the test shows nothing");
  free_case(&d);
}

// --- accuracy where it matters ------------------------------------------------------------------------

Test(cpu_fast_twins, keep_float32_accuracy_as_the_reduction_grows) {
  /* C*K = 1024 and 4096 terms: naive's relative L2 grows like sqrt(n)*u (about 5e-7 at 1024);
   * kahan_blocked's and the 3xTF32 model's must not: the model stays below naive's. */
  const c1d_shape sh[] = {{1, 256, 8, 512, 4, 1, 0}, {1, 1024, 4, 256, 4, 1, 0}};
  for (int i = 0; i < 2; i++) {
    case_data d = make_case(&sh[i], C1D_DIST_NORMAL, 51 + i);
    run_impl(&c1d_cpu_naive, &sh[i], &d);
    const double naive = rel_l2(&sh[i], &d);
    run_impl(&c1d_cpu_kahan_blocked, &sh[i], &d);
    const double kb = rel_l2(&sh[i], &d);
    run_impl(&c1d_cpu_split_3xtf32, &sh[i], &d);
    const double x3 = rel_l2(&sh[i], &d);
    cr_log_info("C*K=%lld: naive %.3g, kahan_blocked %.3g, split_3xtf32 %.3g", (long long)(sh[i].C * sh[i].K),
                naive, kb, x3);
    cr_assert_lt(kb, 1e-7, "kahan_blocked rel L2 %.3g", kb);
    cr_assert_lt(kb * 4, naive, "kahan_blocked %.3g vs naive %.3g", kb, naive);
    cr_assert_lt(x3, 1e-6, "split_3xtf32 rel L2 %.3g", x3);
    cr_assert_lt(x3, naive, "split_3xtf32 %.3g vs naive %.3g", x3, naive);
    free_case(&d);
  }
}

Test(cpu_fast_twins, kahan_blocked_and_split_3xtf32_are_registered) {
  cr_assert_eq(c1d_find_impl("kahan_blocked"), &c1d_cpu_kahan_blocked);
  cr_assert_eq(c1d_find_impl("split_3xtf32"), &c1d_cpu_split_3xtf32);
  cr_assert_null(c1d_impl_unavailable(&c1d_cpu_kahan_blocked));
}
