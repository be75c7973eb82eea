/* c1d_tf32_mma_probe: how one TF32 mma.sync.m16n8k8 rounds its accumulation, read from crafted cases
 * (the measurement behind the 3xTF32 order and its CPU model: the eight products are summed exactly and
 * the result is rounded toward zero; notes/fast-kernels.md). Portable (any sm_80+ target). */
#include <stdint.h>

#include "gpu/check.h"
#include "reference/status.h"

/* d = a * b + d on one 16x8x8 TF32 tile. */
static __device__ __forceinline__ void mma_16x8x8(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                                  uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// --- probe: how one mma rounds its accumulation -----------------------------------------------------

/* Case i: D = C + sum_j A[0][j] * B[j][0] with C = c[i] and the eight products p[i][0..7] formed as
 * p * 1.0 (exact in TF32). Lane 0 writes D[0][0] to out[i]. */
static __global__ void tf32_probe_kernel(const float *c, const float *p, float *out, int cases) {
  const int lane = threadIdx.x, gid = lane >> 2, tig = lane & 3;
  for (int i = 0; i < cases; i++) {
    uint32_t a[4];
    /* A row 0 holds the products, B column 0 holds ones: a0 = A[gid][tig], a2 = A[gid][tig+4] */
    a[0] = gid == 0 ? __float_as_uint(p[8 * i + tig]) : 0u;
    a[1] = 0u;
    a[2] = gid == 0 ? __float_as_uint(p[8 * i + tig + 4]) : 0u;
    a[3] = 0u;
    const uint32_t one = __float_as_uint(1.0f);
    const uint32_t b0 = gid == 0 ? one : 0u, b1 = gid == 0 ? one : 0u; /* B[tig][gid], B[tig+4][gid] */
    float d[4] = {lane == 0 ? c[i] : 0.0f, 0.0f, 0.0f, 0.0f};
    mma_16x8x8(d, a, b0, b1);
    if (lane == 0) out[i] = d[0];
  }
}

/* Runs the probe cases on the device (host arrays in, host array out). C1D_ERR_CUDA on failure. */
extern "C" c1d_status c1d_tf32_mma_probe(const float *c, const float *p, float *out, int cases) {
  c1d_status st = C1D_OK;
  float *dc = NULL, *dp = NULL, *dout = NULL;
  C1D_CUDA(cudaMalloc((void **)&dc, sizeof(float) * cases));
  C1D_CUDA(cudaMalloc((void **)&dp, sizeof(float) * 8 * cases));
  C1D_CUDA(cudaMalloc((void **)&dout, sizeof(float) * cases));
  C1D_CUDA(cudaMemcpy(dc, c, sizeof(float) * cases, cudaMemcpyHostToDevice));
  C1D_CUDA(cudaMemcpy(dp, p, sizeof(float) * 8 * cases, cudaMemcpyHostToDevice));
  tf32_probe_kernel<<<1, 32>>>(dc, dp, dout, cases);
  C1D_LAUNCHED("tf32_probe_kernel");
  C1D_CUDA(cudaMemcpy(out, dout, sizeof(float) * cases, cudaMemcpyDeviceToHost));
done:
  cudaFree(dc);
  cudaFree(dp);
  cudaFree(dout);
  return st;
}
