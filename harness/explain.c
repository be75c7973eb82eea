/* Model statistics on a sample, and classification of candidates; see explain.h. */
#include "harness/explain.h"

#include <stdlib.h>
#include <string.h>

#include "numerics/arith.h"

static float round_input(int model, float v) {
  switch (model) {
    case C1D_MODEL_TF32_RNA: return c1d_round_tf32_rna(v);
    case C1D_MODEL_TF32_TRUNC: return c1d_round_tf32_trunc(v);
    case C1D_MODEL_BF16_INPUTS: return c1d_round_bf16(v);
    default: return v;
  }
}

float c1d_model_element(const c1d_shape *s, const float *x, const float *w, const float *b, int model,
                        int64_t n, int64_t o, int64_t t) {
  float acc = s->bias ? b[o] : 0.0f;
  for (int64_t c = 0; c < s->C; c++)
    for (int64_t k = 0; k < s->K; k++) {
      const int64_t src = c1d_source_time(s, t, k);
      const float xv = src >= 0 ? round_input(model, x[c1d_x_index(s, n, c, src)]) : 0.0f;
      acc = c1d_fma(xv, round_input(model, w[c1d_w_index(s, o, c, k)]), acc);
    }
  return acc;
}

static uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

c1d_status c1d_explainer_prepare(c1d_explainer *ex, const c1d_shape *s, const float *x, const float *w,
                                 const float *b, const double *ref, const double *mag) {
  memset(ex, 0, sizeof *ex);
  ex->shape = *s;
  ex->ref = ref;
  ex->mag = mag;
  const int64_t total = c1d_y_count(s);
  /* Every element when there are few; else a fixed pseudo-random sample (strides could alias with L). */
  ex->sample_count = total <= C1D_EXPLAIN_SAMPLE ? total : C1D_EXPLAIN_SAMPLE;
  ex->terms_t = malloc((size_t)s->L * sizeof *ex->terms_t);
  ex->sample = malloc((size_t)ex->sample_count * sizeof *ex->sample);
  /* The sampled oracle values, magnitudes and model outputs, packed so that position j is sample j. */
  const int64_t S = ex->sample_count;
  double *model_y = malloc((size_t)S * sizeof *model_y), *ref_s = malloc((size_t)S * sizeof *ref_s),
         *mag_s = malloc((size_t)S * sizeof *mag_s);
  int64_t *ident = malloc((size_t)S * sizeof *ident);
  c1d_status st = C1D_OK;
  if (!ex->terms_t || !ex->sample || !model_y || !ref_s || !mag_s || !ident) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "explainer: cannot allocate its sample of %lld elements",
                  (long long)S);
    goto done;
  }
  for (int64_t t = 0; t < s->L; t++) ex->terms_t[t] = c1d_terms_at(s, t);
  for (int64_t j = 0; j < S; j++) {
    ex->sample[j] = total == S ? j : (int64_t)(mix((uint64_t)j) % (uint64_t)total);
    ref_s[j] = ref[ex->sample[j]];
    mag_s[j] = mag[ex->sample[j]];
    ident[j] = j;
  }
  for (int model = 0; model < C1D_MODEL_COUNT; model++) {
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t j = 0; j < S; j++) {
      const int64_t i = ex->sample[j];
      const int64_t t = i % s->L, o = (i / s->L) % s->O, n = i / (s->L * s->O);
      model_y[j] = c1d_model_element(s, x, w, b, model, n, o, t);
    }
    if (c1d_error_stats_on_sample(NULL, model_y, ref_s, mag_s, ident, S, &ex->models[model]) != 0) {
      st = c1d_fail(C1D_ERR_NO_MEMORY, "explainer: cannot allocate model statistics");
      goto done;
    }
  }
done:
  free(model_y);
  free(ref_s);
  free(mag_s);
  free(ident);
  if (st != C1D_OK) c1d_explainer_release(ex);
  return st;
}

c1d_status c1d_explainer_explain(const c1d_explainer *ex, const float *cand, int repeat_checked,
                                 int repeat_identical, c1d_explanation *out) {
  c1d_classifier_input in;
  memset(&in, 0, sizeof in);
  in.layout.N = ex->shape.N;
  in.layout.O = ex->shape.O;
  in.layout.L = ex->shape.L;
  in.layout.pad = c1d_pad(&ex->shape);
  in.layout.terms_t = ex->terms_t;
  in.cand = cand;
  in.ref = ex->ref;
  in.mag = ex->mag;
  memcpy(in.models, ex->models, sizeof in.models);
  in.repeat_checked = repeat_checked;
  in.repeat_identical = repeat_identical;
  if (c1d_error_stats_on_sample(cand, NULL, ex->ref, ex->mag, ex->sample, ex->sample_count,
                                &in.cand_stats) != 0 ||
      c1d_classify(&in, out) != 0)
    return c1d_fail(C1D_ERR_NO_MEMORY, "explainer: cannot allocate classification scratch");
  return C1D_OK;
}

void c1d_explainer_release(c1d_explainer *ex) {
  free(ex->terms_t);
  free(ex->sample);
  ex->terms_t = NULL;
  ex->sample = NULL;
  ex->sample_count = 0;
}
