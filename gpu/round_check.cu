/* c1d_gpu_round_mismatches (gpu/round_check.h): one thread per 64 inputs, all 2^32 of them. */
#include "gpu/check.h"
#include "gpu/pack_round.h"
#include "gpu/round_check.h"

__global__ void round_check_kernel(bool bf16, unsigned long long *mismatches, unsigned *first) {
  unsigned long long bad = 0;
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (UINT64_C(1) << 32);
       i += (uint64_t)gridDim.x * blockDim.x) {
    const float v = __uint_as_float((unsigned)i);
    if (v != v) continue;
    const uint32_t got = bf16 ? c1d_pack2_bf16_rn(v, -v) : c1d_pack2_f16_rn(v, -v);
    const uint32_t want = bf16 ? (uint32_t)c1d_float_to_bf16_bits(v) | (uint32_t)c1d_float_to_bf16_bits(-v) << 16
                               : (uint32_t)c1d_float_to_f16_bits(v) | (uint32_t)c1d_float_to_f16_bits(-v) << 16;
    if (got != want) {
      bad++;
      atomicMin(first, (unsigned)i);
    }
  }
  if (bad) atomicAdd(mismatches, bad);
}

extern "C" c1d_status c1d_gpu_round_mismatches(c1d_dtype d, uint64_t *mismatches, uint32_t *first) {
  c1d_status st = C1D_OK;
  unsigned long long *d_bad = NULL;
  unsigned *d_first = NULL;
  unsigned long long h_bad = 0;
  unsigned h_first = 0xffffffffu;
  C1D_CUDA(cudaMalloc(&d_bad, sizeof *d_bad));
  C1D_CUDA(cudaMalloc(&d_first, sizeof *d_first));
  C1D_CUDA(cudaMemcpy(d_bad, &h_bad, sizeof h_bad, cudaMemcpyHostToDevice));
  C1D_CUDA(cudaMemcpy(d_first, &h_first, sizeof h_first, cudaMemcpyHostToDevice));
  round_check_kernel<<<(unsigned)((UINT64_C(1) << 32) / 64 / 256), 256>>>(d == C1D_DTYPE_BF16, d_bad, d_first);
  C1D_LAUNCHED("round_check_kernel");
  C1D_CUDA(cudaMemcpy(&h_bad, d_bad, sizeof h_bad, cudaMemcpyDeviceToHost));
  C1D_CUDA(cudaMemcpy(&h_first, d_first, sizeof h_first, cudaMemcpyDeviceToHost));
  *mismatches = h_bad;
  *first = h_first;
done:
  cudaFree(d_bad);
  cudaFree(d_first);
  return st;
}
