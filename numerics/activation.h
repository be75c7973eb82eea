/* The activations of the operator (y = act(conv + b)), in float32 with explicit single-rounding
 * operations, so that a GPU kernel and its CPU twin compute the same bits (numerics/arith.h), and in
 * float64 for the oracle. SiLU(v) = v * sigmoid(v) = v / (1 + exp(-v)).
 *
 * exp in float32: k = nearest integer to v / ln 2, r = v - k ln 2 (ln 2 in two parts, by fma), exp(r) by
 * a degree-7 Taylor polynomial in Horner form (|r| <= ln2/2: truncation below 2^-27), times 2^k by its
 * bits (two steps below 2^-126). Within 2 ulp of exp; the same bits on every device. */
#ifndef C1D_ACTIVATION_H
#define C1D_ACTIVATION_H

#include <math.h>
#include <stdint.h>

#include "numerics/arith.h"

#ifdef __cplusplus
extern "C" {
#endif

C1D_HD float c1d_div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

/* 2^k as a float for k in [-126, 127]. */
C1D_HD float c1d_pow2_f32(int k) { return c1d_bits_float((uint32_t)(k + 127) << 23); }

C1D_HD float c1d_exp_f32(float v) {
  if (v != v) return v;
  if (v > 88.72284f) return c1d_bits_float(0x7f800000u);
  if (v < -103.97208f) return 0.0f;
  /* k = round(v * log2(e)) by the 1.5 * 2^23 shift (exact for |v * log2 e| < 2^22). */
  const float shift = 12582912.0f;
  const float kf = c1d_sub(c1d_fma(v, 1.44269504f, shift), shift);
  const float r = c1d_fma(kf, -1.42860677e-06f, c1d_fma(kf, -0.693145752f, v)); /* v - k ln2 */
  float p = 1.98412698e-4f;                /* 1/5040 */
  p = c1d_fma(p, r, 1.38888889e-3f);       /* 1/720 */
  p = c1d_fma(p, r, 8.33333333e-3f);       /* 1/120 */
  p = c1d_fma(p, r, 4.16666667e-2f);       /* 1/24 */
  p = c1d_fma(p, r, 1.66666667e-1f);       /* 1/6 */
  p = c1d_fma(p, r, 0.5f);
  p = c1d_fma(p, r, 1.0f);
  p = c1d_fma(p, r, 1.0f);
  const int k = (int)kf;
  if (k < -126) return c1d_mul(c1d_mul(p, c1d_pow2_f32(k + 64)), c1d_pow2_f32(-64));
  if (k > 127) return c1d_mul(c1d_mul(p, c1d_pow2_f32(k - 1)), 2.0f);
  return c1d_mul(p, c1d_pow2_f32(k));
}

/* SiLU in float32: v / (1 + exp(-v)), each operation rounded once. */
C1D_HD float c1d_silu_f32(float v) { return c1d_div(v, c1d_add(1.0f, c1d_exp_f32(-v))); }

/* SiLU and its derivative in float64 (the oracle and the explainer's propagation of errors). */
static inline double c1d_silu_f64(double v) { return v / (1.0 + exp(-v)); }
static inline double c1d_silu_deriv_f64(double v) {
  const double s = 1.0 / (1.0 + exp(-v));
  return s * (1.0 + v * (1.0 - s));
}

#ifdef __cplusplus
}
#endif
#endif
