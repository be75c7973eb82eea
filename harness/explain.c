/* The explainer's evidence and its classification of candidates; see explain.h. */
#include "harness/explain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/rows.h"
#include "numerics/activation.h"
#include "numerics/trace.h"
#include "reference/impl.h"

extern const c1d_impl c1d_cpu_naive, c1d_cpu_grouped_naive;

c1d_model_spec c1d_model_spec_of(int model) {
  c1d_model_spec sp = {C1D_ROUND_NONE, C1D_ROUND_NONE, 0, C1D_ROUND_NONE};
  switch (model) {
    case C1D_MODEL_TF32_RNA: sp.x = sp.w = C1D_ROUND_TF32_RNA; break;
    case C1D_MODEL_TF32_TRUNC: sp.x = sp.w = C1D_ROUND_TF32_TRUNC; break;
    case C1D_MODEL_BF16_INPUTS: sp.x = sp.w = C1D_ROUND_BF16; break;
    case C1D_MODEL_TF32_RNE: sp.x = sp.w = C1D_ROUND_TF32_RNE; break;
    case C1D_MODEL_FP16_INPUTS: sp.x = sp.w = C1D_ROUND_FP16; break;
    case C1D_MODEL_TF32_XRNA_WTRUNC: sp.x = C1D_ROUND_TF32_RNA, sp.w = C1D_ROUND_TF32_TRUNC; break;
    case C1D_MODEL_TF32_XTRUNC_WRNA: sp.x = C1D_ROUND_TF32_TRUNC, sp.w = C1D_ROUND_TF32_RNA; break;
    case C1D_MODEL_3XTF32: sp.split3 = 1; break;
    case C1D_MODEL_BF16_PRODUCTS: sp.products = C1D_ROUND_BF16; break;
    case C1D_MODEL_BF16_WEIGHTS: sp.w = C1D_ROUND_BF16; break;
    case C1D_MODEL_PRE_ACT_ROUNDED: sp.pre_act_to_y = 1; break;
    case C1D_MODEL_BF16_SUMS: sp.products = sp.sums = C1D_ROUND_BF16; break;
    default: break;
  }
  return sp;
}

static uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void sample_position(const c1d_shape *s, int64_t i, int64_t *n, int64_t *o, int64_t *t) {
  *t = i % s->L;
  *o = (i / s->L) % s->O;
  *n = i / (s->L * s->O);
}

void c1d_explain_sample_indices(const c1d_shape *s, int64_t count, int64_t *idx) {
  const int64_t total = c1d_y_count(s);
  for (int64_t j = 0; j < count; j++) idx[j] = total == count ? j : (int64_t)(mix((uint64_t)j) % (uint64_t)total);
}

typedef struct visit_key {
  int64_t key, pos;
} visit_key;

static int by_visit_key(const void *a, const void *b) {
  const visit_key *p = a, *q = b;
  return p->key < q->key ? -1 : p->key > q->key ? 1 : (p->pos > q->pos) - (p->pos < q->pos);
}

int c1d_explain_visit_order(const c1d_shape *s, const int64_t *idx, int64_t count, int64_t *visit) {
  if (count == c1d_y_count(s)) { /* every element in (n, o, t) order: x and w already read in turn */
    for (int64_t j = 0; j < count; j++) visit[j] = j;
    return 0;
  }
  visit_key *k = malloc((size_t)(count > 0 ? count : 1) * sizeof *k);
  if (!k) return -1;
  for (int64_t j = 0; j < count; j++) {
    int64_t n, o, t;
    sample_position(s, idx[j], &n, &o, &t);
    k[j] = (visit_key){(n * s->L + t) * s->O + o, j};
  }
  qsort(k, (size_t)count, sizeof *k, by_visit_key);
  for (int64_t j = 0; j < count; j++) visit[j] = k[j].pos;
  free(k);
  return 0;
}

/* Error statistics of values v (packed like the sample) against the packed oracle. */
static int stats_of_packed(const c1d_explainer *ex, const double *v, c1d_error_stats *out) {
  int64_t *ident = malloc((size_t)(ex->sample_count > 0 ? ex->sample_count : 1) * sizeof *ident);
  if (!ident) return -1;
  for (int64_t j = 0; j < ex->sample_count; j++) ident[j] = j;
  const int rc = c1d_error_stats_on_sample(NULL, v, ex->sample_ref, ex->sample_mag, ident,
                                           ex->sample_count, out);
  free(ident);
  return rc;
}

// --- the model arrays, made on first use ----------------------------------------------------------

/* A model on the sample: its prediction (model value - oracle) and its two truncation biases, in one
 * pass over the products. */
static int sample_model(c1d_explainer *ex, int model) {
  if (model < 0 || model >= C1D_MODEL_COUNT) return -1;
  if (ex->sample_bias[model]) return 0;
  double clock = c1d_trace_now();
  const int64_t S = ex->sample_count;
  c1d_model_inputs mi; /* rounded as read: the sample needs no rounded copy of x */
  c1d_model_inputs_view(ex->x, ex->w, ex->st, c1d_model_spec_of(model), &mi);
  double *d = malloc((size_t)(S > 0 ? S : 1) * sizeof *d), *bs = malloc((size_t)(S > 0 ? 2 * S : 1) * sizeof *bs);
  if (!d || !bs) {
    free(d), free(bs);
    return -1;
  }
  const c1d_shape *s = &ex->shape;
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t jv = 0; jv < S; jv++) {
    const int64_t j = ex->visit[jv];
    int64_t n, o, t;
    double v;
    sample_position(s, ex->sample[j], &n, &o, &t);
    c1d_model_eval_at(s, &mi, ex->b, n, o, t, &v, &bs[j], &bs[S + j]);
    d[j] = v - ex->sample_ref[j];
  }
  c1d_model_inputs_free(&mi);
  ex->sample_delta[model] = d;
  ex->sample_bias[model] = bs;
  /* The model's statistics for the reports, now that it exists (d holds value - oracle). */
  double *v = malloc((size_t)(S > 0 ? S : 1) * sizeof *v);
  if (!v) return -1;
  for (int64_t j = 0; j < S; j++) v[j] = ex->sample_ref[j] + d[j];
  const int rc = stats_of_packed(ex, v, &ex->info.stats[model]);
  free(v);
  char stage[96];
  snprintf(stage, sizeof stage, "model on the sample: %s", c1d_model_key(model));
  c1d_trace_stage(stage, &clock);
  return rc;
}

static const double *lazy_sample_delta(void *ctx, int model) {
  c1d_explainer *ex = ctx;
  return sample_model(ex, model) == 0 ? ex->sample_delta[model] : NULL;
}

static const double *lazy_sample_bias(void *ctx, int model) {
  c1d_explainer *ex = ctx;
  return sample_model(ex, model) == 0 ? ex->sample_bias[model] : NULL;
}

static const double *lazy_sample_permuted(void *ctx) {
  c1d_explainer *ex = ctx;
  if (ex->permuted_err) return ex->permuted_err;
  const int64_t S = ex->sample_count;
  double *d = malloc((size_t)(S > 0 ? S : 1) * sizeof *d);
  if (!d) return NULL;
  const c1d_shape *s = &ex->shape;
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t jv = 0; jv < S; jv++) {
    const int64_t j = ex->visit[jv];
    int64_t n, o, t;
    sample_position(s, ex->sample[j], &n, &o, &t);
    d[j] = (double)c1d_permuted_fp32_at(s, ex->x, ex->w, ex->b, ex->st, ex->perm, n, o, t) - ex->sample_ref[j];
  }
  return ex->permuted_err = d;
}

static const double *lazy_sample_sq(void *ctx) {
  c1d_explainer *ex = ctx;
  if (ex->sample_sq) return ex->sample_sq;
  double *d = malloc((size_t)(ex->sample_count > 0 ? ex->sample_count : 1) * sizeof *d);
  if (!d) return NULL;
  const c1d_shape *s = &ex->shape;
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t jv = 0; jv < ex->sample_count; jv++) {
    const int64_t j = ex->visit[jv];
    int64_t n, o, t;
    sample_position(s, ex->sample[j], &n, &o, &t);
    d[j] = c1d_sq_products_at(s, ex->x, ex->w, ex->st, n, o, t);
  }
  return ex->sample_sq = d;
}

/* Tap k's terms of sample position j at j*K + k: the sum over o's group of w[o, c, k] x[n, c, t - (K-1-k)D]. */
static const double *lazy_sample_taps(void *ctx) {
  c1d_explainer *ex = ctx;
  if (ex->sample_taps) return ex->sample_taps;
  const c1d_shape *s = &ex->shape;
  double *d = malloc((size_t)(ex->sample_count > 0 ? ex->sample_count : 1) * (size_t)s->K * sizeof *d);
  if (!d) return NULL;
  const int64_t cg = c1d_cin_per_group(s);
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t jv = 0; jv < ex->sample_count; jv++) {
    const int64_t j = ex->visit[jv];
    int64_t n, o, t;
    sample_position(s, ex->sample[j], &n, &o, &t);
    const int64_t c0 = c1d_group_first_c(s, o);
    for (int64_t k = 0; k < s->K; k++) {
      double z = 0.0;
      for (int64_t c = c0; c < c0 + cg; c++)
        z += (double)ex->w[c1d_w_index(s, o, c, k)] * (double)c1d_x_at(s, ex->x, ex->st, n, c, c1d_source_time(s, t, k));
      d[j * s->K + k] = z;
    }
  }
  return ex->sample_taps = d;
}

/* Counts a pass over every element of kind k that began at `began` (c1d_trace_now) for the run estimate. */
static void count_full_pass(c1d_explainer *ex, c1d_full_pass k, double began) {
  ex->passes.count[k]++;
  ex->passes.ms += 1e3 * (c1d_trace_now() - began);
}

static const float *lazy_full_delta(void *ctx, int model) {
  c1d_explainer *ex = ctx;
  if (model <= C1D_MODEL_FP32 || model >= C1D_MODEL_COUNT) return NULL;
  if (ex->full_delta[model]) return ex->full_delta[model];
  double clock = c1d_trace_now();
  float *d = malloc((size_t)c1d_y_count(&ex->shape) * sizeof *d);
  c1d_model_inputs mi;
  if (!d || c1d_model_inputs_make(&ex->shape, ex->x, ex->w, ex->st, c1d_model_spec_of(model), &mi) != C1D_OK) {
    free(d);
    return NULL;
  }
  const c1d_status st = c1d_model_delta_full(&ex->shape, &mi, ex->b, ex->ref, d);
  c1d_model_inputs_free(&mi);
  if (st != C1D_OK) {
    free(d);
    return NULL;
  }
  char stage[96];
  snprintf(stage, sizeof stage, "model on every element: %s", c1d_model_key(model));
  count_full_pass(ex, C1D_FULL_PASS_MODEL, clock);
  c1d_trace_stage(stage, &clock);
  return ex->full_delta[model] = d;
}

static const float *lazy_full_bias(void *ctx, int model) {
  c1d_explainer *ex = ctx;
  if (model < 0 || model >= C1D_MODEL_COUNT) return NULL;
  if (ex->full_bias[model]) return ex->full_bias[model];
  double clock = c1d_trace_now();
  const int64_t M = c1d_y_count(&ex->shape);
  float *d = malloc((size_t)(2 * M) * sizeof *d);
  c1d_model_inputs mi;
  if (!d || c1d_model_inputs_make(&ex->shape, ex->x, ex->w, ex->st, c1d_model_spec_of(model), &mi) != C1D_OK) {
    free(d);
    return NULL;
  }
  const c1d_status st = c1d_tc_bias_full(&ex->shape, &mi, ex->b, d, d + M);
  c1d_model_inputs_free(&mi);
  if (st != C1D_OK) {
    free(d);
    return NULL;
  }
  char stage[96];
  snprintf(stage, sizeof stage, "truncation bias on every element: %s", c1d_model_key(model));
  count_full_pass(ex, C1D_FULL_PASS_TC_BIAS, clock);
  c1d_trace_stage(stage, &clock);
  return ex->full_bias[model] = d;
}

static const float *lazy_full_sq(void *ctx) {
  c1d_explainer *ex = ctx;
  if (ex->full_sq) return ex->full_sq;
  double clock = c1d_trace_now();
  float *d = malloc((size_t)c1d_y_count(&ex->shape) * sizeof *d);
  if (!d) return NULL;
  if (c1d_sq_products_full(&ex->shape, ex->x, ex->w, ex->st, d) != C1D_OK) {
    free(d);
    return NULL;
  }
  count_full_pass(ex, C1D_FULL_PASS_SQ, clock);
  c1d_trace_stage("squared products on every element", &clock);
  return ex->full_sq = d;
}

static c1d_layout layout_of(const c1d_explainer *ex);

/* The arbitrary order on every element: acc = b, then the terms in perm's order (row kernels), then
 * the activation in float32. */
static int permuted_full(const c1d_explainer *ex, float *out) {
  const c1d_shape *s = &ex->shape;
  const int64_t cg = c1d_cin_per_group(s), pad = c1d_pad(s), T = cg * s->K;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t no = 0; no < s->N * s->O; no++) {
    const int64_t n = no / s->O, o = no % s->O, c0 = c1d_group_first_c(s, o);
    float *acc = out + c1d_y_index(s, n, o, 0);
    c1d_row_fill(acc, s->bias ? ex->b[o] : 0.0f, s->L);
    for (int64_t j = 0; j < T; j++) {
      const int64_t c = c0 + ex->perm[j] / s->K, k = ex->perm[j] % s->K;
      c1d_row_fma_hist(acc, ex->x + c1d_x_index(s, n, c, 0), s->states ? ex->st + c1d_s_index(s, n, c, -pad) : NULL,
                       pad, ex->w[c1d_w_index(s, o, c, k)], -c1d_source_time(s, 0, k), s->L);
    }
    c1d_row_finish(acc, s->act, C1D_DTYPE_F32, s->L);
  }
  return 0;
}

static const c1d_noise_ref *lazy_arbitrary_noise(void *ctx) {
  c1d_explainer *ex = ctx;
  if (ex->arbitrary_ready) return &ex->arbitrary;
  double clock = c1d_trace_now();
  float *out = malloc((size_t)c1d_y_count(&ex->shape) * sizeof *out);
  if (!out) return NULL;
  permuted_full(ex, out);
  const c1d_layout lay = layout_of(ex);
  const int rc = c1d_noise_ref_combine(&lay, ex->ref, ex->mag, ex->naive, &ex->noise, out, &ex->arbitrary);
  free(out);
  if (rc != 0) return NULL;
  ex->arbitrary_ready = 1;
  c1d_trace_stage("an arbitrary order on every element", &clock);
  return &ex->arbitrary;
}

// --- prepare ------------------------------------------------------------------------------------

static c1d_layout layout_of(const c1d_explainer *ex) {
  const c1d_shape *s = &ex->shape;
  c1d_layout lay = {s->N, s->O, s->L, s->K, s->D, c1d_pad(s), ex->terms_t, (int)s->dt.y, ex->act_v, c1d_groups(s),
                    s->bias ? ex->b : NULL};
  return lay;
}

/* The statistics the reports always show: the naive order's, and the TF32 model's (beside every row that
 * may use TF32). The other models' come with their first use. */
static c1d_status model_statistics(c1d_explainer *ex) {
  double *v = malloc((size_t)(ex->sample_count > 0 ? ex->sample_count : 1) * sizeof *v);
  if (!v) return c1d_fail(C1D_ERR_NO_MEMORY, "explainer: cannot allocate model statistics");
  for (int64_t j = 0; j < ex->sample_count; j++) v[j] = ex->sample_ref[j] + ex->naive_err[j];
  const int rc = stats_of_packed(ex, v, &ex->info.stats[C1D_MODEL_FP32]);
  free(v);
  if (rc != 0 || sample_model(ex, C1D_MODEL_TF32_RNA) != 0)
    return c1d_fail(C1D_ERR_NO_MEMORY, "explainer: cannot allocate model statistics");
  return C1D_OK;
}

/* The naive order's output on these inputs, unrounded (float32): the reference noise. The plain problem
 * by cpu/naive.c's row kernels; every other by grouped_naive with y kept in float32. */
static c1d_status naive_realisation(const c1d_explainer *ex, float *out) {
  c1d_exec exec;
  memset(&exec, 0, sizeof exec);
  exec.states = ex->st;
  if (c1d_shape_is_plain(&ex->shape)) return c1d_cpu_naive.run(&ex->shape, ex->x, ex->w, ex->b, out, &exec);
  c1d_shape f32 = ex->shape;
  f32.dt.y = C1D_DTYPE_F32;
  return c1d_cpu_grouped_naive.run(&f32, ex->x, ex->w, ex->b, out, &exec);
}

c1d_status c1d_explainer_prepare_ex(c1d_explainer *ex, const c1d_shape *s, const c1d_explainer_inputs *in) {
  memset(ex, 0, sizeof *ex);
  double clock = c1d_trace_now();
  ex->shape = *s;
  ex->x = in->x, ex->w = in->w, ex->b = in->b, ex->st = in->st;
  ex->ref = in->ref;
  ex->mag = in->mag;
  const double *ref = in->ref;
  const int64_t total = c1d_y_count(s);
  /* Every element when there are few; else a fixed pseudo-random sample (strides could alias with L). */
  const int64_t S = ex->sample_count = total <= C1D_EXPLAIN_SAMPLE ? total : C1D_EXPLAIN_SAMPLE;
  const size_t sb = (size_t)(S > 0 ? S : 1);
  ex->terms_t = malloc((size_t)s->L * sizeof *ex->terms_t);
  ex->sample = malloc(sb * sizeof *ex->sample);
  ex->visit = malloc(sb * sizeof *ex->visit);
  ex->sample_ref = malloc(sb * sizeof *ex->sample_ref);
  ex->sample_mag = malloc(sb * sizeof *ex->sample_mag);
  ex->naive_err = malloc(sb * sizeof *ex->naive_err);
  int32_t *perm = ex->perm = malloc((size_t)c1d_terms(s) * sizeof *perm);
  c1d_status st = C1D_OK;
  if (!ex->terms_t || !ex->sample || !ex->visit || !ex->sample_ref || !ex->sample_mag || !ex->naive_err || !perm) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "explainer: cannot allocate its sample of %lld elements",
                  (long long)S);
    goto done;
  }
  if (s->states && !in->st) {
    st = c1d_fail(C1D_ERR_INVALID_SHAPE, "explainer: the problem has initial states but none were given");
    goto done;
  }
  if (s->act != C1D_ACT_NONE) {
    /* After an activation, an error e of the sum becomes about act'(v) e, and the activation adds its
     * own rounding of y: the noise scales with |act'(v)| m + |y|. */
    if (!in->pre) {
      st = c1d_fail(C1D_ERR_INVALID_SHAPE, "explainer: an activation needs the sum before it (pre)");
      goto done;
    }
    double *m = ex->mag_owned = malloc((size_t)total * sizeof *m);
    float *v = ex->act_v = malloc((size_t)total * sizeof *v);
    if (!m || !v) {
      st = c1d_fail(C1D_ERR_NO_MEMORY, "explainer: cannot allocate the magnitudes after the activation");
      goto done;
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < total; i++) {
      m[i] = fabs(c1d_silu_deriv_f64(in->pre[i])) * in->mag[i] + fabs(ref[i]);
      v[i] = (float)in->pre[i];
    }
    ex->mag = m;
  }
  const double *mag = ex->mag;
  for (int64_t t = 0; t < s->L; t++) ex->terms_t[t] = c1d_terms_at(s, t);
  if (in->naive) {
    ex->naive = (float *)in->naive;
  } else {
    ex->naive = malloc((size_t)total * sizeof *ex->naive);
    ex->naive_owned = 1;
    if (!ex->naive) {
      st = c1d_fail(C1D_ERR_NO_MEMORY, "explainer: cannot allocate the naive order's output");
      goto done;
    }
    if ((st = naive_realisation(ex, ex->naive)) != C1D_OK) goto done;
  }
  c1d_trace_stage("prepare: the naive order on every element", &clock);
  const c1d_layout lay = layout_of(ex);
  if (c1d_noise_ref_build(&lay, ref, mag, ex->naive, &ex->noise) != 0) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "explainer: cannot allocate the reference noise");
    goto done;
  }
  c1d_trace_stage("prepare: the reference noise", &clock);
  c1d_term_permutation(c1d_terms(s), 0x5eed, perm);
  c1d_explain_sample_indices(s, S, ex->sample);
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t j = 0; j < S; j++) {
    const int64_t i = ex->sample[j];
    int64_t n, o, t;
    sample_position(s, i, &n, &o, &t);
    ex->sample_ref[j] = ref[i];
    ex->sample_mag[j] = mag[i];
    ex->naive_err[j] = (double)ex->naive[i] - ref[i];
  }
  if (c1d_explain_visit_order(s, ex->sample, S, ex->visit) != 0) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "explainer: cannot allocate the order of its sample");
    goto done;
  }
  ex->info.count = S;
  ex->info.idx = ex->sample;
  ex->info.naive_err = ex->naive_err;
  c1d_trace_stage("prepare: the sample", &clock);
  st = model_statistics(ex);
  c1d_trace_stage("prepare: the models' statistics", &clock);
done:
  if (st != C1D_OK) c1d_explainer_release(ex);
  return st;
}

c1d_status c1d_explainer_prepare_naive(c1d_explainer *ex, const c1d_shape *s, const float *x,
                                       const float *w, const float *b, const double *ref,
                                       const double *mag, const float *naive) {
  const c1d_explainer_inputs in = {.x = x, .w = w, .b = b, .ref = ref, .mag = mag, .naive = naive};
  return c1d_explainer_prepare_ex(ex, s, &in);
}

c1d_status c1d_explainer_prepare(c1d_explainer *ex, const c1d_shape *s, const float *x, const float *w,
                                 const float *b, const double *ref, const double *mag) {
  return c1d_explainer_prepare_naive(ex, s, x, w, b, ref, mag, NULL);
}

c1d_status c1d_explainer_explain(c1d_explainer *ex, const float *cand, int repeat_checked,
                                 int repeat_identical, c1d_explanation *out) {
  c1d_classifier_input in;
  memset(&in, 0, sizeof in);
  in.layout = layout_of(ex);
  in.cand = cand;
  in.ref = ex->ref;
  in.mag = ex->mag;
  in.noise = &ex->noise;
  in.sample = &ex->info;
  in.models = (c1d_model_provider){ex,           lazy_sample_delta, lazy_sample_bias, lazy_sample_sq,
                                   lazy_full_delta, lazy_full_bias, lazy_full_sq, lazy_sample_permuted,
                                   lazy_arbitrary_noise, lazy_sample_taps};
  in.repeat_checked = repeat_checked;
  in.repeat_identical = repeat_identical;
  in.scratch = &ex->scratch;
  if (c1d_classify(&in, out) != 0)
    return c1d_fail(C1D_ERR_NO_MEMORY, "explainer: cannot allocate classification scratch or a model");
  return C1D_OK;
}

void c1d_explainer_release(c1d_explainer *ex) {
  free(ex->terms_t);
  free(ex->sample);
  free(ex->visit);
  free(ex->sample_ref);
  free(ex->sample_mag);
  free(ex->naive_err);
  free(ex->permuted_err);
  if (ex->naive_owned) free(ex->naive);
  c1d_noise_ref_free(&ex->noise);
  for (int m = 0; m < C1D_MODEL_COUNT; m++) {
    free(ex->sample_delta[m]);
    free(ex->sample_bias[m]);
    free(ex->full_delta[m]);
    free(ex->full_bias[m]);
  }
  free(ex->sample_sq);
  free(ex->sample_taps);
  free(ex->full_sq);
  free(ex->perm);
  free(ex->mag_owned);
  free(ex->act_v);
  if (ex->arbitrary_ready) c1d_noise_ref_free(&ex->arbitrary);
  c1d_classifier_scratch_free(&ex->scratch);
  memset(ex, 0, sizeof *ex);
}

double c1d_explainer_host_bytes(const c1d_shape *s) {
  /* The naive output, sigma and the repeat flags (4 + 4 + 1 bytes), the classification's q^2, marks and
   * signs (4 + 1 + 1, and 1/sigma^2 per 32-element segment; kept between outputs, a second set where a
   * second full pass runs: 6.25 each), and one model's full arrays at a time in practice (prediction and
   * two truncation biases: 12); 35 in all, rounded up. The sample's arrays are small. */
  /* With an activation also the magnitudes after it and the sums before it (8 + 4). */
  return (double)c1d_y_count(s) * (35.0 + (s->act != C1D_ACT_NONE ? 12.0 : 0.0)) + (double)C1D_EXPLAIN_SAMPLE * 8.0 * 24.0;
}
