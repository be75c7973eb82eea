/* Error metrics in one OpenMP pass: each thread keeps its own counts, maxima and histograms, merged at
 * the end (maxima keep the lowest index on ties). Sums of squares are the one order-dependent part:
 * they are summed per fixed block of SUM_BLOCK elements and the blocks added in index order, so every
 * thread count and every run gives the same bits.
 * ULP quantiles come from a histogram that is exact below 1024 ULP and log2-binned above. For a bf16 or
 * fp16 output (opt->out_dtype) the ULPs are that type's and the bounds add its one rounding: a correctly
 * rounded output is then 0 ULP away and within both bounds, as its contract says. */
#include "numerics/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/arith.h"
#include "numerics/bounds.h"
#include "numerics/ulp.h"
#include "reference/problem.h"

#define EXACT_ULP_BINS 1024
#define SUM_BLOCK 4096 /* elements per partial sum of squares */
#define LOG_ULP_BINS 64 /* bin j holds [2^j, 2^(j+1)) for distances >= EXACT_ULP_BINS */

typedef struct partial {
  int64_t count, nonfinite, nonfinite_ref, first_nonfinite;
  double max_abs, max_rel, sum_sq_err, sum_sq_ref, max_det_ratio, max_prob_ratio;
  int64_t argmax_abs, fail_default, fail_user, beyond_det, beyond_prob;
  int64_t ulp_exact[EXACT_ULP_BINS], ulp_log[LOG_ULP_BINS], ulp_infinite;
  c1d_log_hist abs_hist, ratio_hist;
} partial;

void c1d_metric_options_default(c1d_metric_options *opt) {
  memset(opt, 0, sizeof *opt);
  opt->atol = C1D_DEFAULT_ATOL;
  opt->rtol = C1D_DEFAULT_RTOL;
  opt->u = C1D_U_FP32;
  opt->lambda = C1D_DEFAULT_LAMBDA;
}

/* c1d_allclose_element's test, here where the per-element loop inlines it. */
static inline int allclose_element(double a, double b, double atol, double rtol) {
  if (!isfinite(a) || !isfinite(b)) return a == b; /* matching infinities pass, NaN never does */
  return fabs(a - b) <= atol + rtol * fabs(b);
}

int c1d_allclose_element(double a, double b, double atol, double rtol) { return allclose_element(a, b, atol, rtol); }

// --- the output's own type --------------------------------------------------------------------------

/* Fraction bits and smallest normal exponent of the narrow types (bf16: 7, -126; fp16: 10, -14). */
static int narrow(int dtype, int *p, int *emin) {
  if (dtype == C1D_DTYPE_BF16) return *p = 7, *emin = -126, 1;
  if (dtype == C1D_DTYPE_F16) return *p = 10, *emin = -14, 1;
  return 0;
}

/* Unit roundoff of the output's rounding and half its smallest (subnormal) spacing; 0 for float32. */
static void out_rounding(int dtype, double *u_out, double *tiny) {
  int p, emin;
  *u_out = *tiny = 0.0;
  if (!narrow(dtype, &p, &emin)) return;
  *u_out = ldexp(1.0, -(p + 1));
  *tiny = ldexp(1.0, emin - p - 1);
}

/* The exact y rounded once to the narrow type: through float32 rounded to odd, which keeps the one
 * rounding exact (the classifier's correctly_rounded). */
static float rounded_once(int dtype, double y) {
  float f = (float)y;
  if (!isfinite(f)) return f;
  if (fabs((double)f) > fabs(y)) f = nextafterf(f, 0.0f);
  if ((double)f != y) f = c1d_bits_float(c1d_float_bits(f) | 1u);
  return dtype == C1D_DTYPE_BF16 ? c1d_round_bf16(f) : c1d_round_fp16(f);
}

/* A monotone position in the narrow type's values: an integer on its values, in between elsewhere. */
static double narrow_position(double v, int p, int emin) {
  const double a = fabs(v);
  double pos;
  if (a < ldexp(1.0, emin)) {
    pos = a / ldexp(1.0, emin - p); /* subnormal steps */
  } else {
    int e;
    const double m = 2.0 * frexp(a, &e); /* a = m * 2^(e-1), m in [1, 2) */
    pos = ((double)(e - 1 - emin + 1) + (m - 1.0)) * ldexp(1.0, p);
  }
  return v < 0 ? -pos : pos;
}

/* ULP distance in the output's type: float32's, or for bf16/fp16 the count of that type's steps between
 * a and the exact result rounded to it (rounded up where a is not of the type). */
static uint64_t out_ulp_distance(int dtype, float a, double exact) {
  int p, emin;
  if (!narrow(dtype, &p, &emin)) return c1d_ulp_distance_inline(a, (float)exact);
  const float r = rounded_once(dtype, exact);
  if (!isfinite(a) || !isfinite(r)) return c1d_ulp_distance(a, r);
  return (uint64_t)ceil(fabs(narrow_position(a, p, emin) - narrow_position(r, p, emin)));
}

// --- accumulation --------------------------------------------------------------------------------

static void add_ulp(partial *p, uint64_t d) {
  if (d == C1D_ULP_INFINITE)
    p->ulp_infinite++;
  else if (d < EXACT_ULP_BINS)
    p->ulp_exact[d]++;
  else
    p->ulp_log[63 - __builtin_clzll(d)]++; /* the highest set bit: bin [2^j, 2^(j+1)) */
}

/* The bounds' share of the output's rounding: |fl(s) - s| <= u*|s| + tiny per rounded side, and
 * |s| <= |ref| / (1 - u) + the bound itself; 0 for float32 outputs. */
typedef struct out_round {
  double u, tiny, sides;
  double abs_scale, ratio_scale; /* the histograms' c1d_log_hist_scale, once for every element */
  const c1d_log_hist_table *abs_table, *ratio_table; /* their look-up tables, or NULL (then the scales) */
  int default_tolerances; /* opt's atol and rtol are the defaults: one allclose test serves both counts */
} out_round;

static inline void hist_add(c1d_log_hist *h, const c1d_log_hist_table *t, double scale, double v) {
  if (t)
    c1d_log_hist_add_table(h, t, v);
  else
    c1d_log_hist_add_scaled(h, v, scale);
}

/* c: the element's position's (or, without terms_t, every element's) deterministic bound's gamma_n and
 * probabilistic one's lambda*sqrt(n)*u, both times m (c1d_bound_det, c1d_bound_prob: the same bits). */
static void add_element(partial *p, const c1d_metric_options *opt, const double *c, const out_round *out,
                        float a, double b, int64_t i) {
  if (!isfinite(b)) {
    p->nonfinite_ref++;
    return;
  }
  p->count++;
  add_ulp(p, out_ulp_distance(opt->out_dtype, a, b));
  if (!isfinite(a)) {
    p->nonfinite++;
    if (p->first_nonfinite < 0) p->first_nonfinite = i;
    p->fail_default++;
    p->fail_user++;
    p->beyond_det += opt->mag != NULL;
    p->beyond_prob += opt->mag != NULL;
    if (opt->abs_err_hist) c1d_log_hist_add(&p->abs_hist, INFINITY);
    if (opt->bound_ratio_hist) c1d_log_hist_add(&p->ratio_hist, INFINITY);
    return;
  }
  double err = fabs((double)a - b);
  if (err > p->max_abs) {
    p->max_abs = err;
    p->argmax_abs = i;
  }
  /* the division only where the ratio may exceed the maximum (the product's rounding cannot hide one) */
  if (b != 0.0 && err >= p->max_rel * fabs(b) * (1.0 - 0x1p-40) && err / fabs(b) > p->max_rel)
    p->max_rel = err / fabs(b);
  p->sum_sq_err += err * err;
  p->sum_sq_ref += b * b;
  const int fail_default = !allclose_element(a, b, C1D_DEFAULT_ATOL, C1D_DEFAULT_RTOL);
  p->fail_default += fail_default;
  p->fail_user += out->default_tolerances ? fail_default : !allclose_element(a, b, opt->atol, opt->rtol);
  if (opt->abs_err_hist) hist_add(&p->abs_hist, out->abs_table, out->abs_scale, err);
  if (opt->mag) {
    const double m = opt->mag[i];
    double det = c[0] * m, prob = c[1] * m;
    if (out->u > 0.0) { /* the output's rounding, on each rounded side (c1d_metric_options.out_dtype) */
      const double rounding = out->sides * (out->u * fabs(b) / (1.0 - out->u) + out->tiny);
      det += det * out->u + rounding;
      prob += prob * out->u + rounding;
    }
    /* A zero bound (m == 0) admits only a zero error. */
    double det_ratio = det > 0.0 ? err / det : (err > 0.0 ? INFINITY : 0.0);
    double prob_ratio = prob > 0.0 ? err / prob : (err > 0.0 ? INFINITY : 0.0);
    p->beyond_det += det_ratio > 1.0;
    p->beyond_prob += prob_ratio > 1.0;
    if (det_ratio > p->max_det_ratio) p->max_det_ratio = det_ratio;
    if (prob_ratio > p->max_prob_ratio) p->max_prob_ratio = prob_ratio;
    if (opt->bound_ratio_hist) hist_add(&p->ratio_hist, out->ratio_table, out->ratio_scale, det_ratio);
  }
}

static void merge(partial *into, const partial *p) {
  into->count += p->count;
  into->nonfinite += p->nonfinite;
  into->nonfinite_ref += p->nonfinite_ref;
  if (p->first_nonfinite >= 0 &&
      (into->first_nonfinite < 0 || p->first_nonfinite < into->first_nonfinite))
    into->first_nonfinite = p->first_nonfinite;
  if (p->max_abs > into->max_abs ||
      (p->max_abs == into->max_abs && p->argmax_abs >= 0 &&
       (into->argmax_abs < 0 || p->argmax_abs < into->argmax_abs))) {
    into->max_abs = p->max_abs;
    into->argmax_abs = p->argmax_abs;
  }
  if (p->max_rel > into->max_rel) into->max_rel = p->max_rel;
  into->sum_sq_err += p->sum_sq_err;
  into->sum_sq_ref += p->sum_sq_ref;
  into->fail_default += p->fail_default;
  into->fail_user += p->fail_user;
  into->beyond_det += p->beyond_det;
  into->beyond_prob += p->beyond_prob;
  if (p->max_det_ratio > into->max_det_ratio) into->max_det_ratio = p->max_det_ratio;
  if (p->max_prob_ratio > into->max_prob_ratio) into->max_prob_ratio = p->max_prob_ratio;
  for (int i = 0; i < EXACT_ULP_BINS; i++) into->ulp_exact[i] += p->ulp_exact[i];
  for (int i = 0; i < LOG_ULP_BINS; i++) into->ulp_log[i] += p->ulp_log[i];
  into->ulp_infinite += p->ulp_infinite;
  c1d_log_hist_merge(&into->abs_hist, &p->abs_hist);
  c1d_log_hist_merge(&into->ratio_hist, &p->ratio_hist);
}

static void init_partial(partial *p, const c1d_metric_options *opt) {
  memset(p, 0, sizeof *p);
  p->first_nonfinite = -1;
  p->argmax_abs = -1;
  if (opt->abs_err_hist) p->abs_hist = *opt->abs_err_hist;
  if (opt->bound_ratio_hist) p->ratio_hist = *opt->bound_ratio_hist;
  /* Start the per-thread histograms empty, with the caller's bins. */
  memset(p->abs_hist.counts, 0, sizeof p->abs_hist.counts);
  p->abs_hist.zero = p->abs_hist.below = p->abs_hist.above = p->abs_hist.nonfinite = 0;
  memset(p->ratio_hist.counts, 0, sizeof p->ratio_hist.counts);
  p->ratio_hist.zero = p->ratio_hist.below = p->ratio_hist.above = p->ratio_hist.nonfinite = 0;
}

/* The smallest distance d with at least q of the finite-reference elements at or below d. Exact below
 * EXACT_ULP_BINS; above, the lower edge of the log2 bin. */
static double ulp_quantile(const partial *p, double q) {
  if (p->count == 0) return 0.0;
  int64_t need = (int64_t)ceil(q * (double)p->count), seen = 0;
  if (need < 1) need = 1;
  for (int i = 0; i < EXACT_ULP_BINS; i++)
    if ((seen += p->ulp_exact[i]) >= need) return i;
  for (int j = 0; j < LOG_ULP_BINS; j++)
    if ((seen += p->ulp_log[j]) >= need) return ldexp(1.0, j);
  return INFINITY;
}

static double ulp_maximum(const partial *p) {
  if (p->ulp_infinite) return INFINITY;
  for (int j = LOG_ULP_BINS - 1; j >= 0; j--)
    if (p->ulp_log[j]) return ldexp(1.0, j);
  for (int i = EXACT_ULP_BINS - 1; i >= 0; i--)
    if (p->ulp_exact[i]) return i;
  return 0.0;
}

int c1d_metrics_compute(const float *cand, const double *ref, int64_t count,
                        const c1d_metric_options *opt, c1d_metrics *out) {
  const int64_t blocks = (count + SUM_BLOCK - 1) / SUM_BLOCK;
  partial *total = malloc(sizeof *total);
  double *block_sq = malloc((size_t)(blocks > 0 ? 2 * blocks : 1) * sizeof *block_sq); /* err, ref */
  if (!total || !block_sq) {
    free(total);
    free(block_sq);
    return -1;
  }
  init_partial(total, opt);
  const int64_t positions = opt->terms_t ? opt->L : 1;
  double *coef = malloc((size_t)(2 * positions) * sizeof *coef);
  if (!coef) {
    free(total);
    free(block_sq);
    return -1;
  }
  for (int64_t t = 0; t < positions; t++) {
    const int64_t n = (opt->terms_t ? opt->terms_t[t] : 1) + 1; /* + 1: the bias (or start) */
    coef[2 * t] = c1d_gamma(n, opt->u);
    coef[2 * t + 1] = c1d_bound_prob_factor(n, opt->u, opt->lambda);
  }
  out_round rounding;
  out_rounding(opt->out_dtype, &rounding.u, &rounding.tiny);
  rounding.sides = opt->u > C1D_U_FP32 ? 2.0 : 1.0; /* a comparison (u doubled): both outputs were rounded */
  rounding.abs_scale = opt->abs_err_hist ? c1d_log_hist_scale(opt->abs_err_hist) : 0.0;
  rounding.ratio_scale = opt->bound_ratio_hist ? c1d_log_hist_scale(opt->bound_ratio_hist) : 0.0;
  rounding.default_tolerances = opt->atol == C1D_DEFAULT_ATOL && opt->rtol == C1D_DEFAULT_RTOL;
  c1d_log_hist_table abs_table = {0}, ratio_table = {0};
  rounding.abs_table = opt->abs_err_hist && c1d_log_hist_table_build(&abs_table, opt->abs_err_hist) == 0 ? &abs_table : NULL;
  rounding.ratio_table =
      opt->bound_ratio_hist && c1d_log_hist_table_build(&ratio_table, opt->bound_ratio_hist) == 0 ? &ratio_table : NULL;
  int failed = 0;
#pragma omp parallel reduction(| : failed)
  {
    partial *p = malloc(sizeof *p);
    if (!p)
      failed = 1;
    else {
      init_partial(p, opt);
#pragma omp for schedule(static)
      for (int64_t blk = 0; blk < blocks; blk++) {
        const int64_t end = (blk + 1) * SUM_BLOCK < count ? (blk + 1) * SUM_BLOCK : count;
        p->sum_sq_err = p->sum_sq_ref = 0.0;
        /* the position advanced with the element: a division per element costs as much as the rest */
        const int64_t L = opt->terms_t ? opt->L : 1;
        for (int64_t i = blk * SUM_BLOCK, t = i % L; i < end; i++, t = t + 1 == L ? 0 : t + 1)
          add_element(p, opt, coef + 2 * t, &rounding, cand[i], ref[i], i);
        block_sq[2 * blk] = p->sum_sq_err;
        block_sq[2 * blk + 1] = p->sum_sq_ref;
      }
      p->sum_sq_err = p->sum_sq_ref = 0.0; /* summed below, in block order */
#pragma omp critical
      merge(total, p);
      free(p);
    }
  }
  free(coef);
  c1d_log_hist_table_free(&abs_table);
  c1d_log_hist_table_free(&ratio_table);
  if (failed) {
    free(total);
    free(block_sq);
    return -1;
  }
  for (int64_t blk = 0; blk < blocks; blk++) {
    total->sum_sq_err += block_sq[2 * blk];
    total->sum_sq_ref += block_sq[2 * blk + 1];
  }
  free(block_sq);
  memset(out, 0, sizeof *out);
  out->count = total->count;
  out->nonfinite = total->nonfinite;
  out->nonfinite_ref = total->nonfinite_ref;
  out->first_nonfinite = total->first_nonfinite;
  out->max_abs = total->max_abs;
  out->argmax_abs = total->argmax_abs;
  out->max_rel = total->max_rel;
  out->rel_l2 = total->sum_sq_ref > 0.0 ? sqrt(total->sum_sq_err / total->sum_sq_ref)
                                        : (total->sum_sq_err > 0.0 ? INFINITY : 0.0);
  out->ulp_p50 = ulp_quantile(total, 0.50);
  out->ulp_p99 = ulp_quantile(total, 0.99);
  out->ulp_max = ulp_maximum(total);
  out->ulp_dtype = opt->out_dtype == C1D_DTYPE_BF16 || opt->out_dtype == C1D_DTYPE_F16 ? opt->out_dtype : 0;
  out->fail_default = total->fail_default;
  out->fail_user = total->fail_user;
  out->beyond_det = total->beyond_det;
  out->beyond_prob = total->beyond_prob;
  out->max_det_ratio = total->max_det_ratio;
  out->max_prob_ratio = total->max_prob_ratio;
  if (opt->abs_err_hist) *opt->abs_err_hist = total->abs_hist;
  if (opt->bound_ratio_hist) *opt->bound_ratio_hist = total->ratio_hist;
  free(total);
  return 0;
}
