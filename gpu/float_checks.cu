/* gpu/float_checks.h: one kernel per check, one thread per 64 inputs, all 2^32 of them. */
#include "gpu/check.h"
#include "gpu/float_checks.h"
#include "gpu/pack_round.h"
#include "numerics/activation.h"

/* This thread's inputs: every gridDim.x * blockDim.x-th bit pattern from its index on. */
#define FIRST_INPUT ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x)
#define INPUT_STEP ((uint64_t)gridDim.x * blockDim.x)

__global__ void silu_check_kernel(int /* unused */, unsigned long long *mismatches, unsigned *first) {
  unsigned long long bad = 0;
  for (uint64_t i = FIRST_INPUT; i < (UINT64_C(1) << 32); i += INPUT_STEP) {
    const float v = __uint_as_float((unsigned)i);
    const float got = c1d_silu_f32(v), want = __fdiv_rn(v, c1d_add(1.0f, c1d_exp_f32(-v)));
    if (__float_as_uint(got) != __float_as_uint(want) && !(got != got && want != want)) {
      bad++;
      atomicMin(first, (unsigned)i);
    }
  }
  if (bad) atomicAdd(mismatches, bad);
}

__global__ void round_check_kernel(int bf16, unsigned long long *mismatches, unsigned *first) {
  unsigned long long bad = 0;
  for (uint64_t i = FIRST_INPUT; i < (UINT64_C(1) << 32); i += INPUT_STEP) {
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

/* Runs a check kernel over every float and reads back its count and first mismatch. */
static c1d_status every_float(void (*kernel)(int, unsigned long long *, unsigned *), int mode, const char *name,
                              uint64_t *mismatches, uint32_t *first) {
  c1d_status st = C1D_OK;
  unsigned long long *d_bad = NULL;
  unsigned *d_first = NULL;
  unsigned long long h_bad = 0;
  unsigned h_first = 0xffffffffu;
  C1D_CUDA(cudaMalloc(&d_bad, sizeof *d_bad));
  C1D_CUDA(cudaMalloc(&d_first, sizeof *d_first));
  C1D_CUDA(cudaMemcpy(d_bad, &h_bad, sizeof h_bad, cudaMemcpyHostToDevice));
  C1D_CUDA(cudaMemcpy(d_first, &h_first, sizeof h_first, cudaMemcpyHostToDevice));
  kernel<<<(unsigned)((UINT64_C(1) << 32) / 64 / 256), 256>>>(mode, d_bad, d_first);
  C1D_LAUNCHED(name);
  C1D_CUDA(cudaMemcpy(&h_bad, d_bad, sizeof h_bad, cudaMemcpyDeviceToHost));
  C1D_CUDA(cudaMemcpy(&h_first, d_first, sizeof h_first, cudaMemcpyDeviceToHost));
  *mismatches = h_bad;
  *first = h_first;
done:
  cudaFree(d_bad);
  cudaFree(d_first);
  return st;
}

extern "C" c1d_status c1d_gpu_silu_mismatches(uint64_t *mismatches, uint32_t *first) {
  return every_float(silu_check_kernel, 0, "silu_check_kernel", mismatches, first);
}

extern "C" c1d_status c1d_gpu_round_mismatches(c1d_dtype d, uint64_t *mismatches, uint32_t *first) {
  return every_float(round_check_kernel, d == C1D_DTYPE_BF16, "round_check_kernel", mismatches, first);
}
