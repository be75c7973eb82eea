/* gpu_kahan: compensated summation. One thread per output element y[n,o,t]:
 *   sum = b[o] (or +0), comp = +0; for c = 0..C-1, for k = 0..K-1:
 *     p = x * w[o,c,k] rounded to float32 (x = +0 in the padding; the product is still formed);
 *     Kahan step: yk = p - comp; tk = sum + yk; comp = (tk - sum) - yk; sum = tk
 * the operations of the CPU twin cpu/kahan.c, through the same c1d_mul / c1d_kahan_step helpers
 * (__fmul_rn, __fadd_rn, __fsub_rn: nvcc neither contracts nor reassociates them).
 * Grid as gpu_naive; int64 index arithmetic. */
#include "gpu/launch.h"
#include "numerics/arith.h"

// --- kernel -------------------------------------------------------------------------------------

__global__ void __launch_bounds__(C1D_ELEMENT_BLOCK)
    kahan_kernel(const c1d_shape s, const float *__restrict__ x, const float *__restrict__ w,
                 const float *__restrict__ b, float *__restrict__ y) {
  C1D_FOR_BLOCK_Z(n, s.N)
  C1D_FOR_BLOCK_Y(o, s.O)
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < s.L;
       t += (int64_t)gridDim.x * blockDim.x) {
    float sum = s.bias ? b[o] : 0.0f, comp = 0.0f;
    const int64_t src0 = c1d_source_time(&s, t, 0);
    for (int64_t c = 0; c < s.C; c++) {
      const float *xc = x + c1d_x_index(&s, n, c, 0);
      const float *wc = w + c1d_w_index(&s, o, c, 0);
      for (int64_t k = 0; k < s.K; k++) {
        const int64_t src = src0 + k * s.D;
        const float xv = src >= 0 ? xc[src] : 0.0f;
        c1d_kahan_step(&sum, &comp, c1d_mul(xv, wc[k]));
      }
    }
    y[c1d_y_index(&s, n, o, t)] = sum;
  }
}

// --- launcher and descriptor --------------------------------------------------------------------

static c1d_status launch_kahan(const c1d_shape *s, const float *x, const float *w, const float *b,
                               float *y, c1d_exec *ex) {
  c1d_status st = C1D_OK;
  const dim3 grid = c1d_grid(c1d_ceil_div(s->L, C1D_ELEMENT_BLOCK), s->O, s->N);
  kahan_kernel<<<grid, C1D_ELEMENT_BLOCK, 0, c1d_stream_of(ex)>>>(*s, x, w, b, y);
  C1D_LAUNCHED("kahan_kernel");
done:
  return st;
}

extern "C" const c1d_impl c1d_gpu_kahan = {
    .name = "gpu_kahan",
    .summary = "fp32 Kahan-compensated sum of rounded products; one thread per output; b, c outer, k inner",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP32_COMP,
    .twin = "kahan",
    .twin_bit_exact = 1,
    .supported = NULL,
    .setup = NULL,
    .teardown = NULL,
    .run = launch_kahan,
};
