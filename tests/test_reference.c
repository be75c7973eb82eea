/* reference/: the float64 oracle against the definition's plain loops and against a double-double
 * evaluation of sampled elements; hand-computed cases of the operator's meaning (causal zero padding,
 * dilation, bias, K=1, C=1, L shorter than the receptive field); every kernel set this CPU runs
 * (AVX-512, AVX2, portable) giving the same bits, and C1D_ORACLE_KERNEL's errors; and shape validation naming every bad value. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/inputs.h"
#include "reference/exact_dot.h"
#include "reference/models.h"
#include "reference/oracle.h"
#include "reference/problem.h"

// --- helpers ------------------------------------------------------------------------------------

/* Inputs, outputs and the oracle's results for one shape. */
typedef struct fixture {
  c1d_shape s;
  float *x, *w, *b;
  double *y, *mag;
} fixture;

static void fixture_make(fixture *f, const c1d_shape *s, c1d_dist dist, uint64_t seed) {
  f->s = *s;
  f->x = malloc((size_t)c1d_x_count(s) * sizeof(float));
  f->w = malloc((size_t)c1d_w_count(s) * sizeof(float));
  f->b = s->bias ? malloc((size_t)s->O * sizeof(float)) : NULL;
  f->y = malloc((size_t)c1d_y_count(s) * sizeof(double));
  f->mag = malloc((size_t)c1d_y_count(s) * sizeof(double));
  cr_assert(f->x && f->w && f->y && f->mag && (!s->bias || f->b));
  c1d_generate(s, dist, seed, f->x, f->w, f->b);
  for (int64_t i = 0; i < c1d_y_count(s); i++) f->y[i] = f->mag[i] = NAN; /* poisoned */
  c1d_status st = c1d_oracle_f64(s, f->x, f->w, f->b, f->y, f->mag, NULL, NULL);
  cr_assert_eq(st, C1D_OK, "oracle failed: %s: %s", c1d_strerror(st), c1d_error_detail());
}

static void fixture_free(fixture *f) {
  free(f->x);
  free(f->w);
  free(f->b);
  free(f->y);
  free(f->mag);
}

/* m = |b| + sum |w*x| over the non-padding taps, by the definition's loops. */
static void direct_mag(const c1d_shape *s, const float *x, const float *w, const float *b, double *m) {
  for (int64_t n = 0; n < s->N; n++)
    for (int64_t o = 0; o < s->O; o++)
      for (int64_t t = 0; t < s->L; t++) {
        double acc = s->bias ? fabs((double)b[o]) : 0.0;
        for (int64_t c = 0; c < s->C; c++)
          for (int64_t k = c1d_first_tap(s, t); k < s->K; k++)
            acc += fabs((double)w[c1d_w_index(s, o, c, k)] *
                        (double)x[c1d_x_index(s, n, c, c1d_source_time(s, t, k))]);
        m[c1d_y_index(s, n, o, t)] = acc;
      }
}

static const char *shape_text(const c1d_shape *s) {
  static char buf[128];
  c1d_shape_format(s, buf, sizeof buf);
  return buf;
}

// --- the fast oracle against the definition's loops ---------------------------------------------

/* Odd sizes on purpose: O and L off the 6 x 16 micro-tile, L shorter than the receptive field,
 * C*K across several reduction chunks, O across two channel blocks, K = 1..9, D = 1..4. */
static c1d_shape odd_shapes[] = {
    {.N = 1, .C = 1, .O = 1, .L = 1, .K = 1, .D = 1, .bias = 0},
    {.N = 1, .C = 1, .O = 1, .L = 3, .K = 3, .D = 2, .bias = 1},   /* L < (K-1)*D */
    {.N = 2, .C = 3, .O = 5, .L = 17, .K = 3, .D = 1, .bias = 1},
    {.N = 1, .C = 5, .O = 7, .L = 33, .K = 5, .D = 2, .bias = 0},
    {.N = 3, .C = 2, .O = 1, .L = 40, .K = 9, .D = 4, .bias = 1},  /* O = 1 */
    {.N = 1, .C = 1, .O = 13, .L = 100, .K = 4, .D = 3, .bias = 0}, /* C = 1 */
    {.N = 2, .C = 7, .O = 11, .L = 5, .K = 9, .D = 1, .bias = 1},  /* L < (K-1)*D */
    {.N = 1, .C = 4, .O = 6, .L = 16, .K = 2, .D = 1, .bias = 0},  /* exactly one micro-tile */
    {.N = 1, .C = 3, .O = 7, .L = 257, .K = 4, .D = 1, .bias = 1}, /* several position tiles */
    {.N = 2, .C = 17, .O = 50, .L = 300, .K = 7, .D = 3, .bias = 0},
    {.N = 1, .C = 6, .O = 300, .L = 40, .K = 2, .D = 2, .bias = 1}, /* two channel blocks */
    {.N = 1, .C = 40, .O = 8, .L = 64, .K = 4, .D = 1, .bias = 0},  /* C*K over several chunks */
    {.N = 1, .C = 70, .O = 9, .L = 50, .K = 1, .D = 1, .bias = 1},  /* K = 1, two chunks */
    {.N = 1, .C = 5, .O = 5, .L = 20, .K = 65, .D = 1, .bias = 0},  /* one channel per chunk */
    {.N = 1, .C = 3, .O = 4, .L = 30, .K = 5, .D = 4, .bias = 1},
    {.N = 1, .C = 2, .O = 3, .L = 9, .K = 8, .D = 3, .bias = 1},    /* L < (K-1)*D */
    {.N = 1, .C = 9, .O = 13, .L = 70, .K = 6, .D = 2, .bias = 0},
};

ParameterizedTestParameters(oracle, matches_direct_loop_on_odd_shapes) {
  return cr_make_param_array(c1d_shape, odd_shapes, sizeof odd_shapes / sizeof odd_shapes[0]);
}

ParameterizedTest(c1d_shape *s, oracle, matches_direct_loop_on_odd_shapes) {
  fixture f;
  fixture_make(&f, s, C1D_DIST_NORMAL, 11);
  double *yd = malloc((size_t)c1d_y_count(s) * sizeof(double));
  c1d_oracle_direct(s, f.x, f.w, f.b, yd);
  for (int64_t i = 0; i < c1d_y_count(s); i++)
    cr_assert(fabs(f.y[i] - yd[i]) <= 1e-14 * f.mag[i],
              "%s: element %lld: oracle %.17g, direct %.17g, m %.3g", shape_text(s), (long long)i, f.y[i],
              yd[i], f.mag[i]);
  free(yd);
  fixture_free(&f);
}

ParameterizedTestParameters(oracle, computes_mag_as_the_sum_of_absolute_products) {
  return cr_make_param_array(c1d_shape, odd_shapes, sizeof odd_shapes / sizeof odd_shapes[0]);
}

ParameterizedTest(c1d_shape *s, oracle, computes_mag_as_the_sum_of_absolute_products) {
  fixture f;
  fixture_make(&f, s, C1D_DIST_NORMAL, 12);
  double *md = malloc((size_t)c1d_y_count(s) * sizeof(double));
  direct_mag(s, f.x, f.w, f.b, md);
  /* m is summed in float32 within chunks of kc <= max(KC, K) channel-taps: relative error at most
   * gamma_kc(2^-24) plus the double sums' (direct_mag's own error is below 1e-13 relative here). */
  const double mag_tol = c1d_oracle_mag_rel_bound(s) + 1e-13;
  const double kc_max = s->K > C1D_ORACLE_KC ? (double)s->K : (double)C1D_ORACLE_KC;
  cr_assert(mag_tol <= (kc_max + 2) * 0x1p-24, "%s: bound %.3g", shape_text(s), mag_tol);
  for (int64_t i = 0; i < c1d_y_count(s); i++) {
    cr_assert(f.mag[i] >= fabs(f.y[i]) * (1 - mag_tol), "%s: m below |y| at %lld", shape_text(s),
              (long long)i);
    cr_assert(fabs(f.mag[i] - md[i]) <= mag_tol * md[i], "%s: element %lld: m %.17g, direct %.17g",
              shape_text(s), (long long)i, f.mag[i], md[i]);
  }
  free(md);
  fixture_free(&f);
}

Test(oracle, accepts_a_null_mag_and_gives_the_same_y) {
  const c1d_shape s = {.N = 2, .C = 5, .O = 8, .L = 37, .K = 3, .D = 2, .bias = 1};
  fixture f;
  fixture_make(&f, &s, C1D_DIST_NORMAL, 13);
  double *y2 = malloc((size_t)c1d_y_count(&s) * sizeof(double));
  cr_assert_eq(c1d_oracle_f64(&s, f.x, f.w, f.b, y2, NULL, NULL, NULL), C1D_OK);
  cr_assert(memcmp(y2, f.y, (size_t)c1d_y_count(&s) * sizeof(double)) == 0);
  free(y2);
  fixture_free(&f);
}

// --- the oracle against a double-double evaluation ---------------------------------------------

/* Largest |y - exact| / m over n sampled elements (a fixed pseudo-random choice). */
static double worst_sampled_error(const fixture *f, int samples) {
  const c1d_shape *s = &f->s;
  uint64_t state = 0x2545F4914F6CDD1Dull;
  double worst = 0.0;
  for (int i = 0; i < samples; i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const int64_t idx = (int64_t)((state >> 11) % (uint64_t)c1d_y_count(s));
    const int64_t t = idx % s->L, o = (idx / s->L) % s->O, n = idx / (s->L * s->O);
    const c1d_dd e = c1d_exact_element(s, f->x, f->w, f->b, n, o, t);
    const double err = fabs((f->y[idx] - e.hi) - e.lo);
    cr_assert(f->mag[idx] > 0.0);
    if (err / f->mag[idx] > worst) worst = err / f->mag[idx];
  }
  return worst;
}

Test(oracle, is_within_1e13_of_m_from_exact_on_normal_inputs) {
  const c1d_shape s = {.N = 2, .C = 256, .O = 14, .L = 200, .K = 4, .D = 2, .bias = 1};
  fixture f;
  fixture_make(&f, &s, C1D_DIST_NORMAL, 21);
  const double worst = worst_sampled_error(&f, 600);
  cr_assert(worst <= 1e-13, "worst |y - exact| / m = %.3g", worst);
  fixture_free(&f);
}

Test(oracle, is_within_1e13_of_m_from_exact_on_ill_conditioned_inputs) {
  const c1d_shape s = {.N = 2, .C = 128, .O = 14, .L = 200, .K = 5, .D = 1, .bias = 0};
  fixture f;
  fixture_make(&f, &s, C1D_DIST_ILL_CONDITIONED, 22);
  /* The inputs do cancel: m is far larger than |y| on most elements. */
  double ratio_sum = 0.0;
  for (int64_t i = 0; i < c1d_y_count(&s); i++) ratio_sum += f.mag[i] / (fabs(f.y[i]) + 1e-300);
  cr_assert(ratio_sum / (double)c1d_y_count(&s) > 50.0, "mean m/|y| = %.3g", ratio_sum / (double)c1d_y_count(&s));
  const double worst = worst_sampled_error(&f, 600);
  cr_assert(worst <= 1e-13, "worst |y - exact| / m = %.3g", worst);
  fixture_free(&f);
}

Test(exact_dot, recovers_what_a_double_sum_loses) {
  /* 2^60 + 1 - 2^60: a double sum gives 0, the double-double 1. */
  const float a[] = {0x1p60f, 1.0f, -0x1p60f, 0x1p-40f}, b[] = {1.0f, 1.0f, 1.0f, 3.0f};
  const c1d_dd d = c1d_dot_dd(a, b, 4);
  cr_assert_eq(d.hi, 1.0 + 3 * 0x1p-40);
  cr_assert_eq(d.lo, 0.0);
}

Test(exact_dot, keeps_lo_below_half_an_ulp_of_hi) {
  float a[257], b[257];
  for (int i = 0; i < 257; i++) {
    a[i] = c1d_uniform01(5, 1, (uint64_t)i) * 2.0f - 1.0f;
    b[i] = c1d_uniform01(5, 2, (uint64_t)i) * 1e-3f;
  }
  const c1d_dd d = c1d_dot_dd(a, b, 257);
  cr_assert(fabs(d.lo) <= 0.5 * (nextafter(fabs(d.hi), INFINITY) - fabs(d.hi)));
  cr_assert(d.hi + d.lo == d.hi);
}

Test(exact_dot, includes_the_bias_and_skips_causal_padding) {
  const c1d_shape s = {.N = 1, .C = 1, .O = 1, .L = 3, .K = 2, .D = 1, .bias = 1};
  const float x[] = {2, 3, 5}, w[] = {7, 11}, b[] = {0.5f};
  cr_assert_eq(c1d_exact_element(&s, x, w, b, 0, 0, 0).hi, 0.5 + 11 * 2);
  cr_assert_eq(c1d_exact_element(&s, x, w, b, 0, 0, 2).hi, 0.5 + 7 * 3 + 11 * 5);
}

// --- hand-computed cases of the operator's meaning -------------------------------------------------

/* Runs both the fast oracle and the direct loops and checks y (and, if given, m) exactly: every value
 * here is a small integer or a short binary fraction, so double arithmetic is exact. */
static void check_case(const c1d_shape *s, const float *x, const float *w, const float *b,
                       const double *expect_y, const double *expect_m) {
  const int64_t ny = c1d_y_count(s);
  double *y = malloc((size_t)ny * sizeof(double)), *m = malloc((size_t)ny * sizeof(double));
  double *yd = malloc((size_t)ny * sizeof(double));
  cr_assert_eq(c1d_oracle_f64(s, x, w, b, y, m, NULL, NULL), C1D_OK, "%s", c1d_error_detail());
  c1d_oracle_direct(s, x, w, b, yd);
  for (int64_t i = 0; i < ny; i++) {
    cr_assert_eq(y[i], expect_y[i], "%s: y[%lld] = %g, expected %g", shape_text(s), (long long)i, y[i],
                 expect_y[i]);
    cr_assert_eq(yd[i], expect_y[i], "%s: direct y[%lld] = %g, expected %g", shape_text(s),
                 (long long)i, yd[i], expect_y[i]);
    if (expect_m)
      cr_assert_eq(m[i], expect_m[i], "%s: m[%lld] = %g, expected %g", shape_text(s), (long long)i,
                   m[i], expect_m[i]);
  }
  free(y);
  free(m);
  free(yd);
}

Test(semantics, pads_the_past_with_zeros) {
  /* y[t] = w0*x[t-1] + w1*x[t]: the oldest tap reads x[-1] = 0 at t = 0. */
  const c1d_shape s = {.N = 1, .C = 1, .O = 1, .L = 4, .K = 2, .D = 1, .bias = 0};
  const float x[] = {1, 2, 3, 4}, w[] = {-1, 1};
  const double y[] = {1, 1, 1, 1}, m[] = {1, 3, 5, 7};
  check_case(&s, x, w, NULL, y, m);
}

Test(semantics, spaces_taps_by_the_dilation) {
  /* D = 2: y[t] = w0*x[t-2] + w1*x[t]. */
  const c1d_shape s = {.N = 1, .C = 1, .O = 1, .L = 5, .K = 2, .D = 2, .bias = 0};
  const float x[] = {1, 2, 3, 4, 5}, w[] = {10, 1};
  const double y[] = {1, 2, 13, 24, 35};
  check_case(&s, x, w, NULL, y, y);
}

Test(semantics, starts_every_output_at_its_bias) {
  /* K = 1, two output channels with different biases; m includes |b|. */
  const c1d_shape s = {.N = 1, .C = 1, .O = 2, .L = 3, .K = 1, .D = 1, .bias = 1};
  const float x[] = {1, -1, 3}, w[] = {2, -1}, b[] = {0.5f, -4};
  const double y[] = {2.5, -1.5, 6.5, -5, -3, -7};
  const double m[] = {2.5, 2.5, 6.5, 5, 5, 7};
  check_case(&s, x, w, b, y, m);
}

Test(semantics, with_one_tap_mixes_channels_pointwise) {
  /* K = 1: y[n,o,t] = sum_c w[o,c] x[n,c,t], two batch elements with their own x. */
  const c1d_shape s = {.N = 2, .C = 2, .O = 2, .L = 2, .K = 1, .D = 3, .bias = 0};
  const float x[] = {1, 2, 10, 20, /* n=1 */ -1, -2, 0.5f, 0.25f};
  const float w[] = {1, 1, /* o=1 */ 2, -1};
  const double y[] = {11, 22, -8, -16, /* n=1 */ -0.5, -1.75, -2.5, -4.25};
  check_case(&s, x, w, NULL, y, NULL);
}

Test(semantics, with_one_input_channel_is_a_plain_causal_filter) {
  /* C = 1, K = 3, D = 1: y[t] = w0 x[t-2] + w1 x[t-1] + w2 x[t] + b. */
  const c1d_shape s = {.N = 1, .C = 1, .O = 1, .L = 5, .K = 3, .D = 1, .bias = 1};
  const float x[] = {1, 0, 0, 2, 0}, w[] = {100, 10, 1}, b[] = {0.25f};
  const double y[] = {1.25, 10.25, 100.25, 2.25, 20.25};
  check_case(&s, x, w, b, y, y);
}

Test(semantics, sees_only_the_newest_tap_when_L_is_shorter_than_the_receptive_field) {
  /* (K-1)*D = 4 > L = 2: taps 0 and 1 read x[t-4], x[t-2], always padding. */
  const c1d_shape s = {.N = 1, .C = 1, .O = 1, .L = 2, .K = 3, .D = 2, .bias = 1};
  const float x[] = {3, 5}, w[] = {100, 10, 1}, b[] = {7};
  const double y[] = {10, 12};
  check_case(&s, x, w, b, y, y);
}

// --- kernels, threads, progress -----------------------------------------------------------------

/* Odd shapes for the kernel sets: O and L off the 8 x 16 micro-tile and off the AVX2 sub-blocks, L
 * shorter than a micro-tile and than the receptive field, windows crossing t = 0 and L, C*K over several
 * reduction chunks (and K > KC: one channel a chunk), O over two channel blocks. */
typedef struct kernel_case {
  c1d_oracle_kernel kernel;
  c1d_shape s;
  c1d_dist dist;
} kernel_case;

#define KERNEL_SHAPES(kern)                                                                        \
  {kern, {.N = 2, .C = 37, .O = 29, .L = 301, .K = 5, .D = 3, .bias = 1}, C1D_DIST_NORMAL},          \
  {kern, {.N = 1, .C = 64, .O = 270, .L = 130, .K = 4, .D = 1, .bias = 0}, C1D_DIST_NORMAL},         \
  {kern, {.N = 3, .C = 3, .O = 7, .L = 9, .K = 9, .D = 2, .bias = 1}, C1D_DIST_NORMAL},              \
  {kern, {.N = 1, .C = 2, .O = 3, .L = 5, .K = 70, .D = 1, .bias = 1}, C1D_DIST_NORMAL},             \
  {kern, {.N = 2, .C = 33, .O = 13, .L = 17, .K = 2, .D = 7, .bias = 0}, C1D_DIST_ILL_CONDITIONED},  \
  {kern, {.N = 1, .C = 65, .O = 9, .L = 257, .K = 1, .D = 1, .bias = 1}, C1D_DIST_UNIFORM}

static kernel_case kernel_cases[] = {
    KERNEL_SHAPES(C1D_ORACLE_KERNEL_AVX2),
    KERNEL_SHAPES(C1D_ORACLE_KERNEL_AVX512),
};

ParameterizedTestParameters(oracle, gives_the_portable_kernels_bits_with_every_kernel_this_cpu_runs) {
  return cr_make_param_array(kernel_case, kernel_cases, sizeof kernel_cases / sizeof kernel_cases[0]);
}

ParameterizedTest(kernel_case *kc, oracle, gives_the_portable_kernels_bits_with_every_kernel_this_cpu_runs) {
  const char *name = c1d_oracle_kernel_name(kc->kernel);
  if (!c1d_oracle_kernel_available(kc->kernel)) cr_skip_test("this CPU cannot run the %s kernel", name);
  const c1d_shape *s = &kc->s;
  setenv("C1D_ORACLE_KERNEL", "portable", 1);
  fixture f;
  fixture_make(&f, s, kc->dist, 31);
  const size_t bytes = (size_t)c1d_y_count(s) * sizeof(double);
  double *y = malloc(bytes), *m = malloc(bytes);
  cr_assert(y && m);
  for (int64_t i = 0; i < c1d_y_count(s); i++) y[i] = m[i] = NAN;
  setenv("C1D_ORACLE_KERNEL", name, 1);
  cr_assert_eq(c1d_oracle_f64(s, f.x, f.w, f.b, y, m, NULL, NULL), C1D_OK, "%s", c1d_error_detail());
  unsetenv("C1D_ORACLE_KERNEL");
  cr_assert(memcmp(y, f.y, bytes) == 0, "%s: y differs between the %s and portable kernels", shape_text(s), name);
  cr_assert(memcmp(m, f.mag, bytes) == 0, "%s: m differs between the %s and portable kernels", shape_text(s), name);
  free(y);
  free(m);
  fixture_free(&f);
}

Test(oracle, runs_the_fastest_kernel_this_cpu_has_unless_told_otherwise) {
  unsetenv("C1D_ORACLE_KERNEL");
  c1d_oracle_kernel k;
  cr_assert_eq(c1d_oracle_kernel_select(&k), C1D_OK);
  for (int better = (int)k + 1; better < C1D_ORACLE_KERNEL_COUNT; better++)
    cr_assert(!c1d_oracle_kernel_available((c1d_oracle_kernel)better), "%s chosen though %s runs here",
              c1d_oracle_kernel_name(k), c1d_oracle_kernel_name((c1d_oracle_kernel)better));
  setenv("C1D_ORACLE_KERNEL", "portable", 1);
  cr_assert_eq(c1d_oracle_kernel_select(&k), C1D_OK);
  cr_assert_eq(k, C1D_ORACLE_KERNEL_PORTABLE);
  unsetenv("C1D_ORACLE_KERNEL");
}

Test(oracle, refuses_a_kernel_name_it_does_not_know_in_one_line) {
  const c1d_shape s = {.N = 1, .C = 2, .O = 2, .L = 8, .K = 2, .D = 1, .bias = 0};
  float x[16] = {1}, w[8] = {1};
  double y[16], m[16];
  setenv("C1D_ORACLE_KERNEL", "avx3", 1);
  cr_assert_eq(c1d_oracle_f64(&s, x, w, NULL, y, m, NULL, NULL), C1D_ERR_USAGE);
  unsetenv("C1D_ORACLE_KERNEL");
  cr_assert(strstr(c1d_error_detail(), "C1D_ORACLE_KERNEL must be avx512, avx2 or portable (got 'avx3')"),
            "%s", c1d_error_detail());
}

Test(oracle, refuses_a_kernel_this_cpu_cannot_run) {
  int missing = -1;
  for (int k = 0; k < C1D_ORACLE_KERNEL_COUNT; k++)
    if (!c1d_oracle_kernel_available((c1d_oracle_kernel)k)) missing = k;
  if (missing < 0) cr_skip_test("this CPU runs every kernel set");
  const char *name = c1d_oracle_kernel_name((c1d_oracle_kernel)missing);
  setenv("C1D_ORACLE_KERNEL", name, 1);
  c1d_oracle_kernel k;
  cr_assert_eq(c1d_oracle_kernel_select(&k), C1D_ERR_UNSUPPORTED);
  unsetenv("C1D_ORACLE_KERNEL");
  cr_assert(strstr(c1d_error_detail(), "this CPU cannot run it"), "%s", c1d_error_detail());
}

Test(oracle, gives_identical_bits_on_one_thread_and_on_three) {
  const c1d_shape s = {.N = 2, .C = 19, .O = 61, .L = 700, .K = 4, .D = 2, .bias = 1};
  omp_set_num_threads(1);
  fixture f;
  fixture_make(&f, &s, C1D_DIST_NORMAL, 41);
  const size_t bytes = (size_t)c1d_y_count(&s) * sizeof(double);
  double *y = malloc(bytes), *m = malloc(bytes);
  omp_set_num_threads(3);
  cr_assert_eq(c1d_oracle_f64(&s, f.x, f.w, f.b, y, m, NULL, NULL), C1D_OK);
  cr_assert(memcmp(y, f.y, bytes) == 0);
  cr_assert(memcmp(m, f.mag, bytes) == 0);
  free(y);
  free(m);
  fixture_free(&f);
}

typedef struct progress_log {
  int calls, decreased;
  double last;
} progress_log;

static void record_progress(double fraction, void *user) {
  progress_log *log = user;
  if (fraction < log->last || fraction < 0.0 || fraction > 1.0) log->decreased = 1;
  log->last = fraction;
  log->calls++;
}

Test(oracle, reports_progress_that_never_decreases_and_ends_at_one) {
  const c1d_shape s = {.N = 4, .C = 8, .O = 20, .L = 2000, .K = 3, .D = 1, .bias = 0};
  fixture f;
  fixture_make(&f, &s, C1D_DIST_UNIFORM, 51);
  progress_log log = {0, 0, 0.0};
  cr_assert_eq(c1d_oracle_f64(&s, f.x, f.w, f.b, f.y, NULL, record_progress, &log), C1D_OK);
  cr_assert_geq(log.calls, 1);
  cr_assert_not(log.decreased);
  cr_assert_eq(log.last, 1.0);
  fixture_free(&f);
}

Test(oracle, reports_the_bytes_it_could_not_allocate) {
  /* A valid shape whose packed weights (16 bytes per element of a 2^40-element w) no machine holds.
   * With overcommit set to "always" the allocation could succeed on paper, so the test needs the
   * kernel's default heuristic or strict accounting. */
  FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
  int mode = -1;
  if (f) {
    if (fscanf(f, "%d", &mode) != 1) mode = -1;
    fclose(f);
  }
  if (mode != 0 && mode != 2) cr_skip_test("vm.overcommit_memory is %d: a huge allocation may succeed", mode);
  const c1d_shape s = {.N = 1, .C = INT64_C(1) << 20, .O = INT64_C(1) << 20, .L = 1, .K = 1, .D = 1,
                       .bias = 0};
  cr_assert_eq(c1d_shape_validate(&s), C1D_OK, "%s", c1d_error_detail());
  float dummy_in[1] = {0};
  double dummy_out[1];
  const c1d_status st = c1d_oracle_f64(&s, dummy_in, dummy_in, NULL, dummy_out, dummy_out, NULL, NULL);
  cr_assert_eq(st, C1D_ERR_NO_MEMORY, "got %s", c1d_strerror(st));
  cr_assert(strstr(c1d_error_detail(), "bytes") != NULL, "detail: %s", c1d_error_detail());
}

Test(oracle, refuses_a_bias_flag_without_a_bias_tensor) {
  const c1d_shape s = {.N = 1, .C = 1, .O = 1, .L = 1, .K = 1, .D = 1, .bias = 1};
  float x[1] = {1}, w[1] = {1};
  double y[1], m[1];
  cr_assert_eq(c1d_oracle_f64(&s, x, w, NULL, y, m, NULL, NULL), C1D_ERR_INVALID_SHAPE);
  cr_assert(strstr(c1d_error_detail(), "bias") != NULL, "detail: %s", c1d_error_detail());
}

// --- shape validation ---------------------------------------------------------------------------

typedef struct bad_shape {
  c1d_shape s;
  c1d_status status;
  char names[32]; /* the detail must contain this */
} bad_shape;

#define SHAPE(n, c, o, l, k, d, b) {.N = (n), .C = (c), .O = (o), .L = (l), .K = (k), .D = (d), .bias = (b)}
#define BIG(e) (INT64_C(1) << (e))

static bad_shape bad_shapes[] = {
    {SHAPE(0, 4, 4, 8, 3, 1, 0), C1D_ERR_INVALID_SHAPE, "N (batch)"},
    {SHAPE(-2, 4, 4, 8, 3, 1, 0), C1D_ERR_INVALID_SHAPE, "N (batch)"},
    {SHAPE(1, 0, 4, 8, 3, 1, 0), C1D_ERR_INVALID_SHAPE, "C (in-channels)"},
    {SHAPE(1, -3, 4, 8, 3, 1, 0), C1D_ERR_INVALID_SHAPE, "C (in-channels)"},
    {SHAPE(1, 4, 0, 8, 3, 1, 0), C1D_ERR_INVALID_SHAPE, "O (out-channels)"},
    {SHAPE(1, 4, -1, 8, 3, 1, 0), C1D_ERR_INVALID_SHAPE, "O (out-channels)"},
    {SHAPE(1, 4, 4, 0, 3, 1, 0), C1D_ERR_INVALID_SHAPE, "L (length)"},
    {SHAPE(1, 4, 4, -8, 3, 1, 0), C1D_ERR_INVALID_SHAPE, "L (length)"},
    {SHAPE(1, 4, 4, 8, 0, 1, 0), C1D_ERR_INVALID_SHAPE, "K (taps)"},
    {SHAPE(1, 4, 4, 8, -1, 1, 0), C1D_ERR_INVALID_SHAPE, "K (taps)"},
    {SHAPE(1, 4, 4, 8, 3, 0, 0), C1D_ERR_INVALID_SHAPE, "D (dilation)"},
    {SHAPE(1, 4, 4, 8, 3, -7, 0), C1D_ERR_INVALID_SHAPE, "D (dilation)"},
    {SHAPE(1, 4, 4, 8, 3, 1, 2), C1D_ERR_INVALID_SHAPE, "bias"},
    {SHAPE(1, 4, 4, 8, 3, 1, -1), C1D_ERR_INVALID_SHAPE, "bias"},
    {SHAPE(1, 4, 4, 8, 3, BIG(30), 0), C1D_ERR_INVALID_SHAPE, "(K-1)*D"},
    {SHAPE(1, 4, 4, 8, BIG(31), 1, 0), C1D_ERR_INVALID_SHAPE, "(K-1)*D"},
    {SHAPE(BIG(21), BIG(10), 4, BIG(10), 3, 1, 0), C1D_ERR_OVERFLOW, "x (N*C*L)"},
    {SHAPE(BIG(40), BIG(40), 4, BIG(40), 3, 1, 0), C1D_ERR_OVERFLOW, "x (N*C*L)"}, /* int64 wraps */
    {SHAPE(1, BIG(10), BIG(21), 8, BIG(10), 1, 0), C1D_ERR_OVERFLOW, "w (O*C*K)"},
    {SHAPE(BIG(20), 1, BIG(20), 2, 3, 1, 0), C1D_ERR_OVERFLOW, "y (N*O*L)"},
    {SHAPE(1, BIG(21), 1, 1, BIG(11), 1, 0), C1D_ERR_OVERFLOW, "C*K"},
};

ParameterizedTestParameters(shape, rejects_each_bad_value_by_name) {
  return cr_make_param_array(bad_shape, bad_shapes, sizeof bad_shapes / sizeof bad_shapes[0]);
}

ParameterizedTest(bad_shape *p, shape, rejects_each_bad_value_by_name) {
  c1d_error_clear();
  const c1d_status st = c1d_shape_validate(&p->s);
  cr_assert_eq(st, p->status, "%s: got %s (%s), expected %s", shape_text(&p->s), c1d_strerror(st),
               c1d_error_detail(), c1d_strerror(p->status));
  cr_assert(strstr(c1d_error_detail(), p->names) != NULL, "%s: detail '%s' does not name '%s'",
            shape_text(&p->s), c1d_error_detail(), p->names);
  /* The oracle validates first and touches no buffer of a bad shape. */
  c1d_error_clear();
  cr_assert_eq(c1d_oracle_f64(&p->s, NULL, NULL, NULL, NULL, NULL, NULL, NULL), p->status);
  cr_assert(strstr(c1d_error_detail(), p->names) != NULL);
}

Test(shape, accepts_the_headline_shape_and_the_smallest_one) {
  const c1d_shape h = c1d_headline_shape(), one = SHAPE(1, 1, 1, 1, 1, 1, 0);
  cr_assert_eq(c1d_shape_validate(&h), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(c1d_shape_validate(&one), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(c1d_flops(&h), 2.0 * 32 * 256 * 8192 * 256 * 4);
}

Test(shape, finds_the_first_real_tap_at_each_time) {
  const c1d_shape s = SHAPE(1, 1, 1, 10, 4, 3, 0); /* pad 9: taps read t-9, t-6, t-3, t */
  const int64_t expect[] = {3, 3, 3, 2, 2, 2, 1, 1, 1, 0};
  for (int64_t t = 0; t < 10; t++) {
    cr_assert_eq(c1d_first_tap(&s, t), expect[t], "t=%lld", (long long)t);
    cr_assert_geq(c1d_source_time(&s, t, expect[t]), 0);
    if (expect[t] > 0) cr_assert_lt(c1d_source_time(&s, t, expect[t] - 1), 0);
  }
}

// --- the operator as people write it: groups, depthwise, initial states, SiLU (issue 15) ----------

#include "numerics/activation.h"

/* The definition, term by term, in double: y = act(b + sum over o's group and k of w * xs). */
static void definition(const c1d_shape *s, const float *x, const float *w, const float *b, const float *st,
                       double *y, double *m) {
  for (int64_t n = 0; n < s->N; n++)
    for (int64_t o = 0; o < s->O; o++)
      for (int64_t t = 0; t < s->L; t++) {
        double acc = s->bias ? b[o] : 0.0, mm = s->bias ? fabs((double)b[o]) : 0.0;
        const int64_t c0 = o / (s->O / c1d_groups(s)) * (s->C / c1d_groups(s));
        for (int64_t c = c0; c < c0 + s->C / c1d_groups(s); c++)
          for (int64_t k = 0; k < s->K; k++) {
            const int64_t src = t + k * s->D - (s->K - 1) * s->D;
            const double xv = src >= 0 ? x[(n * s->C + c) * s->L + src]
                                       : (s->states ? st[(n * s->C + c) * c1d_pad(s) + c1d_pad(s) + src] : 0.0);
            const double p = (double)w[(o * (s->C / c1d_groups(s)) + (c - c0)) * s->K + k] * xv;
            acc += p;
            mm += fabs(p);
          }
        y[(n * s->O + o) * s->L + t] = s->act == C1D_ACT_SILU ? c1d_silu_f64(acc) : acc;
        m[(n * s->O + o) * s->L + t] = mm;
      }
}

static const c1d_shape general_shapes[] = {
    {.N = 2, .C = 8, .O = 8, .L = 50, .K = 4, .D = 1, .bias = 1, .G = 8},               /* depthwise */
    {.N = 2, .C = 12, .O = 6, .L = 37, .K = 3, .D = 2, .bias = 1, .G = 3},              /* grouped */
    {.N = 3, .C = 6, .O = 6, .L = 20, .K = 4, .D = 3, .bias = 0, .G = 6, .states = 1},  /* states */
    {.N = 2, .C = 4, .O = 8, .L = 40, .K = 2, .D = 1, .bias = 1, .act = C1D_ACT_SILU},  /* dense SiLU */
    {.N = 1, .C = 16, .O = 16, .L = 9, .K = 8, .D = 2, .bias = 1, .G = 16, .states = 1, .act = C1D_ACT_SILU},
    {.N = 2, .C = 512, .O = 4, .L = 30, .K = 2, .D = 1, .bias = 1, .G = 2},             /* many terms */
};

Test(oracle, equals_the_definition_for_groups_states_and_silu) {
  for (unsigned si = 0; si < sizeof general_shapes / sizeof general_shapes[0]; si++) {
    const c1d_shape *s = &general_shapes[si];
    cr_assert_eq(c1d_shape_validate(s), C1D_OK, "%s", c1d_error_detail());
    const int64_t nx = c1d_x_count(s), nw = c1d_w_count(s), ny = c1d_y_count(s), ns = c1d_s_count(s);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc(s->O * 4), *st = malloc((ns + 1) * 4);
    double *y = malloc(ny * 8), *m = malloc(ny * 8), *pre = malloc(ny * 8), *yd = malloc(ny * 8), *md = malloc(ny * 8);
    for (int64_t i = 0; i < nx; i++) x[i] = (float)((i * 37) % 19) / 7.0f - 1.3f;
    for (int64_t i = 0; i < nw; i++) w[i] = (float)((i * 11) % 13) / 9.0f - 0.6f;
    for (int64_t i = 0; i < s->O; i++) b[i] = 0.25f * (float)(i % 5) - 0.5f;
    for (int64_t i = 0; i < ns; i++) st[i] = (float)((i * 5) % 7) - 3.0f;
    cr_assert_eq(c1d_oracle_f64_ex(s, x, w, b, st, y, m, pre, NULL, NULL), C1D_OK, "%s", c1d_error_detail());
    definition(s, x, w, b, st, yd, md);
    /* Few terms a group: the definition's own loop in double, row by row (the same operations per
     * element, padding taps adding zero), so the same bits. */
    const int same_bits = c1d_groups(s) > 1 && c1d_terms(s) <= 256;
    for (int64_t i = 0; i < ny; i++) {
      if (same_bits)
        cr_assert(memcmp(&y[i], &yd[i], 8) == 0 && memcmp(&m[i], &md[i], 8) == 0,
                  "shape %u element %lld: y %.17g m %.17g against %.17g, %.17g", si, (long long)i, y[i], m[i],
                  yd[i], md[i]);
      cr_assert(fabs(y[i] - yd[i]) <= 1e-12 * (md[i] + 1.0), "shape %u element %lld: %.17g against %.17g", si,
                (long long)i, y[i], yd[i]);
      cr_assert(fabs(m[i] - md[i]) <= 4e-6 * md[i] + 1e-300, "shape %u element %lld: m %.17g against %.17g", si,
                (long long)i, m[i], md[i]);
      if (s->act == C1D_ACT_SILU) cr_assert(fabs(c1d_silu_f64(pre[i]) - y[i]) <= 1e-15 * (fabs(y[i]) + 1e-300));
    }
    free(x), free(w), free(b), free(st), free(y), free(m), free(pre), free(yd), free(md);
  }
}

Test(shape, validates_groups_states_and_types) {
  c1d_shape s = {.N = 1, .C = 6, .O = 4, .L = 8, .K = 3, .D = 1, .G = 4};
  cr_expect_eq(c1d_shape_validate(&s), C1D_ERR_INVALID_SHAPE, "G=4 does not divide C=6");
  cr_expect(strstr(c1d_error_detail(), "G=4 must divide C=6 and O=4") != NULL, "%s", c1d_error_detail());
  s.G = 2;
  cr_expect_eq(c1d_shape_validate(&s), C1D_OK, "%s", c1d_error_detail());
  s.K = 1;
  s.states = 1;
  cr_expect_eq(c1d_shape_validate(&s), C1D_ERR_INVALID_SHAPE, "states need (K-1)*D > 0");
  s.K = 3;
  s.dt.y = (c1d_dtype)7;
  cr_expect_eq(c1d_shape_validate(&s), C1D_ERR_INVALID_SHAPE);
  s.dt.y = C1D_DTYPE_BF16;
  char text[160];
  c1d_shape_format(&s, text, sizeof text);
  cr_expect_str_eq(text, "N=1 C=6 O=4 L=8 K=3 D=1 bias=0 G=2 states y=bf16");
  cr_expect_eq(c1d_terms(&s), 9, "(C/G)*K");
  cr_expect_eq(c1d_w_count(&s), 4 * 3 * 3, "w is (O, C/G, K)");
  cr_expect_eq(c1d_w_index(&s, 3, 5, 2), (3 * 3 + 2) * 3 + 2, "channel 5 is the third of group 1");
  cr_expect_eq(c1d_first_tap(&s, 0), 0, "with states every tap reads a value");
}

/* The tensor-core truncation bias of every element (the explainer's full pass) is the one-element
 * definition's (c1d_model_eval_at), bit for bit, and so is the definition on inputs rounded as read (the
 * explainer's sample): at the left edge (padding steps and live terms grouped
 * apart), with states, dilation, groups, SiLU, a partial last step, the split of 3xTF32 and rounded
 * products, and on positions past a row's padding where every term reads a value. */
Test(models, truncation_bias_of_every_element_and_values_rounded_as_read_equal_the_one_element_definition) {
  static const c1d_shape shapes[] = {
      {.N = 2, .C = 5, .O = 3, .L = 70, .K = 4, .D = 1, .bias = 1},             /* 20 terms: a partial step */
      {.N = 1, .C = 8, .O = 4, .L = 33, .K = 3, .D = 5, .bias = 0},             /* dilation */
      {.N = 2, .C = 12, .O = 6, .L = 37, .K = 3, .D = 2, .bias = 1, .G = 3},    /* grouped */
      {.N = 3, .C = 6, .O = 6, .L = 20, .K = 4, .D = 3, .bias = 0, .G = 6, .states = 1},
      {.N = 1, .C = 16, .O = 16, .L = 9, .K = 8, .D = 2, .bias = 1, .G = 16, .states = 1, .act = C1D_ACT_SILU},
      {.N = 2, .C = 4, .O = 8, .L = 40, .K = 2, .D = 1, .bias = 1, .act = C1D_ACT_SILU},
      {.N = 1, .C = 3, .O = 2, .L = 5, .K = 4, .D = 3, .bias = 1},              /* L shorter than the pad */
      {.N = 1, .C = 3, .O = 2, .L = 1300, .K = 4, .D = 300, .bias = 1},        /* a pad across blocks of t */
      {.N = 1, .C = 2, .O = 2, .L = 1100, .K = 3, .D = 400, .bias = 1, .G = 2, .states = 1},
  };
  static const c1d_model_spec specs[] = {
      {C1D_ROUND_TF32_RNA, C1D_ROUND_TF32_RNA, 0, C1D_ROUND_NONE, 0, C1D_ROUND_NONE},
      {C1D_ROUND_NONE, C1D_ROUND_NONE, 1, C1D_ROUND_NONE, 0, C1D_ROUND_NONE}, /* 3xTF32's split */
      {C1D_ROUND_NONE, C1D_ROUND_NONE, 0, C1D_ROUND_BF16, 0, C1D_ROUND_NONE}, /* rounded products */
  };
  for (unsigned si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
    for (unsigned pi = 0; pi < sizeof specs / sizeof specs[0]; pi++) {
      const c1d_shape *s = &shapes[si];
      cr_assert_eq(c1d_shape_validate(s), C1D_OK, "%s", c1d_error_detail());
      const int64_t nx = c1d_x_count(s), nw = c1d_w_count(s), ny = c1d_y_count(s), ns = c1d_s_count(s);
      float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc(s->O * 4), *st = malloc((ns + 1) * 4);
      float *bias = malloc(2 * ny * 4);
      cr_assert(x && w && b && st && bias);
      c1d_generate(s, C1D_DIST_NORMAL, 7 + si, x, w, s->bias ? b : NULL);
      for (int64_t i = 0; i < ns; i++) st[i] = (float)((i * 5) % 7) - 3.0f;
      c1d_model_inputs mi;
      cr_assert_eq(c1d_model_inputs_make(s, x, w, s->states ? st : NULL, specs[pi], &mi), C1D_OK);
      cr_assert_eq(c1d_tc_bias_full(s, &mi, b, bias, bias + ny), C1D_OK);
      c1d_model_inputs view; /* the sample's inputs: rounded as read */
      c1d_model_inputs_view(x, w, s->states ? st : NULL, specs[pi], &view);
      int64_t nonzero = 0;
      for (int64_t n = 0; n < s->N; n++)
        for (int64_t o = 0; o < s->O; o++)
          for (int64_t t = 0; t < s->L; t++) {
            double v, bp, bl, v2, bp2, bl2;
            c1d_model_eval_at(s, &mi, b, n, o, t, &v, &bp, &bl);
            c1d_model_eval_at(s, &view, b, n, o, t, &v2, &bp2, &bl2);
            cr_assert(memcmp(&v, &v2, 8) == 0 && memcmp(&bp, &bp2, 8) == 0 && memcmp(&bl, &bl2, 8) == 0,
                      "shape %u spec %u (n %lld, o %lld, t %lld): rounded as read %.17g against the copies' %.17g",
                      si, pi, (long long)n, (long long)o, (long long)t, v2, v);
            const int64_t i = c1d_y_index(s, n, o, t);
            cr_assert(bias[i] == (float)bp && bias[ny + i] == (float)bl,
                      "shape %u spec %u (n %lld, o %lld, t %lld): %.9g, %.9g against %.9g, %.9g", si, pi,
                      (long long)n, (long long)o, (long long)t, bias[i], bias[ny + i], (float)bp, (float)bl);
            nonzero += bp != 0.0;
          }
      cr_assert(nonzero > ny / 2, "shape %u spec %u: %lld of %lld biases are 0: the test would see little", si, pi,
                (long long)nonzero, (long long)ny);
      c1d_model_inputs_free(&mi);
      free(x), free(w), free(b), free(st), free(bias);
    }
}
