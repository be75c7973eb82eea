/* gpu_dw_naive: the depthwise causal conv1d (G = C = O, Mamba's), one thread per output y[n,c,t]:
 *   acc = b[c] (or +0); for k = 0..K-1: acc = fma(xs[n, c, t + k*D - (K-1)*D], w[c, 0, k], acc)
 * xs the input, or before t = 0 the initial state (or +0, the fma still performed); then SiLU in float32
 * and one rounding to y's type: grouped_naive's order with one channel per group, so its bits are the
 * CPU twin's (gpu/grouped_element.h). Every element type of x, w, b, s and y (packed bf16/fp16 device
 * arrays), (N, C, L) memory. Grid: x over blocks of 256 positions, y over channels, z over batches,
 * each dimension looping past the launch limits; int64 index arithmetic. */
#include "gpu/grouped_element.h"
#include "gpu/launch.h"

__global__ void __launch_bounds__(C1D_ELEMENT_BLOCK)
    dw_naive_kernel(const c1d_shape s, const void *__restrict__ x, const void *__restrict__ w,
                    const void *__restrict__ b, const void *__restrict__ st, void *__restrict__ y) {
  C1D_FOR_BLOCK_Z(n, s.N)
  C1D_FOR_BLOCK_Y(c, s.C)
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < s.L;
       t += (int64_t)gridDim.x * blockDim.x) {
    float acc = s.bias ? c1d_load_typed(b, s.dt.b, c) : 0.0f;
    for (int64_t k = 0; k < s.K; k++) {
      const float xv = c1d_xs_typed(s, false, x, st, n, c, c1d_source_time(&s, t, k));
      acc = c1d_fma(xv, c1d_load_typed(w, s.dt.w, c1d_w_index(&s, c, c, k)), acc);
    }
    c1d_store_typed(y, s.dt.y, c1d_y_index(&s, n, c, t), c1d_activate(s, acc));
  }
}

static c1d_status launch_dw_naive(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                                  c1d_exec *ex) {
  c1d_status st = C1D_OK;
  const dim3 grid = c1d_grid(c1d_ceil_div(s->L, C1D_ELEMENT_BLOCK), s->C, s->N);
  dw_naive_kernel<<<grid, C1D_ELEMENT_BLOCK, 0, c1d_stream_of(ex)>>>(*s, x, w, b, ex ? ex->states : NULL, y);
  C1D_LAUNCHED("dw_naive_kernel");
done:
  return st;
}

extern "C" const c1d_impl c1d_gpu_dw_naive = {
    .name = "gpu_dw_naive",
    .summary = "depthwise; one thread per output; acc=b, fma over k (grouped_naive's order), fp32 SiLU, one "
               "rounding to y's type; any element types, states",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP32,
    .twin = "grouped_naive",
    .twin_bit_exact = 1,
    .run = launch_dw_naive,
    .caps = C1D_CAP_GROUPS | C1D_CAP_DEPTHWISE_ONLY | C1D_CAP_STATES | C1D_CAP_SILU | C1D_CAP_DTYPES,
};
