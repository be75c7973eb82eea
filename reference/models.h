/* The explainer's rounding models of the operator, evaluated on the very inputs of a run:
 *  - deterministic predictions: the operator on inputs rounded as a model says (TF32 round-to-nearest
 *    away or even, truncated, bf16, fp16; x and w each their own way) or on 3xTF32 split products, with
 *    exact products summed in float64. An implementation that rounds its inputs that way differs from
 *    the prediction only by its own accumulation error (float32 rounding in its order);
 *  - the expected truncation bias of tensor-core accumulation: tensor cores add a step of 8 exact products
 *    to the float32 accumulator and truncate the sum (Fasi et al., "Numerical behavior of NVIDIA tensor
 *    cores", 2021), so their error is biased toward zero by about half an ulp of the running sum per step;
 *    the model sums -ulp32(S)/2 * sign(S) over the steps of the naive order (c outer, k inner);
 *  - the sum of squared products (for an allowance of per-product errors), and the float32 sum in a
 *    pseudo-random order of the terms (what an arbitrary order does on these inputs).
 * Each comes as a full-output pass (OpenMP) and as a one-element function (for the explainer's sample). */
#ifndef C1D_MODELS_H
#define C1D_MODELS_H

#include <stdint.h>

#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum c1d_rounding {
  C1D_ROUND_NONE,
  C1D_ROUND_TF32_RNA,   /* 10 mantissa bits, ties away from zero (cvt.rna.tf32.f32; cuDNN) */
  C1D_ROUND_TF32_RNE,   /* 10 mantissa bits, ties to even (cuBLAS), no exponent limit */
  C1D_ROUND_TF32_TRUNC, /* 10 mantissa bits, low bits dropped (fp32 registers fed to tensor cores) */
  C1D_ROUND_BF16,       /* bf16, ties to even */
  C1D_ROUND_FP16,       /* IEEE fp16, ties to even, with its range */
  C1D_ROUND_COUNT
} c1d_rounding;

/* v rounded as r says, returned as float32. */
float c1d_round_as(c1d_rounding r, float v);

/* How one model treats the inputs: each operand rounded its own way, or (split3) every product taken
 * as 3xTF32 does, big*big + big*small + small*big with big = tf32_rna(v), small = tf32_rna(v - big). */
typedef struct c1d_model_spec {
  c1d_rounding x, w;
  int split3;
  c1d_rounding products; /* each product rounded so before the sum (bf16 products: vLLM issue 52887) */
  int pre_act_to_y;      /* the sum rounded to y's type before the activation: a result rounded twice */
  c1d_rounding sums;     /* each running sum rounded so, from the bias, terms in order (bf16 sums) */
} c1d_model_spec;

/* The inputs as a model sees them: x, the initial states st and w rounded (x1, s1, w1), or split (x1,
 * s1, w1 big parts; x2, s2, w2 small). The bias is never rounded. */
typedef struct c1d_model_inputs {
  c1d_model_spec spec;
  float *x1, *s1, *w1, *x2, *s2, *w2; /* owned; s* only with states, *2 only with split3 */
  int on_read; /* a view (c1d_model_inputs_view): x1, s1, w1 are the unrounded inputs, rounded (or split) as
                  each value is read; nothing owned */
} c1d_model_inputs;

/* Makes the rounded (or split) copies (st NULL without states). C1D_ERR_NO_MEMORY when they cannot be
 * allocated (nothing to free then). */
c1d_status c1d_model_inputs_make(const c1d_shape *s, const float *x, const float *w, const float *st,
                                 c1d_model_spec spec, c1d_model_inputs *out);
void c1d_model_inputs_free(c1d_model_inputs *mi);

/* The same inputs as a view that rounds each value as c1d_model_eval_at reads it: for a few elements
 * (the explainer's sample) no copy of x is made. Not for the full-output functions. */
void c1d_model_inputs_view(const float *x, const float *w, const float *st, c1d_model_spec spec,
                           c1d_model_inputs *out);

/* delta = (the model's exact value: act(b + exact sum of its products), in float64) - ref, for every
 * output, as float. C1D_ERR_NO_MEMORY when the oracle's scratch cannot be allocated. */
c1d_status c1d_model_delta_full(const c1d_shape *s, const c1d_model_inputs *mi, const float *b,
                                const double *ref, float *delta);

/* Products per tensor-core step of the truncation model. */
#define C1D_TC_STEP 8

/* One output under the model: its exact float64 value, and the expected truncation bias of
 * tensor-core accumulation of its products in two groupings that kernels differ in at the left edge
 * (measured on the H200: convlab's gpu_tf32 steps through the padding taps, cuDNN and Triton skip
 * them): beta_pad groups every term, causal padding included, 8 at a time (a step of padding alone adds
 * nothing); beta_live groups only the terms that read a value. In the interior the two are equal. With
 * an activation the biases are carried through its derivative at the sum. */
void c1d_model_eval_at(const c1d_shape *s, const c1d_model_inputs *mi, const float *b, int64_t n,
                       int64_t o, int64_t t, double *value, double *beta_pad, double *beta_live);

/* The truncation biases of every output (floats, N*O*L each). */
c1d_status c1d_tc_bias_full(const c1d_shape *s, const c1d_model_inputs *mi, const float *b,
                            float *beta_pad, float *beta_live);

/* sum over the terms of (w*x)^2 (float64 sums, stored as float); st NULL without states. */
c1d_status c1d_sq_products_full(const c1d_shape *s, const float *x, const float *w, const float *st, float *sq);
double c1d_sq_products_at(const c1d_shape *s, const float *x, const float *w, const float *st, int64_t n,
                          int64_t o, int64_t t);

/* A pseudo-random permutation of 0..count-1 from seed (Fisher-Yates on SplitMix64). */
void c1d_term_permutation(int64_t count, uint64_t seed, int32_t *perm);

/* One output in float32 with acc = b[o] (or 0), then fma over the (C/G)*K terms of o's group in the
 * order perm gives (term j is the group's channel j / K, tap j % K), then the activation in float32:
 * what an arbitrary summation order does on these inputs (no rounding to y's type). */
float c1d_permuted_fp32_at(const c1d_shape *s, const float *x, const float *w, const float *b, const float *st,
                           const int32_t *perm, int64_t n, int64_t o, int64_t t);

#ifdef __cplusplus
}
#endif
#endif
