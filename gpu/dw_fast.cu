/* gpu_dw_fast: the depthwise causal conv1d (G = C = O) at memory speed. Each output keeps grouped_naive's
 * order, so its bits are the CPU twin's:
 *   acc = b[c] (or +0); for k = 0..K-1: acc = fma(xs[n, c, t + k*D - (K-1)*D], w[c, 0, k], acc)
 * xs the input, or before t = 0 the initial state (or +0, the fma still performed); then SiLU in float32
 * (numerics/activation.h) and one rounding to y's type. Vectorisation changes only which thread holds
 * which value: a thread owns V adjacent outputs (V = 16 bytes of x: 8 bf16/fp16 or 4 fp32 elements).
 *
 * Paths (the launcher picks one; K <= 8 and 16-byte aligned x and y for the first two):
 *  - (N, C, L), D = 1 or K = 1, L % V == 0, rows of at least 64 vectors: a thread loads four 16-byte
 *    vectors of x along t (two for fp32 with K >= 6; every load in flight first); the K-1 inputs before
 *    its vector come from the neighbouring lane's vector by warp shuffles (lanes 0..P-1 load theirs as
 *    one 16-byte load issued with the others; the first vector of a row reads the initial states or
 *    zeros); the K taps index registers at compile-time offsets (K is a template parameter); V outputs
 *    leave as one 16-byte store (or two, or one 8-byte one, by y's type). Shorter rows: one vector per
 *    thread over the flat (row, vector) index, the vectors before it loaded.
 *  - channel-last (N, L, C), C % V == 0, any D: a thread owns V adjacent channels over a strip of up to
 *    64 consecutive positions (its weights loaded once). D = 1: the strip is walked TT = 4 rows at a
 *    time, the next TT rows in flight while these compute, each row sliding through a K-row window in
 *    registers; D > 1: the K tap rows of each position are loaded (16 bytes each; all but the newest are
 *    L1/L2 hits). Each position's V outputs: one store.
 *  - anything else (K > 8, unaligned rows, L % V != 0 in (N, C, L), (N, C, L) with D > 1): one thread per
 *    output over y's flat index, reading in the layout's order (gpu/grouped_element.h), the same
 *    arithmetic.
 * Element types: x's picks the vector width (a template parameter); w, b and s are read as scalars in
 * their own types; y is written in its type. Every element type combination (packed bf16/fp16 arrays).
 * The vector kernels are templates in gpu/dw_fast_kernels.h, instantiated per element type in
 * dw_fast_f32.cu, dw_fast_bf16.cu and dw_fast_f16.cu (so that they compile side by side).
 * Limits: int64 index arithmetic; grids loop past the launch limits. */
#include "gpu/dw_fast_kernels.h"

// --- one thread per output -------------------------------------------------------------------------------

/* One thread per output over y's flat index, so that consecutive threads write consecutive elements
 * in either layout, whatever the shape (L = 1 in (N, C, L) included). */
template <bool NLC>
__global__ void __launch_bounds__(DW_THREADS)
    dw_fast_element_kernel(const c1d_shape s, const void *__restrict__ x, const void *__restrict__ w,
                           const void *__restrict__ b, const void *__restrict__ st, void *__restrict__ y) {
  const int64_t fast_n = NLC ? s.C : s.L, slow_n = NLC ? s.L : s.C, total = s.N * s.C * s.L;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t fast = i % fast_n, rest = i / fast_n, slow = rest % slow_n, n = rest / slow_n;
    const int64_t c = NLC ? fast : slow, t = NLC ? slow : fast;
    c1d_store_typed(y, s.dt.y, c1d_y_at_layout(s, NLC, n, c, t), c1d_grouped_output(s, NLC, x, w, b, st, n, c, t));
  }
}

// --- launcher ---------------------------------------------------------------------------------------------

static dw_kernel_fn dw_pick_for(c1d_dtype tx, dw_path path, int64_t K) {
  return tx == C1D_DTYPE_F32    ? c1d_dw_fast_pick_f32(path, K)
         : tx == C1D_DTYPE_BF16 ? c1d_dw_fast_pick_bf16(path, K)
                                : c1d_dw_fast_pick_f16(path, K);
}

/* Threads along the vectorised index (a multiple of 32, at most DW_THREADS), the rest of the block
 * along the other one. */
static dim3 dw_block(int64_t along) {
  int64_t bx = c1d_ceil_div(along, 32) * 32;
  if (bx > DW_THREADS) bx = DW_THREADS;
  return dim3((unsigned)bx, (unsigned)(DW_THREADS / bx));
}

/* The channel-last strip: the longest (up to DW_NLC_STRIP positions) that still gives the device about
 * 2^17 threads, but at least DW_NLC_MIN_STRIP: a thread loads its V*K weights once per strip, and strips
 * of one chunk made those scalar loads the bottleneck (25 % of the copy at the anchor, issue 24). */
static int64_t dw_nlc_strip(const c1d_shape *s, int V) {
  int64_t strip = DW_NLC_STRIP;
  while (strip > DW_NLC_MIN_STRIP && s->N * (s->C / V) * c1d_ceil_div(s->L, strip) < (INT64_C(1) << 17)) strip /= 2;
  return strip;
}

static c1d_status launch_dw_fast(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                                 c1d_exec *ex) {
  c1d_status st = C1D_OK;
  const bool nlc = s->layout == C1D_LAYOUT_NLC; /* the runner gives channel-last memory then (C1D_CAP_CHANNEL_LAST) */
  const int V = s->dt.x == C1D_DTYPE_F32 ? 4 : 8;
  const bool vectors = (((uintptr_t)x | (uintptr_t)y) & 15u) == 0 && s->K <= DW_MAX_K;
  const void *states = ex ? ex->states : NULL;
  cudaStream_t stream = c1d_stream_of(ex);
  dw_kernel_fn kernel = NULL;
  const bool dilated = s->D > 1 && s->K > 1;
  const bool ncl_vectors = vectors && !nlc && s->L % V == 0 && !dilated;
  if (ncl_vectors && s->L / V >= DW_NCL_SHORT_ROW) {
    kernel = dw_pick_for(s->dt.x, DW_NCL, s->K);
    const int U = dw_ncl_vectors(V, (int)s->K);
    const dim3 block = dw_block(c1d_ceil_div(s->L / V, U));
    const dim3 grid = c1d_grid(c1d_ceil_div(s->L / V, (int64_t)block.x * U),
                               c1d_ceil_div(s->N * s->C, block.y), 1);
    kernel<<<grid, block, 0, stream>>>(*s, x, w, b, states, y, 0);
    C1D_LAUNCHED("dw_fast_ncl_kernel");
  } else if (ncl_vectors) {
    kernel = dw_pick_for(s->dt.x, DW_NCL_SHORT, s->K);
    const dim3 grid = c1d_grid(c1d_ceil_div(s->N * s->C * (s->L / V), DW_THREADS), 1, 1);
    kernel<<<grid, DW_THREADS, 0, stream>>>(*s, x, w, b, states, y, 0);
    C1D_LAUNCHED("dw_fast_ncl_short_kernel");
  } else if (vectors && nlc && s->C % V == 0) {
    kernel = dw_pick_for(s->dt.x, dilated ? DW_NLC_DILATED : DW_NLC, s->K);
    const int64_t strip = dw_nlc_strip(s, V);
    const dim3 block = dw_block(s->C / V);
    const dim3 grid =
        c1d_grid(c1d_ceil_div(s->C / V, block.x), c1d_ceil_div(c1d_ceil_div(s->L, strip), block.y), s->N);
    kernel<<<grid, block, 0, stream>>>(*s, x, w, b, states, y, strip);
    C1D_LAUNCHED("dw_fast_nlc_kernel");
  } else {
    const dim3 grid = c1d_grid(c1d_ceil_div(s->N * s->C * s->L, DW_THREADS), 1, 1);
    if (nlc)
      dw_fast_element_kernel<true><<<grid, DW_THREADS, 0, stream>>>(*s, x, w, b, states, y);
    else
      dw_fast_element_kernel<false><<<grid, DW_THREADS, 0, stream>>>(*s, x, w, b, states, y);
    C1D_LAUNCHED("dw_fast_element_kernel");
  }
done:
  return st;
}

extern "C" const c1d_impl c1d_gpu_dw_fast = {
    .name = "gpu_dw_fast",
    .summary = "depthwise at memory speed: 16-byte vectors along t (N,C,L) or c (N,L,C), taps from registers "
               "and warp shuffles; grouped_naive's order per output, fp32 SiLU, one rounding to y's type",
    .backend = C1D_BACKEND_GPU,
    .precision = C1D_PREC_FP32,
    .twin = "grouped_naive",
    .twin_bit_exact = 1,
    .run = launch_dw_fast,
    .caps = C1D_CAP_GROUPS | C1D_CAP_DEPTHWISE_ONLY | C1D_CAP_STATES | C1D_CAP_SILU | C1D_CAP_DTYPES |
            C1D_CAP_CHANNEL_LAST,
};
