/* The mismatch classifier; the method is described in classifier.h. Sections: names; statistics on a
 * sample; one explanation (its residual, scale and worst-case bound); choosing the explanation on the
 * sample; the full pass and its tests, from single elements to the whole output; the verdict in words.
 * Every sum over elements is reduced in a fixed order, so results do not depend on the thread count. */
#include "numerics/classifier.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/activation.h"
#include "numerics/arith.h"
#include "numerics/bounds.h"
#include "numerics/decision.h"
#include "numerics/trace.h"
#include "numerics/regions.h"
#include "numerics/stats.h"

// --- names --------------------------------------------------------------------------------------

static const char *const verdict_names[C1D_VERDICT_COUNT] = {
    "fp32-rounding", "tf32-inputs", "reduced-precision", "bug-localized",
    "bug-global",    "non-finite",  "inconclusive"};

const char *c1d_verdict_name(c1d_verdict v) {
  return (unsigned)v < C1D_VERDICT_COUNT ? verdict_names[v] : "?";
}

int c1d_verdict_is_bug(c1d_verdict v) {
  return v == C1D_VERDICT_BUG_LOCALIZED || v == C1D_VERDICT_BUG_GLOBAL || v == C1D_VERDICT_NON_FINITE;
}

static const struct {
  const char *key, *name;
} model_info[C1D_MODEL_COUNT] = {
    {"fp32", "fp32 accumulation (naive order)"},
    {"tf32_rna", "tf32 inputs (round to nearest, ties away)"},
    {"tf32_trunc", "tf32 inputs (truncated)"},
    {"bf16_inputs", "bf16 inputs"},
    {"tf32_rne", "tf32 inputs (round to nearest, ties to even)"},
    {"fp16_inputs", "fp16 inputs"},
    {"tf32_x_rna_w_trunc", "tf32 inputs (x to nearest, w truncated)"},
    {"tf32_x_trunc_w_rna", "tf32 inputs (x truncated, w to nearest)"},
    {"3xtf32", "3xTF32 split products"},
    {"bf16_products", "products rounded to bf16 before the sum"},
    {"bf16_weights", "weights rounded to bf16"},
    {"pre_act_rounded", "the sum rounded to y's type before SiLU (a result rounded twice)"},
    {"bf16_sums", "products and running sums rounded to bf16"},
};

const char *c1d_model_name(int model) {
  return model >= 0 && model < C1D_MODEL_COUNT ? model_info[model].name : "?";
}

const char *c1d_model_key(int model) {
  return model >= 0 && model < C1D_MODEL_COUNT ? model_info[model].key : "?";
}

// --- statistics on a sample ---------------------------------------------------------------------

static double body_mean(double *v, int64_t n);

/* Rearranges v[0..n) so that v[k] is the k-th smallest, with nothing larger before it and nothing
 * smaller after it (Hoare's selection, median of three). */
static void select_kth(double *v, int64_t n, int64_t k) {
  int64_t lo = 0, hi = n - 1;
  while (hi > lo) {
    const int64_t mid = lo + (hi - lo) / 2;
    double a = v[lo], b = v[mid], c = v[hi];
    const double pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
    int64_t i = lo, j = hi;
    while (i <= j) {
      while (v[i] < pivot) i++;
      while (v[j] > pivot) j--;
      if (i <= j) {
        const double t = v[i];
        v[i] = v[j];
        v[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j)
      hi = j;
    else if (k >= i)
      lo = i;
    else
      return;
  }
}

/* The q-quantile of v[0..n) (reorders v). */
static double quantile(double *v, int64_t n, double q) {
  if (n <= 0) return 0.0;
  const int64_t k = (int64_t)((double)(n - 1) * q);
  select_kth(v, n, k);
  return v[k];
}

/* The mean of the largest 1% of v[0..n) (at least one element; reorders v): a tail statistic that
 * does not tie at zero when most values are zero. */
static double top_mean(double *v, int64_t n) {
  if (n <= 0) return 0.0;
  const int64_t k = n / 100 > 0 ? n / 100 : 1;
  select_kth(v, n, n - k);
  double s = 0.0;
  for (int64_t j = n - k; j < n; j++) s += v[j];
  return s / (double)k;
}

/* The mean of v[0..n) without its largest 1% (reorders v). */
static double body_mean(double *v, int64_t n) {
  if (n <= 0) return 0.0;
  const int64_t k = n - n / 100;
  if (k < n) select_kth(v, n, k);
  double s = 0.0;
  for (int64_t j = 0; j < k; j++) s += v[j];
  return s / (double)k;
}

int c1d_error_stats_on_sample(const float *cand32, const double *cand64, const double *ref,
                              const double *mag, const int64_t *idx, int64_t count,
                              c1d_error_stats *out) {
  double *z = malloc((size_t)(count > 0 ? count : 1) * sizeof *z);
  if (!z) return -1;
  int64_t used = 0;
  double sum_sq_err = 0.0, sum_sq_ref = 0.0;
  for (int64_t j = 0; j < count; j++) {
    int64_t i = idx[j];
    double a = cand32 ? (double)cand32[i] : cand64[i];
    if (!isfinite(a) || !isfinite(ref[i])) continue;
    double e = fabs(a - ref[i]);
    sum_sq_err += e * e;
    sum_sq_ref += ref[i] * ref[i];
    if (mag[i] > 0.0) z[used++] = e / (C1D_U_FP32 * mag[i]);
  }
  out->available = used > 0;
  out->z50 = used ? quantile(z, used, 0.5) : 0.0;
  out->z90 = used ? quantile(z, used, 0.9) : 0.0;
  out->rel_l2 = sum_sq_ref > 0.0 ? sqrt(sum_sq_err / sum_sq_ref) : 0.0;
  free(z);
  return 0;
}

// --- one explanation ----------------------------------------------------------------------------

/* Where a bug is, as the words after "a bug": "in the left edge (...)", "in channels 3, 5", "across the
 * whole output" (the region's kind "everywhere" does not follow "in"), "spread thinly over the output"
 * (no element marked on its own: the counts or the signs decided). */
static void bug_place(const c1d_region *g, char *buf, size_t size) {
  if (g->cls == C1D_REGION_EVERYWHERE)
    snprintf(buf, size, "across the whole output");
  else if (g->cls == C1D_REGION_NONE)
    snprintf(buf, size, "spread thinly over the output");
  else
    snprintf(buf, size, "in %s", g->kind);
}

/* y rounded once to the output type (0 fp32, 1 bf16, 2 fp16): through float32 rounded to odd, which
 * keeps the one rounding exact for the narrower types. */
static float correctly_rounded_narrow(int dtype, double y) {
  float f = (float)y;
  if (!isfinite(f)) return f;
  if (fabs((double)f) > fabs(y)) f = nextafterf(f, 0.0f);
  if ((double)f != y) f = c1d_bits_float(c1d_float_bits(f) | 1u);
  return dtype == 1 ? c1d_round_bf16(f) : c1d_round_fp16(f);
}

/* float32's case here, where the per-element loops inline it; the narrow types' out of line. */
static inline float correctly_rounded(int dtype, double y) {
  return dtype != 1 && dtype != 2 ? (float)y : correctly_rounded_narrow(dtype, y);
}

enum { STORE_NONE, STORE_BF16, STORE_FP16 };

/* What an explanation predicts for an element: y + delta + kappa*beta, within the rounding interval
 * of the output format (store), with noise sigma, widened by a per-product allowance and a scale. */
typedef struct explan {
  double factor; /* F: how much noisier than the naive order this candidate may be anywhere */
  int model;
  c1d_accumulation acc;
  double kappa;
  int allow;     /* products with about 22 bits: sigma^2 += (2^-22)^2 * sum p^2 */
  int store;     /* STORE_*: outputs stored in a narrower format */
  int declared;  /* ... because the problem declares y of that type (the contract's one rounding) */
  double scale;  /* sigma multiplier: 1, or the arbitrary order's level on order-sensitive inputs */
  int act;       /* the activation evaluated with a fast exponential (act_fast_allowance) */
  int bias_after; /* the bias added to an output already rounded to the store's type, then rounded
                     again (PyTorch's cuDNN path for bf16/fp16 tensors and autocast) */
  int bias_rounded; /* the bias rounded as the inputs are (autocast casts it with x and w) */
  int act_in_y;     /* SiLU evaluated in y's own type on a sum already stored in it (PRE_ACT_ROUNDED, or
                       bf16 sums with SiLU): within 1.74 of its ulps, a window of 2 ulps each side */
  int flat;         /* errors of one size along each row (FFT and Winograd algorithms: a transform's error
                       does not shrink with the terms of an output): sigma never below its row's rms;
                       FLAT_TRANSFORM: never below a transform's own level either, and the worst case
                       never below its bound (TRANSFORM_LEVEL, TRANSFORM_WORST) */
} explan;

#define PRODUCT_ALLOWANCE 0x1p-22

/* An FFT convolution in float32 leaves errors of one size along each output row, of rms about c u
 * sqrt(log2 nfft) times the row's rms 2-norm of an output's products, P = sqrt(mean_t sum p^2) (the
 * norm-wise bound of an FFT convolution: u log2(nfft) ||x|| ||w||). Measured (scripts/fft_null_check.py
 * and cuDNN's own outputs): torch.fft's complex64 transforms c 0.68 to 0.97 at C*K from 4 to 1024, cuDNN
 * 9.19's FFT_TILING on an H100 2.8 at C*K = 4 and 16 (tests/data/cudnn_fft), its largest element 16.8
 * times u sqrt(log2 2L) P and 4.5 times u log2(2L) P. In units of m the same errors are anything from 0.04
 * to 1.8 (m / P grows as sqrt(C*K)), which is why P is the scale. The explanation allows TRANSFORM_LEVEL
 * for c (with F = 2.5: 2.2 times cuDNN's rms as margin) and TRANSFORM_WORST u log2(2L) P as the worst case
 * (2.7 times cuDNN's largest), 2L standing for the transform's length. */
enum { FLAT_ROW = 1, FLAT_TRANSFORM = 2 };
#define TRANSFORM_LEVEL 2.5
#define TRANSFORM_WORST 12.0

/* The rms of the magnitudes m along one output row (its finite ones). */
static double row_mag_rms(const c1d_classifier_input *in, int64_t row) {
  const int64_t L = in->layout.L;
  double mm = 0.0;
  int64_t c = 0;
  for (int64_t t = 0; t < L; t++) {
    const double m = in->mag[row * L + t];
    if (isfinite(m)) mm += m * m, c++;
  }
  return c ? sqrt(mm / (double)c) : 0.0;
}

/* P of one output row: the rms over its positions of the 2-norm of each output's products (sq: the sum
 * of squared products per element), a transform's scale. */
static double row_products_rms(const c1d_classifier_input *in, const float *sq, int64_t row) {
  const int64_t L = in->layout.L;
  double s = 0.0;
  int64_t c = 0;
  for (int64_t t = 0; t < L; t++) {
    const double v = sq[row * L + t];
    if (isfinite(v)) s += v, c++;
  }
  return c ? sqrt(s / (double)c) : 0.0;
}

/* Half the spacing of the storage format at a (the larger side, so that the interval is never too
 * narrow). */
static double store_half_spacing(int store, float a) {
  const uint32_t bits = c1d_float_bits(a) & 0x7fffffffu;
  const int e = (int)(bits >> 23) - 127; /* |a| in [2^e, 2^(e+1)) */
  if (store == STORE_BF16) return ldexp(1.0, (e < -126 ? -126 : e) - 7) * 0.5;
  if (store == STORE_FP16) return ldexp(1.0, (e < -14 ? -14 : e) - 10) * 0.5;
  return 0.0;
}

/* Whether the bias may be rounded as model m rounds its inputs (bf16 or fp16: autocast casts b with x
 * and w; TF32_RNE stands for fp16 where the outputs are fp16), and how. */
static int rounds_bias(int model) {
  return model == C1D_MODEL_BF16_INPUTS || model == C1D_MODEL_BF16_WEIGHTS || model == C1D_MODEL_FP16_INPUTS ||
         model == C1D_MODEL_TF32_RNE;
}

static float round_like_inputs(int model, float v) {
  return model == C1D_MODEL_BF16_INPUTS || model == C1D_MODEL_BF16_WEIGHTS ? c1d_round_bf16(v) : c1d_round_fp16(v);
}

/* The bias's own roundings around the prediction of element i, as a window [lo, hi]: with bias_rounded
 * the bias's rounding (a known shift, lo = hi); with bias_after, the bias added to an output already
 * rounded to the store's type: that rounding's half spacing at the sum before the bias, each side. */
static void bias_window(const c1d_layout *lay, const explan *x, int64_t i, float a, double *lo, double *hi) {
  *lo = *hi = 0.0;
  if (!lay->bias) return;
  const float b = lay->bias[(i / lay->L) % lay->O];
  const float b_used = x->bias_rounded ? round_like_inputs(x->model, b) : b;
  if (x->bias_rounded) {
    double db = (double)b_used - (double)b;
    if (lay->act_v) db *= c1d_silu_deriv_f64(lay->act_v[i]);
    *lo = *hi = db;
  }
  if (x->bias_after && x->store != STORE_NONE && !lay->act_v) {
    /* |the first rounding's result| = |a - b| (b as added) within a's own half spacing; a hair more, so
     * that a result on a power of two takes the larger spacing above it */
    const double pre = (fabs((double)a - (double)b_used) + 2.0 * store_half_spacing(x->store, a)) * (1.0 + 0x1p-20);
    const double h = store_half_spacing(x->store, (float)pre);
    *lo -= h;
    *hi += h;
  }
}

/* Where SiLU underflows at the model's own value p (its sum below about -88, or p subnormal), any value
 * between 0 and p is SiLU's: the window reaches from the prediction to 0. */
static void underflow_window(const c1d_layout *lay, int64_t i, double p, double *lo, double *hi) {
  if (!lay->act_v || !c1d_act_underflows(lay, i, p)) return;
  if (-p < *lo) *lo = -p;
  if (-p > *hi) *hi = -p;
}

/* c ? a : b by masks, never a branch (the compiler makes one of a ternary: here a coin's toss); both
 * values computed, the bits of the chosen one returned. */
static inline double select_double(int c, double a, double b) {
  uint64_t ua, ub;
  memcpy(&ua, &a, sizeof ua);
  memcpy(&ub, &b, sizeof ub);
  const uint64_t m = (uint64_t)0 - (uint64_t)(c != 0);
  const uint64_t u = (ua & m) | (ub & ~m);
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

/* The distance of a from what x predicts: y + delta, plus kappa times the truncation bias (anywhere
 * between its two groupings b1, b2), within the output format's rounding interval, widened by the
 * window [wlo, whi] of the bias's roundings. */
static inline __attribute__((always_inline)) double residual_of(const explan *x, float a, double y, double delta,
                                                                double b1, double b2, double wlo, double whi) {
  const double r = (double)a - (y + delta);
  if (!isfinite(r)) return INFINITY; /* the model overflows (fp16 of a large input): it explains nothing */
  const int b_order = b1 < b2;
  double lo = x->kappa * select_double(b_order, b1, b2) + wlo, hi = x->kappa * select_double(b_order, b2, b1) + whi;
  if (x->store != STORE_NONE) {
    /* A sum stored before SiLU: SiLU in y's own type is within 1.74 of its ulps of the exact SiLU of the
     * stored sum (PyTorch 1.13's bf16 F.silu on 10^6 values), so that model's window is 2 ulps each side. */
    const double h = store_half_spacing(x->store, a) * (x->act_in_y ? 4.0 : 1.0);
    lo -= h;
    hi += h;
  }
  /* both sides computed, then selected: r's sign is a coin's toss, no branch to mispredict */
  return select_double(r > hi, r - hi, select_double(r < lo, r - lo, 0.0));
}

/* The residual of element i under x from the full model arrays (dl, bt: NULL where x needs none), within
 * every window the tests allow: what full_pass_run measures. */
static inline __attribute__((always_inline)) double element_residual(const c1d_classifier_input *in, const explan *x,
                                                                     const float *dl, const float *bt, int64_t i) {
  const c1d_layout *lay = &in->layout;
  const int64_t M = lay->N * lay->O * lay->L;
  const double y = in->ref[i], d = dl ? dl[i] : 0.0;
  double wlo = 0.0, whi = 0.0; /* bias_window's without a bias: no call */
  if (lay->bias) bias_window(lay, x, i, in->cand[i], &wlo, &whi);
  underflow_window(lay, i, y + d, &wlo, &whi);
  return residual_of(x, in->cand[i], y, d, bt ? bt[i] : 0.0, bt ? bt[M + i] : 0.0, wlo, whi);
}

/* The rounding unit of the accumulator over float32's. */
static double accumulator_scale(c1d_accumulation acc) {
  return acc == C1D_ACC_FP16 ? 0x1p13 : acc == C1D_ACC_BF16 ? 0x1p16 : 1.0;
}

/* What SiLU's float32 evaluation may add to output i, beyond rounding: y = v / (1 + e) with e = exp(-v)
 * from a fast exponential (CUDA's __expf: 2 + 1.17|v| ulp), its relative error carried into y with
 * weight e / (1 + e), and three roundings (the sum 1 + e, the division, the store). 0 without an
 * activation. An upper bound; as a noise, about half of it. */
static double act_fast_allowance(const c1d_layout *lay, int64_t i, double y) {
  if (!lay->act_v) return 0.0;
  const double v = lay->act_v[i], e = exp(-v), share = isinf(e) ? 1.0 : e / (1.0 + e);
  return fabs(y) * C1D_U_FP32 * (3.0 + (4.0 + 2.4 * fabs(v)) * share);
}

/* act: act_fast_allowance of the element (used when x->act). */
static double sigma_of(const explan *x, double sigma, double sq, double act) {
  double s2 = sigma * sigma;
  if (x->allow) s2 += PRODUCT_ALLOWANCE * PRODUCT_ALLOWANCE * sq;
  const double s = sqrt(s2) * x->scale * accumulator_scale(x->acc);
  return x->act ? sqrt(s * s + 0.25 * act * act) : s;
}

/* The worst-case bound on the residual of an element with n terms and magnitude m under x: its
 * accumulation (2u per step when truncated), the product allowance, the subnormal term and the
 * float64 oracle's own slack. */
/* The worst case of the residual for any arithmetic of x's family, the proof of "certainly a bug": the
 * accumulation (2u per step when truncated), products off by up to 3 * 2^-22 (3xTF32-class splits),
 * and for a model of rounded inputs a whole other rounding of them (ties away against ties to even,
 * truncation), plus the subnormal term and the float64 oracle's own slack. */
/* The accumulation's gamma in worst_case_with for n terms (one per position: the full pass keeps them). */
static double worst_case_gamma(const explan *x, int64_t n) {
  const double u = (x->acc == C1D_ACC_TRUNCATED ? 2.0 : 1.0) * C1D_U_FP32 * accumulator_scale(x->acc);
  return c1d_gamma(n + 1, u);
}

static double worst_case_with(const explan *x, double gamma, int64_t n, double m, double act) {
  double b = gamma * m * (1.0 + 0x1p-10) + 1e-12 * m + 0x1p-149 * (double)(n + 1);
  b += 3.0 * PRODUCT_ALLOWANCE * m;
  double ui = 0.0; /* unit of the input rounding */
  switch (x->model) {
    case C1D_MODEL_FP32:
    case C1D_MODEL_3XTF32: break;
    case C1D_MODEL_BF16_INPUTS:
    case C1D_MODEL_BF16_WEIGHTS:
    case C1D_MODEL_BF16_PRODUCTS: ui = C1D_U_BF16; break;
    case C1D_MODEL_BF16_SUMS: ui = C1D_U_BF16, b += c1d_gamma(n + 1, C1D_U_BF16) * m; break; /* another order */
    case C1D_MODEL_FP16_INPUTS: ui = 2.0 * C1D_U_TF32_TRUNC; break; /* fp16's subnormals lose more */
    case C1D_MODEL_PRE_ACT_ROUNDED: ui = x->store == STORE_FP16 ? C1D_U_FP16 : C1D_U_BF16; break;
    default: ui = C1D_U_TF32_TRUNC; break;
  }
  b += (2.0 * ui + ui * ui) * m;
  return b * x->scale + 2.0 * act; /* act: SiLU's evaluation (any float32 one) and its underflow */
}

static int act_in_y(const c1d_classifier_input *in, int model) {
  return model == C1D_MODEL_PRE_ACT_ROUNDED || (model == C1D_MODEL_BF16_SUMS && in->layout.act_v);
}

static int64_t terms_of(const c1d_layout *lay, int64_t t) { return lay->terms_t ? lay->terms_t[t] : 1; }

// --- choosing the explanation on the sample ------------------------------------------------------

/* The order in which explanations are tried: the tightest first. */
static const struct {
  int model;
  c1d_accumulation acc;
  int allow;
} try_order[] = {
    {C1D_MODEL_FP32, C1D_ACC_NEAREST, 0},           {C1D_MODEL_FP32, C1D_ACC_TRUNCATED, 0},
    {C1D_MODEL_3XTF32, C1D_ACC_NEAREST, 0},         {C1D_MODEL_3XTF32, C1D_ACC_TRUNCATED, 0},
    {C1D_MODEL_FP32, C1D_ACC_NEAREST, 1},           {C1D_MODEL_FP32, C1D_ACC_TRUNCATED, 1},
    {C1D_MODEL_TF32_RNA, C1D_ACC_NEAREST, 0},       {C1D_MODEL_TF32_RNA, C1D_ACC_TRUNCATED, 0},
    {C1D_MODEL_TF32_RNE, C1D_ACC_NEAREST, 0},       {C1D_MODEL_TF32_RNE, C1D_ACC_TRUNCATED, 0},
    {C1D_MODEL_FP16_INPUTS, C1D_ACC_NEAREST, 0},    {C1D_MODEL_FP16_INPUTS, C1D_ACC_TRUNCATED, 0},
    {C1D_MODEL_TF32_TRUNC, C1D_ACC_NEAREST, 0},     {C1D_MODEL_TF32_TRUNC, C1D_ACC_TRUNCATED, 0},
    {C1D_MODEL_TF32_XRNA_WTRUNC, C1D_ACC_NEAREST, 0}, {C1D_MODEL_TF32_XRNA_WTRUNC, C1D_ACC_TRUNCATED, 0},
    {C1D_MODEL_TF32_XTRUNC_WRNA, C1D_ACC_NEAREST, 0}, {C1D_MODEL_TF32_XTRUNC_WRNA, C1D_ACC_TRUNCATED, 0},
    {C1D_MODEL_BF16_WEIGHTS, C1D_ACC_NEAREST, 0},   {C1D_MODEL_BF16_WEIGHTS, C1D_ACC_TRUNCATED, 0},
    {C1D_MODEL_BF16_INPUTS, C1D_ACC_NEAREST, 0},    {C1D_MODEL_BF16_INPUTS, C1D_ACC_TRUNCATED, 0},
    {C1D_MODEL_BF16_PRODUCTS, C1D_ACC_NEAREST, 0},  {C1D_MODEL_BF16_PRODUCTS, C1D_ACC_TRUNCATED, 0},
    {C1D_MODEL_PRE_ACT_ROUNDED, C1D_ACC_NEAREST, 0},
    {C1D_MODEL_BF16_SUMS, C1D_ACC_NEAREST, 0},
    {C1D_MODEL_FP32, C1D_ACC_FP16, 0},              {C1D_MODEL_FP16_INPUTS, C1D_ACC_FP16, 0},
    {C1D_MODEL_FP32, C1D_ACC_BF16, 0},              {C1D_MODEL_BF16_INPUTS, C1D_ACC_BF16, 0},
};
enum { N_TRY = (int)(sizeof try_order / sizeof try_order[0]) };

/* The bias scale of truncated accumulation lies in this range (measured on the H200: 0.58 to 1.18 for
 * cuDNN, cuBLAS, Triton and convlab's own TF32 kernels); outside it the fit is not that mechanism. */
#define KAPPA_MIN 0.15
/* A plain model that misses by this many times the fit limit is beyond any refinement of it. */
#define HOPELESS 1e3
#define KAPPA_MAX 3.0

typedef struct sample_scratch {
  double *a;         /* count doubles */
  double ref_median; /* median of (g/sigma)^2 on the sample */
  double ref_tail;   /* the mean of its largest 1% */
  double ref_level;  /* its mean without the largest 1% */
  int failed;        /* a model array could not be had */
  int order_known;   /* order_sensitive is computed (on first need) */
  int order_sensitive;
  c1d_explanation *out; /* where the order ratio is reported */
  int no_narrow;        /* choose leaves sums kept in fp16 or bf16 out (and a sum stored before SiLU) */
  int stored_mark_known; /* stored_sum_mark is computed (on first need) */
  int stored_mark;
} sample_scratch;

static const double *sample_delta(const c1d_classifier_input *in, int model, sample_scratch *sc) {
  if (model == C1D_MODEL_FP32) return NULL;
  const double *d = in->models.sample_delta(in->models.ctx, model);
  if (!d) sc->failed = 1;
  return d;
}

static const double *sample_bias(const c1d_classifier_input *in, const explan *x, sample_scratch *sc) {
  if (x->acc != C1D_ACC_TRUNCATED) return NULL;
  const double *d = in->models.sample_tc_bias(in->models.ctx, x->model);
  if (!d) sc->failed = 1;
  return d;
}

static const double *sample_sq(const c1d_classifier_input *in, const explan *x, sample_scratch *sc) {
  if (!x->allow) return NULL;
  const double *d = in->models.sample_sq_products(in->models.ctx);
  if (!d) sc->failed = 1;
  return d;
}

/* Order sensitivity: an arbitrary order's error against the naive one's, on the sample (medians of
 * squares), computed the first time a decision needs it. Sets sc->failed without memory. */
static int order_sensitive(const c1d_classifier_input *in, sample_scratch *sc) {
  if (sc->order_known) return sc->order_sensitive;
  sc->order_known = 1;
  const double *pe = in->models.sample_permuted(in->models.ctx);
  const c1d_model_sample *sm = in->sample;
  if (!pe) {
    sc->failed = 1;
    return 0;
  }
  double *v = malloc((size_t)(sm->count > 0 ? sm->count : 1) * sizeof *v);
  if (!v) {
    sc->failed = 1;
    return 0;
  }
  int64_t n = 0;
  for (int64_t j = 0; j < sm->count; j++) {
    const double s = in->noise->sigma[sm->idx[j]], g = pe[j];
    if (s > 0 && isfinite(g)) v[n++] = (g / s) * (g / s);
  }
  const double med = quantile(v, n, 0.5);
  free(v);
  const double ratio = sc->ref_median > 0 ? med / sc->ref_median : (med > 0 ? INFINITY : 1.0);
  sc->order_sensitive = ratio > 2.0;
  if (sc->out) {
    sc->out->order_ratio = ratio;
    sc->out->order_sensitive = sc->order_sensitive;
  }
  return sc->order_sensitive;
}


/* The marks of a sum stored in y's type before SiLU, on the sample, computed the first time a decision
 * needs them (they depend on the sample alone). Either of the
 * outputs that differ from the contract's (the oracle rounded once), at least half equal the stored
 * sum's SiLU rounded once, exactly, and at least 1 % of the sample does (SiLU in fp32 on the stored sum);
 * or SiLU evaluated in y's own type (PyTorch 1.13's CPU bf16 F.silu: within 1.74 ulps): the output is a
 * function of the stored sum (outputs whose stored sums are equal are equal: at most 0.1 % of those in
 * groups disagree with their group, and the groups hold a tenth of the sample), some differ from the
 * contract, and the error's mean is at most 0.1 of y's ulps (PyTorch's: 0.02 on integer sums).
 * A local bug breaks the function wherever its region shares a stored sum with the rest; an offset
 * everywhere of 3x the store's rms rounding has a mean of 0.87 ulps. */
typedef struct { uint32_t key, val; } key_val;

static int cmp_key_val(const void *a, const void *b) {
  const key_val *p = a, *q = b;
  if (p->key != q->key) return p->key < q->key ? -1 : 1;
  return p->val < q->val ? -1 : p->val > q->val;
}

static int stored_sum_mark_of(const c1d_classifier_input *in, sample_scratch *sc);

static int stored_sum_mark(const c1d_classifier_input *in, sample_scratch *sc) {
  if (!sc->stored_mark_known) {
    sc->stored_mark = stored_sum_mark_of(in, sc);
    sc->stored_mark_known = !sc->failed;
  }
  return sc->stored_mark;
}

static int stored_sum_mark_of(const c1d_classifier_input *in, sample_scratch *sc) {
  const double *dl = sample_delta(in, C1D_MODEL_PRE_ACT_ROUNDED, sc);
  if (!dl) return 0;
  const c1d_model_sample *sm = in->sample;
  const int dt = in->layout.out_dtype;
  int64_t differ = 0, twice = 0, used = 0;
  double sum_e = 0.0;
  key_val *kv = malloc((size_t)(sm->count > 0 ? sm->count : 1) * sizeof *kv);
  if (!kv) {
    sc->failed = 1;
    return 0;
  }
  for (int64_t j = 0; j < sm->count; j++) {
    const int64_t i = sm->idx[j];
    const float a = in->cand[i];
    if (!isfinite(a) || !isfinite(in->ref[i]) || c1d_act_underflows(&in->layout, i, in->ref[i])) continue;
    const float stored = correctly_rounded(dt, (double)in->layout.act_v[i]);
    kv[used++] = (key_val){c1d_float_bits(stored), c1d_float_bits(a)};
    const double ulp = 2.0 * store_half_spacing(dt == 1 ? STORE_BF16 : STORE_FP16, a);
    const double e = ((double)a - (in->ref[i] + dl[j])) / ulp;
    if (isfinite(e)) sum_e += e;
    if (a == correctly_rounded(dt, in->ref[i])) continue;
    differ++;
    twice += a == correctly_rounded(dt, in->ref[i] + dl[j]);
  }
  if (2 * twice >= differ && 100 * twice >= sm->count) {
    free(kv);
    return 1;
  }
  qsort(kv, (size_t)used, sizeof *kv, cmp_key_val);
  int64_t grouped = 0, disagree = 0;
  for (int64_t g = 0; g < used;) {
    int64_t end = g, best = 0;
    while (end < used && kv[end].key == kv[g].key) end++;
    for (int64_t r = g; r < end;) { /* the most frequent value in the group */
      int64_t q = r;
      while (q < end && kv[q].val == kv[r].val) q++;
      if (q - r > best) best = q - r;
      r = q;
    }
    if (end - g >= 2) grouped += end - g, disagree += end - g - best;
    g = end;
  }
  free(kv);
  const double mean = used > 0 ? sum_e / (double)used : 0.0;
  return 10 * grouped >= sm->count && 1000 * disagree <= grouped && differ > 0 &&
         fabs(mean) <= 0.1;
}

/* Sample position j's residual against a model's prediction (dl, or NULL for float32's), without the
 * windows of residual_of: the candidate less the oracle and the model's delta. */
static inline double plain_residual(const c1d_classifier_input *in, const double *dl, int64_t j) {
  const int64_t i = in->sample->idx[j];
  return (double)in->cand[i] - in->ref[i] - (dl ? dl[j] : 0.0);
}

/* Fits kappa of truncated accumulation by weighted least squares, once more without the 5% largest
 * residuals (so that a local bug does not pull it). Returns 0 when the sample gives no leverage. */
static double fit_kappa(const c1d_classifier_input *in, const explan *x, sample_scratch *sc) {
  const c1d_model_sample *sm = in->sample;
  const double *dl = sample_delta(in, x->model, sc), *bt = sample_bias(in, x, sc);
  if (sc->failed || !bt) return 0.0;
  const int64_t S = sm->count;
  double kappa = 0.0;
  for (int pass = 0; pass < 2; pass++) {
    double sxy = 0, sxx = 0, cut = INFINITY;
    if (pass == 1) {
      int64_t n = 0;
      for (int64_t j = 0; j < sm->count; j++) {
        const int64_t i = sm->idx[j];
        const double s = in->noise->sigma[i];
        const double b = 0.5 * (bt[j] + bt[S + j]);
        const double e = (plain_residual(in, dl, j) - kappa * b) / s;
        if (isfinite(e) && s > 0) sc->a[n++] = fabs(e);
      }
      cut = quantile(sc->a, n, 0.95);
    }
    for (int64_t j = 0; j < sm->count; j++) {
      const int64_t i = sm->idx[j];
      const double s = in->noise->sigma[i];
      if (!(s > 0) || !isfinite(in->cand[i]) || !isfinite(in->ref[i])) continue;
      const double r = plain_residual(in, dl, j) / s;
      const double b = 0.5 * (bt[j] + bt[S + j]) / s;
      if (!isfinite(r) || !isfinite(b)) continue;
      if (pass == 1 && fabs(r - kappa * b) > cut) continue;
      sxy += r * b;
      sxx += b * b;
    }
    if (!(sxx > 0)) return 0.0;
    kappa = sxy / sxx;
  }
  return kappa;
}

/* The median and the mean of the largest 1% of (residual / sigma)^2 on the sample under x, each over
 * the reference's (the naive order's own). */
typedef struct ratios {
  double median, tail;
  double level; /* mean without the largest 1%: the candidate's own noise level, a bug in few elements
                   left out */
  double t;     /* the residual's mean over its standard error (signed): rounding has none */
  double low;   /* the share of the sample beyond LOW_Q sigmas: where no model fits, the closest to the
                   part of the output that a bug left alone (a quantile of the body would tie at zero on
                   bf16 outputs, which most models round to the same values) */
} ratios;

#define LOW_Q 4.0

static ratios sample_ratio(const c1d_classifier_input *in, const explan *x, sample_scratch *sc) {
  const c1d_model_sample *sm = in->sample;
  const int64_t S = sm->count;
  const double *dl = sample_delta(in, x->model, sc), *bt = sample_bias(in, x, sc), *sq = sample_sq(in, x, sc);
  ratios out = {INFINITY, INFINITY, INFINITY, 0.0, INFINITY};
  if (sc->failed) return out;
  int64_t n = 0;
  double sum = 0.0;
  for (int64_t j = 0; j < S; j++) {
    const int64_t i = sm->idx[j];
    const float a = in->cand[i];
    if (!isfinite(a) || !isfinite(in->ref[i]) || !(in->noise->sigma[i] > 0)) continue;
    double wlo, whi;
    bias_window(&in->layout, x, i, a, &wlo, &whi);
    underflow_window(&in->layout, i, in->ref[i] + (dl ? dl[j] : 0.0), &wlo, &whi);
    const double r = residual_of(x, a, in->ref[i], dl ? dl[j] : 0.0, bt ? bt[j] : 0.0, bt ? bt[S + j] : 0.0,
                                 wlo, whi);
    const double act = x->act ? act_fast_allowance(&in->layout, i, in->ref[i]) : 0.0;
    const double s = sigma_of(x, in->noise->sigma[i], sq ? sq[j] : 0.0, act);
    sum += r / s;
    sc->a[n++] = (r / s) * (r / s);
  }
  double sum_sq = 0.0;
  for (int64_t j = 0; j < n; j++) sum_sq += sc->a[j];
  out.t = sum_sq > 0 ? sum / sqrt(sum_sq) : 0.0;
  if (n == 0) return (ratios){0.0, 0.0, 0.0, 0.0, 0.0};
  int64_t beyond = 0;
  for (int64_t j = 0; j < n; j++) beyond += sc->a[j] > LOW_Q * LOW_Q;
  out.low = (double)beyond / (double)n;
  const double med = quantile(sc->a, n, 0.5), q99 = top_mean(sc->a, n);
  out.median = sc->ref_median > 0 ? med / sc->ref_median : (med > 0 ? INFINITY : 0.0);
  out.tail = sc->ref_tail > 0 ? q99 / sc->ref_tail : (q99 > 0 ? INFINITY : 0.0);
  const double lv = body_mean(sc->a, n);
  out.level = sc->ref_level > 0 ? lv / sc->ref_level : (lv > 0 ? INFINITY : 0.0);
  return out;
}

/* The largest sample ratio at which an explanation fits: F^2, widened for small samples. */
static double fit_limit(int64_t count) {
  return C1D_ORDER_FACTOR * C1D_ORDER_FACTOR * (1.0 + 4.0 / sqrt((double)(count > 1 ? count : 1)));
}

/* Scattered marks are heavier tails only while they stay within 10 sigmas (|q| at the factor >= F):
 * the false marks of real libraries measured up to 7 (cuDNN's TF32 at 67 M outputs), a stale value at 30
 * times the rounding error is 12. */
#define TAIL_Q2_MAX 100.0
/* ... and while they are rare: at most one element in 5000 (real libraries' false marks: up to 1 in
 * 10 000 at 67 M outputs; the power benchmark's scattered bugs: 1 in 1000, about half of them marked at
 * 10 times the rounding error, and 1 in 100). */
#define TAIL_FRACTION_MAX 2e-4
/* How much noisier than the naive order a candidate may be anywhere (tails and regions alike): 1.5 times
 * its own bulk in amplitude (level: the sample's mean without its largest 1 %), never less than the
 * contract admits, F = C1D_ORDER_FACTOR (any order may be that noisy, in any region: OpenBLAS's Haswell
 * SGEMM on ill-conditioned inputs is, in places, where its own bulk is quieter), nor more than 1.5 F.
 * Narrow accumulators also lose small terms outright (stagnation): 1.5 F. */
static double noise_factor(const explan *x, const ratios *r) {
  if (x->acc == C1D_ACC_FP16 || x->acc == C1D_ACC_BF16) return 1.5 * C1D_ORDER_FACTOR;
  double f = 1.5 * sqrt(r->level);
  if (!(f >= C1D_ORDER_FACTOR)) f = C1D_ORDER_FACTOR;
  return f > 1.5 * C1D_ORDER_FACTOR ? 1.5 * C1D_ORDER_FACTOR : f;
}

/* Whether a fit with ratios a is tighter than one with b: its tail at most half, or its body (level) at
 * most half with a tail no heavier. */
static int tighter(const ratios *a, const ratios *b) {
  return a->tail <= 0.5 * b->tail || (a->level <= 0.5 * b->level && a->tail <= b->tail);
}

typedef struct choice {
  explan x;
  int fits;          /* 1: x fits the bulk; 0: x is only the closest */
  ratios ratio;
  int alt_model;     /* another model that fits as well, or -1 */
  int have_low;      /* where none fits: the closest by ratios.low (low_x), when there is one */
  explan low_x;
  ratios low_ratio;
} choice;

/* The explanation of the bulk: the first in try_order whose median and tail both fit (a clean fit); else, among those whose median fits, the one with the smallest tail (a model that is
 * right for most elements but not for some, as ties to even against ties away, loses to the right one);
 * else the closest by median. */
static void choose_pass(const c1d_classifier_input *in, int store, double scale, sample_scratch *sc, int bp,
                        choice *out) {
  const int declared = store != STORE_NONE && (in->layout.out_dtype == 1 || in->layout.out_dtype == 2);
  const double limit = fit_limit(in->sample->count);
  double nearest[C1D_MODEL_COUNT];
  for (int m = 0; m < C1D_MODEL_COUNT; m++) nearest[m] = INFINITY;
  memset(out, 0, sizeof *out);
  out->alt_model = -1;
  out->ratio = (ratios){INFINITY, INFINITY, INFINITY, 0.0, INFINITY};
  int clean = 0, have_fit = 0;
  choice closest = *out;
  closest.low_ratio = out->ratio;
  /* With an activation, a second pass allows its evaluation with a fast exponential: only when the
   * first found no clean fit. */
  const int passes = in->layout.act_v ? 2 : 1;
  for (int pass = 0; pass < passes && !clean; pass++)
  for (int k = 0; k < N_TRY && !clean; k++) {
    explan x = {.factor = C1D_ORDER_FACTOR, .model = try_order[k].model, .acc = try_order[k].acc,
                .allow = try_order[k].allow, .store = store, .declared = declared, .scale = scale,
                .act = pass, .bias_rounded = bp & 1, .bias_after = bp >> 1};
    x.act_in_y = act_in_y(in, x.model);
    if (x.bias_rounded && !rounds_bias(x.model)) continue;
    if (x.bias_after && in->layout.act_v) continue;
    if (x.allow && have_fit && !out->x.allow) continue; /* never looser than a fit in hand */
    /* A sum stored before SiLU: only with SiLU and outputs declared bf16/fp16, where the contract's one
     * rounding fits not cleanly (then only by the rule below: a tail at most half of the fit in hand) and
     * the outputs bear its mark; not in the search for a local bug under a narrow accumulator's fit. */
    if (x.model == C1D_MODEL_PRE_ACT_ROUNDED &&
        (!in->layout.act_v || !declared || pass || sc->no_narrow || !stored_sum_mark(in, sc)))
      continue;
    if (sc->failed) return;
    /* On order-sensitive inputs a product allowance would only stand in for another order's error. */
    if (x.allow && order_sensitive(in, sc)) continue;
    /* A truncation bias or a product allowance changes the residual by a few times the noise level at
     * most: where the plain model misses by far more, they cannot help. (A 3xTF32 split can: on
     * subnormal inputs TF32's fixed spacing makes its products far from exact.) */
    if ((x.acc == C1D_ACC_TRUNCATED || x.allow) && nearest[x.model] > HOPELESS * limit) continue;
    if (x.acc == C1D_ACC_TRUNCATED) {
      x.kappa = fit_kappa(in, &x, sc);
      if (x.kappa < KAPPA_MIN || x.kappa > KAPPA_MAX) continue;
    }
    const ratios r = sample_ratio(in, &x, sc);
    if (sc->failed) return;
    /* Sums kept in fp16 or bf16: an explanation of last resort, only for outputs in that format, whose
     * residual has about that accumulation's level and no mean (an offset is not rounding). It would
     * otherwise stand in for any error up to 2^13 times float32's. */
    if ((x.acc == C1D_ACC_FP16 && store != STORE_FP16) || (x.acc == C1D_ACC_BF16 && store != STORE_BF16))
      continue;
    if (sc->no_narrow && (x.acc == C1D_ACC_FP16 || x.acc == C1D_ACC_BF16)) continue;
    if ((x.acc == C1D_ACC_FP16 || x.acc == C1D_ACC_BF16) &&
        ((r.median < 0.25 && r.tail < 0.25) || fabs(r.t) > 6.0))
      continue;
    /* Truncated accumulation must explain what rounding to nearest does not: half the residual. */
    if (x.acc == C1D_ACC_TRUNCATED && !(r.median < 0.5 * nearest[x.model])) continue;
    if (x.acc == C1D_ACC_NEAREST && !x.allow) nearest[x.model] = r.median;
    if (r.median <= limit) {
      /* Switch from a fit that is not clean only to one no looser (no product allowance where the
       * first had none) whose tail is at most half: a local bug inflates every model's tail alike,
       * and must not buy a wider noise allowance. Where a local bug holds the tails of all (a channel
       * without its bias on a real library's bf16 output), the body tells: at most half the level with
       * no heavier tail. */
      const int better = !have_fit || (x.allow <= out->x.allow && tighter(&r, &out->ratio));
      if (better) {
        out->x = x;
        out->ratio = r;
        out->fits = 1;
        have_fit = 1;
        clean = r.tail <= limit;
      }
    } else {
      if (r.median < closest.ratio.median) closest.x = x, closest.ratio = r;
      if (r.low < closest.low_ratio.low || (r.low == closest.low_ratio.low && r.median < closest.low_ratio.median))
        closest.low_x = x, closest.low_ratio = r, closest.have_low = 1;
    }
  }
  if (!have_fit) {
    *out = closest;
    out->alt_model = -1;
    if (!isfinite(out->ratio.median))
      out->x = (explan){.factor = C1D_ORDER_FACTOR, .model = C1D_MODEL_FP32, .acc = C1D_ACC_NEAREST,
                        .store = store, .declared = declared, .scale = scale};
    return;
  }
  out->x.factor = noise_factor(&out->x, &out->ratio);
  /* TF32 ties to even and fp16 agree except at the edges of fp16's range: name both when both fit. */
  if (out->x.model == C1D_MODEL_TF32_RNE || out->x.model == C1D_MODEL_FP16_INPUTS) {
    explan y = out->x;
    y.model = out->x.model == C1D_MODEL_TF32_RNE ? C1D_MODEL_FP16_INPUTS : C1D_MODEL_TF32_RNE;
    const ratios r = sample_ratio(in, &y, sc);
    if (r.median <= limit && r.tail <= limit) out->alt_model = y.model;
  }
}

/* The explanation of the bulk (choose_pass) with the bias as the contract has it; for outputs stored
 * narrow with a bias, where that is not a clean fit, also with the bias rounded with the inputs (models
 * of bf16 or fp16 inputs: autocast casts b with x and w), added after a first rounding of the output
 * (PyTorch's cuDNN path for bf16/fp16), or both: the one of those with the lightest tail, where it is at
 * most half of the first's (a local bug must not buy a wider window). */
static void choose(const c1d_classifier_input *in, int store, double scale, sample_scratch *sc,
                   choice *out) {
  choose_pass(in, store, scale, sc, 0, out);
  if (sc->failed || store == STORE_NONE || !in->layout.bias) return;
  if (out->fits && out->ratio.tail <= fit_limit(in->sample->count)) return;
  choice best;
  int have = 0;
  for (int bp = 1; bp < 4; bp++) {
    choice c;
    choose_pass(in, store, scale, sc, bp, &c);
    if (sc->failed) return;
    if (c.fits && (!have || c.ratio.tail < best.ratio.tail || tighter(&c.ratio, &best.ratio))) best = c, have = 1;
  }
  if (have && (!out->fits || tighter(&best.ratio, &out->ratio))) *out = best;
}

// --- the full pass and its tests ----------------------------------------------------------------

/* Everything the tests need, per element and per row, reduced in row order. */
typedef struct full_pass {
  float *q2;              /* (residual / (F sigma))^2; -1 where not compared */
  double *seg_inv;        /* per 32-position row segment, the sum of 1 / (F sigma)^2 over its compared elements
                             (the detection limits); rows x segments */
  unsigned char *mark;    /* offending elements */
  unsigned char *sign;    /* each residual's sign (C1D_SIGN_*, numerics/decision.h), as the pass judged it:
                             the offset tests and the sign tests read it */
  int64_t plain_tiles;    /* under a truncation model: the 8x32 tiles judged without its bias */
  double *row_r2;
  int64_t *row_count, *row_beyond, *row_exact;
  int64_t count, beyond, exact;
  double sum_r2;
  int *lease;             /* the scratch set's in_use flag where the element arrays are borrowed, else NULL */
} full_pass;

static void full_pass_arrays_free(float *q2, double *seg_inv, unsigned char *mark, unsigned char *sign) {
  free(q2), free(seg_inv), free(mark), free(sign);
}

static void full_pass_free(full_pass *p) {
  if (!p->lease) full_pass_arrays_free(p->q2, p->seg_inv, p->mark, p->sign);
  else *p->lease = 0;
  free(p->row_r2), free(p->row_count), free(p->row_beyond), free(p->row_exact);
}

void c1d_classifier_scratch_free(c1d_classifier_scratch *s) {
  for (int k = 0; k < C1D_SCRATCH_SETS; k++)
    full_pass_arrays_free(s->set[k].q2, s->set[k].seg_inv, s->set[k].mark, s->set[k].sign);
  memset(s, 0, sizeof *s);
}

/* The element arrays of a full pass over M elements (and `segs` row segments), which full_pass_run
 * writes whole: a free scratch set (made to size), or new ones. -1 without memory (nothing held then). */
static int full_pass_arrays(const c1d_classifier_input *in, int64_t M, int64_t segs, full_pass *p) {
  c1d_classifier_scratch *sc = in->scratch;
  int k = 0;
  while (sc && k < C1D_SCRATCH_SETS && sc->set[k].in_use) k++;
  const int lease = sc && k < C1D_SCRATCH_SETS;
  if (lease && sc->set[k].capacity == M && sc->set[k].seg_capacity == segs) {
    p->q2 = sc->set[k].q2, p->seg_inv = sc->set[k].seg_inv, p->mark = sc->set[k].mark, p->sign = sc->set[k].sign;
  } else {
    if (lease) full_pass_arrays_free(sc->set[k].q2, sc->set[k].seg_inv, sc->set[k].mark, sc->set[k].sign);
    p->q2 = malloc((size_t)M * sizeof *p->q2);
    p->seg_inv = malloc((size_t)(segs > 0 ? segs : 1) * sizeof *p->seg_inv);
    p->mark = malloc((size_t)(M > 0 ? M : 1));
    p->sign = malloc((size_t)(M > 0 ? M : 1));
    const int ok = p->q2 && p->seg_inv && p->mark && p->sign;
    if (lease) /* the set now holds these (or nothing) */
      sc->set[k] = ok ? (c1d_scratch_set){M, segs, 0, p->q2, p->seg_inv, p->mark, p->sign} : (c1d_scratch_set){0};
    if (!ok) {
      full_pass_arrays_free(p->q2, p->seg_inv, p->mark, p->sign);
      p->q2 = NULL, p->seg_inv = NULL, p->mark = p->sign = NULL;
      return -1;
    }
  }
  if (lease) {
    sc->set[k].in_use = 1;
    p->lease = &sc->set[k].in_use;
  }
  return 0;
}

/* Elements per chunk of the full pass's band (eight rows or one, see full_pass_run): on the stack, five
 * doubles each. */
#define FP_CHUNK 1024

/* Every element under x, tile by tile. A tensor-core kernel does not truncate everywhere: cuDNN's TF32
 * kernel on the H200 sums some tiles of its last batch without truncation (kappa 0 there, 0.75 elsewhere:
 * a reduction split across blocks and added in float32, or another kernel for the last wave). Under a
 * truncation model each tile is judged with the fitted truncation bias or with none, whichever its
 * residuals fit better: a choice of arithmetic per tile, which a bug's offsets do not fit either way. */
static int full_pass_run(const c1d_classifier_input *in, const explan *x, full_pass *p) {
  const c1d_layout *lay = &in->layout;
  const int64_t rows = lay->N * lay->O, L = lay->L, M = rows * L;
  memset(p, 0, sizeof *p);
  const float *dl = x->model != C1D_MODEL_FP32 ? in->models.delta(in->models.ctx, x->model) : NULL;
  const float *bt = x->acc == C1D_ACC_TRUNCATED ? in->models.tc_bias(in->models.ctx, x->model) : NULL;
  const float *sq = x->allow || x->flat == FLAT_TRANSFORM ? in->models.sq_products(in->models.ctx) : NULL;
  if ((x->model != C1D_MODEL_FP32 && !dl) || (x->acc == C1D_ACC_TRUNCATED && !bt) ||
      ((x->allow || x->flat == FLAT_TRANSFORM) && !sq))
    return -1;
  const int per_tile = x->acc == C1D_ACC_TRUNCATED && x->kappa != 0.0;
  const int64_t segs = (L + C1D_TILE_T - 1) / C1D_TILE_T;
  if (full_pass_arrays(in, M, rows * segs, p) != 0) return -1;
  p->row_r2 = calloc((size_t)rows, sizeof *p->row_r2);
  p->row_count = calloc((size_t)rows, sizeof *p->row_count);
  p->row_beyond = calloc((size_t)rows, sizeof *p->row_beyond);
  p->row_exact = calloc((size_t)rows, sizeof *p->row_exact);
  if (!p->row_r2 || !p->row_count || !p->row_beyond || !p->row_exact) {
    full_pass_free(p);
    return -1;
  }
  /* the worst case's gamma per position (a division each, else per element) */
  double *gamma = malloc((size_t)(L > 0 ? L : 1) * sizeof *gamma);
  if (!gamma) {
    full_pass_free(p);
    return -1;
  }
  for (int64_t t = 0; t < L; t++) gamma[t] = worst_case_gamma(x, terms_of(lay, t));
  explan x0 = *x;
  x0.kappa = 0.0;
  const double F = x->factor;
  int64_t plain_tiles = 0;
  /* A band of rows is passed tile by tile; without a choice per tile it is one row: some ten streams
   * through memory, which the prefetchers follow (eight rows at a time make seventy). */
  const int64_t band_rows = per_tile ? C1D_TILE_O : 1, bands_o = (lay->O + band_rows - 1) / band_rows;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : plain_tiles)
  for (int64_t band = 0; band < lay->N * bands_o; band++) {
    const int64_t row0 = (band / bands_o) * lay->O + (band % bands_o) * band_rows;
    const int64_t row1 = row0 + band_rows < (band / bands_o + 1) * lay->O ? row0 + band_rows : (band / bands_o + 1) * lay->O;
    double floor_row[C1D_TILE_O] = {0}; /* flat: the rms of sigma over each row */
    double worst_row[C1D_TILE_O] = {0}; /* FLAT_TRANSFORM: the transform's worst case */
    for (int64_t row = row0; row < row1 && x->flat; row++) {
      double f = 0.0;
      int64_t c = 0;
      for (int64_t t = 0; t < L; t++) {
        const double sg = in->noise->sigma[row * L + t];
        if (sg > 0) f += sg * sg, c++;
      }
      floor_row[row - row0] = c ? sqrt(f / (double)c) : 0.0;
      if (x->flat == FLAT_TRANSFORM) {
        const double p_rms = row_products_rms(in, sq, row), lg = log2(2.0 * (double)L);
        const double level = TRANSFORM_LEVEL * C1D_U_FP32 * sqrt(lg) * p_rms;
        if (level > floor_row[row - row0]) floor_row[row - row0] = level;
        worst_row[row - row0] = TRANSFORM_WORST * C1D_U_FP32 * lg * p_rms;
      }
    }
    /* A chunk of the band: FP_CHUNK elements, as many 32-position segments as fit its rows. */
    double r[2][FP_CHUNK], q[2][FP_CHUNK], s[FP_CHUNK];
    const int64_t chunk_t = FP_CHUNK / band_rows; /* positions per chunk: a multiple of C1D_TILE_T */
    for (int64_t c0 = 0; c0 < L; c0 += chunk_t) {
      const int64_t c1 = c0 + chunk_t < L ? c0 + chunk_t : L, nseg = (c1 - c0 + C1D_TILE_T - 1) / C1D_TILE_T;
      double tot[FP_CHUNK / C1D_TILE_T][2];
      int v[FP_CHUNK / C1D_TILE_T];
      for (int64_t g = 0; g < nseg; g++) tot[g][0] = tot[g][1] = 0.0;
      /* each segment's totals summed row by row, t inward, as before chunks */
      for (int64_t row = row0; row < row1; row++)
        for (int64_t t = c0; t < c1; t++) {
          const int64_t i = row * L + t, k = (row - row0) * chunk_t + (t - c0), g = (t - c0) / C1D_TILE_T;
          const float a = in->cand[i];
          const double y = in->ref[i];
          s[k] = 0.0;
          if (!isfinite(y) || !isfinite(a) || !(in->noise->sigma[i] > 0)) continue;
          const double fl = floor_row[row - row0];
          const double sgm = in->noise->sigma[i] > fl ? in->noise->sigma[i] : fl;
          s[k] = F * sigma_of(x, sgm, sq ? sq[i] : 0.0, act_fast_allowance(lay, i, y));
          r[0][k] = element_residual(in, x, dl, bt, i);
          q[0][k] = r[0][k] / s[k];
          tot[g][0] += q[0][k] * q[0][k];
          if (per_tile) {
            r[1][k] = element_residual(in, &x0, dl, bt, i);
            q[1][k] = r[1][k] / s[k];
            tot[g][1] += q[1][k] * q[1][k];
          }
        }
      for (int64_t g = 0; g < nseg; g++) {
        v[g] = per_tile && tot[g][1] < tot[g][0];
        plain_tiles += v[g];
      }
      for (int64_t row = row0; row < row1; row++) {
        double row_r2 = p->row_r2[row]; /* carried on in element order */
        int64_t row_count = 0, row_exact = 0, row_beyond = 0;
        double seg_inv = 0.0; /* of the segment at hand: c0 starts one */
        for (int64_t t = c0; t < c1; t++) {
          const int64_t i = row * L + t, k = (row - row0) * chunk_t + (t - c0), w = v[(t - c0) / C1D_TILE_T];
          if (t > c0 && t % C1D_TILE_T == 0) {
            p->seg_inv[row * segs + t / C1D_TILE_T - 1] = seg_inv;
            seg_inv = 0.0;
          }
          p->q2[i] = -1.0f; /* every element's q2, sign and mark written here: the arrays come unset */
          p->sign[i] = C1D_SIGN_NONE;
          p->mark[i] = 0;
          if (!(s[k] > 0)) continue;
          const double y = in->ref[i], rv = r[w][k];
          p->q2[i] = (float)(q[w][k] * q[w][k]);
          /* as flags, not branches (a residual's sign is a coin's toss): POS 1, NEG 2, NONE 0 */
          p->sign[i] = (unsigned char)((isfinite(rv) != 0) * ((rv > 0) * C1D_SIGN_POS + (rv < 0) * C1D_SIGN_NEG));
          row_r2 += rv * rv;
          seg_inv += 1.0 / (s[k] * s[k]);
          row_count++;
          row_exact += in->cand[i] == correctly_rounded(lay->out_dtype, y);
          const double act_any =
              lay->act_v ? act_fast_allowance(lay, i, y) + (c1d_act_underflows(lay, i, y) ? fabs(y) : 0.0) : 0.0;
          if (fabs(rv) > worst_case_with(x, gamma[t], terms_of(lay, t), in->mag[i], act_any) &&
              fabs(rv) > worst_row[row - row0]) {
            row_beyond++;
            p->mark[i] = 1; /* beyond the worst case: offending whatever the tests say */
          }
        }
        p->seg_inv[row * segs + (c1 - 1) / C1D_TILE_T] = seg_inv;
        p->row_r2[row] = row_r2;
        p->row_count[row] += row_count;
        p->row_exact[row] += row_exact;
        p->row_beyond[row] += row_beyond;
      }
    }
  }
  free(gamma);
  p->plain_tiles = plain_tiles;
  for (int64_t row = 0; row < rows; row++) {
    p->sum_r2 += p->row_r2[row];
    p->count += p->row_count[row];
    p->beyond += p->row_beyond[row];
    p->exact += p->row_exact[row];
  }
  return 0;
}

/* The share of marked residuals pointing away from zero (for one sign of y) that counts as a pattern of
 * signs, and the difference of the two signs' shares (2 * SIGN_SHARE - 1). */
#define SIGN_SHARE 0.75
/* The fewest scattered marks whose signs can prove a pattern at alpha (2^-k against alpha/4): fewer
 * stay a bug, as the tests found them. */
#define SIGN_MIN_MARKS 30

/* The signs of the selected residuals: [0] where y > 0, [1] where y < 0, how many and how many point
 * away from zero; pos: how many are positive. */
typedef struct sign_counts {
  int64_t away[2], all[2], pos;
} sign_counts;

/* The tail levels of signed_tails (|q| beyond each). */
static const double tail_levels[] = {2.5, 3.0, 3.5, 4.0};
enum { TAIL_LEVELS = (int)(sizeof tail_levels / sizeof tail_levels[0]) };

/* The sign counts of the marked elements (by_marks; into sc[0]) or, for each tail level k, of those whose
 * q2 exceeds its square (sc[k]): one pass over the elements. */
static void count_signs(const c1d_classifier_input *in, const full_pass *p, int by_marks, sign_counts *sc) {
  const c1d_layout *lay = &in->layout;
  const int64_t M = lay->N * lay->O * lay->L;
  const int levels = by_marks ? 1 : TAIL_LEVELS;
  double lv[TAIL_LEVELS];
  for (int k = 0; k < TAIL_LEVELS; k++) lv[k] = tail_levels[k] * tail_levels[k];
  int64_t away[TAIL_LEVELS * 2] = {0}, all[TAIL_LEVELS * 2] = {0}, pos[TAIL_LEVELS] = {0};
#pragma omp parallel for schedule(static) reduction(+ : away[:TAIL_LEVELS * 2], all[:TAIL_LEVELS * 2], \
                                                        pos[:TAIL_LEVELS])
  for (int64_t i = 0; i < M; i++) {
    if (by_marks ? !p->mark[i] : !(p->q2[i] > lv[0])) continue;
    if (p->sign[i] == C1D_SIGN_NONE || in->ref[i] == 0.0) continue;
    const int s = in->ref[i] < 0, up = p->sign[i] == C1D_SIGN_POS, out = up == (in->ref[i] > 0);
    for (int k = 0; k < levels && (by_marks || p->q2[i] > lv[k]); k++) {
      all[2 * k + s]++;
      away[2 * k + s] += out;
      pos[k] += up;
    }
  }
  for (int k = 0; k < levels; k++)
    sc[k] = (sign_counts){{away[2 * k], away[2 * k + 1]}, {all[2 * k], all[2 * k + 1]}, pos[k]};
}

/* Whether the signs counted in c have a pattern that rounding cannot give.
 * Rounding in any mode is odd in the value (negating every input negates every rounding), so among the
 * marked elements the share whose residual points away from zero (the sign of y) is the same for
 * positive and negative y; truncation can only point toward zero. An offset of one sign breaks both: it
 * points away from zero wherever y has its sign. Two tests at alpha/2 each: the shares of the two signs
 * of y differ, or for one sign of y more point away from zero than half. *positive: whether most
 * selected residuals are positive. */
static int sign_pattern(const explan *x, const sign_counts *c, double alpha, int *positive) {
  const int64_t *away = c->away, *all = c->all;
  if (positive) *positive = 2 * c->pos >= all[0] + all[1];
  if (all[0] + all[1] < SIGN_MIN_MARKS) return 0;
  if (getenv("C1D_TRACE_MARKS"))
    fprintf(stderr, "trace: signs: away from zero %lld of %lld (y > 0), %lld of %lld (y < 0)\n", (long long)away[0],
            (long long)all[0], (long long)away[1], (long long)all[1]);
  /* Each with an effect size (an offset gives shares of 1 and 0), so that a model's slightly misjudged
   * truncation bias over a hundred thousand tail elements does not count. */
  const double lim = log(0.25 * alpha); /* each one-sided test of the second kind at alpha/4 */
  /* Under a truncation model, away from zero is no evidence: a kernel may truncate less than the fitted
   * model anywhere (cuDNN's TF32 kernel not at all in its last batch), and the bias subtracted there
   * points its residuals away from zero on both signs of y. Only the difference of the signs counts. */
  for (int s = 0; s < 2 && x->acc != C1D_ACC_TRUNCATED; s++)
    if (all[s] > 0 && (double)away[s] >= SIGN_SHARE * (double)all[s] &&
        c1d_log_binomial_tail(all[s], 0.5, away[s]) < lim)
      return 1;
  if (all[0] < 2 || all[1] < 2) return 0;
  const double p0 = (double)away[0] / (double)all[0], p1 = (double)away[1] / (double)all[1];
  const double pp = (double)(away[0] + away[1]) / (double)(all[0] + all[1]);
  const double se = sqrt(pp * (1.0 - pp) * (1.0 / (double)all[0] + 1.0 / (double)all[1]));
  if (fabs(p0 - p1) < 2.0 * SIGN_SHARE - 1.0) return 0;
  return !(se > 0) || fabs(p0 - p1) / se > c1d_normal_upper_quantile(0.25 * alpha);
}

/* The signs of the tails: an offset of one sign on scattered elements hides among the tails of a noise
 * that another order may have (the counts allow for them), yet rounding never gives its signs (see
 * sign_pattern). At |q| beyond 2.5, 3, 3.5 and 4, the elements' signs are tested (alpha/4 per level, out
 * of the elements' share of alpha); where a pattern shows, the elements beyond that level with the
 * offset's sign are marked. */
static void signed_tails(const c1d_classifier_input *in, const explan *x, full_pass *p, c1d_test_result *t) {
  const int64_t M = in->layout.N * in->layout.O * in->layout.L;
  sign_counts sc[TAIL_LEVELS];
  count_signs(in, p, 0, sc);
  for (int k = 0; k < TAIL_LEVELS; k++) {
    const double lv = tail_levels[k] * tail_levels[k];
    int positive = 0;
    if (!sign_pattern(x, &sc[k], 0.25 * 0.25 * C1D_ALPHA, &positive)) continue;
    const unsigned char want = positive ? C1D_SIGN_POS : C1D_SIGN_NEG;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < M; i++)
      if (p->q2[i] > lv && p->sign[i] == want) p->mark[i] = 1;
    t->fired_signs = 1;
    t->signs_level = tail_levels[k];
    return;
  }
}

/* full_pass_run under x, then the tests on its marks; *marked: the offending elements. On failure
 * nothing is left to free. */
static int full_pass_tested(const c1d_classifier_input *in, const explan *x, full_pass *p, c1d_test_result *t,
                            int64_t *marked) {
  double clock = c1d_trace_now();
  if (full_pass_run(in, x, p) != 0) return -1;
  c1d_trace_stage("full pass: residuals", &clock);
  /* Offsets are tested where rounding has no sign of its own: not under truncation (toward zero), nor
   * narrow sums (stagnation). */
  /* Isolated elements against their neighbours: only where the residual is float32 arithmetic on the
   * inputs as given (or 3xTF32's nearly exact products), whose tail shape the reference's (the naive
   * order's on these inputs) is. Not on a reduced-precision store's interval, nor narrow sums, nor under
   * a model of rounded inputs: products of bf16 values have 16 bits, so most of their float32 sums are
   * exact and a few are not, a tail of its own (the power benchmark's bf16_inputs order, called a bug 9
   * times of 189 when tested). */
  const int isolated = (x->model == C1D_MODEL_FP32 || x->model == C1D_MODEL_3XTF32) && x->store == STORE_NONE &&
                       x->acc != C1D_ACC_FP16 && x->acc != C1D_ACC_BF16;
  if (c1d_run_tests(&in->layout, in->noise, p->q2, x->acc == C1D_ACC_NEAREST ? p->sign : NULL, isolated, p->mark,
                    t) != 0) {
    full_pass_free(p);
    return -1;
  }
  c1d_trace_stage("full pass: tests", &clock);
  const int64_t M = in->layout.N * in->layout.O * in->layout.L;
  *marked = c1d_count_marks(p->mark, M);
  /* The signs only where nothing else found anything: their marks would blur a region's. */
  if (*marked == 0) {
    signed_tails(in, x, p, t);
    *marked = c1d_count_marks(p->mark, M);
  }
  c1d_trace_stage("full pass: marks and signs", &clock);
  return 0;
}

/* How much more than its share of the marks one batch, channel, row, position or tile must hold before
 * scattered marks count as structured (c1d_marks_concentrated). */
#define CONCENTRATION_RATIO 4.0

/* C1D_TRACE_MARKS=K: the evidence of the first K marked elements under x, on stderr (for whoever
 * investigates a verdict: which elements, by how much, against what scale and window). */
static void trace_marks(const c1d_classifier_input *in, const explan *x, const full_pass *p) {
  const char *env = getenv("C1D_TRACE_MARKS");
  if (!env) return;
  const long want = strtol(env, NULL, 10);
  const c1d_layout *lay = &in->layout;
  const int64_t M = lay->N * lay->O * lay->L;
  const float *dl = x->model != C1D_MODEL_FP32 ? in->models.delta(in->models.ctx, x->model) : NULL;
  const float *bt = x->acc == C1D_ACC_TRUNCATED ? in->models.tc_bias(in->models.ctx, x->model) : NULL;
  int64_t k = 0;
  double sq = 0.0, mx = 0.0;
  for (int64_t i = 0; i < M; i++)
    if (p->mark[i]) k++, sq += p->q2[i], mx = p->q2[i] > mx ? p->q2[i] : mx;
  fprintf(stderr, "trace: %s (model %s, kappa %.3g, bias_rounded %d, bias_after %d, F %.3g): %lld marked of "
          "%lld, mean q2 %.3g, max q2 %.3g, %lld beyond the worst case, %lld tiles without truncation\n", c1d_model_key(x->model),
          x->acc == C1D_ACC_TRUNCATED ? "truncated" : "nearest", x->kappa, x->bias_rounded, x->bias_after,
          x->factor, (long long)k, (long long)M, k ? sq / (double)k : 0.0, mx, (long long)p->beyond, (long long)p->plain_tiles);
  if (x->acc == C1D_ACC_TRUNCATED && lay->N > 1) /* per batch: where another kernel may have run */
    for (int64_t n = 0; n < lay->N; n++) {
      double sxy = 0, sxx = 0, q2sum = 0, away = 0, s0 = 0;
      int64_t cnt = 0, mk = 0;
      for (int64_t j = n * lay->O * lay->L; j < (n + 1) * lay->O * lay->L; j++) {
        const double sg = in->noise->sigma[j];
        if (!(sg > 0) || !isfinite(in->ref[j]) || p->q2[j] < 0) continue;
        const double r0 = ((double)in->cand[j] - in->ref[j] - (dl ? dl[j] : 0.0)) / sg;
        const double be = 0.5 * (bt[j] + bt[M + j]) / sg;
        sxy += r0 * be, sxx += be * be, q2sum += p->q2[j], cnt++, mk += p->mark[j] != 0;
        const double r1 = r0 - x->kappa * be;
        away += (r1 > 0) == (in->ref[j] > 0);
        s0 += r1 * r1;
      }
      fprintf(stderr, "trace: batch %lld: %lld marked, mean q2 %.3g, kappa here %.3g, rms r/sigma %.3g, away share %.3f\n",
              (long long)n, (long long)mk, cnt ? q2sum / (double)cnt : 0.0, sxx > 0 ? sxy / sxx : 0.0,
              cnt ? sqrt(s0 / (double)cnt) : 0.0, cnt ? away / (double)cnt : 0.0);
    }
  long shown = 0;
  for (int64_t i = 0; i < M && shown < want; i++) {
    if (!p->mark[i]) continue;
    double wlo, whi;
    bias_window(lay, x, i, in->cand[i], &wlo, &whi);
    const int64_t t = i % lay->L, o = (i / lay->L) % lay->O, n = i / (lay->L * lay->O);
    fprintf(stderr, "trace: n %lld o %lld t %lld: a %.9g y %.9g delta %.4g beta %.4g/%.4g window [%.4g, %.4g] "
            "b %.6g q2 %.4g sigma %.4g m %.4g terms %lld\n", (long long)n, (long long)o, (long long)t,
            (double)in->cand[i], in->ref[i], dl ? (double)dl[i] : 0.0, bt ? (double)bt[i] : 0.0,
            bt ? (double)bt[M + i] : 0.0, wlo, whi, lay->bias ? (double)lay->bias[o] : 0.0, (double)p->q2[i],
            (double)in->noise->sigma[i], in->mag[i], (long long)terms_of(lay, t));
    shown++;
  }
}

/* A tap names a bug where it explains this share of the residual's variance on the sample ... */
#define TAP_R2 0.9
/* ... and the next tap at most this share of what it does. */
#define TAP_NEXT 0.25

/* One tap: a bug whose errors are in proportion to one tap's terms, z_k = the sum over o's group of
 * w[o, c, k] x[n, c, t - (K-1-k)D] (through SiLU's slope at the sum): that tap's weights scaled, or the
 * tap left out (-1 times its terms). Such errors fall wherever the tap's terms are large, so the marks
 * name no region; the residual's least-squares fit on each tap's terms alone, on the sample, does.
 * Returns 1 with the tap and its factor, 0 when no tap explains the residual (or on no memory: a tap
 * is only a name; the verdict stands without it). */
static int tap_of_bug(const c1d_classifier_input *in, const explan *x, int64_t *tap, double *factor) {
  const c1d_layout *lay = &in->layout;
  const c1d_model_sample *sm = in->sample;
  const int64_t K = lay->K, S = sm->count;
  if (K < 2 || K > 64 || !in->models.sample_taps || S < 30) return 0;
  const double *z = in->models.sample_taps(in->models.ctx);
  const double *dl = x->model != C1D_MODEL_FP32 ? in->models.sample_delta(in->models.ctx, x->model) : NULL;
  if (!z || (x->model != C1D_MODEL_FP32 && !dl)) return 0;
  double szz[64] = {0}, srz[64] = {0}, srr = 0.0;
  int64_t used = 0;
  for (int64_t j = 0; j < S; j++) {
    const int64_t i = sm->idx[j];
    const double r = plain_residual(in, dl, j);
    const double slope = lay->act_v ? c1d_silu_deriv_f64((double)lay->act_v[i]) : 1.0;
    if (!isfinite(r) || !isfinite(slope)) continue;
    int ok = 1;
    for (int64_t k = 0; k < K; k++) ok &= isfinite(z[j * K + k]);
    if (!ok) continue;
    for (int64_t k = 0; k < K; k++) {
      const double zk = slope * z[j * K + k];
      szz[k] += zk * zk;
      srz[k] += r * zk;
    }
    srr += r * r;
    used++;
  }
  if (used < 30 || !(srr > 0)) return 0;
  int64_t best = -1;
  double r2[64];
  for (int64_t k = 0; k < K; k++) {
    r2[k] = szz[k] > 0 ? srz[k] * srz[k] / (szz[k] * srr) : 0.0;
    if (best < 0 || r2[k] > r2[best]) best = k;
  }
  for (int64_t k = 0; k < K; k++)
    if (k != best && r2[k] > TAP_NEXT * r2[best]) return 0;
  if (!(r2[best] >= TAP_R2)) return 0;
  const double linear = srz[best] / szz[best];
  double f = linear;
  /* Through SiLU the fit above takes the slope at the exact sum; the error of a whole tap is not small
   * there. The factor f of silu(v + f z) - silu(v), by Gauss-Newton from the linear one. */
  for (int it = 0; lay->act_v && it < 8; it++) {
    double num = 0.0, den = 0.0;
    for (int64_t j = 0; j < S; j++) {
      const double r = plain_residual(in, dl, j), v = (double)lay->act_v[sm->idx[j]];
      const double zk = z[j * K + best], vb = v + f * zk;
      const double g = c1d_silu_deriv_f64(vb) * zk, e = r - (c1d_silu_f64(vb) - c1d_silu_f64(v));
      if (!isfinite(g) || !isfinite(e)) continue;
      num += e * g;
      den += g * g;
    }
    if (!(den > 0)) break;
    f += num / den;
  }
  *tap = best;
  *factor = isfinite(f) ? f : linear;
  return 1;
}

/* Whether two explanations predict the same (their noise factor aside). */
static int same_arithmetic(const explan *a, const explan *b) {
  return a->model == b->model && a->acc == b->acc && a->kappa == b->kappa && a->allow == b->allow &&
         a->store == b->store && a->scale == b->scale && a->act == b->act && a->bias_after == b->bias_after &&
         a->bias_rounded == b->bias_rounded && a->act_in_y == b->act_in_y && a->flat == b->flat;
}

/* A region that rounding never makes: an edge, channels or a group, batches, positions, tiles. */
static int region_structured(c1d_region_class k) {
  return k == C1D_REGION_LEFT_EDGE || k == C1D_REGION_RIGHT_EDGE || k == C1D_REGION_LAST_PARTIAL_TILE ||
         k == C1D_REGION_CHANNELS || k == C1D_REGION_BATCHES || k == C1D_REGION_POSITIONS ||
         k == C1D_REGION_TILE_BLOCKS || k == C1D_REGION_TILE_SEAMS;
}

/* An FFT's signature (see its call): errors that do not shrink with an output's magnitude m, as a direct
 * sum's do, and have no mean. On the sample, left edge left out, in units of each row's rms m:
 *  - the median |y - exact| of the outputs with m below TRANSFORM_LOW times their row's rms over that of
 *    the outputs with m above it, at least TRANSFORM_OVER times the same ratio of the naive order's errors
 *    on the same elements, and at least TRANSFORM_FLOOR (on outputs of a few terms most of the naive
 *    order's errors can be zero, its ratio too). Measured: direct sums 0.26 (C*K = 4) to 0.38 (16), a
 *    tap's weight off by 10 times the rounding error the same, cuDNN's FFT_TILING 0.43 and 0.60 there
 *    (1.44 to 1.58 times the naive order's), torch.fft 0.83 to 0.89. A bug on a few scattered elements or
 *    on the left edge leaves the ratio where the direct sum put it;
 *  - no mean along most rows: the median over the rows of |mean| / rms of a row's y - exact (every
 *    element, left edge left out) within TRANSFORM_MEAN, or 3 times what zero-mean errors give (0.674 /
 *    sqrt(L)). An FFT's errors point toward zero as often for positive y as for negative (cuDNN's: 0.004
 *    of the rms overall); an offset everywhere (flat too) moves every row's mean, an offset on a channel
 *    only that channel's rows (its bug then found under the transform's level, in that channel).
 * Needs TRANSFORM_MIN_SAMPLE elements each side, which only outputs with few terms have (m varies little
 * over many). 1 or 0; -1 without memory. */
#define TRANSFORM_LOW 0.5
#define TRANSFORM_OVER 1.3
#define TRANSFORM_FLOOR 0.35
#define TRANSFORM_MEAN 0.1
enum { TRANSFORM_MIN_SAMPLE = 64 };
static int transform_signature(const c1d_classifier_input *in) {
  const c1d_layout *lay = &in->layout;
  const c1d_model_sample *sm = in->sample;
  const int64_t rows = lay->N * lay->O, L = lay->L, S = sm->count;
  if (!sm->naive_err) return 0;
  double *row = malloc((size_t)(rows > 0 ? rows : 1) * sizeof *row); /* each row's rms m, then |mean| / rms */
  double *v = malloc((size_t)(S > 0 ? 4 * S : 1) * sizeof *v); /* the candidate's lo, hi; the naive's lo, hi */
  if (!row || !v) {
    free(row), free(v);
    return -1;
  }
  double *lo = v, *hi = v + S, *nlo_v = v + 2 * S, *nhi_v = v + 3 * S;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; r++) row[r] = row_mag_rms(in, r);
  int64_t nlo = 0, nhi = 0;
  for (int64_t j = 0; j < S; j++) {
    const int64_t i = sm->idx[j], r = i / L;
    if (i % L < lay->pad || !(row[r] > 0)) continue; /* the left edge's m is small by position */
    const double e = ((double)in->cand[i] - in->ref[i]) / row[r], g = fabs(sm->naive_err[j]) / row[r];
    if (!isfinite(e) || !isfinite(g)) continue;
    if (in->mag[i] < TRANSFORM_LOW * row[r]) lo[nlo] = fabs(e), nlo_v[nlo++] = g;
    else if (in->mag[i] > row[r]) hi[nhi] = fabs(e), nhi_v[nhi++] = g;
  }
  int sig = 0;
  if (nlo >= TRANSFORM_MIN_SAMPLE && nhi >= TRANSFORM_MIN_SAMPLE) {
    const double c_hi = quantile(hi, nhi, 0.5), n_hi = quantile(nhi_v, nhi, 0.5);
    const double cand = c_hi > 0 ? quantile(lo, nlo, 0.5) / c_hi : 0.0;
    const double naive = n_hi > 0 ? quantile(nlo_v, nlo, 0.5) / n_hi : 0.0;
    sig = cand >= TRANSFORM_OVER * naive && cand >= TRANSFORM_FLOOR;
    double mean = NAN;
    if (sig) { /* the rows' means: a pass over every element, only where the ratio holds */
#pragma omp parallel for schedule(static)
      for (int64_t r = 0; r < rows; r++) {
        double sum = 0.0, sq = 0.0;
        for (int64_t t = lay->pad; t < L; t++) {
          const double e = (double)in->cand[r * L + t] - in->ref[r * L + t];
          if (isfinite(e)) sum += e, sq += e * e;
        }
        row[r] = sq > 0 ? fabs(sum) / sqrt(sq * (double)(L - lay->pad)) : 0.0; /* |mean| / rms */
      }
      const double zero_mean = 3.0 * 0.674 / sqrt((double)(L - lay->pad));
      mean = quantile(row, rows, 0.5);
      sig = mean <= (TRANSFORM_MEAN > zero_mean ? TRANSFORM_MEAN : zero_mean);
    }
    if (getenv("C1D_TRACE_MARKS"))
      fprintf(stderr, "trace: transform signature %.3f against the naive order's %.3f (%lld and %lld elements), "
              "rows' median |mean| %.3f of their rms: %s\n", cand, naive, (long long)nlo, (long long)nhi, mean,
              sig ? "yes" : "no");
  }
  free(row), free(v);
  return sig;
}

/* See the call in c1d_classify. Returns 0 (ch, fp, ts and *marked replaced when another model explains
 * the output), or -1 without memory (fp then still holds the first pass). */
static int second_chance(const c1d_classifier_input *in, sample_scratch *sc, choice *ch, full_pass *fp,
                         c1d_test_result *ts, int64_t *marked) {
  static const int models[] = {C1D_MODEL_FP32, C1D_MODEL_3XTF32, C1D_MODEL_TF32_RNA, C1D_MODEL_TF32_RNE,
                               C1D_MODEL_TF32_TRUNC, C1D_MODEL_TF32_XRNA_WTRUNC, C1D_MODEL_TF32_XTRUNC_WRNA,
                               C1D_MODEL_FP16_INPUTS, C1D_MODEL_BF16_INPUTS, C1D_MODEL_BF16_WEIGHTS};
  enum { N_MODELS = sizeof models / sizeof models[0], TRIES = 3 };
  const double limit = fit_limit(in->sample->count);
  explan cand[2 * N_MODELS + 1];
  ratios rat[2 * N_MODELS + 1];
  int n = 0;
  for (int k = 0; k < N_MODELS; k++)
    for (int acc = 0; acc < 2; acc++) {
      explan x = ch->x;
      x.model = models[k];
      x.acc = acc ? C1D_ACC_TRUNCATED : C1D_ACC_NEAREST;
      x.act_in_y = act_in_y(in, x.model);
      x.kappa = 0.0;
      if (x.model == ch->x.model && x.acc == ch->x.acc) continue;
      if (x.bias_rounded && !rounds_bias(x.model)) continue;
      if (x.acc == C1D_ACC_TRUNCATED) {
        x.kappa = fit_kappa(in, &x, sc);
        if (x.kappa < KAPPA_MIN || x.kappa > KAPPA_MAX) continue;
      }
      const ratios r = sample_ratio(in, &x, sc);
      if (sc->failed) return -1;
      if (!(r.median <= limit && r.tail <= limit)) continue;
      x.factor = noise_factor(&x, &r);
      cand[n] = x, rat[n] = r, n++;
    }
  /* Marks at the left edge alone, where outputs have fewer terms: the same explanation with errors of one
   * size along each row (an FFT's or Winograd's), tried first. */
  c1d_region reg;
  if (c1d_describe_marks(fp->mark, &in->layout, 1, &reg) != 0) return -1;
  if (reg.cls == C1D_REGION_LEFT_EDGE) {
    memmove(cand + 1, cand, (size_t)n * sizeof *cand);
    memmove(rat + 1, rat, (size_t)n * sizeof *rat);
    cand[0] = ch->x, cand[0].flat = FLAT_ROW, rat[0] = ch->ratio, n++;
    rat[0].tail = -1.0; /* first */
  }
  for (int tried = 0; tried < TRIES && n > 0; tried++) {
    int best = 0;
    for (int j = 1; j < n; j++)
      if (rat[j].tail < rat[best].tail) best = j;
    full_pass p2;
    c1d_test_result t2;
    int64_t m2;
    if (full_pass_tested(in, &cand[best], &p2, &t2, &m2) != 0) return -1;
    if (m2 == 0) {
      full_pass_free(fp);
      *fp = p2, *ts = t2, *marked = 0;
      if (rat[best].tail < 0) rat[best] = ch->ratio; /* the flat variant: the same fit on the sample */
      ch->x = cand[best], ch->ratio = rat[best], ch->fits = 1, ch->alt_model = -1;
      return 0;
    }
    full_pass_free(&p2);
    cand[best] = cand[n - 1], rat[best] = rat[n - 1], n--;
  }
  return 0;
}

// --- the verdict in words -----------------------------------------------------------------------

static void describe_explanation(const explan *x, int alt, char *buf, size_t size) {
  char acc[128] = "";
  if (x->acc == C1D_ACC_TRUNCATED)
    snprintf(acc, sizeof acc, "float32 accumulation truncated per step of exact products, as tensor "
                              "cores do (%.2f of the truncation model)", x->kappa);
  else if (x->acc == C1D_ACC_FP16 || x->acc == C1D_ACC_BF16)
    snprintf(acc, sizeof acc, "sums kept in %s (errors %s times float32's, growing with n as the sums do)",
             x->acc == C1D_ACC_FP16 ? "fp16" : "bf16", x->acc == C1D_ACC_FP16 ? "2^13" : "2^16");
  else
    snprintf(acc, sizeof acc, "float32 accumulation rounded to nearest");
  const char *in;
  char tmp[256];
  switch (x->model) {
    case C1D_MODEL_FP32: in = x->allow ? "products with about 22 bits (3xTF32-class splits), " : ""; break;
    case C1D_MODEL_3XTF32: in = "3xTF32 split products, "; break;
    case C1D_MODEL_TF32_RNA: in = "inputs rounded to TF32 (to nearest, ties away), "; break;
    case C1D_MODEL_TF32_RNE:
    case C1D_MODEL_FP16_INPUTS:
      if (alt >= 0)
        in = "inputs rounded to a 10-bit mantissa (TF32 or fp16, ties to even), ";
      else if (x->model == C1D_MODEL_TF32_RNE)
        in = "inputs rounded to TF32 (to nearest, ties to even), ";
      else
        in = "inputs rounded to fp16, ";
      break;
    case C1D_MODEL_TF32_TRUNC: in = "inputs truncated to TF32 (round toward zero), "; break;
    case C1D_MODEL_TF32_XRNA_WTRUNC: in = "x rounded to TF32, w truncated to TF32, "; break;
    case C1D_MODEL_TF32_XTRUNC_WRNA: in = "x truncated to TF32, w rounded to TF32, "; break;
    case C1D_MODEL_BF16_INPUTS: in = "inputs rounded to bf16, "; break;
    case C1D_MODEL_BF16_WEIGHTS: in = "weights rounded to bf16, "; break;
    case C1D_MODEL_BF16_PRODUCTS: in = "products rounded to bf16 before the sum, "; break;
    case C1D_MODEL_BF16_SUMS: /* the sums are the model's: no float32 accumulation to name */
      in = "from the bias, each product and each running sum rounded to bf16 (taps in order)";
      acc[0] = '\0';
      break;
    default: in = "";
  }
  const char *to = x->store == STORE_BF16 ? "bf16" : "fp16";
  char once[96];
  if (x->model == C1D_MODEL_PRE_ACT_ROUNDED)
    snprintf(once, sizeof once, ", the sum rounded to %s before SiLU and SiLU's result again (rounded twice)", to);
  else if (x->bias_after)
    snprintf(once, sizeof once, ", rounded to %s, then the bias%s added and rounded again", to,
             x->bias_rounded ? " (rounded too)" : "");
  else if (x->bias_rounded)
    snprintf(once, sizeof once, ", the bias rounded too, one rounding to %s", to);
  else
    snprintf(once, sizeof once, "%s%s", x->store != STORE_NONE ? ", one rounding to " : "",
             x->store != STORE_NONE ? to : "");
  snprintf(tmp, sizeof tmp, "%s%s%s%s",
           x->flat == FLAT_TRANSFORM ? ", errors of one size along each row at a transform's level (an FFT "
                                       "algorithm's)"
           : x->flat ? ", errors of one size along each row (as an FFT or Winograd algorithm gives them)" : "",
           x->act ? ", SiLU with a fast exponential" : "", once,
           x->store != STORE_NONE && !x->declared ? " (outputs stored narrower than float32)" : "");
  /* The longest combinations do not occur together; a cut text is still a valid string. */
#if defined(__GNUC__) && !defined(__clang__) /* clang has no such warning */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif
  snprintf(buf, size, "%s%s%s", in, acc, tmp);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
}

static c1d_verdict verdict_of(const explan *x, char *where, size_t size) {
  where[0] = '\0';
  if (x->acc == C1D_ACC_FP16 || x->acc == C1D_ACC_BF16) {
    snprintf(where, size, "accumulation");
    return C1D_VERDICT_REDUCED_PRECISION;
  }
  /* Inputs rounded come first: outputs stored narrow from them (autocast) lost precision at the inputs. */
  if (x->model == C1D_MODEL_BF16_INPUTS || x->model == C1D_MODEL_FP16_INPUTS || x->model == C1D_MODEL_BF16_WEIGHTS ||
      (x->model == C1D_MODEL_TF32_RNE && x->store == STORE_FP16 && !x->declared)) { /* fp16 autocast */
    snprintf(where, size, "inputs");
    return C1D_VERDICT_REDUCED_PRECISION;
  }
  if ((x->store != STORE_NONE && !x->declared) || x->bias_after) {
    snprintf(where, size, "output");
    return C1D_VERDICT_REDUCED_PRECISION;
  }
  switch (x->model) {
    case C1D_MODEL_FP32:
      if (x->allow) {
        snprintf(where, size, "products");
        return C1D_VERDICT_REDUCED_PRECISION;
      }
      return C1D_VERDICT_FP32_ROUNDING;
    case C1D_MODEL_3XTF32: return C1D_VERDICT_FP32_ROUNDING;
    case C1D_MODEL_FP16_INPUTS:
    case C1D_MODEL_BF16_WEIGHTS:
    case C1D_MODEL_BF16_INPUTS: snprintf(where, size, "inputs"); return C1D_VERDICT_REDUCED_PRECISION;
    case C1D_MODEL_BF16_PRODUCTS: snprintf(where, size, "products"); return C1D_VERDICT_REDUCED_PRECISION;
    case C1D_MODEL_BF16_SUMS: snprintf(where, size, "accumulation"); return C1D_VERDICT_REDUCED_PRECISION;
    case C1D_MODEL_PRE_ACT_ROUNDED: snprintf(where, size, "output"); return C1D_VERDICT_REDUCED_PRECISION;
    default: return C1D_VERDICT_TF32_INPUTS;
  }
}

// --- the classifier -----------------------------------------------------------------------------

/* Non-finite outputs where the oracle is finite: an Inf that the exact result rounds to is right; one
 * where some order's partial sums could overflow (m > FLT_MAX) is not proof of a bug. */
typedef struct nonfinite_counts {
  int64_t bad, overflow_possible, correct_inf;
} nonfinite_counts;

static void classify_nonfinite(const c1d_classifier_input *in, unsigned char *mark,
                               nonfinite_counts *nc) {
  const c1d_layout *lay = &in->layout;
  const int64_t M = lay->N * lay->O * lay->L;
  int64_t correct_inf = 0, overflow_possible = 0, bad = 0;
#pragma omp parallel for schedule(static) reduction(+ : correct_inf, overflow_possible, bad)
  for (int64_t i = 0; i < M; i++) {
    const double y = in->ref[i];
    const float a = in->cand[i];
    if (!isfinite(y) || isfinite(a)) continue;
    if (isinf(a) && fabs(y) >= (double)FLT_MAX + 0.5 * ldexp(1.0, 104) && (a > 0) == (y > 0)) {
      correct_inf++; /* the exact result rounds to this Inf */
      continue;
    }
    if (in->mag[i] > (double)FLT_MAX) {
      overflow_possible++;
      continue;
    }
    bad++;
    mark[i] = 1;
  }
  *nc = (nonfinite_counts){bad, overflow_possible, correct_inf};
}

/* Pass 1's counts over every element, and its sums of squares. */
typedef struct pass1_counts {
  int64_t count, nonzero, low16, low13, ref_nonzero, ref_low16, ref_low13, fp16_range, beyond_det, beyond_prob,
      beyond_tf32, exact, nonfinite; /* nonfinite: outputs NaN or Inf where the oracle is finite */
  double sum_sq_err, sum_sq_ref;
} pass1_counts;

/* Elements per partial sum of squares: the blocks are added in index order, so the sums (and every figure
 * made of them) do not depend on the number of threads. */
#define PASS1_BLOCK 4096 /* as numerics/metrics.c's SUM_BLOCK */

static int pass1_run(const c1d_classifier_input *in, pass1_counts *pc) {
  const c1d_layout *lay = &in->layout;
  const int64_t M = lay->N * lay->O * lay->L, blocks = (M + PASS1_BLOCK - 1) / PASS1_BLOCK;
  double *block_sq = malloc((size_t)(blocks > 0 ? 2 * blocks : 1) * sizeof *block_sq); /* err, ref */
  /* per position: the three bounds' factors of m (the same bits as c1d_gamma(n) * m and the others) */
  double *coef = malloc((size_t)(lay->L > 0 ? 3 * lay->L : 1) * sizeof *coef);
  if (!block_sq || !coef) {
    free(block_sq), free(coef);
    return -1;
  }
  for (int64_t t = 0; t < lay->L; t++) {
    const int64_t n = terms_of(lay, t) + 1;
    coef[3 * t] = c1d_gamma(n, C1D_U_FP32);
    coef[3 * t + 1] = c1d_bound_prob_factor(n, C1D_U_FP32, C1D_DEFAULT_LAMBDA);
    coef[3 * t + 2] = c1d_bound_tf32_factor(n, C1D_U_TF32_TRUNC, C1D_U_FP32);
  }
  int64_t count = 0, nonzero = 0, low16 = 0, low13 = 0, ref_nonzero = 0, ref_low16 = 0, ref_low13 = 0,
          fp16_range = 0, beyond_det = 0, beyond_prob = 0, beyond_tf32 = 0, exact = 0, nonfinite = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : count, nonzero, low16, low13, ref_nonzero, ref_low16, \
                                                              ref_low13, fp16_range, beyond_det, beyond_prob, beyond_tf32, exact, \
                                                              nonfinite)
  for (int64_t blk = 0; blk < blocks; blk++) {
    double sum_err = 0.0, sum_ref = 0.0;
    const int64_t end = (blk + 1) * PASS1_BLOCK < M ? (blk + 1) * PASS1_BLOCK : M;
    /* the position t of element i advanced with it: a division per element costs more than the rest */
    for (int64_t i = blk * PASS1_BLOCK, t = i % lay->L; i < end; i++, t = t + 1 == lay->L ? 0 : t + 1) {
      const double y = in->ref[i], m = in->mag[i];
      const float a = in->cand[i];
      if (!isfinite(y)) continue;
      count++;
      if (!isfinite(a)) {
        exact += isinf(a) && a == (float)y; /* the exact result is beyond float32: Inf is right */
        nonfinite++;
        continue;
      }
      const int64_t n = terms_of(lay, t) + 1;
      const double e = fabs((double)a - y), under = 0x1p-149 * (double)n;
      exact += a == correctly_rounded(lay->out_dtype, y);
      sum_err += e * e;
      sum_ref += y * y;
      const double *c = coef + 3 * t;
      beyond_det += e > c[0] * m + 1e-12 * m + under;
      beyond_prob += e > c[1] * m + 1e-12 * m + under;
      beyond_tf32 += e > c[2] * m + 1e-12 * m + under;
      const uint32_t bits = c1d_float_bits(a), rbits = c1d_float_bits((float)y);
      if (a != 0.0f) {
        nonzero++;
        low16 += (bits & 0xffffu) == 0;
        low13 += (bits & 0x1fffu) == 0;
        fp16_range += fabsf(a) <= 65504.0f && (fabsf(a) >= 0x1p-14f || (bits & 0x1fffu) == 0);
      }
      if ((float)y != 0.0f) {
        ref_nonzero++;
        ref_low16 += (rbits & 0xffffu) == 0;
        ref_low13 += (rbits & 0x1fffu) == 0;
      }
    }
    block_sq[2 * blk] = sum_err;
    block_sq[2 * blk + 1] = sum_ref;
  }
  *pc = (pass1_counts){count, nonzero, low16, low13, ref_nonzero, ref_low16, ref_low13, fp16_range, beyond_det,
                       beyond_prob, beyond_tf32, exact, nonfinite, 0.0, 0.0};
  for (int64_t blk = 0; blk < blocks; blk++) pc->sum_sq_err += block_sq[2 * blk], pc->sum_sq_ref += block_sq[2 * blk + 1];
  free(block_sq), free(coef);
  return 0;
}

int c1d_classify(const c1d_classifier_input *in, c1d_explanation *out) {
  const c1d_layout *lay = &in->layout;
  const int64_t M = lay->N * lay->O * lay->L;
  const c1d_model_sample *sm = in->sample;
  double clock = c1d_trace_now();
  memset(out, 0, sizeof *out);
  out->model = out->model_alt = -1;
  out->alpha = C1D_ALPHA;
  out->repeat_checked = in->repeat_checked;
  out->repeat_identical = in->repeat_identical;
  memcpy(out->models, sm->stats, sizeof out->models);
  out->reference_rms = in->noise->rms_abs;
  const char *race = in->repeat_checked && !in->repeat_identical
                         ? "; two runs gave different bits (a race or a nondeterministic order)"
                         : "";

  // Pass 1: legacy counts, fingerprints, relative L2 against the oracle.
  pass1_counts pc;
  if (pass1_run(in, &pc) != 0) return -1;
  const int64_t count = pc.count, nonzero = pc.nonzero, fp16_range = pc.fp16_range, exact = pc.exact;
  const int64_t beyond_det = pc.beyond_det, beyond_prob = pc.beyond_prob, beyond_tf32 = pc.beyond_tf32;
  const int64_t low16 = pc.low16, low13 = pc.low13, ref_nonzero = pc.ref_nonzero, ref_low16 = pc.ref_low16,
                ref_low13 = pc.ref_low13;
  const double sum_sq_err = pc.sum_sq_err, sum_sq_ref = pc.sum_sq_ref;
  out->count = count;
  out->exact = exact;
  out->beyond_fp32_det = beyond_det;
  out->beyond_fp32_prob = beyond_prob;
  out->beyond_tf32 = beyond_tf32;
  out->rel_l2 = sum_sq_ref > 0 ? sqrt(sum_sq_err / sum_sq_ref) : (sum_sq_err > 0 ? INFINITY : 0.0);
  out->low16_zero = nonzero ? (double)low16 / nonzero : 0.0;
  out->low13_zero = nonzero ? (double)low13 / nonzero : 0.0;
  out->low16_zero_ref = ref_nonzero ? (double)ref_low16 / ref_nonzero : 0.0;
  out->low13_zero_ref = ref_nonzero ? (double)ref_low13 / ref_nonzero : 0.0;
  if (c1d_error_stats_on_sample(in->cand, NULL, in->ref, in->mag, sm->idx, sm->count, &out->cand_stats))
    return -1;
  c1d_trace_stage("classify: counts and fingerprints", &clock);

  /* The output format: decisive only where the oracle's own float32 values do not share it. */
  /* The output format: decisive where the oracle's own float32 values do not share it; where they do
   * (small integers), only a second explanation to try. */
  int store = STORE_NONE, store_decisive = 0;
  snprintf(out->fingerprint, sizeof out->fingerprint, "fp32");
  if (lay->out_dtype == 1 || lay->out_dtype == 2) {
    /* The problem declares y bf16 (1) or fp16 (2): the contract's one rounding is to that type. */
    store = lay->out_dtype == 1 ? STORE_BF16 : STORE_FP16;
    store_decisive = 1;
    snprintf(out->fingerprint, sizeof out->fingerprint, lay->out_dtype == 1 ? "bf16" : "fp16");
  } else if (nonzero > 0 && out->low16_zero >= 0.99) {
    store = STORE_BF16;
    store_decisive = out->low16_zero_ref < 0.5;
    snprintf(out->fingerprint, sizeof out->fingerprint, "bf16");
  } else if (nonzero > 0 && out->low13_zero >= 0.99) {
    store = STORE_FP16;
    store_decisive = out->low13_zero_ref < 0.5;
    snprintf(out->fingerprint, sizeof out->fingerprint, fp16_range == nonzero ? "fp16" : "10-bit mantissa");
  }

  // Non-finite outputs (a pass of their own only where pass 1 saw some).
  unsigned char *nf_mark = calloc((size_t)(M > 0 ? M : 1), 1);
  if (!nf_mark) return -1;
  nonfinite_counts nc = {0, 0, 0};
  if (pc.nonfinite) classify_nonfinite(in, nf_mark, &nc);
  out->nonfinite = nc.bad + nc.overflow_possible;
  if (nc.bad > 0 || nc.overflow_possible > 0) {
    if (c1d_describe_marks(nf_mark, lay, count, &out->region)) {
      free(nf_mark);
      return -1;
    }
    if (nc.bad > 0) {
      out->verdict = C1D_VERDICT_NON_FINITE;
      out->certain = 1;
      snprintf(out->reason, sizeof out->reason,
               "%lld outputs are NaN or Inf where the exact result is finite and no summation order "
               "can overflow (m <= FLT_MAX) (%s: n %s, o %s, t %s)%s",
               (long long)nc.bad, out->region.kind, out->region.n, out->region.o, out->region.t, race);
    } else {
      out->verdict = C1D_VERDICT_INCONCLUSIVE;
      snprintf(out->reason, sizeof out->reason,
               "%lld outputs are Inf or NaN where the exact result is finite, but there the sum of "
               "|w*x| exceeds FLT_MAX, so partial sums can overflow float32 in some orders (%s: n %s, o "
               "%s, t %s)%s",
               (long long)nc.overflow_possible, out->region.kind, out->region.n, out->region.o,
               out->region.t, race);
    }
    free(nf_mark);
    return 0;
  }
  free(nf_mark);
  c1d_trace_stage("classify: non-finite outputs", &clock);

  // The explanation of the bulk, on the sample.
  sample_scratch sc = {0};
  sc.a = malloc((size_t)(sm->count > 0 ? sm->count : 1) * sizeof *sc.a);
  if (!sc.a) return -1;
  {
    int64_t n = 0;
    for (int64_t j = 0; j < sm->count; j++) {
      const int64_t i = sm->idx[j];
      const double s = in->noise->sigma[i];
      const double g = sm->naive_err ? sm->naive_err[j] : NAN;
      if (s > 0 && isfinite(g)) sc.a[n++] = (g / s) * (g / s);
    }
    sc.ref_median = quantile(sc.a, n, 0.5);
    sc.ref_tail = n ? top_mean(sc.a, n) : 0.0;
    sc.ref_level = n ? body_mean(sc.a, n) : 0.0;
  }
  sc.out = out;
  choice ch;
  choose(in, store_decisive ? store : STORE_NONE, 1.0, &sc, &ch);
  if (store != STORE_NONE && !store_decisive && !(ch.fits && ch.ratio.tail <= fit_limit(sm->count))) {
    choice with_store;
    choose(in, store, 1.0, &sc, &with_store);
    if (with_store.fits && (!ch.fits || with_store.ratio.tail < ch.ratio.tail)) ch = with_store;
  }
  if (sc.failed) {
    free(sc.a);
    return -1;
  }
  c1d_trace_stage("classify: the fit on the sample", &clock);

  // Every element under the chosen (or closest) explanation.
  full_pass fp;
  c1d_test_result ts;
  int64_t marked;
  if (full_pass_tested(in, &ch.x, &fp, &ts, &marked) != 0) {
    free(sc.a);
    return -1;
  }
  c1d_trace_stage("classify: the full pass and its tests", &clock);
  /* A narrow accumulator spreads its errors over the output as rounding does. Where it is the
   * explanation, yet the best float32 one fits the bulk and its tests find a structured region (an
   * edge, channels or a group, batches, positions, tiles), that region is a bug that the narrow
   * accumulator's wider noise would hide. */
  if (marked == 0 && (ch.x.acc == C1D_ACC_FP16 || ch.x.acc == C1D_ACC_BF16)) {
    choice wide;
    sc.no_narrow = 1;
    choose(in, ch.x.store, 1.0, &sc, &wide);
    sc.no_narrow = 0;
    full_pass fw;
    c1d_test_result tw;
    c1d_region rw;
    int64_t marked_wide;
    int rc = sc.failed ? -1 : 0, have = 0;
    if (rc == 0 && wide.fits && (rc = full_pass_tested(in, &wide.x, &fw, &tw, &marked_wide)) == 0) {
      have = 1;
      rc = c1d_describe_marks(fw.mark, lay, count, &rw);
    }
    if (rc != 0) {
      if (have) full_pass_free(&fw);
      full_pass_free(&fp);
      free(sc.a);
      return -1;
    }
    if (wide.fits) {
      if (region_structured(rw.cls)) {
        full_pass_free(&fp);
        fp = fw, ts = tw, ch = wide, marked = rw.count;
      } else {
        full_pass_free(&fw);
      }
    }
  }
  /* A sum stored before SiLU changes only the outputs whose stored sum rounds away from the exact one:
   * the contract may fit the sample's bulk cleanly and its tests then mark just those. Where the
   * outputs bear that model's mark (stored_sum_mark) and its own tests mark nothing, it explains them. */
  if (marked > 0 && in->layout.act_v && ch.x.declared && ch.x.model == C1D_MODEL_FP32 &&
      ch.x.acc == C1D_ACC_NEAREST && !ch.x.allow) {
    const int has_mark = stored_sum_mark(in, &sc);
    explan px = ch.x;
    px.model = C1D_MODEL_PRE_ACT_ROUNDED;
    px.act_in_y = 1;
    px.act = 0;
    full_pass fw;
    c1d_test_result tw;
    int64_t marked_px = 0;
    int rc = sc.failed ? -1 : 0, have = 0;
    if (rc == 0 && has_mark && (rc = full_pass_tested(in, &px, &fw, &tw, &marked_px)) == 0) have = 1;
    const ratios r = have ? sample_ratio(in, &px, &sc) : (ratios){0};
    if (rc != 0 || sc.failed) {
      if (have) full_pass_free(&fw);
      full_pass_free(&fp);
      free(sc.a);
      return -1;
    }
    if (have && marked_px == 0) {
      full_pass_free(&fp);
      fp = fw, ts = tw, ch.x = px, ch.ratio = r, ch.fits = 1, ch.alt_model = -1, marked = 0;
    } else if (have) {
      full_pass_free(&fw);
    }
  }
  /* The first clean fit on the sample is not always the arithmetic: cuBLAS rounds to TF32 with ties to
   * even, and a weight at a tie then moves a whole channel off the ties-away model by a little. Where
   * the tests mark elements none of which is beyond the worst case, other models of plain (or truncated)
   * float32 accumulation that fit the sample cleanly get a full pass each, the lightest tails first (at
   * most three): one that marks nothing explains the output. Deterministic models cannot absorb a bug. */
  if (marked > 0 && fp.beyond == 0 && ch.fits && !ch.x.allow && ch.x.model != C1D_MODEL_PRE_ACT_ROUNDED &&
      (ch.x.acc == C1D_ACC_NEAREST || ch.x.acc == C1D_ACC_TRUNCATED)) {
    if (second_chance(in, &sc, &ch, &fp, &ts, &marked) != 0) {
      full_pass_free(&fp);
      free(sc.a);
      return -1;
    }
  }
  /* An FFT algorithm (cuDNN's FFT and FFT_TILING, which cudnn.benchmark may pick): its errors do not
   * shrink with an output's terms, so on outputs with few terms they pass the direct sum's noise and even
   * its worst case, on the outputs whose terms are small most of all, or everywhere (cuDNN's FFT_TILING at
   * C*K = 4: 10 times the direct sum's rms). Where the errors have that signature (transform_signature),
   * float32 accumulation with a transform's level and bound along each row gets a full pass of its own;
   * one that marks nothing explains the output, one that marks fewer elements places the bug. A bug's
   * structure (a region, a tap, an offset's signs) still shows under it; scattered marks and the whole
   * output are what an FFT's errors can look like. */
  if (marked > 0 && ch.x.store == STORE_NONE && !in->layout.act_v &&
      (ch.x.model == C1D_MODEL_FP32 || ch.x.model == C1D_MODEL_3XTF32)) {
    c1d_region rt;
    if (c1d_describe_marks(fp.mark, lay, count, &rt) != 0) {
      full_pass_free(&fp);
      free(sc.a);
      return -1;
    }
    /* a residual that one tap's terms explain is that tap's bug, whatever its size (tap_of_bug) */
    int64_t tap;
    double tap_factor;
    const int sig = (rt.cls == C1D_REGION_SCATTERED || rt.cls == C1D_REGION_LEFT_EDGE ||
                     rt.cls == C1D_REGION_EVERYWHERE) && !tap_of_bug(in, &ch.x, &tap, &tap_factor)
                        ? transform_signature(in)
                        : 0;
    if (sig < 0) {
      full_pass_free(&fp);
      free(sc.a);
      return -1;
    }
    if (sig) {
      explan tx = ch.x;
      tx.model = C1D_MODEL_FP32, tx.allow = 0, tx.acc = C1D_ACC_NEAREST, tx.kappa = 0.0, tx.flat = FLAT_TRANSFORM;
      full_pass fw;
      c1d_test_result tw;
      int64_t marked_tx;
      if (full_pass_tested(in, &tx, &fw, &tw, &marked_tx) != 0) {
        full_pass_free(&fp);
        free(sc.a);
        return -1;
      }
      if (marked_tx < marked) { /* none: rounding; fewer: a bug on an FFT's output, where it is */
        full_pass_free(&fp);
        fp = fw, ts = tw, ch.x = tx, ch.alt_model = -1, ch.fits = 1, marked = marked_tx;
      } else {
        full_pass_free(&fw);
      }
    }
  }
  /* A bug is what the tests find (or the worst case proves). No explanation fitting the bulk while no
   * test fires is inconclusive: errors beyond common orders' level, yet nowhere beyond what rounding
   * might give at alpha. */
  int bug = marked > 0;
  const int unexplained = !ch.fits && !bug;
  /* Order-sensitive inputs: does an arbitrary order's level explain what the naive one does not? */
  int order_explains = 0;
  if (bug && fp.beyond == 0 && order_sensitive(in, &sc)) {
    const double *pe = in->models.sample_permuted(in->models.ctx);
    /* The reference becomes an arbitrary order's own realisation on every element (with the naive
     * order's where larger). */
    c1d_classifier_input in2 = *in;
    in2.noise = in->models.arbitrary_noise(in->models.ctx);
    if (!in2.noise) {
      full_pass_free(&fp);
      free(sc.a);
      return -1;
    }
    sample_scratch sc2 = sc;
    int64_t n2 = 0;
    for (int64_t j = 0; j < sm->count; j++) {
      const double s2 = in2.noise->sigma[sm->idx[j]], g = pe[j];
      if (s2 > 0 && isfinite(g)) sc2.a[n2++] = (g / s2) * (g / s2);
    }
    sc2.ref_median = quantile(sc2.a, n2, 0.5);
    sc2.ref_tail = n2 ? top_mean(sc2.a, n2) : 0.0;
    sc2.ref_level = n2 ? body_mean(sc2.a, n2) : 0.0;
    sc2.order_known = 1;
    sc2.order_sensitive = 0;
    sc2.out = NULL;
    choice ch2;
    choose(&in2, ch.x.store, 1.0, &sc2, &ch2);
    if (sc2.failed) {
      full_pass_free(&fp);
      free(sc.a);
      return -1;
    }
    if (ch2.fits) {
      full_pass fp2;
      c1d_test_result ts2;
      int64_t marked2;
      if (full_pass_tested(&in2, &ch2.x, &fp2, &ts2, &marked2) != 0) {
        full_pass_free(&fp);
        free(sc.a);
        return -1;
      }
      full_pass_free(&fp2);
      order_explains = marked2 == 0;
    }
  }
  free(sc.a);
  /* No model fits the bulk and the tests found a bug. A bug on half the output (one batch of two) pulls
   * every model's median, and the closest by it is then the one whose wide noise reaches both halves:
   * its marks cover both. The closest by the share of the sample beyond LOW_Q sigmas fits the part the
   * bug left alone; where its marks form a region rounding never makes, they name the bug. The verdict
   * is a bug either way. */
  if (bug && !ch.fits && !order_explains && ch.have_low && !same_arithmetic(&ch.low_x, &ch.x)) {
    full_pass fl;
    c1d_test_result tl;
    c1d_region rl;
    int64_t marked_low;
    if (full_pass_tested(in, &ch.low_x, &fl, &tl, &marked_low) != 0) {
      full_pass_free(&fp);
      return -1;
    }
    if (c1d_describe_marks(fl.mark, lay, count, &rl) != 0) {
      full_pass_free(&fl);
      full_pass_free(&fp);
      return -1;
    }
    if (marked_low > 0 && region_structured(rl.cls)) {
      full_pass_free(&fp);
      fp = fl, ts = tl, marked = marked_low, ch.x = ch.low_x, ch.ratio = ch.low_ratio;
    } else {
      full_pass_free(&fl);
    }
  }
  c1d_trace_stage("classify: second explanations", &clock);

  if (ch.x.model != C1D_MODEL_FP32 && !out->models[ch.x.model].available) {
    /* The chosen model's prediction on the sample, for the reason and the reports. */
    const double *dl = sample_delta(in, ch.x.model, &sc);
    double se = 0, sr = 0;
    for (int64_t j = 0; dl && j < sm->count; j++) {
      const double y = in->ref[sm->idx[j]];
      if (!isfinite(y) || !isfinite(dl[j])) continue;
      se += dl[j] * dl[j];
      sr += y * y;
    }
    out->models[ch.x.model].available = dl != NULL;
    out->models[ch.x.model].rel_l2 = sr > 0 ? sqrt(se / sr) : 0.0;
  }
  out->model = ch.x.model;
  out->model_alt = ch.alt_model;
  out->accumulation = ch.x.acc;
  out->kappa = ch.x.kappa;
  out->product_allowance = ch.x.allow;
  out->fit_ratio = ch.ratio.median;
  out->certain = fp.beyond > 0;
  out->unexplained_rms = fp.count ? sqrt(fp.sum_r2 / (double)fp.count) : 0.0;
  out->beyond_model = marked;
  describe_explanation(&ch.x, ch.alt_model, out->what, sizeof out->what);
  if (c1d_describe_marks(fp.mark, lay, count, &out->region)) {
    full_pass_free(&fp);
    return -1;
  }
  trace_marks(in, &ch.x, &fp);
  /* Scattered marks are no evidence by themselves: tensor-core accumulation, another rounding mode at
   * ties or a model that is right on average leaves heavier tails than the model's noise on a few
   * elements in millions. Inside the worst-case bound, with no batch, channel, row, position or tile
   * holding more than its share and signs as rounding gives them, they are reported, not called a bug. */
  int64_t tail_only = 0;
  if (bug && ch.fits && !order_explains && fp.beyond == 0 && out->region.cls == C1D_REGION_SCATTERED &&
      marked >= SIGN_MIN_MARKS &&
      !c1d_marks_concentrated(fp.mark, lay, CONCENTRATION_RATIO, 0.5 * C1D_ALPHA)) {
    sign_counts marked_signs;
    count_signs(in, &fp, 1, &marked_signs);
    const int sg = sign_pattern(&ch.x, &marked_signs, 0.5 * C1D_ALPHA, NULL);
    double top = 0.0; /* the largest mark's q2 */
#pragma omp parallel for schedule(static) reduction(max : top)
    for (int64_t i = 0; i < M; i++)
      if (fp.mark[i] && fp.q2[i] > top) top = fp.q2[i];
    if (!sg && top <= TAIL_Q2_MAX && (double)marked <= TAIL_FRACTION_MAX * (double)count) {
      tail_only = marked;
      bug = 0;
      memset(&out->region, 0, sizeof out->region);
      out->region.cls = C1D_REGION_NONE;
      snprintf(out->region.kind, sizeof out->region.kind, "none");
    }
  }
  /* A bug that no region holds may still be one tap's. */
  int64_t tap;
  double tap_factor;
  if (bug && (out->region.cls == C1D_REGION_EVERYWHERE || out->region.cls == C1D_REGION_SCATTERED) &&
      tap_of_bug(in, &ch.x, &tap, &tap_factor)) {
    out->region.cls = C1D_REGION_TAP;
    /* -1: the tap left out; +1: counted twice */
    const char *what = fabs(tap_factor + 1.0) < 0.01 ? ", left out" : fabs(tap_factor - 1.0) < 0.01 ? ", twice" : "";
    snprintf(out->region.kind, sizeof out->region.kind, "tap %lld (x at t - %lld): errors %.3g times its terms%s",
             (long long)tap, (long long)((lay->K - 1 - tap) * lay->D), tap_factor, what);
  }
  c1d_detection_limits(lay, fp.q2, fp.seg_inv, &ts, &out->detect_limit_32, &out->detect_limit_all);
  c1d_trace_stage("classify: region, scattered tails, detection limits", &clock);
  const double share_exact = count ? 100.0 * (double)exact / (double)count : 0.0;

  if (unexplained) {
    out->verdict = C1D_VERDICT_INCONCLUSIVE;
    out->model = -1;
    snprintf(out->reason, sizeof out->reason,
             "no rounding model fits the bulk (the closest, %s, leaves %.3g times the naive order's "
             "noise level), yet no element, region or count is beyond what rounding might give at "
             "false-alarm probability %.0e: an arithmetic convlab does not model, or a small error "
             "spread everywhere%s",
             out->what, sqrt(ch.ratio.median), C1D_ALPHA, race);
  } else if (bug && order_explains) {
    out->verdict = C1D_VERDICT_INCONCLUSIVE;
    if (!ch.fits) out->model = -1, out->what[0] = '\0';
    snprintf(out->reason, sizeof out->reason,
             "these inputs are order-sensitive: float32 rounding in an arbitrary order gives errors "
             "%.3g times the naive order's (medians of squares), and the errors fit that level, not "
             "the naive order's; every element inside the worst-case bound%s",
             out->order_ratio, race);
  } else if (bug) {
    const int everywhere = out->region.cls == C1D_REGION_EVERYWHERE || marked == 0;
    out->verdict = everywhere ? C1D_VERDICT_BUG_GLOBAL : C1D_VERDICT_BUG_LOCALIZED;
    if (ts.fired_elements)
      snprintf(out->test, sizeof out->test, "single elements");
    else if (ts.fired_signs)
      snprintf(out->test, sizeof out->test, "the signs of the errors beyond %.3g sigma", ts.signs_level);
    else if (ts.fired_counts)
      snprintf(out->test, sizeof out->test, "count beyond %.3g sigma", c1d_noise_tail_t[ts.count_level]);
    else if (ts.fired_isolated)
      snprintf(out->test, sizeof out->test, "count of elements beyond %.3g times their neighbours' rms",
               c1d_iso_t[ts.iso_level]);
    else if (ts.first_family >= 0)
      snprintf(out->test, sizeof out->test, "%s: %s",
               ts.offsets_fired == ts.regions_fired ? "an offset of one sign in a region" : "region",
               c1d_test_family_name(ts.first_family));
    else if (ts.fired_global)
      snprintf(out->test, sizeof out->test, "whole output");
    else
      snprintf(out->test, sizeof out->test, "no rounding model fits the bulk");
    char closest[420];
    if (ch.fits)
      snprintf(closest, sizeof closest, "beyond what %s produces (which fits the rest)", out->what);
    else
      snprintf(closest, sizeof closest,
               "that no rounding model explains (the closest, %s, leaves %.3g times the float32 noise)",
               out->what, sqrt(ch.ratio.median));
    if (!ch.fits) out->model = -1;
    char place[sizeof out->region.kind + 8];
    bug_place(&out->region, place, sizeof place);
    /* A long region list may cut the reason short; the region object keeps it whole. */
#if defined(__GNUC__) && !defined(__clang__) /* clang has no such warning */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif
    snprintf(out->reason, sizeof out->reason,
             "%lld elements (%.3g%%) carry errors %s; %s; decided by %s at false-alarm probability "
             "%.0e; unexplained rms %.3g against %.3g for float32 rounding in the naive order: a bug "
             "%s (n %s, o %s, t %s)%s",
             (long long)marked, 100.0 * out->region.fraction, closest,
             fp.beyond > 0 ? "some beyond the worst-case bound: certainly a bug"
                           : "all inside the worst-case bound",
             out->test, C1D_ALPHA, out->unexplained_rms, out->reference_rms, place,
             out->region.n, out->region.o, out->region.t, race);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  } else {
    out->verdict = verdict_of(&ch.x, out->where, sizeof out->where);
    char fit[400], prediction[160] = "", limits[256];
    if (exact == count && count > 0)
      snprintf(fit, sizeof fit, "every output equals the correctly rounded exact result%s",
               nc.correct_inf ? " (Inf where the exact result exceeds float32's range)" : "");
    else
      snprintf(fit, sizeof fit, "%s fits: residual %.3g times the naive order's own rounding noise (medians "
               "of squares); %.1f%% of outputs equal the correctly rounded result",
               out->what, ch.ratio.median, share_exact);
    if (ch.x.model != C1D_MODEL_FP32 && out->models[ch.x.model].available)
      snprintf(prediction, sizeof prediction, "; relative L2 %.3g against %.3g predicted by that model "
               "(float32 accumulation alone: %.3g)",
               out->rel_l2, out->models[ch.x.model].rel_l2, out->models[C1D_MODEL_FP32].rel_l2);
    snprintf(limits, sizeof limits,
             "%s at false-alarm probability %.0e; detection limit: no error beyond rounding "
             "larger than %.2g (%.3g times the naive rms) affects any region of 32 or more elements, none "
             "larger than %.2g every element",
             tail_only ? "no test finds a pattern" : "no test fires", C1D_ALPHA, out->detect_limit_32,
             out->reference_rms > 0 ? out->detect_limit_32 / out->reference_rms : 0.0, out->detect_limit_all);
    char tails[320] = "";
    if (tail_only)
      snprintf(tails, sizeof tails, "; %lld elements (%.3g%%) lie beyond the model's noise, scattered (no batch, "
               "channel, row, position or tile holds %g times its share), with signs as rounding gives them "
               "and inside the worst-case bound: heavier tails than the model, no evidence of a bug",
               (long long)tail_only, count ? 100.0 * (double)tail_only / (double)count : 0.0, CONCENTRATION_RATIO);
    snprintf(out->reason, sizeof out->reason, "%s%s; %s%s%s", fit, prediction, limits, tails, race);
  }
  full_pass_free(&fp);
  return 0;
}
