/* The GPU bug zoo: real CUDA kernel bugs, each one deviation from a correct kernel, and the verdict the
 * explainer must give on each. Two templates hold the mutants:
 *  - zoo_element_kernel<B>: gpu/naive.cu (one thread per output; acc = b, fma over c outer, k inner);
 *  - zoo_tiled_kernel<B>:   gpu/tiled_smem.cu with one input channel per stage (8 warps = 8 output
 *    channels x 32 positions; per channel one warp, c % 8, stages the 32+(K-1)*D window, each warp its K
 *    weights; barrier; K fmas per thread; barrier).
 * B names the bug; every deviation is one expression tagged with its mutant's name, and B = ZOO_NONE
 * (the controls) is the correct kernel, equal to gpu_naive bit for bit.
 * A third template holds the low-precision mutants of the operator as people write it (groups, states,
 * SiLU, element types): zoo_lowp_kernel<B>, grouped_naive's per-output order (gpu/grouped_element.h).
 * Limits: the tiled mutants need one window plus 8*K weights in 48 KiB of shared memory (supported()
 * says so); gpu_zoo_batch_stride needs O <= C (it would read past x otherwise). Test builds only. */
#include "gpu/grouped_element.h"
#include "gpu/launch.h"
#include "numerics/arith.h"
#include "tests/zoo/gpu_zoo.h"

#define ZOO_WARPS 8                     /* output channels per tiled block */
#define ZOO_THREADS (32 * ZOO_WARPS)
#define ZOO_SMEM_BYTES (48 * 1024)
/* How long the missing-barrier mutant's slow warps lag (about 10 us): longer than any global load, so
 * the race shows on every run instead of once in a million, as it would on a busy SM. */
#define ZOO_SKEW_CYCLES 20000

enum zoo_bug {
  ZOO_NONE,
  /* per-element kernel */
  ZOO_CAUSAL_SHIFT,
  ZOO_MISSING_BIAS,
  ZOO_DILATION_IGNORED,
  ZOO_SKIPPED_CHANNEL,
  ZOO_BATCH_STRIDE,
  ZOO_TRANSPOSED_WEIGHTS,
  ZOO_FLIPPED_TAPS,
  /* tiled kernel */
  ZOO_MISSING_BARRIER,
  ZOO_STALE_WINDOW,
  ZOO_SHORT_WINDOW,
  ZOO_CIRCULAR_PADDING,
  ZOO_UNWRITTEN_TAIL,
  ZOO_LAST_CHANNEL,
  /* low-precision kernel */
  ZOO_BF16_PRODUCTS,
  ZOO_FP16_ACCUMULATION,
  ZOO_STATES_IGNORED,
  ZOO_SILU_TWICE,
  ZOO_PARTIAL_VECTOR,
};

// --- per-element mutants (gpu/naive.cu) ----------------------------------------------------------

template <int B>
__global__ void __launch_bounds__(C1D_ELEMENT_BLOCK)
    zoo_element_kernel(const c1d_shape s, const float *__restrict__ x, const float *__restrict__ w,
                       const float *__restrict__ b, float *__restrict__ y) {
  C1D_FOR_BLOCK_Z(n, s.N)
  C1D_FOR_BLOCK_Y(o, s.O)
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < s.L;
       t += (int64_t)gridDim.x * blockDim.x) {
    /* missing_bias: the bias is never added */
    float acc = (s.bias && B != ZOO_MISSING_BIAS) ? b[o] : 0.0f;
    /* dilation_ignored: taps one step apart whatever D is */
    const int64_t D = B == ZOO_DILATION_IGNORED ? 1 : s.D;
    /* causal_shift: pads K*D instead of (K-1)*D, so every tap reads D steps too early */
    const int64_t src0 = t - (B == ZOO_CAUSAL_SHIFT ? s.K : s.K - 1) * D;
    /* skipped_channel: loop bound off by one, the last input channel never summed */
    const int64_t c_end = B == ZOO_SKIPPED_CHANNEL ? s.C - 1 : s.C;
    for (int64_t c = 0; c < c_end; c++) {
      /* batch_stride: x's batch stride taken from y (O*L instead of C*L) */
      const int64_t x_row = (B == ZOO_BATCH_STRIDE ? n * s.O : n * s.C) + c;
      /* transposed_weights: w read in ConvTranspose's (C, O, K) layout instead of (O, C, K) */
      const int64_t w_row = B == ZOO_TRANSPOSED_WEIGHTS ? c * s.O + o : o * s.C + c;
      const float *xc = x + x_row * s.L;
      const float *wc = w + w_row * s.K;
      for (int64_t k = 0; k < s.K; k++) {
        const int64_t src = src0 + k * D;
        const float xv = src >= 0 ? xc[src] : 0.0f;
        /* flipped_taps: w[K-1-k], a convolution instead of PyTorch's cross-correlation */
        acc = c1d_fma(xv, wc[B == ZOO_FLIPPED_TAPS ? s.K - 1 - k : k], acc);
      }
    }
    y[c1d_y_index(&s, n, o, t)] = acc;
  }
}

template <int B>
static c1d_status launch_zoo_element(const c1d_shape *s, const float *x, const float *w,
                                     const float *b, float *y, c1d_exec *ex) {
  c1d_status st = C1D_OK;
  const dim3 grid = c1d_grid(c1d_ceil_div(s->L, C1D_ELEMENT_BLOCK), s->O, s->N);
  zoo_element_kernel<B><<<grid, C1D_ELEMENT_BLOCK, 0, c1d_stream_of(ex)>>>(*s, x, w, b, y);
  C1D_LAUNCHED("zoo_element_kernel");
done:
  return st;
}

// --- tiled mutants (gpu/tiled_smem.cu, one channel per stage) -------------------------------------

/* The slow warps of the missing-barrier mutant: a busy SM's scheduling skew, made long and certain. */
__device__ __forceinline__ void zoo_lag(void) {
  const long long start = clock64();
  while (clock64() - start < ZOO_SKEW_CYCLES) __nanosleep(200);
  __threadfence_block(); /* the window reads below may not be hoisted above the lag */
}

template <int B>
__global__ void __launch_bounds__(ZOO_THREADS)
    zoo_tiled_kernel(const c1d_shape s, const float *__restrict__ x, const float *__restrict__ w,
                     const float *__restrict__ b, float *__restrict__ y) {
  extern __shared__ float zoo_smem[];
  const int K = (int)s.K;
  const int pad = (int)c1d_pad(&s); /* supported() bounds it by 12 Ki */
  const int W = 32 + pad;           /* one channel's window */
  const int D = K > 1 ? (int)s.D : 0;
  float *const xs = zoo_smem, *const ws = zoo_smem + W; /* window, then 8 warps x K weights */
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  /* short_window: the window is staged one float short; its last float is cleared once here, so the
   * mutant reads 0 there (deterministic), not whatever shared memory held. */
  if (B == ZOO_SHORT_WINDOW) {
    for (int j = threadIdx.x; j < W; j += ZOO_THREADS) xs[j] = 0.0f;
    __syncthreads();
  }
  /* unwritten_tail: tiles counted L/32 (floor), so the last partial tile is never computed */
  const int64_t tiles = B == ZOO_UNWRITTEN_TAIL ? s.L / 32 : c1d_ceil_div(s.L, 32);

  C1D_FOR_BLOCK_Z(n, s.N)
  C1D_FOR_BLOCK_Y(ob, c1d_ceil_div(s.O, ZOO_WARPS))
  C1D_FOR_BLOCK_X(tb, tiles) {
    const int64_t o = ob * ZOO_WARPS + warp, t0 = tb * 32, t = t0 + lane;
    /* last_channel: bound check o < O - 1, so output channel O-1 is never written */
    const bool o_in = B == ZOO_LAST_CHANNEL ? o < s.O - 1 : o < s.O;
    const int64_t o_read = o_in ? o : s.O - 1;
    float acc = (s.bias && o_in) ? b[o] : 0.0f;

    for (int64_t c = 0; c < s.C; c++) {
      /* stale_window: the window is re-staged only on even channels; odd ones read channel c-1's */
      const bool restage = B == ZOO_STALE_WINDOW ? c % 2 == 0 : true;
      if (warp == c % ZOO_WARPS && restage) {
        const float *xr = x + c1d_x_index(&s, n, c, 0);
        /* short_window: staged W-1 floats, lane 31's last tap reads the never-staged last one */
        const int staged = B == ZOO_SHORT_WINDOW ? W - 1 : W;
        for (int j = lane; j < staged; j += 32) {
          const int64_t ts = t0 - pad + j;
          float v = 0.0f;
          if (ts >= 0 && ts < s.L)
            v = xr[ts];
          else if (B == ZOO_CIRCULAR_PADDING && ts < 0 && ts + s.L >= 0)
            v = xr[ts + s.L]; /* circular_padding: wraps around instead of causal zeros */
          xs[j] = v;
        }
      }
      for (int j = lane; j < K; j += 32) ws[warp * K + j] = o_in ? w[c1d_w_index(&s, o_read, c, j)] : 0.0f;
      __syncthreads();

      if (B == ZOO_MISSING_BARRIER && warp != (c + 1) % ZOO_WARPS) zoo_lag();
      for (int k = 0; k < K; k++) acc = c1d_fma(xs[lane + k * D], ws[warp * K + k], acc);
      /* missing_barrier: no barrier here, so the warp staging channel c+1 overwrites the window
       * while the slower warps still read channel c */
      if (B != ZOO_MISSING_BARRIER) __syncthreads();
    }
    if (o_in && t < s.L) y[c1d_y_index(&s, n, o, t)] = acc;
  }
}

static int64_t zoo_tiled_floats(const c1d_shape *s) { return 32 + c1d_pad(s) + ZOO_WARPS * s->K; }

static const char *zoo_tiled_supported(const c1d_shape *s) {
  if (c1d_pad(s) > ZOO_SMEM_BYTES / 4 || zoo_tiled_floats(s) * 4 > ZOO_SMEM_BYTES)
    return "one input channel's window of 32+(K-1)*D floats plus 8*K weights exceeds the 48 KiB of "
           "shared memory a block may use";
  return NULL;
}

template <int B>
static c1d_status launch_zoo_tiled(const c1d_shape *s, const float *x, const float *w,
                                   const float *b, float *y, c1d_exec *ex) {
  c1d_status st = C1D_OK;
  const char *why = zoo_tiled_supported(s);
  if (why) return c1d_fail(C1D_ERR_UNSUPPORTED, "gpu zoo (tiled): %s", why);
  const int64_t tiles = B == ZOO_UNWRITTEN_TAIL ? s->L / 32 : c1d_ceil_div(s->L, 32);
  const dim3 grid = c1d_grid(tiles > 0 ? tiles : 1, c1d_ceil_div(s->O, ZOO_WARPS), s->N);
  const size_t smem = (size_t)zoo_tiled_floats(s) * sizeof(float);
  zoo_tiled_kernel<B><<<grid, ZOO_THREADS, smem, c1d_stream_of(ex)>>>(*s, x, w, b, y);
  C1D_LAUNCHED("zoo_tiled_kernel");
done:
  return st;
}

/* gpu_zoo_batch_stride reads row n*O + c of x: inside x only while O <= C. */
static const char *zoo_batch_stride_supported(const c1d_shape *s) {
  return s->O <= s->C ? NULL : "with O > C the wrong batch stride would read past x";
}

// --- low-precision mutants (grouped_naive's order, gpu/grouped_element.h) -----------------------------

/* Channels per vector of the channel-vectorised kernel whose tail the partial-vector mutant drops. */
#define ZOO_VECTOR 8

template <int B>
__global__ void __launch_bounds__(C1D_ELEMENT_BLOCK)
    zoo_lowp_kernel(const c1d_shape s, const void *__restrict__ x, const void *__restrict__ w,
                    const void *__restrict__ b, const void *__restrict__ st, void *__restrict__ y) {
  const int64_t cg = c1d_cin_per_group(&s);
  /* partial_vector: only whole vectors of 8 output channels are written; the last O % 8 never are */
  const int64_t o_end = B == ZOO_PARTIAL_VECTOR ? s.O / ZOO_VECTOR * ZOO_VECTOR : s.O;
  C1D_FOR_BLOCK_Z(n, s.N)
  C1D_FOR_BLOCK_Y(o, o_end)
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < s.L;
       t += (int64_t)gridDim.x * blockDim.x) {
    const int64_t c0 = c1d_group_first_c(&s, o);
    float acc = s.bias ? c1d_load_typed(b, s.dt.b, o) : 0.0f;
    /* fp16_accumulation: the sum kept in fp16, from the bias on */
    if (B == ZOO_FP16_ACCUMULATION) acc = c1d_round_fp16(acc);
    for (int64_t c = c0; c < c0 + cg; c++)
      for (int64_t k = 0; k < s.K; k++) {
        const int64_t src = c1d_source_time(&s, t, k);
        /* states_ignored: the history before t = 0 read as zeros */
        const float xv = B == ZOO_STATES_IGNORED && src < 0 ? 0.0f : c1d_xs_typed(s, false, x, st, n, c, src);
        const float wv = c1d_load_typed(w, s.dt.w, c1d_w_index(&s, o, c, k));
        if (B == ZOO_BF16_PRODUCTS) /* bf16_products: each product rounded to bf16 before the fp32 sum */
          acc = c1d_add(acc, c1d_round_bf16(c1d_mul(xv, wv)));
        else if (B == ZOO_FP16_ACCUMULATION)
          acc = c1d_round_fp16(c1d_fma(xv, wv, acc));
        else
          acc = c1d_fma(xv, wv, acc);
      }
    acc = c1d_activate(s, acc);
    if (B == ZOO_SILU_TWICE) acc = c1d_silu_f32(acc); /* silu_twice: the activation once more */
    c1d_store_typed(y, s.dt.y, c1d_y_index(&s, n, o, t), acc);
  }
}

template <int B>
static c1d_status launch_zoo_lowp(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                                  c1d_exec *ex) {
  c1d_status st = C1D_OK;
  const dim3 grid = c1d_grid(c1d_ceil_div(s->L, C1D_ELEMENT_BLOCK), s->O, s->N);
  zoo_lowp_kernel<B><<<grid, C1D_ELEMENT_BLOCK, 0, c1d_stream_of(ex)>>>(*s, x, w, b, ex ? ex->states : NULL, y);
  C1D_LAUNCHED("zoo_lowp_kernel");
done:
  return st;
}

#define ZOO_LOWP(ident, bug, twin_name, exact, summary_text)                                             \
  extern "C" const c1d_impl c1d_gpu_##ident = {.name = "gpu_" #ident,                                  \
                                               .summary = summary_text,                                \
                                               .backend = C1D_BACKEND_GPU,                             \
                                               .precision = C1D_PREC_WRONG,                            \
                                               .twin = twin_name,                                      \
                                               .twin_bit_exact = exact,                                \
                                               .tier = C1D_TIER_MUTANT,                                \
                                               .run = launch_zoo_lowp<bug>,                            \
                                               .caps = C1D_CAP_GROUPS | C1D_CAP_STATES | C1D_CAP_SILU | \
                                                       C1D_CAP_DTYPES};

ZOO_LOWP(zoo_bf16_products, ZOO_BF16_PRODUCTS, "bf16_products", 1,
         "grouped kernel rounding each product to bf16 before the fp32 sum (vLLM issue 52887's bug)")
ZOO_LOWP(zoo_fp16_accumulation, ZOO_FP16_ACCUMULATION, "fp16_accumulation", 1,
         "grouped kernel keeping its sums in fp16 (each fma rounded to fp16)")
ZOO_LOWP(zoo_states_ignored, ZOO_STATES_IGNORED, "zoo_states_ignored", 1,
         "grouped kernel reading the history before t = 0 as zeros: the initial states ignored")
ZOO_LOWP(zoo_silu_twice, ZOO_SILU_TWICE, "zoo_silu_twice", 1, "grouped kernel applying SiLU twice")
ZOO_LOWP(zoo_partial_vector, ZOO_PARTIAL_VECTOR, NULL, 0,
         "channel-vectorised kernel writing only whole vectors of 8 output channels: the last partial "
         "vector is never written")

// --- descriptors ----------------------------------------------------------------------------------

#define ZOO_IMPL(ident, launcher, bug, precision_, supported_fn, summary_text)                       \
  extern "C" const c1d_impl c1d_gpu_##ident = {.name = "gpu_" #ident,                               \
                                               .summary = summary_text,                             \
                                               .backend = C1D_BACKEND_GPU,                          \
                                               .precision = precision_,                             \
                                               .twin = NULL,                                        \
                                               .twin_bit_exact = 0,                                 \
                                               .tier = C1D_TIER_MUTANT,                             \
                                               .supported = supported_fn,                           \
                                               .setup = NULL,                                       \
                                               .teardown = NULL,                                    \
                                               .run = launcher<bug>};
#define ZOO_MUTANT(ident, launcher, bug, supported_fn, summary_text) \
  ZOO_IMPL(ident, launcher, bug, C1D_PREC_WRONG, supported_fn, summary_text)

ZOO_MUTANT(zoo_causal_shift, launch_zoo_element, ZOO_CAUSAL_SHIFT, NULL,
           "naive kernel padding K*D instead of (K-1)*D: every tap reads D steps too early")
ZOO_MUTANT(zoo_missing_bias, launch_zoo_element, ZOO_MISSING_BIAS, NULL,
           "naive kernel that never adds the bias")
ZOO_MUTANT(zoo_dilation_ignored, launch_zoo_element, ZOO_DILATION_IGNORED, NULL,
           "naive kernel with taps one step apart whatever D is")
ZOO_MUTANT(zoo_skipped_channel, launch_zoo_element, ZOO_SKIPPED_CHANNEL, NULL,
           "naive kernel whose channel loop stops at C-1: the last input channel is skipped")
ZOO_MUTANT(zoo_batch_stride, launch_zoo_element, ZOO_BATCH_STRIDE, zoo_batch_stride_supported,
           "naive kernel striding x's batches by O*L (y's stride) instead of C*L")
ZOO_MUTANT(zoo_transposed_weights, launch_zoo_element, ZOO_TRANSPOSED_WEIGHTS, NULL,
           "naive kernel reading w as (C, O, K) instead of (O, C, K)")
ZOO_MUTANT(zoo_flipped_taps, launch_zoo_element, ZOO_FLIPPED_TAPS, NULL,
           "naive kernel reading w[K-1-k]: a convolution, not a cross-correlation")
ZOO_MUTANT(zoo_missing_barrier, launch_zoo_tiled, ZOO_MISSING_BARRIER, zoo_tiled_supported,
           "tiled kernel without the barrier after the fmas: the next channel's window overwrites "
           "the one slower warps still read (a race)")
ZOO_MUTANT(zoo_stale_window, launch_zoo_tiled, ZOO_STALE_WINDOW, zoo_tiled_supported,
           "tiled kernel re-staging its window only on even channels: odd channels read c-1's")
ZOO_MUTANT(zoo_short_window, launch_zoo_tiled, ZOO_SHORT_WINDOW, zoo_tiled_supported,
           "tiled kernel staging its window one float short: lane 31 of every tile misses a tap")
ZOO_MUTANT(zoo_circular_padding, launch_zoo_tiled, ZOO_CIRCULAR_PADDING, zoo_tiled_supported,
           "tiled kernel padding circularly (x[t+L]) instead of with causal zeros")
ZOO_MUTANT(zoo_unwritten_tail, launch_zoo_tiled, ZOO_UNWRITTEN_TAIL, zoo_tiled_supported,
           "tiled kernel counting L/32 tiles (floor): the last partial tile is never written")
ZOO_MUTANT(zoo_last_channel, launch_zoo_tiled, ZOO_LAST_CHANNEL, zoo_tiled_supported,
           "tiled kernel checking o < O-1: the last output channel is never written")

ZOO_IMPL(zoo_element_control, launch_zoo_element, ZOO_NONE, C1D_PREC_FP32, NULL,
         "the zoo's per-element template without a bug: gpu_naive's order")
ZOO_IMPL(zoo_tiled_control, launch_zoo_tiled, ZOO_NONE, C1D_PREC_FP32, zoo_tiled_supported,
         "the zoo's tiled template without a bug: gpu_naive's order")

// --- when each bug shows, and what the explainer must say -----------------------------------------

static int three_channels(const c1d_shape *s) { return s->C >= 3; }
static int two_channels(const c1d_shape *s) { return s->C >= 2; }
static int has_bias(const c1d_shape *s) { return s->bias; }
static int several_taps(const c1d_shape *s) { return s->K > 1; }
/* Position 0 reads only x[0] either way; the others differ. */
static int dilated(const c1d_shape *s) { return s->D > 1 && s->K > 1 && s->L >= 10; }
static int two_way_weights(const c1d_shape *s) { return s->C > 1 && s->O > 1; }
/* Batch 1 of 2 reads other rows; with more batches, more than "single batches" are wrong. */
static int two_batches_fewer_outputs(const c1d_shape *s) { return s->N == 2 && s->O < s->C; }
/* Padding confined to the first positions, not most of the tensor. */
static int left_padding(const c1d_shape *s) { return s->K > 1 && 2 * c1d_pad(s) < s->L; }
/* A partial last tile after at least one full tile that is not all padding. */
static int partial_tail(const c1d_shape *s) {
  return s->L > 32 && s->L % 32 != 0 && c1d_pad(s) < s->L / 32 * 32;
}
/* t = 31 mod 32 in at least two full tiles, the last of them past the padding. */
static int two_full_tiles(const c1d_shape *s) { return s->L >= 64 && s->L / 32 * 32 - 1 >= c1d_pad(s); }
/* A channel among several, over positions that are not all padding. */
static int several_outputs(const c1d_shape *s) { return s->O >= 2 && c1d_pad(s) < s->L; }

extern "C" const c1d_zoo_entry c1d_gpu_zoo[] = {
    {&c1d_gpu_zoo_missing_barrier, C1D_VERDICT_BUG_GLOBAL, C1D_REGION_NONE, three_channels},
    {&c1d_gpu_zoo_causal_shift, C1D_VERDICT_BUG_GLOBAL, C1D_REGION_NONE, NULL},
    {&c1d_gpu_zoo_circular_padding, C1D_VERDICT_BUG_LOCALIZED, C1D_REGION_LEFT_EDGE, left_padding},
    {&c1d_gpu_zoo_missing_bias, C1D_VERDICT_BUG_GLOBAL, C1D_REGION_NONE, has_bias},
    {&c1d_gpu_zoo_dilation_ignored, C1D_VERDICT_BUG_GLOBAL, C1D_REGION_NONE, dilated},
    {&c1d_gpu_zoo_unwritten_tail, C1D_VERDICT_NON_FINITE, C1D_REGION_LAST_PARTIAL_TILE, partial_tail},
    {&c1d_gpu_zoo_stale_window, C1D_VERDICT_BUG_GLOBAL, C1D_REGION_NONE, two_channels},
    {&c1d_gpu_zoo_skipped_channel, C1D_VERDICT_BUG_GLOBAL, C1D_REGION_NONE, NULL},
    {&c1d_gpu_zoo_short_window, C1D_VERDICT_BUG_LOCALIZED, C1D_REGION_TILE_SEAMS, two_full_tiles},
    {&c1d_gpu_zoo_batch_stride, C1D_VERDICT_BUG_LOCALIZED, C1D_REGION_BATCHES, two_batches_fewer_outputs},
    {&c1d_gpu_zoo_transposed_weights, C1D_VERDICT_BUG_GLOBAL, C1D_REGION_NONE, two_way_weights},
    {&c1d_gpu_zoo_last_channel, C1D_VERDICT_NON_FINITE, C1D_REGION_CHANNELS, several_outputs},
    {&c1d_gpu_zoo_flipped_taps, C1D_VERDICT_BUG_GLOBAL, C1D_REGION_NONE, several_taps},
};
extern "C" const int c1d_gpu_zoo_count = (int)(sizeof c1d_gpu_zoo / sizeof c1d_gpu_zoo[0]);

extern "C" const c1d_zoo_entry c1d_gpu_zoo_controls[] = {
    {&c1d_gpu_zoo_element_control, C1D_VERDICT_FP32_ROUNDING, C1D_REGION_NONE, NULL},
    {&c1d_gpu_zoo_tiled_control, C1D_VERDICT_FP32_ROUNDING, C1D_REGION_NONE, NULL},
};
extern "C" const int c1d_gpu_zoo_controls_count =
    (int)(sizeof c1d_gpu_zoo_controls / sizeof c1d_gpu_zoo_controls[0]);

// --- the low-precision mutants: when each bug shows, and what the explainer must say --------------------

static int lowp_has_states(const c1d_shape *s) { return s->states && c1d_pad(s) < s->L; }
static int lowp_has_silu(const c1d_shape *s) { return s->act == C1D_ACT_SILU; }
static int lowp_bf16_operands(const c1d_shape *s) { return s->dt.x == C1D_DTYPE_BF16 && s->dt.w == C1D_DTYPE_BF16; }
/* fp16 sums of fp16 inputs (with bf16 inputs the explainer's fp16-accumulation model does not fit:
 * seen on (x, w, b, s) bf16 with an fp16 y, called bug-global). */
static int lowp_fp16_sums(const c1d_shape *s) { return s->dt.y == C1D_DTYPE_F16 && s->dt.x == C1D_DTYPE_F16; }
/* A partial last vector of at most O/16 channels (the explainer's "single channels") after whole ones. */
static int lowp_partial_vector(const c1d_shape *s) {
  const int64_t tail = s->O % ZOO_VECTOR;
  return s->O > ZOO_VECTOR && tail > 0 && tail <= (s->O / 16 > 1 ? s->O / 16 : 1) && c1d_pad(s) < s->L;
}

extern "C" const c1d_zoo_entry c1d_gpu_lowp_zoo[] = {
    {&c1d_gpu_zoo_bf16_products, C1D_VERDICT_REDUCED_PRECISION, C1D_REGION_NONE, lowp_bf16_operands, "products"},
    {&c1d_gpu_zoo_fp16_accumulation, C1D_VERDICT_REDUCED_PRECISION, C1D_REGION_NONE, lowp_fp16_sums,
     "accumulation"},
    {&c1d_gpu_zoo_states_ignored, C1D_VERDICT_BUG_LOCALIZED, C1D_REGION_LEFT_EDGE, lowp_has_states, NULL},
    {&c1d_gpu_zoo_silu_twice, C1D_VERDICT_BUG_GLOBAL, C1D_REGION_NONE, lowp_has_silu, NULL},
    {&c1d_gpu_zoo_partial_vector, C1D_VERDICT_NON_FINITE, C1D_REGION_CHANNELS, lowp_partial_vector, NULL},
};
extern "C" const int c1d_gpu_lowp_zoo_count = (int)(sizeof c1d_gpu_lowp_zoo / sizeof c1d_gpu_lowp_zoo[0]);
