/* im2col and fills for the cuBLAS baselines (see im2col.h). Pure data movement: no arithmetic, so these
 * kernels add no rounding; the GEMM after them decides the accumulation order (cuBLAS's, unknown).
 * Index arithmetic is 64-bit throughout (the unfolded matrix of the headline shape has 2^28 elements). */
#include <cuda_runtime.h>

#include "gpu/check.h"
#include "gpu/grouped_element.h"
#include "gpu/im2col.h"

// --- kernels -------------------------------------------------------------------------------------

/* One thread per xcol element, grid-stride; consecutive threads take consecutive t, so both the read of
 * x (shifted by a constant per row) and the write of xcol are coalesced. */
__global__ void im2col_kernel(c1d_shape s, const float *__restrict__ x, float *__restrict__ xcol) {
  const int64_t total = s.N * s.C * s.K * s.L;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t t = i % s.L;
    const int64_t row = i / s.L; /* (n*C + c)*K + k */
    const int64_t k = row % s.K;
    const int64_t nc = row / s.K; /* n*C + c */
    const int64_t src = c1d_source_time(&s, t, k);
    xcol[i] = src >= 0 ? x[nc * s.L + src] : 0.0f;
  }
}

__global__ void bias_fill_kernel(c1d_shape s, const float *__restrict__ b, float *__restrict__ y) {
  const int64_t total = c1d_y_count(&s);
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x)
    y[i] = b[(i / s.L) % s.O];
}

__global__ void fill_kernel(float *__restrict__ p, int64_t count, float value) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count;
       i += (int64_t)gridDim.x * blockDim.x)
    p[i] = value;
}

/* Uniform values in [-scale, scale) from a hash of the index: timing inputs that are neither zeros nor a
 * constant (the tensor cores' speed depends a little on the data). */
static __device__ __forceinline__ float hashed_value(int64_t i, uint32_t seed, float scale) {
  uint32_t h = (uint32_t)i * 0x9E3779B1u ^ (uint32_t)(i >> 32) ^ seed;
  h ^= h >> 16, h *= 0x85EBCA6Bu, h ^= h >> 13, h *= 0xC2B2AE35u, h ^= h >> 16;
  return scale * ((float)(h >> 8) * (2.0f / 16777216.0f) - 1.0f);
}

__global__ void fill_hashed_kernel(float *__restrict__ p, int64_t count, uint32_t seed, float scale) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count;
       i += (int64_t)gridDim.x * blockDim.x)
    p[i] = hashed_value(i, seed, scale);
}

/* The hashed values of fill_hashed_kernel, rounded to d and stored in d. */
__global__ void fill_hashed_as_kernel(void *__restrict__ p, c1d_dtype d, int64_t count, uint32_t seed, float scale) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < count;
       i += (int64_t)gridDim.x * blockDim.x)
    c1d_store_typed(p, d, i, hashed_value(i, seed, scale));
}

__global__ void bias_add_kernel(c1d_shape s, const void *__restrict__ b, void *__restrict__ y) {
  const int64_t total = c1d_y_count(&s);
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
       i += (int64_t)gridDim.x * blockDim.x)
    c1d_store_typed(y, s.dt.y, i, c1d_add(c1d_load_typed(y, s.dt.y, i), c1d_load_typed(b, s.dt.b, (i / s.L) % s.O)));
}

// --- launchers -----------------------------------------------------------------------------------

/* Enough blocks to fill the device several times over; the grid-stride loops cover the rest. */
static unsigned grid_for(int64_t count, int threads) {
  int64_t blocks = (count + threads - 1) / threads;
  const int64_t cap = 65536;
  return (unsigned)(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
}

extern "C" c1d_status c1d_launch_im2col(const c1d_shape *s, const float *x, float *xcol,
                                        void *stream) {
  c1d_status st = C1D_OK;
  im2col_kernel<<<grid_for(s->N * s->C * s->K * s->L, 256), 256, 0, (cudaStream_t)stream>>>(*s, x,
                                                                                           xcol);
  C1D_LAUNCHED("im2col_kernel");
done:
  return st;
}

extern "C" c1d_status c1d_launch_bias_fill(const c1d_shape *s, const float *b, float *y,
                                           void *stream) {
  c1d_status st = C1D_OK;
  bias_fill_kernel<<<grid_for(c1d_y_count(s), 256), 256, 0, (cudaStream_t)stream>>>(*s, b, y);
  C1D_LAUNCHED("bias_fill_kernel");
done:
  return st;
}

extern "C" c1d_status c1d_launch_fill(float *p, int64_t count, float value, void *stream) {
  c1d_status st = C1D_OK;
  fill_kernel<<<grid_for(count, 256), 256, 0, (cudaStream_t)stream>>>(p, count, value);
  C1D_LAUNCHED("fill_kernel");
done:
  return st;
}

extern "C" c1d_status c1d_launch_fill_hashed(float *p, int64_t count, uint32_t seed, float scale,
                                             void *stream) {
  c1d_status st = C1D_OK;
  fill_hashed_kernel<<<grid_for(count, 256), 256, 0, (cudaStream_t)stream>>>(p, count, seed, scale);
  C1D_LAUNCHED("fill_hashed_kernel");
done:
  return st;
}

extern "C" c1d_status c1d_launch_fill_hashed_as(void *p, c1d_dtype d, int64_t count, uint32_t seed, float scale,
                                                void *stream) {
  c1d_status st = C1D_OK;
  fill_hashed_as_kernel<<<grid_for(count, 256), 256, 0, (cudaStream_t)stream>>>(p, d, count, seed, scale);
  C1D_LAUNCHED("fill_hashed_as_kernel");
done:
  return st;
}

extern "C" c1d_status c1d_launch_bias_add(const c1d_shape *s, const void *b, void *y, void *stream) {
  c1d_status st = C1D_OK;
  bias_add_kernel<<<grid_for(c1d_y_count(s), 256), 256, 0, (cudaStream_t)stream>>>(*s, b, y);
  C1D_LAUNCHED("bias_add_kernel");
done:
  return st;
}
