/* gpu_naive: the story's first kernel. One thread per output element y[n,o,t]:
 *   acc = b[o] (or +0); for c = 0..C-1, for k = 0..K-1: acc = fma(x, w[o,c,k], acc)
 * with x = +0 where the tap reads before t = 0 (the fma is still performed, as in the CPU twin
 * cpu/naive.c, so even the sign of a zero result matches). Float32, explicit __fmaf_rn.
 * Grid: x over blocks of 256 positions, y over o, z over n; each dimension loops past the launch
 * limits. Index arithmetic in int64 throughout (y may hold more than 2^31 elements). */
#include "gpu/launch.h"
#include "numerics/arith.h"

// --- kernel -------------------------------------------------------------------------------------

__global__ void __launch_bounds__(C1D_ELEMENT_BLOCK)
    naive_kernel(const c1d_shape s, const float *__restrict__ x, const float *__restrict__ w,
                 const float *__restrict__ b, float *__restrict__ y) {
  C1D_FOR_BLOCK_Z(n, s.N)
  C1D_FOR_BLOCK_Y(o, s.O)
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < s.L;
       t += (int64_t)gridDim.x * blockDim.x) {
    float acc = s.bias ? b[o] : 0.0f;
    const int64_t src0 = c1d_source_time(&s, t, 0); /* tap k reads src0 + k*D */
    for (int64_t c = 0; c < s.C; c++) {
      const float *xc = x + c1d_x_index(&s, n, c, 0);
      const float *wc = w + c1d_w_index(&s, o, c, 0);
      for (int64_t k = 0; k < s.K; k++) {
        const int64_t src = src0 + k * s.D;
        const float xv = src >= 0 ? xc[src] : 0.0f;
        acc = c1d_fma(xv, wc[k], acc);
      }
    }
    y[c1d_y_index(&s, n, o, t)] = acc;
  }
}

// --- launcher and descriptor --------------------------------------------------------------------

static c1d_status launch_naive(const c1d_shape *s, const float *x, const float *w, const float *b,
                               float *y, c1d_exec *ex) {
  c1d_status st = C1D_OK;
  const dim3 grid = c1d_grid(c1d_ceil_div(s->L, C1D_ELEMENT_BLOCK), s->O, s->N);
  naive_kernel<<<grid, C1D_ELEMENT_BLOCK, 0, c1d_stream_of(ex)>>>(*s, x, w, b, y);
  C1D_LAUNCHED("naive_kernel");
done:
  return st;
}

extern "C" const c1d_impl c1d_gpu_naive = {
    .name = "gpu_naive",
    .summary = "fp32; one thread per output; acc=b, fma over c outer, k inner (the naive order)",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP32,
    .twin = "naive",
    .twin_bit_exact = 1,
    .supported = NULL,
    .setup = NULL,
    .teardown = NULL,
    .run = launch_naive,
};
