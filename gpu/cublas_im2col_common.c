/* im2col + one batched cublasLtMatmul (see cublas_im2col_common.h).
 *
 * cuBLAS is column-major. Row-major Y_n (O x L) is column-major Y_n^T (L x O) = Xcol_n^T * W^T, and the
 * row-major buffers already are those transposes in column-major: Xcol_n is an L x CK column-major
 * matrix with leading dimension L, W a CK x O one with leading dimension CK. So the product is
 * m = L, n = O, k = C*K, A = xcol (lda L, batch stride C*K*L), B = w (ldb C*K, batch stride 0),
 * C = D = y (ldc L, stride O*L), batch N, no transposes; the layouts take rows, columns and leading
 * dimensions as uint64 but the heuristics int-sized problems, so supported() refuses shapes beyond
 * INT_MAX. The algorithm: cublasLtMatmulAlgoGetHeuristic's first (what cuBLAS itself would run), or the
 * fastest of its first C1D_LT_CANDIDATES measured in setup (on hashed inputs); exec.algo names the
 * algorithm, its tile, stages and split-K, and the TF32 probe says what was used. */
#include "gpu/cublas_im2col_common.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef C1D_HAVE_CUDNN
#include "gpu/cublas_lazy.h" /* cuBLASLt, loaded on first use */
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

c1d_status c1d_cublas_im2col_setup(const c1d_shape *s, int fast_tf32, int fastest, c1d_exec *ex) {
  (void)s, (void)fast_tf32, (void)fastest, (void)ex;
  return c1d_fail(C1D_ERR_UNSUPPORTED, "built without cuBLAS");
}
void c1d_cublas_im2col_teardown(c1d_exec *ex) { (void)ex; }
c1d_status c1d_cublas_im2col_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                                 float *y, c1d_exec *ex) {
  (void)s, (void)x, (void)w, (void)b, (void)y, (void)ex;
  return c1d_fail(C1D_ERR_UNSUPPORTED, "built without cuBLAS");
}

#else

#define C1D_LT_CANDIDATES 8
#define C1D_LT_WORKSPACE ((size_t)64 << 20)

typedef struct cublas_state {
  cublasLtHandle_t lt;
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasLtMatmulAlgo_t algo;
  void *ws;
  size_t ws_bytes;
  float *xcol; /* N x (C*K) x L */
  char algo_text[96], math[64];
  int used_tf32;
} cublas_state;

static void destroy_state(cublas_state *c) {
  if (!c) return;
  if (c->la) cublasLtMatrixLayoutDestroy(c->la);
  if (c->lb) cublasLtMatrixLayoutDestroy(c->lb);
  if (c->lc) cublasLtMatrixLayoutDestroy(c->lc);
  if (c->op) cublasLtMatmulDescDestroy(c->op);
  if (c->lt) cublasLtDestroy(c->lt);
  c1d_gpu_free(c->ws);
  c1d_gpu_free(c->xcol);
  free(c);
}

static c1d_status gemm(cublas_state *c, const cublasLtMatmulAlgo_t *algo, const float *xcol, const float *w,
                       float *y, float beta, void *stream) {
  c1d_status st = C1D_OK;
  const float alpha = 1.0f;
  C1D_CUBLAS(cublasLtMatmul(c->lt, c->op, &alpha, xcol, c->la, w, c->lb, &beta, y, c->lc, y, c->lc, algo,
                            c->ws, c->ws_bytes, (cudaStream_t)stream));
done:
  return st;
}

/* A column-major rows x cols float layout, ld, batched with the given stride. */
static c1d_status make_layout(cublasLtMatrixLayout_t *l, uint64_t rows, uint64_t cols, int64_t ld, int batch,
                              int64_t stride) {
  c1d_status st = C1D_OK;
  C1D_CUBLAS(cublasLtMatrixLayoutCreate(l, CUDA_R_32F, rows, cols, ld));
  C1D_CUBLAS(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch));
  C1D_CUBLAS(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                              sizeof stride));
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
  if ((st = gemm(c, &c->algo, c->xcol, pw, py, 0.0f, NULL))) goto done;
  C1D_CUDA(cudaMemcpy(&out, py + c1d_y_count(s) - 1, sizeof out, cudaMemcpyDeviceToHost));
  *used = c1d_tf32_probe_classify(out, ck);
done:
  c1d_gpu_free(pw);
  c1d_gpu_free(py);
  return st;
}

/* The median of 5 timed runs of each candidate (after one warm-up) on hashed inputs; *best the fastest. */
static c1d_status time_candidates(const c1d_shape *s, cublas_state *c, const cublasLtMatmulHeuristicResult_t *res,
                                  int n, int *best, float *best_ms) {
  c1d_status st = C1D_OK;
  float *pw = NULL, *py = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  *best = -1;
  if ((st = c1d_gpu_malloc((void **)&pw, (size_t)c1d_w_count(s) * sizeof(float), "the cuBLAS search filter")) ||
      (st = c1d_gpu_malloc((void **)&py, (size_t)c1d_y_count(s) * sizeof(float), "the cuBLAS search output")) ||
      (st = c1d_launch_fill_hashed(c->xcol, s->N * s->C * s->K * s->L, 3u, 1.0f, NULL)) ||
      (st = c1d_launch_fill_hashed(pw, c1d_w_count(s), 4u, 0.0625f, NULL)))
    goto done;
  C1D_CUDA(cudaEventCreate(&e0));
  C1D_CUDA(cudaEventCreate(&e1));
  for (int i = 0; i < n; i++) {
    if (res[i].state != CUBLAS_STATUS_SUCCESS || res[i].workspaceSize > c->ws_bytes) continue;
    float ms[5];
    if (gemm(c, &res[i].algo, c->xcol, pw, py, 0.0f, NULL) != C1D_OK) continue; /* warm-up */
    for (int r = 0; r < 5; r++) {
      C1D_CUDA(cudaEventRecord(e0, NULL));
      if ((st = gemm(c, &res[i].algo, c->xcol, pw, py, 0.0f, NULL))) goto done;
      C1D_CUDA(cudaEventRecord(e1, NULL));
      C1D_CUDA(cudaEventSynchronize(e1));
      C1D_CUDA(cudaEventElapsedTime(&ms[r], e0, e1));
    }
    for (int a = 0; a < 5; a++) /* insertion sort, then the middle one */
      for (int b = a; b > 0 && ms[b] < ms[b - 1]; b--) {
        const float t = ms[b];
        ms[b] = ms[b - 1], ms[b - 1] = t;
      }
    if (*best < 0 || ms[2] < *best_ms) *best = i, *best_ms = ms[2];
  }
done:
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  c1d_gpu_free(pw);
  c1d_gpu_free(py);
  return st;
}

/* "cublasLt algo 21, tile 18, stages 21, split-K 1" */
static void describe_algo(const cublasLtMatmulAlgo_t *a, char *text, size_t size, const char *how) {
  int id = -1, tile = -1, stages = -1, splitk = -1;
  cublasLtMatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, NULL);
  cublasLtMatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, NULL);
  cublasLtMatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, NULL);
  cublasLtMatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, NULL);
  snprintf(text, size, "im2col + cublasLt algo %d, tile %d, stages %d, split-K %d (%s)", id, tile, stages,
           splitk, how);
}

c1d_status c1d_cublas_im2col_setup(const c1d_shape *s, int fast_tf32, int fastest, c1d_exec *ex) {
  c1d_status st = C1D_OK;
  cublas_state *c = NULL;
  cublasLtMatmulPreference_t pref = NULL;
  cublasLtMatmulHeuristicResult_t res[C1D_LT_CANDIDATES];
  int probe = -1, nres = 0, best = 0;
  float best_ms = 0.0f;
  const int64_t ck = s->C * s->K;
  const char *why = c1d_cublas_im2col_supported(s);
  if (why) return c1d_fail(C1D_ERR_UNSUPPORTED, "cuBLAS im2col: %s", why);
  if ((why = c1d_gpu_unavailable())) return c1d_fail(C1D_ERR_NO_DEVICE, "%s", why);
  c = calloc(1, sizeof *c);
  if (!c) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate the cuBLAS state");
  C1D_CUBLAS(cublasLtCreate(&c->lt));
  C1D_CUBLAS(cublasLtMatmulDescCreate(&c->op, fast_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                                      CUDA_R_32F));
  if ((st = make_layout(&c->la, (uint64_t)s->L, (uint64_t)ck, s->L, (int)s->N, ck * s->L)) ||
      (st = make_layout(&c->lb, (uint64_t)ck, (uint64_t)s->O, ck, (int)s->N, 0)) ||
      (st = make_layout(&c->lc, (uint64_t)s->L, (uint64_t)s->O, s->L, (int)s->N, s->O * s->L)))
    goto done;
  c->ws_bytes = C1D_LT_WORKSPACE;
  if ((st = c1d_gpu_malloc(&c->ws, c->ws_bytes, "the cuBLASLt workspace"))) goto done;
  if ((st = c1d_gpu_malloc((void **)&c->xcol, (size_t)(s->N * ck * s->L) * sizeof(float), "the im2col buffer")))
    goto done;
  C1D_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  C1D_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &c->ws_bytes,
                                                  sizeof c->ws_bytes));
  C1D_CUBLAS(cublasLtMatmulAlgoGetHeuristic(c->lt, c->op, c->la, c->lb, c->lc, c->lc, pref,
                                            fastest ? C1D_LT_CANDIDATES : 1, res, &nres));
  if (nres < 1) {
    st = c1d_fail(C1D_ERR_UNSUPPORTED, "cuBLASLt offered no algorithm for this GEMM");
    goto done;
  }
  if (fastest && ((st = time_candidates(s, c, res, nres, &best, &best_ms)) || best < 0)) {
    if (st == C1D_OK) st = c1d_fail(C1D_ERR_CUBLAS, "no cuBLASLt candidate ran (%d offered)", nres);
    goto done;
  }
  c->algo = res[best].algo;
  if (fastest) {
    char how[48];
    snprintf(how, sizeof how, "fastest of %d: %.3f ms", nres, (double)best_ms);
    describe_algo(&c->algo, c->algo_text, sizeof c->algo_text, how);
  } else {
    describe_algo(&c->algo, c->algo_text, sizeof c->algo_text, "heuristic's first");
  }
  if ((st = run_probe(s, c, &probe))) goto done;
  C1D_CUDA(cudaDeviceSynchronize());
  c->used_tf32 = probe;
  if (!fast_tf32)
    snprintf(c->math, sizeof c->math, "%s",
             probe == 1 ? "TF32 despite COMPUTE_32F (probe)" : "FMA (fp32, COMPUTE_32F)");
  else
    snprintf(c->math, sizeof c->math, "%s",
             probe == 1   ? "TF32 tensor cores (COMPUTE_32F_FAST_TF32)"
             : probe == 0 ? "FMA (cuBLAS chose fp32 although TF32 was allowed)"
                          : "TF32 allowed (COMPUTE_32F_FAST_TF32), unprobed");
  cublasLtMatmulPreferenceDestroy(pref);
  ex->state = c;
  snprintf(ex->algo, sizeof ex->algo, "%s", c->algo_text);
  snprintf(ex->math, sizeof ex->math, "%s", c->math);
  ex->used_tf32 = c->used_tf32;
  return C1D_OK;
done:
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
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
  if ((st = c1d_launch_im2col(s, x, c->xcol, ex->stream))) goto done;
  if (s->bias && (st = c1d_launch_bias_fill(s, b, y, ex->stream))) goto done;
  if ((st = gemm(c, &c->algo, c->xcol, w, y, s->bias ? 1.0f : 0.0f, ex->stream))) goto done;
  snprintf(ex->algo, sizeof ex->algo, "%s", c->algo_text);
  snprintf(ex->math, sizeof ex->math, "%s", c->math);
  ex->used_tf32 = c->used_tf32;
done:
  return st;
}

#endif
