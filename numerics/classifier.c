/* The mismatch classifier; the method is described in classifier.h. */
#include "numerics/classifier.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numerics/arith.h"
#include "numerics/bounds.h"

static const char *const verdict_names[C1D_VERDICT_COUNT] = {
    "fp32-rounding", "tf32-inputs", "reduced-precision", "bug-localized",
    "bug-global",    "non-finite",  "inconclusive"};

const char *c1d_verdict_name(c1d_verdict v) {
  return (unsigned)v < C1D_VERDICT_COUNT ? verdict_names[v] : "?";
}

int c1d_verdict_is_bug(c1d_verdict v) {
  return v == C1D_VERDICT_BUG_LOCALIZED || v == C1D_VERDICT_BUG_GLOBAL || v == C1D_VERDICT_NON_FINITE;
}

const char *c1d_region_class_name(c1d_region_class c) {
  static const char *const names[C1D_REGION_CLASS_COUNT] = {
      "none",     "everywhere", "left-edge",   "right-edge",  "last-partial-tile", "channels",
      "batches",  "positions",  "tile-blocks", "tile-seams",  "scattered"};
  return (unsigned)c < C1D_REGION_CLASS_COUNT ? names[c] : "?";
}

const char *c1d_model_name(int model) {
  switch (model) {
    case C1D_MODEL_FP32: return "fp32 accumulation (naive order)";
    case C1D_MODEL_TF32_RNA: return "tf32 inputs (round to nearest)";
    case C1D_MODEL_TF32_TRUNC: return "tf32 inputs (truncated)";
    case C1D_MODEL_BF16_INPUTS: return "bf16 inputs";
  }
  return "?";
}

// --- statistics on a sample ---------------------------------------------------------------------

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
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
  qsort(z, (size_t)used, sizeof *z, cmp_double);
  out->available = used > 0;
  out->z50 = used ? z[(used - 1) / 2] : 0.0;
  out->z90 = used ? z[(int64_t)((used - 1) * 0.9)] : 0.0;
  out->rel_l2 = sum_sq_ref > 0.0 ? sqrt(sum_sq_err / sum_sq_ref) : 0.0;
  free(z);
  return 0;
}

// --- ranges -------------------------------------------------------------------------------------

void c1d_format_ranges(const unsigned char *flags, int64_t n, char *buf, int size) {
  int len = 0;
  buf[0] = '\0';
  for (int64_t i = 0; i < n; i++) {
    if (!flags[i]) continue;
    int64_t j = i;
    while (j + 1 < n && flags[j + 1]) j++;
    char part[48];
    if (j > i)
      snprintf(part, sizeof part, "%s%lld-%lld", len ? "," : "", (long long)i, (long long)j);
    else
      snprintf(part, sizeof part, "%s%lld", len ? "," : "", (long long)i);
    if (len + (int)strlen(part) + 4 >= size) {
      snprintf(buf + len, (size_t)(size - len), ",...");
      return;
    }
    len += snprintf(buf + len, (size_t)(size - len), "%s", part);
    i = j;
  }
  if (!len) snprintf(buf, (size_t)size, "-");
}

// --- bounds of the models -----------------------------------------------------------------------

typedef enum bound_kind { BOUND_FP32, BOUND_TF32, BOUND_BF16_INPUTS, BOUND_BF16_STORE, BOUND_FP16_STORE } bound_kind;

static const char *bound_name(bound_kind kind) {
  switch (kind) {
    case BOUND_FP32: return "float32 accumulation";
    case BOUND_TF32: return "TF32 inputs";
    case BOUND_BF16_INPUTS: return "bf16 inputs";
    case BOUND_BF16_STORE: return "bf16 storage";
    case BOUND_FP16_STORE: return "fp16 storage";
  }
  return "?";
}

/* Deterministic bounds; the small absolute slack covers the float64 oracle's own error. */
static double bound_of(bound_kind kind, int64_t n, double m, double y) {
  const double slack = 1e-12 * m;
  const double g = c1d_gamma(n, C1D_U_FP32);
  const double tf = 2 * C1D_U_TF32_TRUNC + C1D_U_TF32_TRUNC * C1D_U_TF32_TRUNC;
  const double bf = 2 * C1D_U_BF16 + C1D_U_BF16 * C1D_U_BF16;
  switch (kind) {
    case BOUND_FP32: return g * m + slack;
    case BOUND_TF32: return (tf + g) * m + slack;
    case BOUND_BF16_INPUTS: return (bf + g) * m + slack;
    case BOUND_BF16_STORE: {
      double inner = (bf + g) * m;
      return C1D_U_BF16 * (fabs(y) + inner) + inner + slack;
    }
    case BOUND_FP16_STORE: {
      double inner = (tf + g) * m; /* fp16 carries TF32's 10 mantissa bits */
      return C1D_U_FP16 * (fabs(y) + inner) + inner + slack;
    }
  }
  return INFINITY;
}

// --- marginals and regions ----------------------------------------------------------------------

/* Where offending elements are: flags per n, o and t, and per tile of 8 channels x 32 positions (the
 * tiled kernels' block), which marginals alone cannot show. */
enum { TILE_O = 8, TILE_T = 32 };

typedef struct marginals {
  int64_t count;
  unsigned char *n, *o, *t, *tile;
  int64_t tiles_o, tiles_t;
} marginals;

static int marginals_alloc(marginals *mg, const c1d_layout *lay) {
  mg->count = 0;
  mg->tiles_o = (lay->O + TILE_O - 1) / TILE_O;
  mg->tiles_t = (lay->L + TILE_T - 1) / TILE_T;
  mg->n = calloc((size_t)lay->N, 1);
  mg->o = calloc((size_t)lay->O, 1);
  mg->t = calloc((size_t)lay->L, 1);
  mg->tile = calloc((size_t)(lay->N * mg->tiles_o * mg->tiles_t), 1);
  return (mg->n && mg->o && mg->t && mg->tile) ? 0 : -1;
}

static void marginals_mark(marginals *mg, int64_t n, int64_t o, int64_t t) {
  mg->count++;
  mg->n[n] = mg->o[o] = mg->t[t] = 1;
  mg->tile[(n * mg->tiles_o + o / TILE_O) * mg->tiles_t + t / TILE_T] = 1;
}

static void marginals_free(marginals *mg) {
  free(mg->n);
  free(mg->o);
  free(mg->t);
  free(mg->tile);
}

/* At least two flagged t, all with one residue modulo TILE_T: a tile seam. */
static int periodic_positions(const unsigned char *f, int64_t n) {
  int64_t residue = -1, count = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!f[i]) continue;
    if (residue < 0) residue = i % TILE_T;
    if (i % TILE_T != residue) return 0;
    count++;
  }
  return count >= 2;
}

static int64_t flag_count(const unsigned char *f, int64_t n) {
  int64_t c = 0;
  for (int64_t i = 0; i < n; i++) c += f[i] != 0;
  return c;
}

static int64_t first_flag(const unsigned char *f, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (f[i]) return i;
  return -1;
}

/* Runs of flagged t that all start on a multiple of `tile` and end on one (or at L). */
static int tile_aligned(const unsigned char *f, int64_t n, int64_t tile) {
  if (n < 2 * tile) return 0;
  for (int64_t i = 0; i < n; i++) {
    if (!f[i]) continue;
    int64_t j = i;
    while (j + 1 < n && f[j + 1]) j++;
    if (i % tile != 0 || ((j + 1) % tile != 0 && j + 1 != n)) return 0;
    i = j;
  }
  return flag_count(f, n) < n;
}

/* Fills region from the marginals; returns 1 when the offending elements are everywhere. */
static int describe_region(const marginals *mg, const c1d_layout *lay, int64_t total,
                           c1d_region *r) {
  const int64_t bad_n = flag_count(mg->n, lay->N), bad_o = flag_count(mg->o, lay->O),
                bad_t = flag_count(mg->t, lay->L);
  const int64_t t_first = first_flag(mg->t, lay->L);
  const int64_t full_tiles_end = lay->L / 32 * 32;
  r->count = mg->count;
  r->fraction = total ? (double)mg->count / (double)total : 0.0;
  c1d_format_ranges(mg->n, lay->N, r->n, sizeof r->n);
  c1d_format_ranges(mg->o, lay->O, r->o, sizeof r->o);
  c1d_format_ranges(mg->t, lay->L, r->t, sizeof r->t);
  const int64_t tiles = lay->N * mg->tiles_o * mg->tiles_t;
  const double tile_fraction = tiles ? (double)flag_count(mg->tile, tiles) / (double)tiles : 0.0;
  /* Everywhere: every batch, nearly every channel, position and tile. */
  int everywhere = r->fraction >= 0.05 && bad_n == lay->N && bad_o >= 0.9 * lay->O &&
                   bad_t >= 0.9 * lay->L && tile_fraction >= 0.9;
  const char *kind = "scattered";
  c1d_region_class cls = C1D_REGION_SCATTERED;
#define REGION(c, text) (cls = (c), kind = (text))
  if (mg->count == 0)
    REGION(C1D_REGION_NONE, "none");
  else if (everywhere)
    REGION(C1D_REGION_EVERYWHERE, "everywhere");
  else if (lay->pad > 0 && t_first >= 0 && flag_count(mg->t, lay->pad < lay->L ? lay->pad : lay->L) == bad_t)
    REGION(C1D_REGION_LEFT_EDGE, "left edge (causal padding, t < (K-1)*D)");
  else if (lay->L % 32 && full_tiles_end > 0 && t_first >= full_tiles_end)
    REGION(C1D_REGION_LAST_PARTIAL_TILE, "last partial tile (right edge)");
  else if (t_first >= lay->L - 32 && lay->L > 64)
    REGION(C1D_REGION_RIGHT_EDGE, "right edge");
  else if (periodic_positions(mg->t, lay->L))
    REGION(C1D_REGION_TILE_SEAMS, "tile-seam positions (one t mod 32)");
  else if (bad_t <= 4 && bad_t < lay->L)
    REGION(C1D_REGION_POSITIONS, "single positions");
  else if (bad_o < lay->O && bad_o <= (lay->O / 16 > 1 ? lay->O / 16 : 1))
    REGION(C1D_REGION_CHANNELS, "single output channels");
  else if (bad_n < lay->N && bad_n <= (lay->N / 4 > 1 ? lay->N / 4 : 1))
    REGION(C1D_REGION_BATCHES, "single batches");
  else if (tile_aligned(mg->t, lay->L, TILE_T))
    REGION(C1D_REGION_TILE_BLOCKS, "tile-aligned blocks (32 positions)");
  else if (bad_o < lay->O && tile_aligned(mg->o, lay->O, TILE_O))
    REGION(C1D_REGION_TILE_BLOCKS, "tile-aligned blocks (8 channels)");
  else if (tile_fraction <= 0.5)
    REGION(C1D_REGION_TILE_BLOCKS, "tile-aligned blocks (8 o x 32 t)");
#undef REGION
  r->cls = cls;
  snprintf(r->kind, sizeof r->kind, "%s", kind);
  return everywhere;
}

/* Marks every element whose error exceeds the bound (after clearing the marks). */
static void mark_offenders(const c1d_classifier_input *in, bound_kind bound, marginals *bad) {
  const c1d_layout *lay = &in->layout;
  memset(bad->n, 0, (size_t)lay->N);
  memset(bad->o, 0, (size_t)lay->O);
  memset(bad->t, 0, (size_t)lay->L);
  memset(bad->tile, 0, (size_t)(lay->N * bad->tiles_o * bad->tiles_t));
  bad->count = 0;
  for (int64_t i = 0; i < lay->N * lay->O * lay->L; i++) {
    const double y = in->ref[i];
    if (!isfinite(y)) continue;
    const int64_t t = i % lay->L;
    const int64_t terms = (lay->terms_t ? lay->terms_t[t] : 1) + 1;
    if (fabs((double)in->cand[i] - y) > bound_of(bound, terms, in->mag[i], y))
      marginals_mark(bad, i / (lay->L * lay->O), (i / lay->L) % lay->O, t);
  }
}

// --- the classifier -----------------------------------------------------------------------------

typedef struct pass_counts {
  int64_t count, nonfinite, beyond_fp32_det, beyond_fp32_prob, beyond_tf32, beyond_model;
  int64_t nonzero, low16, low13, ref_nonzero, ref_low16, ref_low13, fp16_range;
} pass_counts;

static int model_fits(const c1d_error_stats *c, const c1d_error_stats *lo, const c1d_error_stats *hi,
                      double below, double above) {
  if (!lo->available || !hi->available) return 0;
  return c->z50 >= below * lo->z50 && c->z50 <= above * hi->z50 && c->z90 <= above * hi->z90;
}

int c1d_classify(const c1d_classifier_input *in, c1d_explanation *out) {
  const c1d_layout *lay = &in->layout;
  const int64_t total = lay->N * lay->O * lay->L;
  memset(out, 0, sizeof *out);
  out->model = -1;
  out->cand_stats = in->cand_stats;
  memcpy(out->models, in->models, sizeof out->models);
  out->repeat_checked = in->repeat_checked;
  out->repeat_identical = in->repeat_identical;

  // Pass 1: counts, fingerprint, non-finite marginals.
  marginals bad_nonfinite;
  if (marginals_alloc(&bad_nonfinite, lay)) {
    marginals_free(&bad_nonfinite);
    return -1;
  }
  pass_counts pc;
  memset(&pc, 0, sizeof pc);
  double sum_sq_err = 0, sum_sq_ref = 0;
  for (int64_t i = 0; i < total; i++) {
    const double y = in->ref[i], m = in->mag[i];
    const float a = in->cand[i];
    if (!isfinite(y)) continue;
    pc.count++;
    const int64_t t = i % lay->L, o = (i / lay->L) % lay->O, n = i / (lay->L * lay->O);
    if (!isfinite(a)) {
      pc.nonfinite++;
      marginals_mark(&bad_nonfinite, n, o, t);
      continue;
    }
    const int64_t terms = (lay->terms_t ? lay->terms_t[t] : 1) + 1;
    const double e = fabs((double)a - y);
    sum_sq_err += e * e;
    sum_sq_ref += y * y;
    pc.beyond_fp32_det += e > bound_of(BOUND_FP32, terms, m, y);
    pc.beyond_fp32_prob += e > c1d_bound_prob(terms, m, C1D_U_FP32, C1D_DEFAULT_LAMBDA) + 1e-12 * m;
    pc.beyond_tf32 += e > bound_of(BOUND_TF32, terms, m, y);
    const uint32_t bits = c1d_float_bits(a), rbits = c1d_float_bits((float)y);
    if (a != 0.0f) {
      pc.nonzero++;
      pc.low16 += (bits & 0xffffu) == 0;
      pc.low13 += (bits & 0x1fffu) == 0;
      pc.fp16_range += fabsf(a) <= 65504.0f && (fabsf(a) >= 0x1p-14f || (bits & 0x1fffu) == 0);
    }
    if ((float)y != 0.0f) {
      pc.ref_nonzero++;
      pc.ref_low16 += (rbits & 0xffffu) == 0;
      pc.ref_low13 += (rbits & 0x1fffu) == 0;
    }
  }
  out->count = pc.count;
  out->nonfinite = pc.nonfinite;
  out->beyond_fp32_det = pc.beyond_fp32_det;
  out->beyond_fp32_prob = pc.beyond_fp32_prob;
  out->beyond_tf32 = pc.beyond_tf32;
  out->rel_l2 = sum_sq_ref > 0 ? sqrt(sum_sq_err / sum_sq_ref) : (sum_sq_err > 0 ? INFINITY : 0.0);
  out->low16_zero = pc.nonzero ? (double)pc.low16 / pc.nonzero : 0.0;
  out->low13_zero = pc.nonzero ? (double)pc.low13 / pc.nonzero : 0.0;
  out->low16_zero_ref = pc.ref_nonzero ? (double)pc.ref_low16 / pc.ref_nonzero : 0.0;
  out->low13_zero_ref = pc.ref_nonzero ? (double)pc.ref_low13 / pc.ref_nonzero : 0.0;

  /* The fingerprint: outputs that all fit a narrower format. It is decisive only where the oracle's
   * own float32 values do not share it (small integers do); otherwise it is a fallback explanation. */
  bound_kind store = BOUND_FP32;
  int store_informative = 0;
  snprintf(out->fingerprint, sizeof out->fingerprint, "fp32");
  if (pc.nonzero > 0 && out->low16_zero >= 0.99) {
    store = BOUND_BF16_STORE;
    store_informative = out->low16_zero_ref < 0.5;
    snprintf(out->fingerprint, sizeof out->fingerprint, "bf16");
  } else if (pc.nonzero > 0 && out->low13_zero >= 0.99) {
    store = BOUND_FP16_STORE;
    store_informative = out->low13_zero_ref < 0.5;
    snprintf(out->fingerprint, sizeof out->fingerprint,
             pc.fp16_range == pc.nonzero ? "fp16" : "10-bit mantissa");
  }

  if (pc.nonfinite > 0) {
    out->verdict = C1D_VERDICT_NON_FINITE;
    describe_region(&bad_nonfinite, lay, pc.count, &out->region);
    snprintf(out->reason, sizeof out->reason,
             "%lld outputs are NaN or Inf where the oracle is finite (%s: n %s, o %s, t %s)",
             (long long)pc.nonfinite, out->region.kind, out->region.n, out->region.o,
             out->region.t);
    marginals_free(&bad_nonfinite);
    return 0;
  }
  marginals_free(&bad_nonfinite);

  /* Which rounding models fit the bulk of the errors? Small samples have noisy quantiles: widen. */
  const c1d_error_stats *c = &in->cand_stats, *md = in->models;
  const double widen = pc.count < 256 ? 2.0 : 1.0;
  enum { FIT_FP32, FIT_TF32, FIT_BF16, FIT_STORE, FIT_COUNT };
  static const c1d_verdict fit_verdict[FIT_COUNT] = {
      C1D_VERDICT_FP32_ROUNDING, C1D_VERDICT_TF32_INPUTS, C1D_VERDICT_REDUCED_PRECISION,
      C1D_VERDICT_REDUCED_PRECISION};
  static const int fit_model[FIT_COUNT] = {C1D_MODEL_FP32, C1D_MODEL_TF32_RNA, C1D_MODEL_BF16_INPUTS, -1};
  const bound_kind fit_bound[FIT_COUNT] = {BOUND_FP32, BOUND_TF32, BOUND_BF16_INPUTS, store};
  int fits[FIT_COUNT];
  fits[FIT_FP32] = md[C1D_MODEL_FP32].available &&
                   c->z50 <= fmax(4.0 * widen * md[C1D_MODEL_FP32].z50, 0.5) &&
                   c->z90 <= fmax(4.0 * widen * md[C1D_MODEL_FP32].z90, 1.0);
  fits[FIT_TF32] = model_fits(c, &md[C1D_MODEL_TF32_RNA], &md[C1D_MODEL_TF32_TRUNC], 0.4 / widen,
                              2.5 * widen);
  fits[FIT_BF16] = model_fits(c, &md[C1D_MODEL_BF16_INPUTS], &md[C1D_MODEL_BF16_INPUTS],
                              0.4 / widen, 2.5 * widen);
  fits[FIT_STORE] = store != BOUND_FP32; /* the fingerprint, decisive or not */

  /* The explanation to test first: a decisive fingerprint, else the tightest model that fits. */
  int order[FIT_COUNT], n_order = 0;
  if (fits[FIT_STORE] && store_informative) order[n_order++] = FIT_STORE;
  for (int f = FIT_FP32; f <= FIT_BF16; f++)
    if (fits[f]) order[n_order++] = f;
  if (fits[FIT_STORE] && !store_informative) order[n_order++] = FIT_STORE;

  /* Pass 2: every element against each fitting explanation's bound in turn (float32's when none
   * fits); the first that every element satisfies wins. A bug is what no fitting model explains. */
  marginals bad;
  if (marginals_alloc(&bad, lay)) {
    marginals_free(&bad);
    return -1;
  }
  c1d_verdict fitted = C1D_VERDICT_INCONCLUSIVE;
  bound_kind bound = BOUND_FP32;
  for (int attempt = 0; attempt < (n_order ? n_order : 1); attempt++) {
    if (n_order) {
      fitted = fit_verdict[order[attempt]];
      bound = fit_bound[order[attempt]];
      out->model = fit_model[order[attempt]];
    }
    mark_offenders(in, bound, &bad);
    if (bad.count == 0) break;
  }
  if (bad.count > 0 && n_order > 1) {
    /* Report the bug against the tightest fitting explanation, not the loosest one tried. */
    fitted = fit_verdict[order[0]];
    bound = fit_bound[order[0]];
    out->model = fit_model[order[0]];
    mark_offenders(in, bound, &bad);
  }
  out->beyond_model = bad.count;
  const int everywhere = describe_region(&bad, lay, pc.count, &out->region);
  marginals_free(&bad);

  const char *race = in->repeat_checked && !in->repeat_identical
                         ? "; two runs gave different bits (a race or a nondeterministic order)"
                         : "";
  if (out->beyond_model > 0) {
    out->verdict = everywhere ? C1D_VERDICT_BUG_GLOBAL : C1D_VERDICT_BUG_LOCALIZED;
    snprintf(out->reason, sizeof out->reason,
             "%lld elements (%.3g%%) exceed the worst-case bound of %s%s: a bug, %s "
             "(n %s, o %s, t %s)%s",
             (long long)out->beyond_model, 100.0 * out->region.fraction, bound_name(bound),
             fitted == C1D_VERDICT_INCONCLUSIVE ? " (no rounding model fits the bulk)"
                                                : ", the model that fits the bulk",
             out->region.kind, out->region.n, out->region.o, out->region.t, race);
  } else if (fitted == C1D_VERDICT_INCONCLUSIVE) {
    out->verdict = C1D_VERDICT_INCONCLUSIVE;
    snprintf(out->reason, sizeof out->reason,
             "errors (median z %.3g) exceed what fp32 (%.3g) and tf32 (%.3g) rounding predict, yet "
             "every element lies inside the worst-case fp32 bound%s",
             c->z50, md[C1D_MODEL_FP32].z50, md[C1D_MODEL_TF32_RNA].z50, race);
  } else {
    out->verdict = fitted;
    if (fitted == C1D_VERDICT_FP32_ROUNDING)
      snprintf(out->reason, sizeof out->reason,
               "consistent with float32 accumulation in some order: median error %.3g u*m "
               "against %.3g for the naive order, every element inside gamma_n*m%s",
               c->z50, md[C1D_MODEL_FP32].z50, race);
    else if (fitted == C1D_VERDICT_TF32_INPUTS)
      snprintf(out->reason, sizeof out->reason,
               "inputs rounded to TF32: relative L2 %.2e against %.2e predicted by the TF32 model "
               "(fp32 accumulation: %.2e); every element inside the TF32 bound%s",
               c->rel_l2, md[C1D_MODEL_TF32_RNA].rel_l2, md[C1D_MODEL_FP32].rel_l2, race);
    else if (bound == store && store != BOUND_FP32)
      snprintf(out->reason, sizeof out->reason,
               "outputs stored in %s: %.1f%% of them have the low %d mantissa bits zero (oracle: "
               "%.1f%%); errors inside that format's bound%s",
               out->fingerprint, 100.0 * (store == BOUND_BF16_STORE ? out->low16_zero : out->low13_zero),
               store == BOUND_BF16_STORE ? 16 : 13,
               100.0 * (store == BOUND_BF16_STORE ? out->low16_zero_ref : out->low13_zero_ref), race);
    else
      snprintf(out->reason, sizeof out->reason,
               "errors match inputs rounded to bf16: relative L2 %.2e against %.2e predicted%s",
               c->rel_l2, md[C1D_MODEL_BF16_INPUTS].rel_l2, race);
  }
  return 0;
}
