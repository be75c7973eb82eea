/* gpu_grouped: the grouped causal conv1d (G > 1 groups of C/G > 1 input channels, Hyena's), each thread
 * four consecutive output channels of one group at one position, so one load of x[n, c, t'] feeds four
 * accumulators. Each output keeps grouped_naive's order on its own accumulator:
 *   acc = b[o] (or +0); for c over o's group, for k = 0..K-1: acc = fma(xs, w[o, c - g0, k], acc)
 * xs the input, or before t = 0 the initial state (or +0, the fma still performed); then SiLU in float32
 * and one rounding to y's type; bit-exact with the CPU twin grouped_naive. Every element type (packed
 * bf16/fp16 device arrays), (N, C, L) memory. Grid: x over blocks of 256 positions, y over (group, four
 * outputs), z over batches, each looping past the launch limits. A group's last quartet may be partial. */
#include "gpu/grouped_element.h"
#include "gpu/launch.h"

#define GROUPED_OUTS 4 /* output channels per thread */

/* Two blocks per SM asked for: with one bound alone ptxas aimed at 80 registers and spilled 16 bytes to
 * local memory (scripts/sass_dw.sh); so it fits in 72 with none. */
__global__ void __launch_bounds__(C1D_ELEMENT_BLOCK, 2)
    grouped_kernel(const c1d_shape s, const void *__restrict__ x, const void *__restrict__ w,
                   const void *__restrict__ b, const void *__restrict__ st, void *__restrict__ y) {
  const int64_t og = c1d_cout_per_group(&s), cg = c1d_cin_per_group(&s);
  const int64_t quartets = c1d_ceil_div(og, GROUPED_OUTS);
  C1D_FOR_BLOCK_Z(n, s.N)
  C1D_FOR_BLOCK_Y(gq, c1d_groups(&s) * quartets) {
    const int64_t g = gq / quartets, o0 = g * og + gq % quartets * GROUPED_OUTS, c0 = g * cg;
    const int64_t count = (g + 1) * og - o0 < GROUPED_OUTS ? (g + 1) * og - o0 : GROUPED_OUTS;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < s.L;
         t += (int64_t)gridDim.x * blockDim.x) {
      float acc[GROUPED_OUTS];
#pragma unroll
      for (int j = 0; j < GROUPED_OUTS; j++) acc[j] = s.bias && j < count ? c1d_load_typed(b, s.dt.b, o0 + j) : 0.0f;
      for (int64_t c = c0; c < c0 + cg; c++)
        for (int64_t k = 0; k < s.K; k++) {
          const float xv = c1d_xs_typed(s, false, x, st, n, c, c1d_source_time(&s, t, k));
#pragma unroll
          for (int j = 0; j < GROUPED_OUTS; j++)
            if (j < count) acc[j] = c1d_fma(xv, c1d_load_typed(w, s.dt.w, c1d_w_index(&s, o0 + j, c, k)), acc[j]);
        }
#pragma unroll
      for (int j = 0; j < GROUPED_OUTS; j++)
        if (j < count) c1d_store_typed(y, s.dt.y, c1d_y_index(&s, n, o0 + j, t), c1d_activate(s, acc[j]));
    }
  }
}

static const char *grouped_supported(const c1d_shape *s) {
  if (c1d_groups(s) < 2) return "a grouped problem (G > 1) only";
  if (c1d_cin_per_group(s) < 2) return "one input channel per group: gpu_dw_naive and gpu_dw_fast";
  return NULL;
}

static c1d_status launch_grouped(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                                 c1d_exec *ex) {
  c1d_status st = C1D_OK;
  const int64_t quartets = c1d_ceil_div(c1d_cout_per_group(s), GROUPED_OUTS);
  const dim3 grid = c1d_grid(c1d_ceil_div(s->L, C1D_ELEMENT_BLOCK), c1d_groups(s) * quartets, s->N);
  grouped_kernel<<<grid, C1D_ELEMENT_BLOCK, 0, c1d_stream_of(ex)>>>(*s, x, w, b, ex ? ex->states : NULL, y);
  C1D_LAUNCHED("grouped_kernel");
done:
  return st;
}

extern "C" const c1d_impl c1d_gpu_grouped = {
    .name = "gpu_grouped",
    .summary = "grouped (C/G > 1); four outputs of a group per thread, each acc=b, fma over c outer, k inner "
               "(grouped_naive's order), fp32 SiLU, one rounding to y's type; any element types, states",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP32,
    .twin = "grouped_naive",
    .twin_bit_exact = 1,
    .supported = grouped_supported,
    .run = launch_grouped,
    .caps = C1D_CAP_GROUPS | C1D_CAP_STATES | C1D_CAP_SILU | C1D_CAP_DTYPES,
};
