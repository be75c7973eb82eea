/* im2col + cublasGemmStridedBatchedEx (see cublas_im2col_common.h).
 *
 * cuBLAS is column-major. Row-major Y_n (O x L) is column-major Y_n^T (L x O) = Xcol_n^T * W^T, and the
 * row-major buffers already are those transposes in column-major: Xcol_n is an L x CK column-major
 * matrix with leading dimension L, W a CK x O one with leading dimension CK. So the call is
 * m = L, n = O, k = C*K, A = xcol (lda L, stride C*K*L), B = w (ldb C*K, stride 0), C = y (ldc L,
 * stride O*L), batch N, no transposes. cuBLAS takes m, n, k, lda.. and the batch count as int (strides
 * as long long): supported() refuses shapes beyond INT_MAX. The algorithm is CUBLAS_GEMM_DEFAULT
 * (cuBLAS's heuristic; it names no kernel), so exec.algo says so and the TF32 probe says what was used. */
#include "gpu/cublas_im2col_common.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef C1D_HAVE_CUDNN
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "gpu/check.h"
#include "gpu/device.h"
#include "gpu/im2col.h"
#include "gpu/tf32_probe.h"
#endif

const char *c1d_cublas_im2col_supported(const c1d_shape *s) {
#ifndef C1D_HAVE_CUDNN
  (void)s;
  return "built without cuBLAS (linked only alongside cuDNN, which was not found at configure time)";
#else
  if (s->L > INT_MAX || s->O > INT_MAX || s->C * s->K > INT_MAX || s->N > INT_MAX)
    return "a GEMM dimension (L, O, C*K or N) exceeds cuBLAS's int";
  return NULL;
#endif
}

#ifndef C1D_HAVE_CUDNN

c1d_status c1d_cublas_im2col_setup(const c1d_shape *s, int fast_tf32, c1d_exec *ex) {
  (void)s, (void)fast_tf32, (void)ex;
  return c1d_fail(C1D_ERR_UNSUPPORTED, "built without cuBLAS");
}
void c1d_cublas_im2col_teardown(c1d_exec *ex) { (void)ex; }
c1d_status c1d_cublas_im2col_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                                 float *y, c1d_exec *ex) {
  (void)s, (void)x, (void)w, (void)b, (void)y, (void)ex;
  return c1d_fail(C1D_ERR_UNSUPPORTED, "built without cuBLAS");
}

#else

typedef struct cublas_state {
  cublasHandle_t handle;
  cublasComputeType_t compute;
  float *xcol; /* N x (C*K) x L */
  char algo[96], math[64];
  int used_tf32;
} cublas_state;

static void destroy_state(cublas_state *c) {
  if (!c) return;
  if (c->handle) cublasDestroy(c->handle);
  c1d_gpu_free(c->xcol);
  free(c);
}

static c1d_status gemm(const c1d_shape *s, cublas_state *c, const float *xcol, const float *w,
                       float *y, float beta) {
  c1d_status st = C1D_OK;
  const float alpha = 1.0f;
  const int64_t ck = s->C * s->K;
  C1D_CUBLAS(cublasGemmStridedBatchedEx(
      c->handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)s->L, (int)s->O, (int)ck, &alpha, xcol, CUDA_R_32F,
      (int)s->L, (long long)(ck * s->L), w, CUDA_R_32F, (int)ck, 0LL, &beta, y, CUDA_R_32F, (int)s->L,
      (long long)(s->O * s->L), (int)s->N, c->compute, CUBLAS_GEMM_DEFAULT));
done:
  return st;
}

/* The real GEMM on probe data (xcol = 1 + 2^-12, w = 1): does it round its inputs to TF32? */
static c1d_status run_probe(const c1d_shape *s, cublas_state *c, int *used) {
  c1d_status st = C1D_OK;
  float *pw = NULL, *py = NULL, out = 0.0f;
  const int64_t ck = s->C * s->K;
  *used = -1;
  if (ck > C1D_TF32_PROBE_MAX_TERMS) return C1D_OK;
  if ((st = c1d_gpu_malloc((void **)&pw, (size_t)c1d_w_count(s) * sizeof(float), "the cuBLAS probe filter")) ||
      (st = c1d_gpu_malloc((void **)&py, (size_t)c1d_y_count(s) * sizeof(float), "the cuBLAS probe output")))
    goto done;
  if ((st = c1d_launch_fill(c->xcol, s->N * ck * s->L, C1D_TF32_PROBE_X, NULL)) ||
      (st = c1d_launch_fill(pw, c1d_w_count(s), C1D_TF32_PROBE_W, NULL)))
    goto done;
  C1D_CUBLAS(cublasSetStream(c->handle, NULL));
  if ((st = gemm(s, c, c->xcol, pw, py, 0.0f))) goto done;
  C1D_CUDA(cudaMemcpy(&out, py + c1d_y_count(s) - 1, sizeof out, cudaMemcpyDeviceToHost));
  *used = c1d_tf32_probe_classify(out, ck);
done:
  c1d_gpu_free(pw);
  c1d_gpu_free(py);
  return st;
}

c1d_status c1d_cublas_im2col_setup(const c1d_shape *s, int fast_tf32, c1d_exec *ex) {
  c1d_status st = C1D_OK;
  cublas_state *c = NULL;
  int probe = -1;
  const char *why = c1d_cublas_im2col_supported(s);
  if (why) return c1d_fail(C1D_ERR_UNSUPPORTED, "cuBLAS im2col: %s", why);
  if ((why = c1d_gpu_unavailable())) return c1d_fail(C1D_ERR_NO_DEVICE, "%s", why);
  c = calloc(1, sizeof *c);
  if (!c) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate the cuBLAS state");
  c->compute = fast_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  C1D_CUBLAS(cublasCreate(&c->handle));
  /* Default math: the compute type alone decides whether TF32 is allowed. */
  C1D_CUBLAS(cublasSetMathMode(c->handle, CUBLAS_DEFAULT_MATH));
  if ((st = c1d_gpu_malloc((void **)&c->xcol, (size_t)(s->N * s->C * s->K * s->L) * sizeof(float),
                           "the im2col buffer")))
    goto done;
  if ((st = run_probe(s, c, &probe))) goto done;
  C1D_CUDA(cudaDeviceSynchronize());
  snprintf(c->algo, sizeof c->algo, "im2col + cublasGemmStridedBatchedEx, CUBLAS_GEMM_DEFAULT");
  c->used_tf32 = probe;
  if (!fast_tf32)
    snprintf(c->math, sizeof c->math, "%s",
             probe == 1 ? "TF32 despite COMPUTE_32F (probe)" : "FMA (fp32, COMPUTE_32F)");
  else
    snprintf(c->math, sizeof c->math, "%s",
             probe == 1   ? "TF32 tensor cores (COMPUTE_32F_FAST_TF32)"
             : probe == 0 ? "FMA (cuBLAS chose fp32 although TF32 was allowed)"
                          : "TF32 allowed (COMPUTE_32F_FAST_TF32), unprobed");
  ex->state = c;
  snprintf(ex->algo, sizeof ex->algo, "%s", c->algo);
  snprintf(ex->math, sizeof ex->math, "%s", c->math);
  ex->used_tf32 = c->used_tf32;
  return C1D_OK;
done:
  destroy_state(c);
  return st;
}

void c1d_cublas_im2col_teardown(c1d_exec *ex) {
  destroy_state((cublas_state *)ex->state);
  ex->state = NULL;
}

c1d_status c1d_cublas_im2col_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                                 float *y, c1d_exec *ex) {
  c1d_status st = C1D_OK;
  cublas_state *c = (cublas_state *)ex->state;
  if (!c) return c1d_fail(C1D_ERR_INTERNAL, "cuBLAS im2col run without setup");
  C1D_CUBLAS(cublasSetStream(c->handle, (cudaStream_t)ex->stream));
  if ((st = c1d_launch_im2col(s, x, c->xcol, ex->stream))) goto done;
  if (s->bias && (st = c1d_launch_bias_fill(s, b, y, ex->stream))) goto done;
  if ((st = gemm(s, c, c->xcol, w, y, s->bias ? 1.0f : 0.0f))) goto done;
  snprintf(ex->algo, sizeof ex->algo, "%s", c->algo);
  snprintf(ex->math, sizeof ex->math, "%s", c->math);
  ex->used_tf32 = c->used_tf32;
done:
  return st;
}

#endif
