/* The causal conv1d of conv1d.h as a CUDA kernel: a block per tile of CONV1D_TILE positions of one
 * (n, o), a thread per position, each output conv1d_output's float32 sum over c and k, conv1d.c's order
 * (built with --fmad=false: nvcc contracts nothing into fused multiply-adds). */
#include <cuda_runtime.h>

#include "conv1d.h"

__global__ void conv1d_kernel(const float *x, const float *w, const float *b, float *y, int C, int O, int L, int K,
                              int D) {
  const int n = blockIdx.z, o = blockIdx.y, t = blockIdx.x * CONV1D_TILE + threadIdx.x;
  if (t < L) y[((long)n * O + o) * L + t] = conv1d_output(x, w, b, n, o, t, C, L, K, D);
}

extern "C" int conv1d_cuda(const float *x, const float *w, const float *b, float *y, int N, int C, int O, int L,
                           int K, int D) {
  const dim3 grid((L + CONV1D_TILE - 1) / CONV1D_TILE, O, N);
  conv1d_kernel<<<grid, CONV1D_TILE>>>(x, w, b, y, C, O, L, K, D);
  return (int)cudaGetLastError();
}
