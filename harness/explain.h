/* The explainer's harness side: for one set of inputs, the evidence that the classifier
 * (numerics/classifier.h) weighs, then a verdict for any number of candidate outputs.
 *
 * prepare computes, on the very inputs of the run: the naive order's float32 output on every element
 * (the reference noise, numerics/noise.h; or takes it from the caller, e.g. gpu_naive's output, which is
 * bit-identical), a fixed sample of elements with the naive and an arbitrary order's errors and the
 * TF32, truncated TF32 and bf16 models' predictions there. Every other model array (on the sample or on
 * every element: a model's prediction, the tensor-core truncation bias, the squared products) is
 * computed the first time a candidate needs it and kept for the next candidates. */
#ifndef C1D_EXPLAIN_H
#define C1D_EXPLAIN_H

#include "numerics/classifier.h"
#include "numerics/noise.h"
#include "reference/models.h"
#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Elements of the sample: enough for stable medians, small enough to be quick. */
#define C1D_EXPLAIN_SAMPLE 65536

/* The passes over every element that an analysis makes on first use (a model's values, its truncation
 * biases, the squared products), by kind. At tens of millions of outputs each costs as much as the rest
 * of a row's analysis or more (a truncation bias 1.3 s at 67 M outputs on the H100's host), so the run
 * estimate counts them apart (estimate.c). */
typedef enum c1d_full_pass {
  C1D_FULL_PASS_MODEL,
  C1D_FULL_PASS_TC_BIAS,
  C1D_FULL_PASS_SQ,
  C1D_FULL_PASS_KINDS
} c1d_full_pass;

typedef struct c1d_full_passes {
  int count[C1D_FULL_PASS_KINDS]; /* made so far, by kind */
  double ms;                      /* their wall time, all kinds */
} c1d_full_passes;

typedef struct c1d_explainer {
  c1d_shape shape;
  const float *x, *w, *b, *st;  /* borrowed until release: lazy models read them */
  const double *ref, *mag;      /* borrowed: the oracle and magnitudes (mag is mag_owned after SiLU) */
  double *mag_owned;            /* owned with an activation: |act'(v)| m + |y| */
  float *act_v;                 /* owned with an activation: the exact sum v before it */
  int64_t *terms_t;             /* owned: terms per position */
  float *naive;                 /* the naive order's output (owned when naive_owned) */
  int naive_owned;
  c1d_noise_ref noise;
  int64_t *sample;              /* owned: sampled flat indices */
  int64_t *visit;               /* owned: the sample's positions in the per-element passes' order */
  int64_t sample_count;
  double *sample_ref, *sample_mag; /* the oracle and m at the sample, packed */
  double *naive_err, *permuted_err;
  c1d_model_sample info;
  /* Model arrays made on first use (NULL until then). */
  double *sample_delta[C1D_MODEL_COUNT], *sample_bias[C1D_MODEL_COUNT], *sample_sq;
  double *sample_taps; /* each tap's terms on the sample (K per position), made on first use */
  float *full_delta[C1D_MODEL_COUNT], *full_bias[C1D_MODEL_COUNT], *full_sq;
  int32_t *perm;                /* owned: the arbitrary order of the (C/G)*K terms */
  int arbitrary_ready;          /* arbitrary holds the combined reference */
  c1d_noise_ref arbitrary;
  c1d_classifier_scratch scratch; /* the full passes' element arrays, kept from one output to the next */
  c1d_full_passes passes;       /* the lazy passes over every element made so far */
} c1d_explainer;

/* Everything prepare reads, borrowed until release: the inputs (st: the initial states, NULL without),
 * the oracle's y and m, its sum before the activation (pre; needed with one), and the naive order's
 * float32 output (NULL to compute it here). */
typedef struct c1d_explainer_inputs {
  const float *x, *w, *b, *st;
  const double *ref, *mag, *pre;
  const float *naive;
} c1d_explainer_inputs;

/* The flat indices of a sample of `count` outputs of s: every one in order when count is N*O*L, else a
 * fixed pseudo-random choice (splitmix64 of the position; strides could alias with L). The explainer's
 * sample (count C1D_EXPLAIN_SAMPLE), the estimate's timing of it and the flag check's screen take it. */
void c1d_explain_sample_indices(const c1d_shape *s, int64_t count, int64_t *idx);

/* The positions 0..count-1 of the sampled flat indices idx, ordered by (n, t, o): the order in which
 * the passes that compute one value per element of the sample (the models, the permuted order, the
 * squared products) visit them, so that neighbours read the same lines of x. In the sample's own random
 * order each element missed the caches, and the models on it cost 2-4 times as much. Each value is
 * stored at its position: the order changes no result. Every element (count = N*O*L, idx in order)
 * keeps its order. -1 when out of memory. */
int c1d_explain_visit_order(const c1d_shape *s, const int64_t *idx, int64_t count, int64_t *visit);

/* Prepares the evidence for any problem (groups, states, SiLU, element types). C1D_ERR_NO_MEMORY, or
 * C1D_ERR_INVALID_SHAPE when the problem needs states or pre and they are missing (nothing to release
 * then). */
c1d_status c1d_explainer_prepare_ex(c1d_explainer *ex, const c1d_shape *s, const c1d_explainer_inputs *in);

/* Prepares the evidence for inputs x, w, b (host arrays, borrowed with ref and mag until release).
 * naive: the naive order's float32 output on these inputs, borrowed, or NULL to compute it here.
 * Returns C1D_ERR_NO_MEMORY on allocation failure (nothing to release then). */
c1d_status c1d_explainer_prepare_naive(c1d_explainer *ex, const c1d_shape *s, const float *x,
                                       const float *w, const float *b, const double *ref,
                                       const double *mag, const float *naive);

/* The same, computing the naive order's output here. */
c1d_status c1d_explainer_prepare(c1d_explainer *ex, const c1d_shape *s, const float *x, const float *w,
                                 const float *b, const double *ref, const double *mag);

/* Classifies one candidate output. repeat_checked/identical: whether two runs were compared and
 * gave identical bits (pass 0, 0 when unknown). May compute and keep model arrays. */
c1d_status c1d_explainer_explain(c1d_explainer *ex, const float *cand, int repeat_checked,
                                 int repeat_identical, c1d_explanation *out);

/* Frees what prepare and explain allocated; a zeroed or released explainer is fine. */
void c1d_explainer_release(c1d_explainer *ex);

/* Host bytes an explainer for shape s holds at most (its own arrays, every lazy model included). */
double c1d_explainer_host_bytes(const c1d_shape *s);

/* The rounding of inputs a model stands for (reference/models.h). */
c1d_model_spec c1d_model_spec_of(int model);

#ifdef __cplusplus
}
#endif
#endif
