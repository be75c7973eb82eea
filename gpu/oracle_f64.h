/* The float64 GPU oracle, for shapes too large for the CPU oracle: y and m = |b| + sum|w*x| in double
 * from float32 inputs (products exact in double). Verified against the CPU oracle in the tests. */
#ifndef C1D_GPU_ORACLE_F64_H
#define C1D_GPU_ORACLE_F64_H

#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device pointers throughout; b is NULL iff !s->bias; mag may be NULL. Returns C1D_ERR_CUDA with the
 * failing call on error. The caller owns every buffer. */
c1d_status c1d_gpu_oracle_f64(const c1d_shape *s, const float *x, const float *w, const float *b,
                              double *y, double *mag);

#ifdef __cplusplus
}
#endif
#endif
