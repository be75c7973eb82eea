/* The causal conv1d of conv1d.h as a CUDA kernel: a block per tile of CONV1D_TILE positions of one
 * (n, o), a thread per position, the float32 sum over c and k in conv1d.c's order (fmaf written out as
 * a product and a sum, so that nvcc contracts nothing: build with --fmad=false, or keep it this way). */
#include <cuda_runtime.h>

#include "conv1d.h"

__global__ void conv1d_kernel(const float *x, const float *w, const float *b, float *y, int C, int O, int L, int K,
                              int D) {
  const int n = blockIdx.z, o = blockIdx.y, t = blockIdx.x * CONV1D_TILE + threadIdx.x;
  if (t >= L) return;
  float acc = b[o];
  for (int c = 0; c < C; c++)
    for (int k = 0; k < K; k++) {
      const int src = t - (K - 1 - k) * D;
      if (src < 0) continue; /* the causal zeros */
      const float v = x[((long)n * C + c) * L + src];
      acc = __fadd_rn(acc, __fmul_rn(w[((long)o * C + c) * K + k], k == 0 ? staged(v, o, c, t) : v));
    }
  y[((long)n * O + o) * L + t] = acc;
}

extern "C" int conv1d_cuda(const float *x, const float *w, const float *b, float *y, int N, int C, int O, int L,
                           int K, int D) {
  const dim3 grid((L + CONV1D_TILE - 1) / CONV1D_TILE, O, N);
  conv1d_kernel<<<grid, CONV1D_TILE>>>(x, w, b, y, C, O, L, K, D);
  return (int)cudaGetLastError();
}
