/* The copy as a kernel (device.h, c1d_gpu_copy_kernel_async): the baseline of bench_dw's stream timing.
 * In a CUDA graph a cudaMemcpyAsync becomes a memcpy node, which the H200 ran on a copy engine at two
 * thirds of the SMs' rate on large slices (2.7 against 4.2 TB/s, 2026-12-04); a kernel node is what a
 * depthwise kernel is compared with there. One 16-byte vector a thread, as the fastest plain copies do. */
#include <cuda_runtime.h>
#include <stdint.h>

#include "gpu/device.h"
#include "gpu/launch.h"

__global__ void c1d_copy16_kernel(uint4 *__restrict__ dst, const uint4 *__restrict__ src, int64_t vectors) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < vectors; i += (int64_t)gridDim.x * blockDim.x)
    dst[i] = src[i];
}

extern "C" c1d_status c1d_gpu_copy_kernel_async(void *dst, const void *src, size_t bytes, void *stream) {
  c1d_status st = C1D_OK;
  if (((uintptr_t)dst | (uintptr_t)src | bytes) % 16 != 0)
    return c1d_fail(C1D_ERR_USAGE, "the copy kernel copies 16-byte aligned 16-byte vectors (%zu bytes)", bytes);
  {
    const int64_t vectors = (int64_t)(bytes / 16);
    c1d_copy16_kernel<<<c1d_grid(c1d_ceil_div(vectors, 256), 1, 1), 256, 0, (cudaStream_t)stream>>>(
        (uint4 *)dst, (const uint4 *)src, vectors);
    C1D_LAUNCHED("c1d_copy16_kernel");
  }
done:
  return st;
}
