/* cublas_im2col_tf32: im2col + one batched cublasLtMatmul with CUBLAS_COMPUTE_32F_FAST_TF32, which
 * allows cuBLAS to round the float32 inputs to TF32 for tensor cores (what torch.matmul does with
 * torch.backends.cuda.matmul.allow_tf32 = True), with the algorithm cuBLASLt's heuristic puts first.
 * Setup's probe at the real shape (gpu/tf32_probe.h) records whether the inputs were in fact rounded
 * (exec.used_tf32). Padding, bias, buffers and limits as cublas_im2col_fp32. */
#include "gpu/cublas_im2col_common.h"

static const char *supported(const c1d_shape *s) { return c1d_cublas_im2col_supported(s); }
static c1d_status setup(const c1d_shape *s, c1d_exec *ex) { return c1d_cublas_im2col_setup(s, 1, 0, ex); }

const c1d_impl c1d_gpu_cublas_im2col_tf32 = {
    .name = "cublas_im2col_tf32",
    .summary = "im2col + cuBLAS batched GEMM, CUBLAS_COMPUTE_32F_FAST_TF32 (TF32 allowed); bias via beta=1",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_TF32_ALLOWED,
    .supported = supported,
    .setup = setup,
    .teardown = c1d_cublas_im2col_teardown,
    .run = c1d_cublas_im2col_run,
};
