/* Error metrics of a float32 candidate against a reference in double (the oracle, or another
 * implementation promoted to double for a pairwise comparison). One pass, OpenMP-parallel. */
#ifndef C1D_METRICS_H
#define C1D_METRICS_H

#include <stdint.h>

#include "numerics/histogram.h"

#ifdef __cplusplus
extern "C" {
#endif

/* KernelBench's float32 check: allclose(atol=1e-4, rtol=1e-4). */
#define C1D_DEFAULT_ATOL 1e-4
#define C1D_DEFAULT_RTOL 1e-4

typedef struct c1d_metric_options {
  double atol, rtol;          /* the user's allclose tolerances: |a-b| <= atol + rtol*|b| */
  /* Optional bound inputs: with mag NULL, the bound fields of the result are left at zero. */
  const double *mag;          /* per element m = |b| + sum|w*x| */
  const int64_t *terms_t;     /* per position t, the number of summed terms (length L) */
  int64_t L;                  /* elements are laid out as [outer][L]; required with terms_t */
  double u;                   /* unit roundoff of the bounds (C1D_U_FP32) */
  double lambda;              /* probabilistic bound constant (C1D_DEFAULT_LAMBDA) */
  /* The output's type (c1d_dtype's values: 0 float32, 1 bf16, 2 fp16). For bf16 and fp16 the ULP
   * distances are in that type's units, to the exact result rounded once to it (a correctly rounded
   * output is 0 ULP away), and both bounds hold the contract's output rounding too: half an ulp of the
   * type, u_out * |ref|, on each rounded side (two in a comparison, whose u is doubled for the same
   * reason). 0 leaves everything in float32, as before. */
  int out_dtype;
  /* Optional histograms to fill: log10|a-b| and (|a-b| / deterministic bound). */
  c1d_log_hist *abs_err_hist;
  c1d_log_hist *bound_ratio_hist;
} c1d_metric_options;

/* Fills atol/rtol with the defaults, u = 2^-24 and lambda = C1D_DEFAULT_LAMBDA; the rest zero. */
void c1d_metric_options_default(c1d_metric_options *opt);

typedef struct c1d_metrics {
  int64_t count;             /* elements compared */
  int64_t nonfinite;         /* candidate NaN/Inf where the reference is finite */
  int64_t nonfinite_ref;     /* reference non-finite (those elements are skipped) */
  int64_t first_nonfinite;   /* flat index of the first such candidate element, or -1 */
  double max_abs;            /* over finite pairs */
  int64_t argmax_abs;        /* flat index of max_abs, or -1 */
  double max_rel;            /* |a-b|/|b| over pairs with b != 0 */
  double rel_l2;             /* ||a-b||_2 / ||b||_2 (finite pairs) */
  double ulp_p50, ulp_p99, ulp_max; /* ULP distance to the reference rounded to the output's type
                                       (float32, or bf16 / fp16 with out_dtype) in that type's units */
  int ulp_dtype;             /* the options' out_dtype: the type of the ULPs and of the bounds' output rounding */
  int64_t fail_default;      /* failing allclose(1e-4, 1e-4); non-finite elements fail */
  int64_t fail_user;         /* failing allclose(atol, rtol) */
  int64_t beyond_det;        /* |a-b| > gamma_n * m, n = terms + 1 (only with mag; plus the output's
                                rounding for a bf16 / fp16 out_dtype) */
  int64_t beyond_prob;       /* |a-b| > lambda*sqrt(n)*u*m (only with mag) */
  double max_det_ratio;      /* max |a-b| / deterministic bound */
  double max_prob_ratio;     /* max |a-b| / probabilistic bound */
} c1d_metrics;

/* Computes every metric of cand against ref over count elements. Returns 0, or -1 only if
 * per-thread scratch cannot be allocated. The candidate may hold NaN (counted, never a pass). */
int c1d_metrics_compute(const float *cand, const double *ref, int64_t count,
                        const c1d_metric_options *opt, c1d_metrics *out);

/* |a-b| <= atol + rtol*|b|, false for any non-finite a where b is finite. */
int c1d_allclose_element(double a, double b, double atol, double rtol);

#ifdef __cplusplus
}
#endif
#endif
