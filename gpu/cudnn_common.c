/* cuDNN forward convolution for the cudnn_* rows (see cudnn_common.h).
 *
 * Causal padding is an explicit left pad: setup allocates an N x C x (L+P) buffer and zeroes it once; run
 * copies x into its last L columns with one cudaMemcpy2DAsync (the pad columns never change) and convolves
 * with padding 0. The copy is inside the timed region, as F.pad is inside PyTorch's. With P = 0 (K = 1)
 * the convolution reads x directly. With initial states, run copies them into the pad columns too (as
 * torch.cat((s, x), -1) would). Groups: cudnnSetConvolutionGroupCount, the filter (O, C/G, 1, K).
 * Element types: the problem's x (= w = y, and b, s: c1d_cudnn_lowp_supported) as the tensors' data
 * type, float32 compute; bf16/fp16 data adds the bias by its own kernel (gpu/im2col.h), in float32 and
 * rounded, as PyTorch's add_ after cuDNN.
 *
 * Algorithm choice (c1d_cudnn_choice): cudnnGetConvolutionForwardAlgorithm_v7's list in cuDNN's order of
 * preference, or cudnnFindConvolutionForwardAlgorithmEx's in measured order (timed in setup on hashed
 * inputs in temporary buffers, with a workspace as large as the heuristic list's largest entry, capped);
 * the first entry that succeeds, needs at most C1D_CUDNN_MAX_WORKSPACE bytes, is deterministic where
 * that is asked for and (with FMA math) reports CUDNN_FMA_MATH. As PyTorch does, the descriptor's math
 * type is then set to the math type cuDNN reported for that entry, and the workspace is sized by
 * cudnnGetConvolutionForwardWorkspaceSize.
 * What was used is measured by the TF32 probe (gpu/tf32_probe.h) at the real shape. */
#include "gpu/cudnn_common.h"
#include "reference/dtype.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef C1D_HAVE_CUDNN
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "gpu/check.h"
#include "gpu/device.h"
#include "gpu/im2col.h"
#include "gpu/tf32_probe.h"
#endif

#define C1D_CUDNN_MAX_WORKSPACE ((size_t)8 << 30)

const char *c1d_cudnn_lowp_supported(const c1d_shape *s) {
  const c1d_dtype d = s->dt.x;
  if (d == C1D_DTYPE_F32) return "fp32 tensors: the cudnn_fp32 and cudnn_tf32 rows";
  if (s->dt.w != d || s->dt.y != d || (s->bias && s->dt.b != d) || (s->states && s->dt.s != d))
    return "cuDNN needs x, w, b, the states and y in one element type";
  return c1d_cudnn_supported(s);
}

const char *c1d_cudnn_supported(const c1d_shape *s) {
#ifndef C1D_HAVE_CUDNN
  (void)s;
  return "built without cuDNN (libcudnn was not found at configure time)";
#else
  const int64_t lp = s->L + c1d_pad(s);
  if (s->N > INT_MAX || s->C > INT_MAX || s->O > INT_MAX || lp > INT_MAX || s->K > INT_MAX ||
      s->D > INT_MAX)
    return "a dimension exceeds cuDNN's int descriptors";
  /* cuDNN's 4-D descriptors carry int strides: every tensor must index within INT_MAX elements. */
  if (s->N * s->C * lp > INT_MAX || c1d_y_count(s) > INT_MAX || c1d_w_count(s) > INT_MAX)
    return "a tensor exceeds 2^31 elements (cuDNN's int strides)";
  return NULL;
#endif
}

#ifndef C1D_HAVE_CUDNN

c1d_status c1d_cudnn_setup(const c1d_shape *s, int allow_tf32, c1d_cudnn_choice choice, c1d_exec *ex) {
  (void)s, (void)allow_tf32, (void)choice, (void)ex;
  return c1d_fail(C1D_ERR_UNSUPPORTED, "built without cuDNN");
}
void c1d_cudnn_teardown(c1d_exec *ex) { (void)ex; }
c1d_status c1d_cudnn_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                         c1d_exec *ex) {
  (void)s, (void)x, (void)w, (void)b, (void)y, (void)ex;
  return c1d_fail(C1D_ERR_UNSUPPORTED, "built without cuDNN");
}

#else

typedef struct cudnn_state {
  cudnnHandle_t handle;
  cudnnTensorDescriptor_t xd, yd, bd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  cudnnConvolutionFwdAlgo_t algo;
  void *workspace;
  size_t workspace_bytes;
  void *xpad;  /* N x C x (L+P) elements, pad columns zero (or the states); NULL when P = 0 */
  size_t es;   /* bytes per element of x, w and y */
  char algo_name[96], math[64];
  int used_tf32;
} cudnn_state;

static cudnnDataType_t data_type(c1d_dtype d) {
  return d == C1D_DTYPE_BF16 ? CUDNN_DATA_BFLOAT16 : d == C1D_DTYPE_F16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
}

static const char *algo_name(cudnnConvolutionFwdAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "UNKNOWN";
  }
}

/* C1D_CUDNN_ALGO=NAME (one of algo_name's, e.g. FFT_TILING): every cudnn row of this process runs that
 * algorithm, where cuDNN offers it for the shape (sweeps over every algorithm: scripts/cudnn_algorithms.sh).
 * Returns -1 when unset, -2 when it names no algorithm. */
static int forced_algo(void) {
  const char *v = getenv("C1D_CUDNN_ALGO");
  if (!v || !*v) return -1;
  for (int a = 0; a < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; a++)
    if (strcasecmp(v, algo_name((cudnnConvolutionFwdAlgo_t)a)) == 0) return a;
  return -2;
}

static const char *math_name(cudnnMathType_t m) {
  switch (m) {
    case CUDNN_DEFAULT_MATH: return "DEFAULT_MATH";
    case CUDNN_TENSOR_OP_MATH: return "TENSOR_OP_MATH";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "TENSOR_OP_MATH_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH: return "FMA_MATH";
    default: return "UNKNOWN_MATH";
  }
}

static void destroy_state(cudnn_state *c) {
  if (!c) return;
  if (c->cd) cudnnDestroyConvolutionDescriptor(c->cd);
  if (c->wd) cudnnDestroyFilterDescriptor(c->wd);
  if (c->xd) cudnnDestroyTensorDescriptor(c->xd);
  if (c->yd) cudnnDestroyTensorDescriptor(c->yd);
  if (c->bd) cudnnDestroyTensorDescriptor(c->bd);
  if (c->handle) cudnnDestroy(c->handle);
  c1d_gpu_free(c->workspace);
  c1d_gpu_free(c->xpad);
  free(c);
}

/* Runs the chosen configuration once on probe inputs (x = 1 + 2^-12, w = 1) and classifies one output.
 * Uses its own buffers, freed before returning. */
static c1d_status run_probe(const c1d_shape *s, cudnn_state *c, int *used) {
  c1d_status st = C1D_OK;
  float *px = NULL, *pw = NULL, *py = NULL, out = 0.0f;
  const float alpha = 1.0f, beta = 0.0f;
  const int64_t nx = s->N * s->C * (s->L + c1d_pad(s));
  *used = -1;
  if (c1d_terms(s) > C1D_TF32_PROBE_MAX_TERMS) return C1D_OK; /* the probe cannot tell */
  if ((st = c1d_gpu_malloc((void **)&px, (size_t)nx * sizeof(float), "the cuDNN probe input")) ||
      (st = c1d_gpu_malloc((void **)&pw, (size_t)c1d_w_count(s) * sizeof(float), "the cuDNN probe filter")) ||
      (st = c1d_gpu_malloc((void **)&py, (size_t)c1d_y_count(s) * sizeof(float), "the cuDNN probe output")))
    goto done;
  if ((st = c1d_launch_fill(px, nx, C1D_TF32_PROBE_X, NULL)) ||
      (st = c1d_launch_fill(pw, c1d_w_count(s), C1D_TF32_PROBE_W, NULL)))
    goto done;
  C1D_CUDNN(cudnnSetStream(c->handle, NULL));
  C1D_CUDNN(cudnnConvolutionForward(c->handle, &alpha, c->xd, px, c->wd, pw, c->cd, c->algo,
                                    c->workspace, c->workspace_bytes, &beta, c->yd, py));
  C1D_CUDA(cudaMemcpy(&out, py + c1d_y_count(s) - 1, sizeof out, cudaMemcpyDeviceToHost));
  *used = c1d_tf32_probe_classify(out, c1d_terms(s));
done:
  c1d_gpu_free(px);
  c1d_gpu_free(pw);
  c1d_gpu_free(py);
  return st;
}

/* cudnnFindConvolutionForwardAlgorithmEx on hashed inputs in temporary buffers; perf sorted by time.
 * The workspace offered is the largest the heuristic list asks for, capped by C1D_CUDNN_MAX_WORKSPACE and
 * by half the free device memory. */
static c1d_status find_fastest(const c1d_shape *s, cudnn_state *c, const cudnnConvolutionFwdAlgoPerf_t *heur,
                               int nheur, cudnnConvolutionFwdAlgoPerf_t *perf, int max_count, int *returned) {
  c1d_status st = C1D_OK;
  float *px = NULL, *pw = NULL, *py = NULL;
  void *ws = NULL;
  size_t ws_bytes = 0, free_b = 0, total_b = 0;
  const int64_t nx = s->N * s->C * (s->L + c1d_pad(s));
  for (int i = 0; i < nheur; i++)
    if (heur[i].status == CUDNN_STATUS_SUCCESS && heur[i].memory <= C1D_CUDNN_MAX_WORKSPACE &&
        heur[i].memory > ws_bytes)
      ws_bytes = heur[i].memory;
  if ((st = c1d_gpu_malloc((void **)&px, (size_t)nx * c->es, "the cuDNN search input")) ||
      (st = c1d_gpu_malloc((void **)&pw, (size_t)c1d_w_count(s) * c->es, "the cuDNN search filter")) ||
      (st = c1d_gpu_malloc((void **)&py, (size_t)c1d_y_count(s) * c->es, "the cuDNN search output")))
    goto done;
  C1D_CUDA(cudaMemGetInfo(&free_b, &total_b));
  if (ws_bytes > free_b / 2) ws_bytes = free_b / 2;
  if (ws_bytes && (st = c1d_gpu_malloc(&ws, ws_bytes, "the cuDNN search workspace"))) goto done;
  if ((st = c1d_launch_fill_hashed_as(px, s->dt.x, nx, 1u, 1.0f, NULL)) ||
      (st = c1d_launch_fill_hashed_as(pw, s->dt.x, c1d_w_count(s), 2u, 0.0625f, NULL)))
    goto done;
  C1D_CUDNN(cudnnSetStream(c->handle, NULL));
  C1D_CUDNN(cudnnFindConvolutionForwardAlgorithmEx(c->handle, c->xd, px, c->wd, pw, c->cd, c->yd, py,
                                                   max_count, returned, perf, ws, ws_bytes));
done:
  c1d_gpu_free(px);
  c1d_gpu_free(pw);
  c1d_gpu_free(py);
  c1d_gpu_free(ws);
  return st;
}

static const char *choice_name(c1d_cudnn_choice choice) {
  return choice == C1D_CUDNN_FASTEST ? "fastest found" : choice == C1D_CUDNN_DETERMINISTIC ? "first deterministic"
                                                                                          : "heuristic's first";
}

c1d_status c1d_cudnn_setup(const c1d_shape *s, int allow_tf32, c1d_cudnn_choice choice, c1d_exec *ex) {
  c1d_status st = C1D_OK;
  cudnn_state *c = NULL;
  cudnnConvolutionFwdAlgoPerf_t perf[2 * CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  cudnnConvolutionFwdAlgoPerf_t found[2 * CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  const cudnnConvolutionFwdAlgoPerf_t *list = perf;
  int returned = 0, chosen = -1, max_count = 0, probe = -1;
  float found_ms = -1.0f;
  const int64_t P = c1d_pad(s), lp = s->L + P;
  const char *why = c1d_cudnn_supported(s);

  const int lowp = s->dt.x != C1D_DTYPE_F32; /* the cudnn_lowp rows: bf16/fp16 data, fp32 compute */
  const cudnnDataType_t dt = data_type(s->dt.x);
  const int forced = forced_algo();
  if (why) return c1d_fail(C1D_ERR_UNSUPPORTED, "cuDNN: %s", why);
  if (forced == -2)
    return c1d_fail(C1D_ERR_USAGE, "C1D_CUDNN_ALGO=%s names no cuDNN forward algorithm (IMPLICIT_GEMM, "
                    "IMPLICIT_PRECOMP_GEMM, GEMM, DIRECT, FFT, FFT_TILING, WINOGRAD, WINOGRAD_NONFUSED)",
                    getenv("C1D_CUDNN_ALGO"));
  if ((why = c1d_gpu_unavailable())) return c1d_fail(C1D_ERR_NO_DEVICE, "%s", why);
  c = calloc(1, sizeof *c);
  if (!c) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate the cuDNN state");
  c->es = (size_t)c1d_dtype_size(s->dt.x);

  C1D_CUDNN(cudnnCreate(&c->handle));
  C1D_CUDNN(cudnnCreateTensorDescriptor(&c->xd));
  C1D_CUDNN(cudnnCreateTensorDescriptor(&c->yd));
  C1D_CUDNN(cudnnCreateFilterDescriptor(&c->wd));
  C1D_CUDNN(cudnnCreateConvolutionDescriptor(&c->cd));
  C1D_CUDNN(cudnnSetTensor4dDescriptor(c->xd, CUDNN_TENSOR_NCHW, dt, (int)s->N, (int)s->C, 1, (int)lp));
  C1D_CUDNN(cudnnSetFilter4dDescriptor(c->wd, dt, CUDNN_TENSOR_NCHW, (int)s->O, (int)c1d_cin_per_group(s), 1,
                                       (int)s->K));
  C1D_CUDNN(cudnnSetConvolution2dDescriptor(c->cd, 0, 0, 1, 1, 1, (int)s->D, CUDNN_CROSS_CORRELATION,
                                            CUDNN_DATA_FLOAT));
  C1D_CUDNN(cudnnSetConvolutionGroupCount(c->cd, (int)c1d_groups(s)));
  /* PyTorch's math types: TENSOR_OP for half and bf16 data, DEFAULT (TF32 allowed) or FMA for float. */
  C1D_CUDNN(cudnnSetConvolutionMathType(c->cd, lowp         ? CUDNN_TENSOR_OP_MATH
                                               : allow_tf32 ? CUDNN_DEFAULT_MATH
                                                            : CUDNN_FMA_MATH));
  {
    int on, oc, oh, ow;
    C1D_CUDNN(cudnnGetConvolution2dForwardOutputDim(c->cd, c->xd, c->wd, &on, &oc, &oh, &ow));
    if (on != s->N || oc != s->O || oh != 1 || ow != s->L) {
      st = c1d_fail(C1D_ERR_INTERNAL, "cuDNN output dims %dx%dx%dx%d, expected %lldx%lldx1x%lld", on,
                    oc, oh, ow, (long long)s->N, (long long)s->O, (long long)s->L);
      goto done;
    }
  }
  C1D_CUDNN(cudnnSetTensor4dDescriptor(c->yd, CUDNN_TENSOR_NCHW, dt, (int)s->N, (int)s->O, 1, (int)s->L));
  if (s->bias && !lowp) {
    C1D_CUDNN(cudnnCreateTensorDescriptor(&c->bd));
    C1D_CUDNN(cudnnSetTensor4dDescriptor(c->bd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, (int)s->O, 1, 1));
  }

  // --- algorithm ---------------------------------------------------------------------------------
  C1D_CUDNN(cudnnGetConvolutionForwardAlgorithmMaxCount(c->handle, &max_count));
  if (max_count > (int)(sizeof perf / sizeof perf[0])) max_count = (int)(sizeof perf / sizeof perf[0]);
  C1D_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(c->handle, c->xd, c->wd, c->cd, c->yd, max_count,
                                                   &returned, perf));
  if (choice == C1D_CUDNN_FASTEST) {
    const int nheur = returned;
    if ((st = find_fastest(s, c, perf, nheur, found, max_count, &returned))) goto done;
    list = found;
  }
  /* Pass 0 demands, with FMA math, an entry that reports FMA_MATH; pass 1 relaxes that (the descriptor
   * still restricts cuDNN to FMA kernels, and the probe checks it). */
  for (int pass = 0; pass < 2 && chosen < 0; pass++)
    for (int i = 0; i < returned && chosen < 0; i++) {
      if (list[i].status != CUDNN_STATUS_SUCCESS) continue;
      if (forced >= 0 && list[i].algo != (cudnnConvolutionFwdAlgo_t)forced) continue;
      if (choice == C1D_CUDNN_DETERMINISTIC && list[i].determinism != CUDNN_DETERMINISTIC) continue;
      if (list[i].memory > C1D_CUDNN_MAX_WORKSPACE) continue;
      if (!allow_tf32 && !lowp && pass == 0 && list[i].mathType != CUDNN_FMA_MATH) continue;
      chosen = i;
    }
  if (chosen < 0 && forced >= 0) {
    st = c1d_fail(C1D_ERR_UNSUPPORTED, "cuDNN does not offer %s (C1D_CUDNN_ALGO) for this shape%s",
                  algo_name((cudnnConvolutionFwdAlgo_t)forced), allow_tf32 || lowp ? "" : " with FMA math");
    goto done;
  }
  if (chosen < 0) {
    st = c1d_fail(C1D_ERR_UNSUPPORTED, "cuDNN offered no %s%s algorithm for this shape (%d candidates)",
                  choice == C1D_CUDNN_DETERMINISTIC ? "deterministic " : "",
                  lowp ? "bf16/fp16" : allow_tf32 ? "float32" : "FMA-math", returned);
    goto done;
  }
  c->algo = list[chosen].algo;
  if (choice == C1D_CUDNN_FASTEST) found_ms = list[chosen].time;
  C1D_CUDNN(cudnnSetConvolutionMathType(c->cd, allow_tf32 || lowp ? list[chosen].mathType : CUDNN_FMA_MATH));
  C1D_CUDNN(cudnnGetConvolutionForwardWorkspaceSize(c->handle, c->xd, c->wd, c->cd, c->yd, c->algo,
                                                    &c->workspace_bytes));
  if (c->workspace_bytes &&
      (st = c1d_gpu_malloc(&c->workspace, c->workspace_bytes, "the cuDNN workspace")))
    goto done;
  if (P > 0) {
    const size_t bytes = (size_t)(s->N * s->C * lp) * c->es;
    if ((st = c1d_gpu_malloc((void **)&c->xpad, bytes, "the cuDNN causal pad buffer"))) goto done;
  }

  // --- what was used -----------------------------------------------------------------------------
  if (!lowp && (st = run_probe(s, c, &probe))) goto done;
  if (c->xpad) /* zeroed after the probe ran; the pad columns stay zero (or take the states) from here on */
    C1D_CUDA(cudaMemset(c->xpad, 0, (size_t)(s->N * s->C * lp) * c->es));
  C1D_CUDA(cudaDeviceSynchronize());
  if (found_ms >= 0.0f)
    snprintf(c->algo_name, sizeof c->algo_name, "%s (%s: %.3f ms in cuDNN's search, %d timed)",
             algo_name(c->algo), forced >= 0 ? "C1D_CUDNN_ALGO" : choice_name(choice), (double)found_ms, returned);
  else
    snprintf(c->algo_name, sizeof c->algo_name, "%s (%s)", algo_name(c->algo),
             forced >= 0 ? "C1D_CUDNN_ALGO" : choice_name(choice));
  if (lowp) {
    c->used_tf32 = 0; /* no float32 inputs to round */
    snprintf(c->math, sizeof c->math, "%s data, fp32 compute (%s)", s->dt.x == C1D_DTYPE_BF16 ? "bf16" : "fp16",
             math_name(list[chosen].mathType));
  } else {
    const cudnnMathType_t m = list[chosen].mathType;
    const int reported_tf32 = m != CUDNN_FMA_MATH; /* float data: any other type permits TF32 */
    c->used_tf32 = probe >= 0 ? probe : reported_tf32;
    if (!allow_tf32)
      snprintf(c->math, sizeof c->math, c->used_tf32 ? "TF32 despite FMA_MATH (probe)" : "FMA (fp32)");
    else if (!c->used_tf32)
      snprintf(c->math, sizeof c->math, "FMA (cuDNN chose an fp32 algorithm although TF32 was allowed)");
    else
      snprintf(c->math, sizeof c->math, "TF32 tensor cores (%s%s)", math_name(m),
               probe < 0 ? ", unprobed" : reported_tf32 ? "" : ", probe");
  }
  ex->state = c;
  snprintf(ex->algo, sizeof ex->algo, "%s", c->algo_name);
  snprintf(ex->math, sizeof ex->math, "%s", c->math);
  ex->used_tf32 = c->used_tf32;
  return C1D_OK;
done:
  destroy_state(c);
  return st;
}

void c1d_cudnn_teardown(c1d_exec *ex) {
  destroy_state((cudnn_state *)ex->state);
  ex->state = NULL;
}

c1d_status c1d_cudnn_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                         c1d_exec *ex) {
  c1d_status st = C1D_OK;
  cudnn_state *c = (cudnn_state *)ex->state;
  const float one = 1.0f, zero = 0.0f;
  const int64_t P = c1d_pad(s);
  const void *xin = x;
  if (!c) return c1d_fail(C1D_ERR_INTERNAL, "cuDNN run without setup");
  C1D_CUDNN(cudnnSetStream(c->handle, (cudaStream_t)ex->stream));
  if (P > 0) {
    const size_t pitch = (size_t)(s->L + P) * c->es;
    C1D_CUDA(cudaMemcpy2DAsync((char *)c->xpad + P * c->es, pitch, x, (size_t)s->L * c->es,
                               (size_t)s->L * c->es, (size_t)(s->N * s->C), cudaMemcpyDeviceToDevice,
                               (cudaStream_t)ex->stream));
    if (s->states) /* the history before t = 0 in the pad columns */
      C1D_CUDA(cudaMemcpy2DAsync(c->xpad, pitch, ex->states, (size_t)P * c->es, (size_t)P * c->es,
                                 (size_t)(s->N * s->C), cudaMemcpyDeviceToDevice, (cudaStream_t)ex->stream));
    xin = c->xpad;
  }
  C1D_CUDNN(cudnnConvolutionForward(c->handle, &one, c->xd, xin, c->wd, w, c->cd, c->algo,
                                    c->workspace, c->workspace_bytes, &zero, c->yd, y));
  if (s->bias && s->dt.x != C1D_DTYPE_F32) {
    if ((st = c1d_launch_bias_add(s, b, y, ex->stream)) != C1D_OK) goto done;
  } else if (s->bias) {
    C1D_CUDNN(cudnnAddTensor(c->handle, &one, c->bd, b, &one, c->yd, y));
  }
  snprintf(ex->algo, sizeof ex->algo, "%s", c->algo_name);
  snprintf(ex->math, sizeof ex->math, "%s", c->math);
  ex->used_tf32 = c->used_tf32;
done:
  return st;
}

#endif
