/* Two float32 values rounded to nearest even in bf16 or fp16 and packed (a in the low half, b in the
 * high one) by the hardware's paired conversion: one F2FP instruction for two values, where the integer
 * rounding of numerics/arith.h costs four or more per value. For every float that is not a NaN the bits
 * are c1d_float_to_bf16_bits' and c1d_float_to_f16_bits' (subnormals kept, RNE overflow to Inf); a NaN
 * comes out canonical where the reference keeps its payload, so callers send NaNs the reference's way.
 * gpu/float_checks.cu checks all 2^32 inputs on the device (test_gpu_dw). */
#ifndef C1D_PACK_ROUND_H
#define C1D_PACK_ROUND_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <string.h>

static __device__ __forceinline__ uint32_t c1d_pack2_bf16_rn(float a, float b) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  uint32_t bits;
  memcpy(&bits, &h, sizeof bits);
  return bits;
}

static __device__ __forceinline__ uint32_t c1d_pack2_f16_rn(float a, float b) {
  const __half2 h = __floats2half2_rn(a, b);
  uint32_t bits;
  memcpy(&bits, &h, sizeof bits);
  return bits;
}

#endif
