/* im2col + one batched cuBLAS GEMM, shared by the cublas_im2col_* rows (the story's "unfold + matmul");
 * they differ in the compute type and in how the algorithm is chosen. Per batch n, with x unfolded into
 * Xcol_n ((C*K) x L, gpu/im2col.h):  Y_n (O x L) = W (O x C*K) * Xcol_n, all row-major, done as one
 * batched cublasLtMatmul over n. Bias: y is pre-filled with b and the GEMM runs with beta = 1, so
 * the bias enters as cuBLAS's final y = alpha*AB + beta*C (one rounding after the dot product);
 * without bias beta = 0 and y is not read. */
#ifndef C1D_CUBLAS_IM2COL_COMMON_H
#define C1D_CUBLAS_IM2COL_COMMON_H

#include "reference/impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NULL when the shape fits cuBLAS's int dimensions; else a static reason. */
const char *c1d_cublas_im2col_supported(const c1d_shape *s);

/* Creates the cuBLASLt handle, descriptors, workspace and the N*C*K*L-float im2col buffer, chooses the
 * algorithm (fastest = 0: cublasLtMatmulAlgoGetHeuristic's first; 1: the fastest of its first eight,
 * timed here), runs the TF32 probe (gpu/tf32_probe.h) and fills ex->algo, ex->math, ex->used_tf32.
 * fast_tf32 = 0 uses CUBLAS_COMPUTE_32F, 1 CUBLAS_COMPUTE_32F_FAST_TF32. On failure nothing stays
 * allocated. */
c1d_status c1d_cublas_im2col_setup(const c1d_shape *s, int fast_tf32, int fastest, c1d_exec *ex);

/* Frees what setup allocated; a NULL ex->state does nothing. */
void c1d_cublas_im2col_teardown(c1d_exec *ex);

/* The timed part: im2col, bias fill (when s->bias), the batched GEMM. Asynchronous on ex->stream. */
c1d_status c1d_cublas_im2col_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                                 float *y, c1d_exec *ex);

#ifdef __cplusplus
}
#endif
#endif
