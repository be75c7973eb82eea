/* c1d_fma_ceiling: the FP32 FMA rate this GPU sustains, measured: every SM full of warps running
 * independent fma chains in registers (no memory traffic), timed by CUDA events, with the SM clock the
 * kernel ran at (clock64 cycles over the event time). The ceiling that an FP32 kernel keeping the naive
 * order (one fma per product) cannot pass: `gpu_driver fma-ceiling` prints it beside cuDNN's rows in the
 * device check. Portable (any target). */
#include <stdint.h>

#include "gpu/check.h"
#include "reference/status.h"

#define CEIL_CHAINS 8  /* independent chains a thread: enough to cover the fma latency */
#define CEIL_ITERS 8192
#define CEIL_THREADS 256

static __global__ void fma_ceiling_kernel(float a, float b, float *out, long long *cycles) {
  float v[CEIL_CHAINS];
#pragma unroll
  for (int i = 0; i < CEIL_CHAINS; i++) v[i] = (float)(threadIdx.x + i);
  /* the empty asm statements pin the chains between the two clock reads (the compiler may move plain
   * arithmetic across a clock read) */
  const long long c0 = clock64();
#pragma unroll
  for (int i = 0; i < CEIL_CHAINS; i++) asm volatile("" : "+f"(v[i]));
#pragma unroll 16
  for (int it = 0; it < CEIL_ITERS; it++)
#pragma unroll
    for (int i = 0; i < CEIL_CHAINS; i++) v[i] = fmaf(v[i], a, b);
#pragma unroll
  for (int i = 0; i < CEIL_CHAINS; i++) asm volatile("" : "+f"(v[i]));
  const long long c1 = clock64();
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < CEIL_CHAINS; i++) s += v[i];
  if (s == 12345.678f) out[0] = s; /* never true for these a, b: keeps the chains alive */
  if (threadIdx.x == 0) cycles[blockIdx.x] = c1 - c0;
}

/* Runs the kernel `repeats` times on as many blocks of 256 threads as the SMs hold at once (one wave); *tflops: the best run's FP32 FMA rate
 * (2 flops per fma), *ghz: that run's SM clock (clock64 cycles of a block over the event time). C1D_ERR_CUDA on failure. */
extern "C" c1d_status c1d_fma_ceiling(int repeats, double *tflops, double *ghz) {
  c1d_status st = C1D_OK;
  float *dout = NULL;
  long long *dcyc = NULL, *hcyc = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  int dev = 0, sms = 0, per_sm = 0;
  C1D_CUDA(cudaGetDevice(&dev));
  C1D_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  C1D_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fma_ceiling_kernel, CEIL_THREADS, 0));
  {
    const int blocks = sms * (per_sm > 0 ? per_sm : 1); /* one wave: every block runs the whole time */
    hcyc = (long long *)malloc(sizeof(long long) * blocks);
    if (!hcyc) {
      st = c1d_fail(C1D_ERR_NO_MEMORY, "fma ceiling: no host memory");
      goto done;
    }
    C1D_CUDA(cudaMalloc((void **)&dout, sizeof(float)));
    C1D_CUDA(cudaMalloc((void **)&dcyc, sizeof(long long) * blocks));
    C1D_CUDA(cudaEventCreate(&e0));
    C1D_CUDA(cudaEventCreate(&e1));
    const double flops = 2.0 * blocks * CEIL_THREADS * (double)CEIL_CHAINS * CEIL_ITERS;
    *tflops = 0.0;
    *ghz = 0.0;
    for (int r = 0; r < repeats + 1; r++) { /* the first run warms the clocks and is not counted */
      C1D_CUDA(cudaEventRecord(e0));
      fma_ceiling_kernel<<<blocks, CEIL_THREADS>>>(0.999999f, 1e-6f, dout, dcyc);
      C1D_LAUNCHED("fma_ceiling_kernel");
      C1D_CUDA(cudaEventRecord(e1));
      C1D_CUDA(cudaEventSynchronize(e1));
      float ms = 0.0f;
      C1D_CUDA(cudaEventElapsedTime(&ms, e0, e1));
      C1D_CUDA(cudaMemcpy(hcyc, dcyc, sizeof(long long) * blocks, cudaMemcpyDeviceToHost));
      double cyc = 0.0;
      for (int i = 0; i < blocks; i++) cyc += (double)hcyc[i];
      cyc /= blocks;
      const double tf = flops / (ms * 1e-3) / 1e12;
      if (r > 0 && tf > *tflops) {
        *tflops = tf;
        *ghz = cyc / (ms * 1e-3) / 1e9; /* a lower bound: the event time includes the launch */
      }
    }
  }
done:
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  cudaFree(dout);
  cudaFree(dcyc);
  free(hcyc);
  return st;
}
