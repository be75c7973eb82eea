/* numerics: rounding of known bit patterns, error-free transformations, ULP distance, metrics, bounds
 * and histograms. */
#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <string.h>
#include <stdlib.h>

#include "numerics/activation.h"
#include "numerics/arith.h"
#include "numerics/bounds.h"
#include "numerics/histogram.h"
#include "numerics/metrics.h"
#include "numerics/regions.h"
#include "numerics/ulp.h"

static float f(uint32_t bits) { return c1d_bits_float(bits); }
static uint32_t b(float v) { return c1d_float_bits(v); }

// --- TF32 ---------------------------------------------------------------------------------------

Test(round_tf32, keeps_values_with_ten_mantissa_bits) {
  cr_assert_eq(b(c1d_round_tf32_rna(1.0f)), b(1.0f));
  cr_assert_eq(b(c1d_round_tf32_rna(f(0x3f802000))), 0x3f802000u); /* 1 + 2^-10 */
}

Test(round_tf32, rounds_ties_away_from_zero) {
  /* 1 + 2^-11 lies exactly between 1 and 1 + 2^-10: ties go away from zero, unlike RNE. */
  cr_assert_eq(b(c1d_round_tf32_rna(f(0x3f801000))), 0x3f802000u);
  cr_assert_eq(b(c1d_round_tf32_rna(f(0xbf801000))), 0xbf802000u);
  /* Just below the tie rounds down. */
  cr_assert_eq(b(c1d_round_tf32_rna(f(0x3f800fff))), 0x3f800000u);
}

Test(round_tf32, truncation_drops_low_bits) {
  cr_assert_eq(b(c1d_round_tf32_trunc(f(0x3f801fff))), 0x3f800000u);
  cr_assert_eq(b(c1d_round_tf32_trunc(f(0xbf801fff))), 0xbf800000u);
}

Test(round_tf32, overflows_to_infinity_and_keeps_nan) {
  cr_assert(isinf(c1d_round_tf32_rna(f(0x7f7ff000)))); /* rounds past the largest TF32 value */
  cr_assert_eq(b(c1d_round_tf32_rna(f(0x7f7fefff))), 0x7f7fe000u);
  cr_assert(isnan(c1d_round_tf32_rna(NAN)));
  cr_assert(isnan(c1d_round_tf32_trunc(f(0x7f800001)))); /* payload only in the dropped bits */
  cr_assert(isinf(c1d_round_tf32_rna(INFINITY)));
}

Test(round_tf32, rounds_subnormals_on_the_same_grid) {
  cr_assert_eq(b(c1d_round_tf32_rna(f(0x00001000))), 0x00002000u);
  cr_assert_eq(b(c1d_round_tf32_rna(f(0x00000fff))), 0x00000000u);
}

// --- bf16 ---------------------------------------------------------------------------------------

Test(round_bf16, rounds_ties_to_even) {
  cr_assert_eq(b(c1d_round_bf16(f(0x3f808000))), 0x3f800000u); /* tie, even below */
  cr_assert_eq(b(c1d_round_bf16(f(0x3f818000))), 0x3f820000u); /* tie, even above */
  cr_assert_eq(b(c1d_round_bf16(f(0x3f808001))), 0x3f810000u);
}

Test(round_bf16, overflows_and_keeps_nan_and_subnormals) {
  cr_assert(isinf(c1d_round_bf16(f(0x7f7fffff))));
  cr_assert_eq(b(c1d_round_bf16(f(0x7f7f7fff))), 0x7f7f0000u);
  cr_assert(isnan(c1d_round_bf16(f(0x7f800001))));
  cr_assert_eq(b(c1d_round_bf16(f(0x00018000))), 0x00020000u); /* subnormal tie to even */
}

// --- fp16 ---------------------------------------------------------------------------------------

Test(round_fp16, rounds_normals_to_nearest_even) {
  cr_assert_eq(c1d_round_fp16(1.0f), 1.0f);
  cr_assert_eq(c1d_round_fp16(1.0f + 0x1p-11f), 1.0f);                   /* tie, even below */
  cr_assert_eq(c1d_round_fp16(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);     /* tie, even above */
  cr_assert_eq(c1d_round_fp16(-(1.0f + 0x1p-11f + 0x1p-20f)), -(1.0f + 0x1p-10f));
}

Test(round_fp16, overflows_at_65520) {
  cr_assert_eq(c1d_round_fp16(65504.0f), 65504.0f);
  cr_assert_eq(c1d_round_fp16(65519.0f), 65504.0f);
  cr_assert(isinf(c1d_round_fp16(65520.0f)));
  cr_assert(isinf(c1d_round_fp16(-1e6f)) && c1d_round_fp16(-1e6f) < 0);
}

Test(round_fp16, handles_subnormals_and_underflow) {
  cr_assert_eq(c1d_round_fp16(0x1p-24f), 0x1p-24f);             /* smallest fp16 subnormal */
  cr_assert_eq(c1d_round_fp16(0x1p-25f), 0.0f);                 /* tie with 0: even is 0 */
  cr_assert_eq(c1d_round_fp16(0x1.8p-25f), 0x1p-24f);
  cr_assert_eq(c1d_round_fp16(3 * 0x1p-25f), 2 * 0x1p-24f);     /* 1.5 ulp: tie to even (2) */
  cr_assert_eq(c1d_round_fp16(0x1p-14f - 0x1p-26f), 0x1p-14f);  /* rounds up into the normals */
  cr_assert(signbit(c1d_round_fp16(-0x1p-30f)));
  cr_assert(isnan(c1d_round_fp16(NAN)));
}

// --- error-free transformations -----------------------------------------------------------------

Test(two_sum, is_exact_on_random_pairs) {
  srand(7);
  for (int i = 0; i < 10000; i++) {
    float a = (float)(rand() - RAND_MAX / 2) * 0x1p-20f;
    float c = (float)(rand() - RAND_MAX / 2) * 0x1p-40f;
    float s, e;
    c1d_two_sum(a, c, &s, &e);
    cr_assert_eq((double)s + (double)e, (double)a + (double)c);
    if (fabsf(a) >= fabsf(c)) {
      float s2, e2;
      c1d_fast_two_sum(a, c, &s2, &e2);
      cr_assert_eq(s2, s);
      cr_assert_eq(e2, e);
    }
  }
}

Test(two_prod, is_exact_on_random_pairs) {
  srand(11);
  for (int i = 0; i < 10000; i++) {
    float a = (float)rand() / RAND_MAX - 0.5f, c = (float)rand() / RAND_MAX * 3.0f;
    float p, e;
    c1d_two_prod(a, c, &p, &e);
    cr_assert_eq((double)p + (double)e, (double)a * (double)c);
  }
}

Test(kahan, recovers_small_terms_lost_by_plain_summation) {
  float plain = 1.0f, sum = 1.0f, comp = 0.0f;
  for (int i = 0; i < 1000; i++) {
    plain += 0x1p-25f;
    c1d_kahan_step(&sum, &comp, 0x1p-25f);
  }
  cr_assert_eq(plain, 1.0f);
  cr_assert_float_eq((double)sum - (double)comp, 1.0 + 1000 * 0x1p-25, 1e-7);
}

Test(neumaier, is_exact_when_the_term_exceeds_the_sum) {
  float sum = 1.0f, comp = 0.0f;
  c1d_neumaier_step(&sum, &comp, 0x1p30f);
  c1d_neumaier_step(&sum, &comp, -0x1p30f);
  cr_assert_eq(sum + comp, 1.0f);
}

Test(split_tf32, big_plus_small_is_close_to_the_value) {
  float big, small;
  c1d_split_tf32(0.1f, &big, &small);
  cr_assert_eq(c1d_round_tf32_rna(big), big);
  cr_assert_eq(c1d_round_tf32_rna(small), small);
  cr_assert(fabs((double)big + (double)small - 0.1f) <= 0x1p-22 * 0.1);
}

// --- ULP distance -------------------------------------------------------------------------------

/* The GPU's SiLU divides without a division (numerics/activation.h): the same bits as v / d wherever its
 * reciprocal estimate is within 2^-12 (the hardware's is within an ulp), here on every 61st float v and
 * on the cases that take its special paths. test_gpu_dw checks every float v on the device. */
Test(silu_quotient, is_the_correctly_rounded_division_for_every_estimate_within_two_to_the_minus_12) {
  const float errs[] = {0.0f, 1.2e-7f, -1.2e-7f, 2.4e-4f, -2.4e-4f};
  const float specials[] = {0.0f, -0.0f, 1e-45f, -1e-45f, 0x1p-23f, 0x1p-25f, -0x1p-25f, 17.0f, 88.0f, -44.4f,
                            -44.5f, -87.4f, -88.7f, -88.8f, -103.9f, -104.0f, 3e38f, -3e38f, INFINITY, -INFINITY, NAN};
  long bad = 0;
#pragma omp parallel for reduction(+ : bad) schedule(static, 4096)
  for (int64_t i = 0; i < (INT64_C(1) << 32) / 61 + (int64_t)(sizeof specials / sizeof *specials); i++) {
    const int64_t nsp = (int64_t)(sizeof specials / sizeof *specials);
    const float v = i < nsp ? specials[i] : c1d_bits_float((uint32_t)((i - nsp) * 61));
    const float d = c1d_add(1.0f, c1d_exp_f32(-v)), want = c1d_div(v, d);
    for (int e = 0; e < 5; e++) {
      const float got = c1d_silu_quotient(v, d, errs[e]);
      bad += !(c1d_float_bits(got) == c1d_float_bits(want) || (got != got && want != want));
    }
  }
  cr_assert_eq(bad, 0, "%ld quotients differ from the division", bad);
}

Test(ulp_distance, counts_representable_values) {
  cr_assert_eq(c1d_ulp_distance(1.0f, 1.0f), 0);
  cr_assert_eq(c1d_ulp_distance(1.0f, nextafterf(1.0f, 2.0f)), 1);
  cr_assert_eq(c1d_ulp_distance(nextafterf(1.0f, 0.0f), nextafterf(1.0f, 2.0f)), 2);
}

Test(ulp_distance, crosses_zero_and_equates_signed_zeros) {
  cr_assert_eq(c1d_ulp_distance(0.0f, -0.0f), 0);
  cr_assert_eq(c1d_ulp_distance(0x1p-149f, -0x1p-149f), 2);
  cr_assert_eq(c1d_ulp_distance(-1.0f, 1.0f), 2ull * 0x3f800000u);
}

Test(ulp_distance, treats_nan_and_infinity_apart) {
  cr_assert_eq(c1d_ulp_distance(NAN, 1.0f), C1D_ULP_INFINITE);
  cr_assert_eq(c1d_ulp_distance(NAN, NAN), 0);
  cr_assert_eq(c1d_ulp_distance(INFINITY, 3.0f), C1D_ULP_INFINITE);
  cr_assert_eq(c1d_ulp_distance(INFINITY, INFINITY), 0);
  cr_assert_eq(c1d_ulp_distance_to_double(1.0f, 1.0 + 0x1p-30), 0); /* rounds to 1.0f */
}

// --- bounds -------------------------------------------------------------------------------------

Test(bounds, gamma_matches_its_formula) {
  cr_assert_float_eq(c1d_gamma(1024, C1D_U_FP32), 1024 * 0x1p-24 / (1 - 1024 * 0x1p-24), 1e-20);
  cr_assert(isinf(c1d_gamma(INT64_C(1) << 24, C1D_U_FP32)));
  cr_assert_float_eq(c1d_bound_det(10, 2.0, C1D_U_FP32), 2.0 * c1d_gamma(10, C1D_U_FP32), 1e-20);
  cr_assert_float_eq(c1d_bound_prob(16, 3.0, C1D_U_FP32, 2.0), 2.0 * 4.0 * 0x1p-24 * 3.0, 1e-20);
  cr_assert_float_eq(c1d_bound_tf32(4, 1.0, C1D_U_TF32, C1D_U_FP32),
                     2 * 0x1p-11 + 0x1p-22 + c1d_gamma(4, C1D_U_FP32), 1e-20);
}

// --- histograms ---------------------------------------------------------------------------------

Test(histogram, puts_values_in_log_spaced_bins) {
  c1d_log_hist h;
  c1d_log_hist_init(&h, -3.0, 3.0, 6); /* one bin per decade */
  c1d_log_hist_add(&h, 0.0);
  c1d_log_hist_add(&h, 1e-5);
  c1d_log_hist_add(&h, 5e-3);  /* bin 0 */
  c1d_log_hist_add(&h, -2.0);  /* |v| = 2: bin 3 */
  c1d_log_hist_add(&h, 1e4);
  c1d_log_hist_add(&h, NAN);
  cr_assert_eq(h.zero, 1);
  cr_assert_eq(h.below, 1);
  cr_assert_eq(h.counts[0], 1);
  cr_assert_eq(h.counts[3], 1);
  cr_assert_eq(h.above, 1);
  cr_assert_eq(h.nonfinite, 1);
  cr_assert_eq(c1d_log_hist_total(&h), 6);
  cr_assert_float_eq(c1d_log_hist_edge(&h, 3), 1.0, 1e-12);
}

/* The look-up table's bin is c1d_log_hist_add's on every value: random values over and around the range,
 * the edges themselves and their neighbours, in the run's layouts and odd ones (one bin, 128 bins, bins
 * too narrow for a table, equal edges). */
Test(histogram, table_gives_the_same_bins_as_the_plain_add) {
  const struct { double lo, hi; int bins; } layouts[] = {
      {-12, 2, 56}, {-6, 3, 36}, {-3, 3, 6}, {0, 1, 1}, {-300, 300, 128}, {-1, 1, 128}, {-1e-3, 1e-3, 100},
      {-40, -38, 7}, {1, 1 + 1e-14, 3}};
  uint64_t state = 12345;
  for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
    c1d_log_hist a, t;
    c1d_log_hist_init(&a, layouts[l].lo, layouts[l].hi, layouts[l].bins);
    for (int eq = 0; eq < 2; eq++) {
      if (eq) a.edge[a.bins / 2] = a.edge[a.bins / 2 + 1 <= a.bins ? a.bins / 2 + 1 : a.bins]; /* equal edges */
      t = a;
      c1d_log_hist_table table;
      if (c1d_log_hist_table_build(&table, &t) != 0) continue; /* no table: the plain add is used */
      for (int k = 0; k < 200000; k++) {
        double v;
        if (k < 4 * (a.bins + 1)) { /* each edge, one step either side, and its negative */
          const double e = a.edge[k / 4];
          v = (k % 4 == 0) ? e : (k % 4 == 1) ? nextafter(e, 0) : (k % 4 == 2) ? nextafter(e, INFINITY) : -e;
        } else {
          state = state * 6364136223846793005ull + 1442695040888963407ull;
          const double u = (double)(state >> 11) * 0x1p-53;
          v = pow(10.0, a.lo_log10 - 1.0 + u * (a.hi_log10 - a.lo_log10 + 2.0));
        }
        c1d_log_hist_add(&a, v);
        c1d_log_hist_add_table(&t, &table, v);
      }
      c1d_log_hist_add(&a, 0.0), c1d_log_hist_add_table(&t, &table, 0.0);
      c1d_log_hist_add(&a, NAN), c1d_log_hist_add_table(&t, &table, NAN);
      c1d_log_hist_add(&a, -INFINITY), c1d_log_hist_add_table(&t, &table, -INFINITY);
      cr_assert(memcmp(a.counts, t.counts, sizeof a.counts) == 0, "layout %zu (equal edges %d)", l, eq);
      cr_assert(a.zero == t.zero && a.below == t.below && a.above == t.above && a.nonfinite == t.nonfinite);
      c1d_log_hist_table_free(&table);
    }
  }
  c1d_log_hist h; /* the run's own layouts have tables */
  c1d_log_hist_table table;
  c1d_log_hist_init(&h, -12, 2, 56);
  cr_assert_eq(c1d_log_hist_table_build(&table, &h), 0);
  c1d_log_hist_table_free(&table);
  c1d_log_hist_init(&h, -6, 3, 36);
  cr_assert_eq(c1d_log_hist_table_build(&table, &h), 0);
  c1d_log_hist_table_free(&table);
}

// --- metrics ------------------------------------------------------------------------------------

Test(metrics, measures_a_known_candidate) {
  enum { n = 4 };
  const double ref[n] = {1.0, -2.0, 0.5, 100.0};
  const float cand[n] = {1.0f, -2.0f + 0x1p-20f, 0.5f, 100.0f + 0.5f};
  c1d_metric_options opt;
  c1d_metric_options_default(&opt);
  c1d_metrics m;
  cr_assert_eq(c1d_metrics_compute(cand, ref, n, &opt, &m), 0);
  cr_assert_eq(m.count, 4);
  cr_assert_eq(m.nonfinite, 0);
  cr_assert_float_eq(m.max_abs, 0.5, 1e-15);
  cr_assert_eq(m.argmax_abs, 3);
  cr_assert_float_eq(m.max_rel, 0.005, 1e-15);
  cr_assert_float_eq(m.rel_l2, sqrt((0x1p-40 + 0.25) / (1 + 4 + 0.25 + 1e4)), 1e-15);
  cr_assert_eq(m.fail_default, 1); /* 0.5 > 1e-4 + 1e-4*100 */
  cr_assert_eq(m.ulp_p50, 0.0);
  cr_assert_eq(m.ulp_max, 65536.0); /* 0.5 at 100 is 2^16 ulps: the log2 bin's lower edge */
}

Test(metrics, counts_nan_as_failure_and_reports_the_first) {
  const double ref[3] = {1.0, 2.0, 3.0};
  const float cand[3] = {1.0f, NAN, INFINITY};
  c1d_metric_options opt;
  c1d_metric_options_default(&opt);
  c1d_metrics m;
  cr_assert_eq(c1d_metrics_compute(cand, ref, 3, &opt, &m), 0);
  cr_assert_eq(m.nonfinite, 2);
  cr_assert_eq(m.first_nonfinite, 1);
  cr_assert_eq(m.fail_default, 2);
  cr_assert(isinf(m.ulp_max));
}

Test(metrics, counts_elements_beyond_the_bounds) {
  enum { L = 4 };
  const double ref[L] = {1.0, 1.0, 1.0, 1.0}, mag[L] = {1.0, 1.0, 1.0, 0.0};
  const int64_t terms[L] = {3, 3, 3, 3}; /* n = 4 with the start term */
  const double det = c1d_gamma(4, C1D_U_FP32);
  const float cand[L] = {1.0f, (float)(1.0 + 0x1p-23), (float)(1.0 + 0x1p-21), 1.0f};
  c1d_metric_options opt;
  c1d_metric_options_default(&opt);
  opt.mag = mag;
  opt.terms_t = terms;
  opt.L = L;
  c1d_metrics m;
  cr_assert_eq(c1d_metrics_compute(cand, ref, L, &opt, &m), 0);
  /* 2^-23 < gamma_4 ~ 2^-22 < 2^-21: only element 2 is beyond the deterministic bound. */
  cr_assert_eq(m.beyond_det, 1);
  cr_assert_float_eq(m.max_det_ratio, 0x1p-21 / det, 1e-9);
  /* lambda*sqrt(4)*u = 12u ~ 2^-20.4: both 2^-23 and 2^-21 are inside the probabilistic bound. */
  cr_assert_eq(m.beyond_prob, 0);
}

Test(metrics, fills_histograms_when_asked) {
  const double ref[3] = {1.0, 1.0, 1.0};
  const float cand[3] = {1.0f, (float)(1.0 + 0x1p-23), (float)(1.0 - 0x1p-10)};
  c1d_log_hist abs_hist;
  c1d_log_hist_init(&abs_hist, -12, 0, 12);
  c1d_metric_options opt;
  c1d_metric_options_default(&opt);
  opt.abs_err_hist = &abs_hist;
  c1d_metrics m;
  cr_assert_eq(c1d_metrics_compute(cand, ref, 3, &opt, &m), 0);
  cr_assert_eq(abs_hist.zero, 1);
  cr_assert_eq(c1d_log_hist_total(&abs_hist), 3);
  cr_assert_eq(abs_hist.counts[12 - 7], 1); /* 2^-23 ~ 1.2e-7 in [1e-7, 1e-6) */
  cr_assert_eq(abs_hist.counts[12 - 4], 1); /* 2^-10 ~ 9.8e-4 in [1e-4, 1e-3) */
}

Test(allclose, follows_numpy_semantics) {
  cr_assert(c1d_allclose_element(1.0 + 1e-4, 1.0, 1e-4, 1e-4));
  cr_assert_not(c1d_allclose_element(1.0 + 3e-4, 1.0, 1e-4, 1e-4));
  cr_assert_not(c1d_allclose_element(NAN, 1.0, 1e-4, 1e-4));
  cr_assert(c1d_allclose_element(INFINITY, INFINITY, 0, 0));
}

Test(metrics, give_the_same_bits_whatever_the_thread_count) {
  enum { COUNT = 300007 };
  float *cand = malloc(COUNT * sizeof *cand);
  double *ref = malloc(COUNT * sizeof *ref);
  cr_assert(cand && ref);
  uint64_t z = 12345;
  for (int i = 0; i < COUNT; i++) {
    z = z * 6364136223846793005ull + 1442695040888963407ull;
    ref[i] = (double)(z >> 11) * 0x1p-53 * 2.0 - 1.0;
    cand[i] = (float)(ref[i] * (1.0 + 1e-6 * (double)((z >> 7) % 17)));
  }
  c1d_metric_options opt;
  c1d_metric_options_default(&opt);
  c1d_metrics one, other;
  omp_set_num_threads(1);
  cr_assert_eq(c1d_metrics_compute(cand, ref, COUNT, &opt, &one), 0);
  for (int threads = 2; threads <= 5; threads++) {
    omp_set_num_threads(threads);
    cr_assert_eq(c1d_metrics_compute(cand, ref, COUNT, &opt, &other), 0);
    cr_expect_eq(memcmp(&one.rel_l2, &other.rel_l2, sizeof one.rel_l2), 0, "rel L2 %.17g with 1 thread, %.17g with %d",
                 one.rel_l2, other.rel_l2, threads);
    cr_expect_eq(memcmp(&one, &other, sizeof one), 0, "every metric, %d threads", threads);
  }
  free(cand);
  free(ref);
}

// --- naming the marked elements (numerics/regions.c) -----------------------------------------------

/* Marks for a layout of N batches, O channels in G groups, L positions: set, then named. */
typedef struct marks {
  c1d_layout lay;
  unsigned char *m;
} marks;

static marks marks_new(int64_t N, int64_t O, int64_t L, int64_t G) {
  marks k = {.lay = {.N = N, .O = O, .L = L, .K = 4, .D = 1, .pad = 3, .groups = G}};
  k.m = calloc((size_t)(N * O * L), 1);
  cr_assert_not_null(k.m);
  return k;
}

static void mark(marks *k, int64_t n, int64_t o, int64_t t) { k->m[(n * k->lay.O + o) * k->lay.L + t] = 1; }

static c1d_region named(marks *k) {
  c1d_region r;
  cr_assert_eq(c1d_describe_marks(k->m, &k->lay, k->lay.N * k->lay.O * k->lay.L, &r), 0);
  free(k->m);
  return r;
}

Test(regions, one_batch_beside_a_few_strays_is_that_batch) {
  marks k = marks_new(2, 16, 256, 1);
  for (int64_t o = 0; o < 16; o++)
    for (int64_t t = 10; t < 256; t += 2) mark(&k, 1, o, t); /* 48 % of batch 1 */
  mark(&k, 0, 3, 100), mark(&k, 0, 9, 201);                   /* the fit's own tails elsewhere */
  const c1d_region r = named(&k);
  cr_assert_eq(r.cls, C1D_REGION_BATCHES, "%s", r.kind);
  cr_assert_str_eq(r.kind, "batch 1");
}

Test(regions, one_group_beside_a_few_strays_is_that_group) {
  marks k = marks_new(2, 32, 128, 4); /* 4 groups of 8 channels */
  for (int64_t n = 0; n < 2; n++)
    for (int64_t o = 16; o < 24; o++)
      for (int64_t t = 0; t < 128; t += 5) mark(&k, n, o, t); /* 20 % of group 2: too few */
  c1d_region r = named(&k);
  cr_assert_neq(r.cls, C1D_REGION_CHANNELS, "a fifth of a group is not the group: %s", r.kind);
  k = marks_new(2, 32, 128, 4);
  for (int64_t n = 0; n < 2; n++)
    for (int64_t o = 16; o < 24; o++)
      for (int64_t t = 0; t < 128; t += 5) mark(&k, n, o, t), mark(&k, n, o, (t + 1) % 128); /* 40 % */
  mark(&k, 0, 2, 50), mark(&k, 1, 30, 7);
  r = named(&k);
  cr_assert_eq(r.cls, C1D_REGION_CHANNELS, "%s", r.kind);
  cr_assert_str_eq(r.kind, "group 2 of 8 channels");
}

Test(regions, one_position_beside_a_stray_on_its_seam_residue_is_that_position) {
  marks k = marks_new(2, 32, 512, 1);
  for (int64_t n = 0; n < 2; n++)
    for (int64_t o = 0; o < 32; o++) mark(&k, n, o, 37);
  mark(&k, 1, 4, 37 + 64); /* one stray, the same residue modulo the tile width */
  const c1d_region r = named(&k);
  cr_assert_eq(r.cls, C1D_REGION_POSITIONS, "%s", r.kind);
  cr_assert_str_eq(r.kind, "position 37");
}

Test(regions, tile_seams_and_scattered_tails_keep_their_names) {
  marks k = marks_new(2, 16, 256, 1);
  for (int64_t n = 0; n < 2; n++)
    for (int64_t o = 0; o < 16; o++)
      for (int64_t t = 5; t < 256; t += 32) mark(&k, n, o, t); /* every tile's position 5 */
  c1d_region r = named(&k);
  cr_assert_eq(r.cls, C1D_REGION_TILE_SEAMS, "%s", r.kind);
  k = marks_new(2, 16, 256, 4);
  mark(&k, 0, 1, 17), mark(&k, 1, 6, 200), mark(&k, 1, 13, 90); /* tails: a mark in thousands */
  r = named(&k);
  cr_assert_eq(r.cls, C1D_REGION_SCATTERED, "%s", r.kind);
}

Test(regions, a_third_of_one_channel_beside_a_stray_is_that_channel) {
  marks k = marks_new(2, 24, 180, 24); /* depthwise: a group is one channel */
  for (int64_t n = 0; n < 2; n++)
    for (int64_t t = 0; t < 180; t += 2) mark(&k, n, 9, t); /* half of channel 9's elements */
  mark(&k, 1, 20, 33);
  const c1d_region r = named(&k);
  cr_assert_eq(r.cls, C1D_REGION_CHANNELS, "%s", r.kind);
  cr_assert_str_eq(r.kind, "channel 9");
}
