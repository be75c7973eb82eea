/* The explainer's harness side: for one set of inputs, evaluates the rounding models (fp32 naive order,
 * TF32 round-to-nearest and truncated inputs, bf16 inputs) on a fixed sample of output elements, then
 * classifies any number of candidate outputs against the oracle (numerics/classifier.h). */
#ifndef C1D_EXPLAIN_H
#define C1D_EXPLAIN_H

#include "numerics/classifier.h"
#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Elements evaluated per model: enough for stable medians, small enough to be quick. */
#define C1D_EXPLAIN_SAMPLE 65536

typedef struct c1d_explainer {
  c1d_shape shape;
  const double *ref, *mag;      /* borrowed: the oracle and magnitudes */
  int64_t *terms_t;             /* owned: terms per position */
  int64_t *sample;              /* owned: sampled flat indices */
  int64_t sample_count;
  c1d_error_stats models[C1D_MODEL_COUNT];
} c1d_explainer;

/* Evaluates the models on the sample. The inputs are host arrays; ref and mag are borrowed until
 * c1d_explainer_release. Returns C1D_ERR_NO_MEMORY on allocation failure (nothing to release then). */
c1d_status c1d_explainer_prepare(c1d_explainer *ex, const c1d_shape *s, const float *x, const float *w,
                                 const float *b, const double *ref, const double *mag);

/* Classifies one candidate output. repeat_checked/identical: whether two runs were compared and
 * gave identical bits (pass 0, 0 when unknown). */
c1d_status c1d_explainer_explain(const c1d_explainer *ex, const float *cand, int repeat_checked,
                                 int repeat_identical, c1d_explanation *out);

/* Frees what prepare allocated; a zeroed or released explainer is fine. */
void c1d_explainer_release(c1d_explainer *ex);

/* One output element under a model (C1D_MODEL_*): inputs rounded as the model says, then the naive
 * order in float32. Exposed for tests. */
float c1d_model_element(const c1d_shape *s, const float *x, const float *w, const float *b, int model,
                        int64_t n, int64_t o, int64_t t);

#ifdef __cplusplus
}
#endif
#endif
