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

/* v / d for SiLU's denominator d = 1 + exp(-v) (d >= 1, +inf or NaN), correctly rounded (c1d_div's
 * value) without a division. Why: a GPU's division calls a routine for its rare slow path, and the call
 * makes ptxas spill the vector kernels' registers to local memory. How: d = 1, 2 and +inf are exact
 * cases (every |v| < 2^-25 gives d = 2, so no quotient below is subnormal); beyond 2^64 both operands
 * are scaled by 2^-64 (exact: v <= -44 there). A reciprocal estimate (the GPU's rcp.approx, within an
 * ulp; on the CPU, for tests, RN(1/d) times 1 + estimate_err), one Newton step and one remainder
 * correction put q within an ulp of v / d; the remainder v - d*q is then exact (an FMA), and so is d
 * times half the gap to q's neighbour on the remainder's side: comparing the two picks the nearest,
 * ties to even. Checked on every 61st float v with estimates up to 2^-12 off (test_numerics) and on
 * every float v against the GPU's own division (test_gpu_dw). */
C1D_HD float c1d_silu_quotient(float v, float d, float estimate_err) {
  if (!(d > 1.0f && d < 18446744073709551616.0f && d != 2.0f)) { /* rare: one test on the common path */
    if (d == 1.0f) return v;
    if (d == 2.0f) return c1d_mul(v, 0.5f);
    if (d == INFINITY) return c1d_mul(v, 0.0f); /* a zero of v's sign; NaN for v = -inf */
    if (d >= 18446744073709551616.0f) {         /* 2^64 */
      v = c1d_mul(v, 5.42101086242752217e-20f); /* 2^-64 */
      d = c1d_mul(d, 5.42101086242752217e-20f);
    }
  }
#if defined(__CUDA_ARCH__)
  float r0;
  (void)estimate_err;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r0) : "f"(d));
#else
  const float r0 = c1d_mul(c1d_div(1.0f, d), c1d_add(1.0f, estimate_err));
#endif
  const float r = c1d_fma(r0, c1d_fma(-d, r0, 1.0f), r0);
  float q = c1d_mul(v, r);
  q = c1d_fma(c1d_fma(-d, q, v), r, q);
  const float rem = c1d_fma(-d, q, v); /* exact: v - d*q, whose sign says on which side v / d lies */
  /* the neighbour of q on that side (q has v's sign and |q| >= 2^-122); rem = 0 or NaN keeps q */
  const uint32_t qb = c1d_float_bits(q);
  const float qn = c1d_bits_float((rem > 0.0f) == (q > 0.0f) ? qb + 1u : qb - 1u);
  const float gap_d = c1d_mul(fabsf(c1d_sub(qn, q)), d), rem2 = c1d_mul(fabsf(rem), 2.0f); /* both exact */
  return rem2 > gap_d || (rem2 == gap_d && (c1d_float_bits(qn) & 1u) == 0) ? qn : q;
}

/* SiLU in float32: v / (1 + exp(-v)), each operation rounded once (on the GPU the division is
 * c1d_silu_quotient's: the same bits, no call). */
C1D_HD float c1d_silu_f32(float v) {
  const float d = c1d_add(1.0f, c1d_exp_f32(-v));
#if defined(__CUDA_ARCH__)
  return c1d_silu_quotient(v, d, 0.0f);
#else
  return c1d_div(v, d);
#endif
}

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
