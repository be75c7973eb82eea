/* The device layer: see device.h. Plain C over the CUDA runtime API. */
#include "gpu/device.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef C1D_HAVE_CUDNN
#include "gpu/cublas_lazy.h"
#include <cudnn.h>
#endif

#include "gpu/check.h"

const char *c1d_gpu_unavailable(void) {
  static int checked = 0;
  static char reason[256];
  if (!checked) {
    int count = 0, driver = 0, runtime = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    cudaDriverGetVersion(&driver); /* 0 when no driver is installed */
    cudaRuntimeGetVersion(&runtime);
    /* Without a driver the runtime says "CUDA driver version is insufficient", which sends a user
     * looking for a driver update on a machine that has no GPU at all. */
    if (e == cudaSuccess && count > 0)
      reason[0] = '\0';
    else if (e == cudaSuccess || e == cudaErrorNoDevice || (e == cudaErrorInsufficientDriver && driver == 0))
      snprintf(reason, sizeof reason, "no CUDA device (no driver or no GPU)");
    else if (e == cudaErrorInsufficientDriver)
      snprintf(reason, sizeof reason, "no CUDA device: the driver supports CUDA %d.%d, this build needs %d.%d",
               driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    else
      snprintf(reason, sizeof reason, "no CUDA device: %s", cudaGetErrorString(e));
    checked = 1;
  }
  return reason[0] ? reason : NULL;
}

static c1d_status require_device(void) {
  const char *why = c1d_gpu_unavailable();
  return why ? c1d_fail(C1D_ERR_NO_DEVICE, "%s", why) : C1D_OK;
}

c1d_status c1d_gpu_get_info(c1d_gpu_info *info) {
  c1d_status st = require_device();
  struct cudaDeviceProp p;
  if (st != C1D_OK) return st;
  C1D_CUDA(cudaGetDeviceProperties(&p, 0));
  snprintf(info->name, sizeof info->name, "%.127s", p.name);
  info->sm_count = p.multiProcessorCount;
  info->cc_major = p.major;
  info->cc_minor = p.minor;
  info->global_mem = (int64_t)p.totalGlobalMem;
  info->l2_bytes = p.l2CacheSize;
  info->smem_per_block_optin = (int64_t)p.sharedMemPerBlockOptin;
  C1D_CUDA(cudaDriverGetVersion(&info->driver_version));
  C1D_CUDA(cudaRuntimeGetVersion(&info->runtime_version));
#ifdef C1D_HAVE_CUDNN
  info->cudnn_version = (long)cudnnGetVersion();
  info->cublas_version = 0;
  {
    int v = 0;
    if (cublasLtGetProperty(MAJOR_VERSION, &v) == CUBLAS_STATUS_SUCCESS) { /* loads cuBLASLt */
      int mi = 0, pa = 0;
      cublasLtGetProperty(MINOR_VERSION, &mi);
      cublasLtGetProperty(PATCH_LEVEL, &pa);
      info->cublas_version = v * 10000 + mi * 100 + pa;
    }
  }
#else
  info->cudnn_version = 0;
  info->cublas_version = 0;
#endif
done:
  return st;
}

c1d_status c1d_gpu_malloc(void **ptr, size_t bytes, const char *what) {
  c1d_status st = require_device();
  if (st != C1D_OK) return st;
  *ptr = NULL;
  cudaError_t e = cudaMalloc(ptr, bytes);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError(); /* clear the sticky-free allocation error */
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    return c1d_fail(C1D_ERR_DEVICE_MEMORY,
                    "out of device memory allocating %s: %.2f GiB requested, %.2f GiB free of %.2f",
                    what, bytes / 1073741824.0, free_b / 1073741824.0, total_b / 1073741824.0);
  }
  C1D_CUDA(e);
done:
  return st;
}

void c1d_gpu_free(void *ptr) {
  if (ptr) cudaFree(ptr);
}

c1d_status c1d_gpu_upload(void *dst, const void *src, size_t bytes) {
  c1d_status st = C1D_OK;
  C1D_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
done:
  return st;
}

c1d_status c1d_gpu_download(void *dst, const void *src, size_t bytes) {
  c1d_status st = C1D_OK;
  C1D_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
done:
  return st;
}

c1d_status c1d_gpu_poison(float *ptr, int64_t count) {
  c1d_status st = C1D_OK;
  /* 0xFF bytes form the quiet NaN 0xFFFFFFFF in every float. */
  C1D_CUDA(cudaMemset(ptr, 0xff, (size_t)count * sizeof(float)));
done:
  return st;
}

c1d_status c1d_gpu_poison_bytes(void *ptr, size_t bytes) {
  c1d_status st = C1D_OK;
  C1D_CUDA(cudaMemset(ptr, 0xff, bytes));
done:
  return st;
}

c1d_status c1d_gpu_synchronize(void) {
  c1d_status st = C1D_OK;
  C1D_CUDA(cudaDeviceSynchronize());
done:
  return st;
}

c1d_status c1d_gpu_flush_l2(void) {
  static void *scratch = NULL;
  static size_t scratch_bytes = 0;
  static int flips = 0;
  c1d_status st = C1D_OK;
  if (!scratch) {
    int l2 = 0;
    C1D_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    scratch_bytes = (size_t)(l2 > 0 ? l2 : 64 << 20) * 2; /* twice the L2 evicts it */
    st = c1d_gpu_malloc(&scratch, scratch_bytes, "the L2 flush buffer");
    if (st != C1D_OK) return st;
  }
  C1D_CUDA(cudaMemset(scratch, (flips++) & 0xff, scratch_bytes));
done:
  return st;
}

struct c1d_gpu_timer {
  cudaEvent_t start, stop;
};

c1d_status c1d_gpu_timer_create(c1d_gpu_timer **timer) {
  c1d_status st = require_device();
  c1d_gpu_timer *t = NULL;
  if (st != C1D_OK) return st;
  t = calloc(1, sizeof *t);
  if (!t) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate a GPU timer");
  C1D_CUDA(cudaEventCreate(&t->start));
  C1D_CUDA(cudaEventCreate(&t->stop));
  *timer = t;
  return C1D_OK;
done:
  c1d_gpu_timer_destroy(t);
  return st;
}

void c1d_gpu_timer_destroy(c1d_gpu_timer *timer) {
  if (!timer) return;
  if (timer->start) cudaEventDestroy(timer->start);
  if (timer->stop) cudaEventDestroy(timer->stop);
  free(timer);
}

c1d_status c1d_gpu_timer_start(c1d_gpu_timer *timer) {
  c1d_status st = C1D_OK;
  C1D_CUDA(cudaEventRecord(timer->start, 0));
done:
  return st;
}

c1d_status c1d_gpu_timer_stop(c1d_gpu_timer *timer, double *ms) {
  c1d_status st = C1D_OK;
  float elapsed = 0.0f;
  C1D_CUDA(cudaEventRecord(timer->stop, 0));
  C1D_CUDA(cudaEventSynchronize(timer->stop));
  C1D_CUDA(cudaEventElapsedTime(&elapsed, timer->start, timer->stop));
  *ms = elapsed;
done:
  return st;
}

static int compare_doubles(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

c1d_status c1d_gpu_copy_bandwidth(size_t bytes, int repeats, double *gbps) {
  c1d_status st = C1D_OK;
  void *src = NULL, *dst = NULL;
  c1d_gpu_timer *timer = NULL;
  double *ms = NULL;
  *gbps = 0.0;
  if (repeats < 1 || bytes == 0) return c1d_fail(C1D_ERR_USAGE, "copy bandwidth: %d repeats of %zu bytes", repeats, bytes);
  if (!(ms = malloc((size_t)repeats * sizeof *ms))) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate %d timings", repeats);
  if ((st = c1d_gpu_malloc(&src, bytes, "the copy benchmark's source")) != C1D_OK) goto done;
  if ((st = c1d_gpu_malloc(&dst, bytes, "the copy benchmark's destination")) != C1D_OK) goto done;
  if ((st = c1d_gpu_timer_create(&timer)) != C1D_OK) goto done;
  C1D_CUDA(cudaMemset(src, 0x3c, bytes)); /* never all-zero */
  C1D_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice)); /* warm-up */
  for (int r = 0; r < repeats; r++) {
    if ((st = c1d_gpu_flush_l2()) != C1D_OK) goto done;
    if ((st = c1d_gpu_timer_start(timer)) != C1D_OK) goto done;
    C1D_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0));
    if ((st = c1d_gpu_timer_stop(timer, &ms[r])) != C1D_OK) goto done;
  }
  qsort(ms, (size_t)repeats, sizeof *ms, compare_doubles);
  {
    const double median = repeats % 2 ? ms[repeats / 2] : 0.5 * (ms[repeats / 2 - 1] + ms[repeats / 2]);
    *gbps = 2.0 * (double)bytes / (median * 1e6);
  }
done:
  c1d_gpu_timer_destroy(timer);
  c1d_gpu_free(src);
  c1d_gpu_free(dst);
  free(ms);
  return st;
}

c1d_status c1d_gpu_graph_time(c1d_gpu_enqueue_fn enqueue, void *ctx, int launches, int repeats, double *ms) {
  c1d_status st = require_device();
  cudaStream_t stream = NULL;
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  cudaEvent_t start = NULL, stop = NULL;
  double *t = NULL;
  int capturing = 0;
  *ms = 0.0;
  if (st != C1D_OK) return st;
  if (launches < 1 || repeats < 1)
    return c1d_fail(C1D_ERR_USAGE, "graph timing: %d launches, %d repeats (each needs >= 1)", launches, repeats);
  if (!(t = malloc((size_t)repeats * sizeof *t))) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate %d timings", repeats);
  C1D_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  C1D_CUDA(cudaEventCreate(&start));
  C1D_CUDA(cudaEventCreate(&stop));
  C1D_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  capturing = 1;
  for (int i = 0; i < launches && st == C1D_OK; i++) st = enqueue(ctx, i, stream);
  capturing = 0;
  {
    const cudaError_t e = cudaStreamEndCapture(stream, &graph); /* ends the capture even after a failure */
    if (st != C1D_OK) goto done;
    C1D_CUDA(e);
  }
  C1D_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  C1D_CUDA(cudaGraphLaunch(exec, stream)); /* the warm-up: uploads the graph, loads the modules */
  C1D_CUDA(cudaStreamSynchronize(stream));
  for (int r = 0; r < repeats; r++) {
    float elapsed = 0.0f;
    C1D_CUDA(cudaEventRecord(start, stream));
    C1D_CUDA(cudaGraphLaunch(exec, stream));
    C1D_CUDA(cudaEventRecord(stop, stream));
    C1D_CUDA(cudaEventSynchronize(stop));
    C1D_CUDA(cudaEventElapsedTime(&elapsed, start, stop));
    t[r] = elapsed;
  }
  qsort(t, (size_t)repeats, sizeof *t, compare_doubles);
  *ms = (repeats % 2 ? t[repeats / 2] : 0.5 * (t[repeats / 2 - 1] + t[repeats / 2])) / launches;
done:
  if (capturing) {
    cudaGraph_t g = NULL;
    if (cudaStreamEndCapture(stream, &g) == cudaSuccess && g) cudaGraphDestroy(g);
    (void)cudaGetLastError();
  }
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
  if (start) cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  if (stream) cudaStreamDestroy(stream);
  free(t);
  return st;
}

typedef struct copy_slices {
  unsigned char *src, *dst;
  size_t bytes, stride;
  int sets;
} copy_slices;

static c1d_status enqueue_copy(void *ctx, int i, void *stream) {
  const copy_slices *c = ctx;
  const size_t at = (size_t)(i % c->sets) * c->stride;
  return c1d_gpu_copy_kernel_async(c->dst + at, c->src + at, c->bytes, stream);
}

c1d_status c1d_gpu_copy_bandwidth_stream(size_t bytes, int sets, int launches, int repeats, double *gbps) {
  c1d_status st = C1D_OK;
  copy_slices c = {NULL, NULL, bytes, (bytes + 255) / 256 * 256, sets};
  double ms = 0.0;
  *gbps = 0.0;
  if (bytes == 0 || sets < 1)
    return c1d_fail(C1D_ERR_USAGE, "copy bandwidth: %d sets of %zu bytes (each needs >= 1)", sets, bytes);
  if ((st = c1d_gpu_malloc((void **)&c.src, c.stride * sets, "the copy benchmark's source")) != C1D_OK) goto done;
  if ((st = c1d_gpu_malloc((void **)&c.dst, c.stride * sets, "the copy benchmark's destination")) != C1D_OK) goto done;
  C1D_CUDA(cudaMemset(c.src, 0x3c, c.stride * sets)); /* never all-zero */
  if ((st = c1d_gpu_graph_time(enqueue_copy, &c, launches, repeats, &ms)) != C1D_OK) goto done;
  *gbps = 2.0 * (double)bytes / (ms * 1e6);
done:
  c1d_gpu_free(c.src);
  c1d_gpu_free(c.dst);
  return st;
}
