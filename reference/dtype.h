/* The element types of tensors (reference/problem.h's c1d_dtype): their names, sizes, and conversions
 * between their bits and the float32 values they represent. Host and device, no I/O. */
#ifndef C1D_DTYPE_H
#define C1D_DTYPE_H

#include <stdint.h>

#include "numerics/arith.h"
#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "f32", "bf16", "f16"; "?" otherwise. */
const char *c1d_dtype_name(c1d_dtype d);

/* "f32" / "fp32" / "float32", "bf16" / "bfloat16", "f16" / "fp16" / "float16": C1D_OK or C1D_ERR_USAGE
 * naming the text. */
c1d_status c1d_dtype_parse(const char *text, c1d_dtype *out);

/* Bytes per element: 4 or 2. */
int c1d_dtype_size(c1d_dtype d);

/* v rounded to nearest-even in type d (float32 returned as is). */
C1D_HD float c1d_round_to_dtype(c1d_dtype d, float v) {
  return d == C1D_DTYPE_BF16 ? c1d_round_bf16(v) : d == C1D_DTYPE_F16 ? c1d_round_fp16(v) : v;
}

/* The float32 value of bf16 bits (exact). */
C1D_HD float c1d_bf16_bits_to_float(uint16_t h) { return c1d_bits_float((uint32_t)h << 16); }

/* The float32 value of IEEE fp16 bits (exact: subnormals, Inf and NaN included). */
C1D_HD float c1d_f16_bits_to_float(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1f) return c1d_bits_float(sign | 0x7f800000u | (man << 13)); /* Inf, NaN */
  if (exp != 0) return c1d_bits_float(sign | ((exp + 112u) << 23) | (man << 13));
  /* Subnormal: man * 2^-24, exact in float32. */
  const float v = (float)man * 0x1p-24f;
  return c1d_bits_float(sign | c1d_float_bits(v));
}

/* The bits of f rounded to nearest-even in bf16 / fp16 (c1d_round_bf16, c1d_round_fp16: the same value). */
C1D_HD uint16_t c1d_float_to_bf16_bits(float f) { return (uint16_t)(c1d_float_bits(c1d_round_bf16(f)) >> 16); }
C1D_HD uint16_t c1d_float_to_f16_bits(float f) {
  const float r = c1d_round_fp16(f);
  const uint32_t u = c1d_float_bits(r), sign = (u >> 16) & 0x8000u;
  const uint32_t mag = u & 0x7fffffffu;
  if (mag >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0u));
  if (mag >= 0x38800000u) /* normal fp16: exponent 2^-14 and up */
    return (uint16_t)(sign | (((mag >> 23) - 112u) << 10) | ((mag >> 13) & 0x3ffu));
  /* Subnormal: |r| is a multiple of 2^-24 below 2^-14, so |r| * 2^24 is an exact integer below 1024. */
  return (uint16_t)(sign | (uint32_t)c1d_mul(c1d_bits_float(mag), 0x1p24f));
}

/* 1 when every one of the n values is representable in d. */
int c1d_dtype_holds(c1d_dtype d, const float *v, int64_t n);

#ifdef __cplusplus
}
#endif
#endif
