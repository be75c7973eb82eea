/* Device helpers of the library baselines: the im2col unfold that feeds cuBLAS, a bias fill that lets
 * one GEMM add the bias with beta = 1, a bias addition in any element type (after cuDNN on bf16/fp16
 * data), and fills (probe inputs, timing inputs). Launchers are C-callable;
 * each checks its launch and returns C1D_ERR_CUDA naming the kernel on failure. Pointers are device
 * pointers; stream is a cudaStream_t (NULL: the default stream). */
#ifndef C1D_IM2COL_H
#define C1D_IM2COL_H

#include <stdint.h>

#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* xcol[n][c*K + k][t] = x[n, c, t + k*D - (K-1)*D], 0 where that time is negative (causal padding).
 * xcol holds N*C*K*L floats; per batch n it is the (C*K) x L matrix whose product with w viewed as
 * O x (C*K) is y[n] (O x L). */
c1d_status c1d_launch_im2col(const c1d_shape *s, const float *x, float *xcol, void *stream);

/* y[n, o, t] = b[o] for every element. */
c1d_status c1d_launch_bias_fill(const c1d_shape *s, const float *b, float *y, void *stream);

/* p[i] = value for i < count. */
c1d_status c1d_launch_fill(float *p, int64_t count, float value, void *stream);

/* p[i] uniform in [-scale, scale) from a hash of (i, seed): inputs for timing algorithm searches. */
c1d_status c1d_launch_fill_hashed(float *p, int64_t count, uint32_t seed, float scale, void *stream);

/* The same values rounded to type d, in a packed array of that type (bf16/fp16 search inputs). */
c1d_status c1d_launch_fill_hashed_as(void *p, c1d_dtype d, int64_t count, uint32_t seed, float scale, void *stream);

/* y[n, o, t] = round_to(s->dt.y, y[n, o, t] + b[o]) in float32, y and b in their own types (s->dt.y,
 * s->dt.b): the bias after a library convolution, as PyTorch's add_ does it (one more rounding). */
c1d_status c1d_launch_bias_add(const c1d_shape *s, const void *b, void *y, void *stream);

#ifdef __cplusplus
}
#endif
#endif
