/* What the CUDA implementation files share: the stream of an exec context, grid sizing that respects
 * the hardware limits (gridDim.x < 2^31, gridDim.y and gridDim.z <= 65535; kernels loop over what
 * one launch does not cover), and the grid-stride loops that go with it. CUDA C++ only. */
#ifndef C1D_GPU_LAUNCH_H
#define C1D_GPU_LAUNCH_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "gpu/check.h"
#include "reference/impl.h"

#define C1D_GRID_X_MAX INT64_C(2147483647)
#define C1D_GRID_YZ_MAX INT64_C(65535)

static inline cudaStream_t c1d_stream_of(const c1d_exec *ex) {
  return ex ? (cudaStream_t)ex->stream : (cudaStream_t)0;
}

static inline __host__ __device__ int64_t c1d_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* nx, ny, nz blocks wanted in each dimension, clamped to what one launch may have. */
static inline dim3 c1d_grid(int64_t nx, int64_t ny, int64_t nz) {
  return dim3((unsigned)(nx < C1D_GRID_X_MAX ? nx : C1D_GRID_X_MAX),
              (unsigned)(ny < C1D_GRID_YZ_MAX ? ny : C1D_GRID_YZ_MAX),
              (unsigned)(nz < C1D_GRID_YZ_MAX ? nz : C1D_GRID_YZ_MAX));
}

/* Block-uniform loops over (n, block of o, block of t): every thread of a block runs the same trips,
 * so a barrier inside the body is reached by all of them. */
#define C1D_FOR_BLOCK_Z(var, count) \
  for (int64_t var = blockIdx.z; var < (count); var += gridDim.z)
#define C1D_FOR_BLOCK_Y(var, count) \
  for (int64_t var = blockIdx.y; var < (count); var += gridDim.y)
#define C1D_FOR_BLOCK_X(var, count) \
  for (int64_t var = blockIdx.x; var < (count); var += gridDim.x)

/* The per-element GPU kernels (naive, tap_partial, kahan) launch blocks of this many positions. */
#define C1D_ELEMENT_BLOCK 256

#endif
