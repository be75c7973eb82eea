/* A user's causal conv1d (PyTorch's Conv1d(F.pad(x, ((K-1)*D, 0))) with a bias), the kind of kernel a
 * test suite checks: x (N, C, L), w (O, C, K), b (O), y (N, O, L), float32. conv1d.c runs it on the
 * CPU, conv1d_cuda.cu as a CUDA kernel (built where nvcc is), both in the same order. */
#ifndef CONV1D_H
#define CONV1D_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define CONV1D_HD __host__ __device__
#else
#define CONV1D_HD
#endif

/* The width of the time tiles conv1d works in (on the GPU: one block of threads). */
#define CONV1D_TILE 64

#ifdef __cplusplus
extern "C" {
#endif

void conv1d(const float *x, const float *w, const float *b, float *y, int N, int C, int O, int L, int K, int D);

/* The same on the GPU: every pointer device memory; 0 (cudaSuccess) or the CUDA error of the launch. */
int conv1d_cuda(const float *x, const float *w, const float *b, float *y, int N, int C, int O, int L, int K, int D);

#ifdef __cplusplus
}
#endif

/* Built with -DPLANTED_BUG the kernels carry a bug of the kind that survives allclose: at the last 4
 * positions of each tile, output channel 5 reads tap 0 of input channel 0 through a staging copy that
 * keeps 10 of x's 23 mantissa bits. The error is below 2^-10 |w x| (6e-5 for |w| <= 1/16 and |x| <= 1),
 * under allclose's atol of 1e-4, and a hundred times float32's rounding noise: no correct kernel makes
 * it. Without it, staged() is the identity. */
static inline CONV1D_HD float staged(float v, int o, int c, int t) {
#ifdef PLANTED_BUG
  if (o != 5 || c != 0 || t % CONV1D_TILE < CONV1D_TILE - 4) return v;
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  u &= ~UINT32_C(0x1fff); /* the staging buffer's type holds 10 mantissa bits */
  memcpy(&v, &u, sizeof v);
#else
  (void)o;
  (void)c;
  (void)t;
#endif
  return v;
}

/* One output y[n, o, t]: b[o], then the products of c and k in order, each added in float32 (the
 * order both kernels keep; nvcc with --fmad=false, gcc without -mfma: no fused multiply-add). */
static inline CONV1D_HD float conv1d_output(const float *x, const float *w, const float *b, int n, int o, int t,
                                            int C, int L, int K, int D) {
  float acc = b[o];
  for (int c = 0; c < C; c++)
    for (int k = 0; k < K; k++) {
      const int src = t - (K - 1 - k) * D;
      if (src < 0) continue; /* the causal zeros */
      const float v = x[((long)n * C + c) * L + src];
      acc += w[((long)o * C + c) * K + k] * (k == 0 ? staged(v, o, c, t) : v);
    }
  return acc;
}

#endif
