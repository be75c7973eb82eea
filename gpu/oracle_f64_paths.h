/* The two paths of the float64 GPU oracle (gpu/oracle_f64.cu), exposed so that tests and the bench can
 * run each one on its own and compare them. c1d_gpu_oracle_f64 (gpu/oracle_f64.h) picks the path. */
#ifndef C1D_GPU_ORACLE_F64_PATHS_H
#define C1D_GPU_ORACLE_F64_PATHS_H

#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum c1d_gpu_oracle_path {
  C1D_ORACLE_PATH_MMA,    /* FP64 tensor cores (sm_90+), K <= 12 and (K-1)*D <= 96 */
  C1D_ORACLE_PATH_DIRECT  /* one thread per output, DFMA; any shape */
} c1d_gpu_oracle_path;

/* The path c1d_gpu_oracle_f64 takes for s on device 0 (the MMA path needs compute capability 9.0+). */
c1d_gpu_oracle_path c1d_gpu_oracle_f64_path(const c1d_shape *s);

/* "mma" or "direct". */
const char *c1d_gpu_oracle_path_name(c1d_gpu_oracle_path path);

/* c1d_gpu_oracle_f64 on a chosen path. C1D_ERR_UNSUPPORTED when the MMA path cannot take s. */
c1d_status c1d_gpu_oracle_f64_on(c1d_gpu_oracle_path path, const c1d_shape *s, const float *x,
                                 const float *w, const float *b, double *y, double *mag);

#ifdef __cplusplus
}
#endif
#endif
