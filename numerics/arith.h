/* The arithmetic that GPU kernels and their CPU twins share. Every multiply, add and fma is an explicit
 * call that rounds once to nearest-even (nvcc: __fmaf_rn/__fadd_rn/__fmul_rn, which it never contracts;
 * gcc: fmaf and plain operators under -ffp-contract=off), so both sides perform the same operations.
 *
 * Also here: the error-free transformations (TwoSum, FastTwoSum, TwoProd), the Kahan and Neumaier steps,
 * and rounding of float32 to TF32, bf16 and fp16 (returned as float32). Host and device, no I/O. */
#ifndef C1D_ARITH_H
#define C1D_ARITH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "numerics/hd.h"

#ifdef __cplusplus
extern "C" {
#endif

// --- explicit single-rounding operations -------------------------------------------------------

C1D_HD float c1d_fma(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return fmaf(a, b, c);
#endif
}

C1D_HD float c1d_add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

C1D_HD float c1d_sub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

C1D_HD float c1d_mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

// --- bit access ---------------------------------------------------------------------------------

C1D_HD uint32_t c1d_float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}

C1D_HD float c1d_bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}

C1D_HD int c1d_bits_is_nan(uint32_t u) { return (u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu); }

// --- error-free transformations and compensated steps ------------------------------------------

/* s + e == a + b exactly (Knuth's TwoSum, 6 operations, no condition on a and b). */
C1D_HD void c1d_two_sum(float a, float b, float *s, float *e) {
  float sum = c1d_add(a, b);
  float bp = c1d_sub(sum, a);
  float ap = c1d_sub(sum, bp);
  *s = sum;
  *e = c1d_add(c1d_sub(a, ap), c1d_sub(b, bp));
}

/* s + e == a + b exactly, provided |a| >= |b| or a == 0 (Dekker's FastTwoSum, 3 operations). */
C1D_HD void c1d_fast_two_sum(float a, float b, float *s, float *e) {
  float sum = c1d_add(a, b);
  *s = sum;
  *e = c1d_sub(b, c1d_sub(sum, a));
}

/* p + e == a * b exactly (barring underflow), the error taken by one fma. */
C1D_HD void c1d_two_prod(float a, float b, float *p, float *e) {
  float prod = c1d_mul(a, b);
  *p = prod;
  *e = c1d_fma(a, b, -prod);
}

/* One step of Kahan's compensated summation: adds v to *sum, carrying the lost low part in *comp. */
C1D_HD void c1d_kahan_step(float *sum, float *comp, float v) {
  float y = c1d_sub(v, *comp);
  float t = c1d_add(*sum, y);
  *comp = c1d_sub(c1d_sub(t, *sum), y);
  *sum = t;
}

/* One step of Neumaier's variant (Kahan-Babuska): also exact when |v| > |sum|; result is sum + comp. */
C1D_HD void c1d_neumaier_step(float *sum, float *comp, float v) {
  float t = c1d_add(*sum, v);
  if (fabsf(*sum) >= fabsf(v))
    *comp = c1d_add(*comp, c1d_add(c1d_sub(*sum, t), v));
  else
    *comp = c1d_add(*comp, c1d_add(c1d_sub(v, t), *sum));
  *sum = t;
}

// --- rounding to narrower formats, returned as float32 ------------------------------------------

/* TF32 (10 mantissa bits) rounding to nearest, ties away from zero: what cvt.rna.tf32.f32 does.
 * Overflow past the largest TF32 value gives Inf; NaN stays NaN; subnormals round like normals. */
C1D_HD float c1d_round_tf32_rna(float f) {
  uint32_t u = c1d_float_bits(f);
  if ((u & 0x7f800000u) == 0x7f800000u) return f; /* Inf, NaN */
  u = (u + 0x1000u) & 0xffffe000u;                /* half an ulp of TF32 onto the magnitude */
  return c1d_bits_float(u);
}

/* TF32 by dropping the 13 low mantissa bits (round toward zero). NaN stays NaN. */
C1D_HD float c1d_round_tf32_trunc(float f) {
  uint32_t u = c1d_float_bits(f);
  if (c1d_bits_is_nan(u)) return c1d_bits_float(u | 0x00400000u);
  return c1d_bits_float(u & 0xffffe000u);
}

/* bf16 (8 exponent, 7 mantissa bits) round to nearest even. Overflow gives Inf; NaN stays NaN. */
C1D_HD float c1d_round_bf16(float f) {
  uint32_t u = c1d_float_bits(f);
  if (c1d_bits_is_nan(u)) return c1d_bits_float((u | 0x00400000u) & 0xffff0000u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return c1d_bits_float(u & 0xffff0000u);
}

/* IEEE fp16 (5 exponent, 10 mantissa bits) round to nearest even: Inf from 65520 up (the tie between
 * 65504 and 65536 goes to the even 65536, which overflows), subnormal steps of 2^-24 below 2^-14. */
C1D_HD float c1d_round_fp16(float f) {
  uint32_t u = c1d_float_bits(f);
  if (c1d_bits_is_nan(u)) return c1d_bits_float(u | 0x00400000u);
  uint32_t sign = u & 0x80000000u, mag = u & 0x7fffffffu;
  if (mag >= 0x477ff000u) return c1d_bits_float(sign | 0x7f800000u); /* >= 65520 */
  if (mag < 0x38800000u) {                                           /* < 2^-14: subnormal fp16 */
    /* Adding and removing 0.5 rounds to a multiple of ulp(0.5) = 2^-24, ties to even. */
    float r = c1d_sub(c1d_add(c1d_bits_float(mag), 0.5f), 0.5f);
    return c1d_bits_float(sign | c1d_float_bits(r));
  }
  mag += 0x0fffu + ((mag >> 13) & 1u);
  return c1d_bits_float(sign | (mag & 0xffffe000u));
}

/* The TF32 split of 3xTF32 (CUTLASS example 27): big = tf32(f), small = tf32(f - big). */
C1D_HD void c1d_split_tf32(float f, float *big, float *small) {
  float hi = c1d_round_tf32_rna(f);
  *big = hi;
  *small = c1d_round_tf32_rna(c1d_sub(f, hi));
}

#ifdef __cplusplus
}
#endif
#endif
