/* What the grouped and depthwise kernels share (gpu_dw_naive, gpu_grouped, gpu_dw_fast, the GPU zoo's
 * low-precision mutants): tensors read and written in their own element types (reference/impl.h: with
 * C1D_CAP_DTYPES a kernel gets packed bf16/fp16 arrays), the index of x, s and y in either memory order,
 * and one output of the operator in grouped_naive's order:
 *   acc = b[o] (or +0); for c over o's group, for k = 0..K-1: acc = fma(xs, w[o, c - g0, k], acc),
 *   xs the input, or before t = 0 the initial state (or +0, the fma still performed);
 *   then SiLU (numerics/activation.h) and one rounding to y's type (reference/dtype.h).
 * Every operation is the CPU twin's (cpu/grouped_naive.c): the same explicit single-rounding calls, so
 * the bits agree. Conversions from bf16/fp16 are exact. CUDA C++ only. */
#ifndef C1D_GPU_GROUPED_ELEMENT_H
#define C1D_GPU_GROUPED_ELEMENT_H

#include <stdint.h>

#include "numerics/activation.h"
#include "numerics/arith.h"
#include "reference/dtype.h"
#include "reference/problem.h"

/* Element i of a tensor of type d, as the float32 value it holds. */
static __device__ __forceinline__ float c1d_load_typed(const void *p, c1d_dtype d, int64_t i) {
  if (d == C1D_DTYPE_F32) return ((const float *)p)[i];
  const uint16_t h = ((const uint16_t *)p)[i];
  return d == C1D_DTYPE_BF16 ? c1d_bf16_bits_to_float(h) : c1d_f16_bits_to_float(h);
}

/* Element i of a tensor of type d := v rounded to nearest-even in d (the contract's one rounding). */
static __device__ __forceinline__ void c1d_store_typed(void *p, c1d_dtype d, int64_t i, float v) {
  if (d == C1D_DTYPE_F32)
    ((float *)p)[i] = v;
  else
    ((uint16_t *)p)[i] = d == C1D_DTYPE_BF16 ? c1d_float_to_bf16_bits(v) : c1d_float_to_f16_bits(v);
}

/* Where x[n, c, t], s[n, c, t < 0] and y[n, o, t] live in (N, C, L) or channel-last memory. */
static __device__ __forceinline__ int64_t c1d_x_at_layout(const c1d_shape &s, bool nlc, int64_t n, int64_t c,
                                                          int64_t t) {
  return nlc ? c1d_x_index_nlc(&s, n, c, t) : c1d_x_index(&s, n, c, t);
}
static __device__ __forceinline__ int64_t c1d_s_at_layout(const c1d_shape &s, bool nlc, int64_t n, int64_t c,
                                                          int64_t t) {
  return nlc ? c1d_s_index_nlc(&s, n, c, t) : c1d_s_index(&s, n, c, t);
}
static __device__ __forceinline__ int64_t c1d_y_at_layout(const c1d_shape &s, bool nlc, int64_t n, int64_t o,
                                                          int64_t t) {
  return nlc ? c1d_y_index_nlc(&s, n, o, t) : c1d_y_index(&s, n, o, t);
}

/* xs[n, c, src]: the input, the initial state before t = 0, or +0 without states. */
static __device__ __forceinline__ float c1d_xs_typed(const c1d_shape &s, bool nlc, const void *x, const void *st,
                                                     int64_t n, int64_t c, int64_t src) {
  if (src >= 0) return c1d_load_typed(x, s.dt.x, c1d_x_at_layout(s, nlc, n, c, src));
  return s.states ? c1d_load_typed(st, s.dt.s, c1d_s_at_layout(s, nlc, n, c, src)) : 0.0f;
}

/* The activation of the float32 sum (before the rounding to y's type). */
static __device__ __forceinline__ float c1d_activate(const c1d_shape &s, float acc) {
  return s.act == C1D_ACT_SILU ? c1d_silu_f32(acc) : acc;
}

/* y[n, o, t] before its rounding: grouped_naive's order, reading typed memory in either order. */
static __device__ __forceinline__ float c1d_grouped_output(const c1d_shape &s, bool nlc, const void *x,
                                                           const void *w, const void *b, const void *st,
                                                           int64_t n, int64_t o, int64_t t) {
  const int64_t cg = c1d_cin_per_group(&s), c0 = c1d_group_first_c(&s, o);
  float acc = s.bias ? c1d_load_typed(b, s.dt.b, o) : 0.0f;
  for (int64_t c = c0; c < c0 + cg; c++)
    for (int64_t k = 0; k < s.K; k++) {
      const float xv = c1d_xs_typed(s, nlc, x, st, n, c, c1d_source_time(&s, t, k));
      acc = c1d_fma(xv, c1d_load_typed(w, s.dt.w, c1d_w_index(&s, o, c, k)), acc);
    }
  return c1d_activate(s, acc);
}

#endif
