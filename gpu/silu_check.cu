/* c1d_gpu_silu_mismatches (gpu/silu_check.h): one thread per 64 inputs, all 2^32 of them. */
#include "gpu/check.h"
#include "gpu/silu_check.h"
#include "numerics/activation.h"

__global__ void silu_check_kernel(unsigned long long *mismatches, unsigned *first) {
  unsigned long long bad = 0;
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (UINT64_C(1) << 32);
       i += (uint64_t)gridDim.x * blockDim.x) {
    const float v = __uint_as_float((unsigned)i);
    const float got = c1d_silu_f32(v), want = __fdiv_rn(v, c1d_add(1.0f, c1d_exp_f32(-v)));
    if (__float_as_uint(got) != __float_as_uint(want) && !(got != got && want != want)) {
      bad++;
      atomicMin(first, (unsigned)i);
    }
  }
  if (bad) atomicAdd(mismatches, bad);
}

extern "C" c1d_status c1d_gpu_silu_mismatches(uint64_t *mismatches, uint32_t *first) {
  c1d_status st = C1D_OK;
  unsigned long long *d_bad = NULL;
  unsigned *d_first = NULL;
  unsigned long long h_bad = 0;
  unsigned h_first = 0xffffffffu;
  C1D_CUDA(cudaMalloc(&d_bad, sizeof *d_bad));
  C1D_CUDA(cudaMalloc(&d_first, sizeof *d_first));
  C1D_CUDA(cudaMemcpy(d_bad, &h_bad, sizeof h_bad, cudaMemcpyHostToDevice));
  C1D_CUDA(cudaMemcpy(d_first, &h_first, sizeof h_first, cudaMemcpyHostToDevice));
  silu_check_kernel<<<(unsigned)((UINT64_C(1) << 32) / 64 / 256), 256>>>(d_bad, d_first);
  C1D_LAUNCHED("silu_check_kernel");
  C1D_CUDA(cudaMemcpy(&h_bad, d_bad, sizeof h_bad, cudaMemcpyDeviceToHost));
  C1D_CUDA(cudaMemcpy(&h_first, d_first, sizeof h_first, cudaMemcpyDeviceToHost));
  *mismatches = h_bad;
  *first = h_first;
done:
  cudaFree(d_bad);
  cudaFree(d_first);
  return st;
}
