/* c1d_fma_ceiling: the FP32 FMA rate this GPU sustains, measured: every SM full of warps running
 * independent fma chains in registers (no memory traffic), timed by CUDA events. The ceiling that an
 * FP32 kernel keeping the naive order (one fma per product) cannot pass: `gpu_driver fma-ceiling` prints
 * it beside the peak at the GPU's top clock in the device check. Portable (any target). */
#include <stdint.h>

#include "gpu/check.h"
#include "gpu/device.h"
#include "reference/status.h"

#define CEIL_CHAINS 8  /* independent chains a thread: enough to cover the fma latency */
#define CEIL_ITERS 8192
#define CEIL_THREADS 256

static __global__ void fma_ceiling_kernel(float a, float b, float *out) {
  float v[CEIL_CHAINS];
#pragma unroll
  for (int i = 0; i < CEIL_CHAINS; i++) v[i] = (float)(threadIdx.x + i);
#pragma unroll 16
  for (int it = 0; it < CEIL_ITERS; it++)
#pragma unroll
    for (int i = 0; i < CEIL_CHAINS; i++) v[i] = fmaf(v[i], a, b);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < CEIL_CHAINS; i++) s += v[i];
  if (s == 12345.678f) out[0] = s; /* never true for these a, b: keeps the chains alive */
}

/* Runs the kernel `repeats` times (after one untimed run) on as many blocks of 256 threads as the SMs
 * hold at once, 64 times over; *tflops: the best run's FP32 FMA rate (2 flops per fma); *peak_tflops:
 * 128 FP32 lanes per SM (sm_80, sm_90) x 2 flops at the GPU's top clock, 0 if unknown. C1D_ERR_CUDA on
 * failure. */
extern "C" c1d_status c1d_fma_ceiling(int repeats, double *tflops, double *peak_tflops) {
  c1d_status st = C1D_OK;
  float *dout = NULL;
  c1d_gpu_timer *timer = NULL;
  int dev = 0, sms = 0, per_sm = 0, khz = 0;
  C1D_CUDA(cudaGetDevice(&dev));
  C1D_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) != cudaSuccess) khz = 0;
  *peak_tflops = sms * 128.0 * 2.0 * khz / 1e9;
  C1D_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fma_ceiling_kernel, CEIL_THREADS, 0));
  C1D_CUDA(cudaMalloc((void **)&dout, sizeof(float)));
  if ((st = c1d_gpu_timer_create(&timer)) != C1D_OK) goto done;
  {
    /* whole waves, enough of them that the launch and the last wave's tail are a small part */
    const int blocks = sms * (per_sm > 0 ? per_sm : 1) * 64;
    const double flops = 2.0 * blocks * CEIL_THREADS * (double)CEIL_CHAINS * CEIL_ITERS;
    *tflops = 0.0;
    for (int r = 0; r < repeats + 1; r++) {
      double ms = 0.0;
      if ((st = c1d_gpu_timer_start(timer)) != C1D_OK) goto done;
      fma_ceiling_kernel<<<blocks, CEIL_THREADS>>>(0.999999f, 1e-6f, dout);
      C1D_LAUNCHED("fma_ceiling_kernel");
      if ((st = c1d_gpu_timer_stop(timer, &ms)) != C1D_OK) goto done;
      const double tf = flops / (ms * 1e-3) / 1e12;
      if (r > 0 && tf > *tflops) *tflops = tf;
    }
  }
done:
  c1d_gpu_timer_destroy(timer);
  cudaFree(dout);
  return st;
}
