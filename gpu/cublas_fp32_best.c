/* cublas_fp32_best: cublas_im2col_fp32 with the fastest of the first eight algorithms cuBLASLt's
 * heuristic offers, each timed in setup on hashed inputs (median of 5 after a warm-up): the strongest
 * cuBLAS for this GEMM. Padding, bias, buffers, probe and limits as cublas_im2col_fp32
 * (cublas_im2col_common.c). */
#include "gpu/cublas_im2col_common.h"

static const char *supported(const c1d_shape *s) { return c1d_cublas_im2col_supported(s); }
static c1d_status setup(const c1d_shape *s, c1d_exec *ex) { return c1d_cublas_im2col_setup(s, 0, 1, ex); }

const c1d_impl c1d_gpu_cublas_fp32_best = {
    .name = "cublas_fp32_best",
    .summary = "im2col + cuBLASLt batched GEMM, CUBLAS_COMPUTE_32F (fp32), the fastest of its heuristic's first eight",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP32,
    .supported = supported,
    .setup = setup,
    .teardown = c1d_cublas_im2col_teardown,
    .run = c1d_cublas_im2col_run,
};
