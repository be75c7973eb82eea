/* gpu_tap_partial: one partial sum per kernel tap. One thread per output element y[n,o,t]:
 *   partial[k] = +0; for c = 0..C-1: partial[k] = fma(x, w[o,c,k], partial[k])   (x = +0 in the padding)
 *   y = ((b[o] + partial[0]) + partial[1]) + ... + partial[K-1]   (b[o] replaced by +0 without bias)
 * exactly the operations of the CPU twin cpu/tap_partial.c. Each partial depends on c's order only, so
 * the kernel may run c outer with the K partials in registers (K <= TAP_REGS); larger K runs one tap at
 * a time and adds each finished partial in k order, which is the same sequence of roundings.
 * Grid as gpu_naive; int64 index arithmetic. */
#include "gpu/launch.h"
#include "numerics/arith.h"

#define TAP_REGS 16 /* partials kept in registers; the array is only indexed by unrolled constants */

// --- kernels ------------------------------------------------------------------------------------

__global__ void __launch_bounds__(C1D_ELEMENT_BLOCK)
    tap_partial_kernel(const c1d_shape s, const float *__restrict__ x, const float *__restrict__ w,
                       const float *__restrict__ b, float *__restrict__ y) {
  C1D_FOR_BLOCK_Z(n, s.N)
  C1D_FOR_BLOCK_Y(o, s.O)
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < s.L;
       t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t src0 = c1d_source_time(&s, t, 0);
    float partial[TAP_REGS];
#pragma unroll
    for (int k = 0; k < TAP_REGS; k++) partial[k] = 0.0f;
    for (int64_t c = 0; c < s.C; c++) {
      const float *xc = x + c1d_x_index(&s, n, c, 0);
      const float *wc = w + c1d_w_index(&s, o, c, 0);
#pragma unroll
      for (int k = 0; k < TAP_REGS; k++) {
        if (k < s.K) {
          const int64_t src = src0 + k * s.D;
          const float xv = src >= 0 ? xc[src] : 0.0f;
          partial[k] = c1d_fma(xv, wc[k], partial[k]);
        }
      }
    }
    float out = s.bias ? b[o] : 0.0f;
#pragma unroll
    for (int k = 0; k < TAP_REGS; k++)
      if (k < s.K) out = c1d_add(out, partial[k]);
    y[c1d_y_index(&s, n, o, t)] = out;
  }
}

/* K > TAP_REGS: tap by tap; each partial is added to the running output as soon as it is complete. */
__global__ void __launch_bounds__(C1D_ELEMENT_BLOCK)
    tap_partial_long_kernel(const c1d_shape s, const float *__restrict__ x,
                            const float *__restrict__ w, const float *__restrict__ b,
                            float *__restrict__ y) {
  C1D_FOR_BLOCK_Z(n, s.N)
  C1D_FOR_BLOCK_Y(o, s.O)
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < s.L;
       t += (int64_t)gridDim.x * blockDim.x) {
    float out = s.bias ? b[o] : 0.0f;
    for (int64_t k = 0; k < s.K; k++) {
      const int64_t src = c1d_source_time(&s, t, k);
      float partial = 0.0f;
      for (int64_t c = 0; c < s.C; c++) {
        const float xv = src >= 0 ? x[c1d_x_index(&s, n, c, src)] : 0.0f;
        partial = c1d_fma(xv, w[c1d_w_index(&s, o, c, k)], partial);
      }
      out = c1d_add(out, partial);
    }
    y[c1d_y_index(&s, n, o, t)] = out;
  }
}

// --- launcher and descriptor --------------------------------------------------------------------

static c1d_status launch_tap_partial(const c1d_shape *s, const float *x, const float *w,
                                     const float *b, float *y, c1d_exec *ex) {
  c1d_status st = C1D_OK;
  const dim3 grid = c1d_grid(c1d_ceil_div(s->L, C1D_ELEMENT_BLOCK), s->O, s->N);
  if (s->K <= TAP_REGS) {
    tap_partial_kernel<<<grid, C1D_ELEMENT_BLOCK, 0, c1d_stream_of(ex)>>>(*s, x, w, b, y);
    C1D_LAUNCHED("tap_partial_kernel");
  } else {
    tap_partial_long_kernel<<<grid, C1D_ELEMENT_BLOCK, 0, c1d_stream_of(ex)>>>(*s, x, w, b, y);
    C1D_LAUNCHED("tap_partial_long_kernel");
  }
done:
  return st;
}

extern "C" const c1d_impl c1d_gpu_tap_partial = {
    .name = "gpu_tap_partial",
    .summary = "fp32; one thread per output; one fma chain per tap over c, then b + partial[0] + ...",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP32,
    .twin = "tap_partial",
    .twin_bit_exact = 1,
    .supported = NULL,
    .setup = NULL,
    .teardown = NULL,
    .run = launch_tap_partial,
};
