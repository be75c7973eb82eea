/* cublas_im2col_fp32: the story's "unfold + matmul" in float32. im2col (gpu/im2col.cu) unfolds x into
 * N x (C*K) x L with the causal zeros written explicitly, then ONE batched cublasLtMatmul over the
 * batch with CUBLAS_COMPUTE_32F and the algorithm cuBLASLt's heuristic puts first: float32 products and sums in cuBLAS's (undisclosed) order over C*K.
 * Bias: y pre-filled with b, GEMM beta = 1. Handle and the im2col buffer (4*N*C*K*L bytes: 1 GiB at the
 * headline shape) are made in setup; im2col, bias fill and GEMM are timed. Limits: L, O, C*K, N below
 * 2^31 (cuBLAS's int dimensions). Details in cublas_im2col_common.c. */
#include "gpu/cublas_im2col_common.h"

static const char *supported(const c1d_shape *s) { return c1d_cublas_im2col_supported(s); }
static c1d_status setup(const c1d_shape *s, c1d_exec *ex) { return c1d_cublas_im2col_setup(s, 0, 0, ex); }

const c1d_impl c1d_gpu_cublas_im2col_fp32 = {
    .name = "cublas_im2col_fp32",
    .summary = "im2col + cuBLAS batched SGEMM, CUBLAS_COMPUTE_32F (fp32); bias via beta=1",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP32,
    .supported = supported,
    .setup = setup,
    .teardown = c1d_cublas_im2col_teardown,
    .run = c1d_cublas_im2col_run,
};
