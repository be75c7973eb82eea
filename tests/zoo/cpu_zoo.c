/* CPU mutants: each computes the naive order with one deliberate bug, the CPU picture of a GPU kernel
 * bug (so CI, which has no GPU, exercises the classifier on every kind). Also correct variants that
 * round differently and must never be called a bug. Plain element loops: clarity over speed. */
#include <math.h>
#include <stdint.h>

#include "numerics/arith.h"
#include "tests/zoo/zoo.h"

/* What a mutant changes about one element's computation. */
typedef struct bug {
  int64_t shift;              /* extra delay of the source time (causal shift) */
  int wrap_left;              /* padding reads x[src + L] instead of zero */
  int no_bias;                /* bias dropped */
  int ignore_dilation;        /* taps 1 apart */
  int skip_channel;           /* input channel C/2 skipped */
  int stale_odd_channels;     /* odd channels read the previous channel's window */
  int flip_taps;              /* w[K-1-k]: correlation turned convolution */
  int stale_tiles;            /* in some 8x32 tiles, channels c>0 read channel c-1's window */
  int last_batch_reads_first; /* batch N-1 reads batch 0 */
  int wrong_channel_weights;  /* output channel O/2 uses channel O/2+1's weights */
  int tile_seam;              /* t % 32 == 0 (t > 0) reads the window shifted by 32 */
  int unwritten_tail;         /* the last partial tile of 32 positions is not written */
  int skip_last_tap;          /* the tap loop stops one short: the newest tap (x at t) left out */
} bug;

static float element(const c1d_shape *s, const float *x, const float *w, const float *b, bug g,
                     int64_t n, int64_t o, int64_t t) {
  const int64_t D = g.ignore_dilation ? 1 : s->D, P = (s->K - 1) * D;
  const int64_t xn = g.last_batch_reads_first && n == s->N - 1 ? 0 : n;
  const int64_t wo = g.wrong_channel_weights && o == s->O / 2 ? (o + 1) % s->O : o;
  /* A quarter of the tiles, in a diagonal pattern: tile (n, o/8, t/32) when their sum is 1 mod 4. */
  const int stale_tile = g.stale_tiles && (n + o / 8 + t / 32) % 4 == 1;
  float acc = (s->bias && !g.no_bias) ? b[o] : 0.0f;
  for (int64_t c = 0; c < s->C; c++) {
    if (g.skip_channel && c == s->C / 2) continue;
    int64_t xc = c;
    if ((g.stale_odd_channels && c % 2 == 1) || (stale_tile && c > 0)) xc = c - 1;
    for (int64_t k = 0; k < s->K - g.skip_last_tap; k++) {
      int64_t src = t + k * D - P - g.shift;
      if (g.tile_seam && t > 0 && t % 32 == 0) src -= 32;
      float xv = 0.0f;
      if (src >= 0 && src < s->L)
        xv = x[c1d_x_index(s, xn, xc, src)];
      else if (src < 0 && g.wrap_left && src + s->L >= 0)
        xv = x[c1d_x_index(s, xn, xc, src + s->L)];
      const int64_t kk = g.flip_taps ? s->K - 1 - k : k;
      acc = c1d_fma(xv, w[c1d_w_index(s, wo, c, kk)], acc);
    }
  }
  return acc;
}

static c1d_status run_bug(const c1d_shape *s, const float *x, const float *w, const float *b,
                          float *y, bug g) {
  const int64_t tail = s->L / 32 * 32;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < s->N; n++)
    for (int64_t o = 0; o < s->O; o++)
      for (int64_t t = 0; t < s->L; t++) {
        if (g.unwritten_tail && t >= tail) continue; /* the poisoned NaN stays */
        y[c1d_y_index(s, n, o, t)] = element(s, x, w, b, g, n, o, t);
      }
  return C1D_OK;
}

#define MUTANT(ident, summary_text, ...)                                                          \
  static c1d_status ident##_run(const c1d_shape *s, const float *x, const float *w,              \
                                const float *b, float *y, c1d_exec *ex) {                        \
    (void)ex;                                                                                     \
    bug g = {__VA_ARGS__};                                                                        \
    return run_bug(s, x, w, b, y, g);                                                             \
  }                                                                                               \
  static const c1d_impl ident = {.name = #ident,                                                  \
                                 .summary = summary_text,                                         \
                                 .backend = C1D_BACKEND_CPU,                                      \
                                 .precision = C1D_PREC_WRONG,                                     \
                                 .tier = C1D_TIER_MUTANT,                                         \
                                 .run = ident##_run};

MUTANT(zoo_causal_shift, "off-by-one causal shift: reads one step too early", .shift = 1)
MUTANT(zoo_left_padding, "left edge reads wrapped-around inputs instead of zeros", .wrap_left = 1)
MUTANT(zoo_missing_bias, "bias never added", .no_bias = 1)
MUTANT(zoo_dilation_ignored, "taps one step apart whatever D is", .ignore_dilation = 1)
MUTANT(zoo_skipped_channel, "input channel C/2 skipped", .skip_channel = 1)
MUTANT(zoo_stale_window, "odd channels read the previous channel's window", .stale_odd_channels = 1)
MUTANT(zoo_flipped_taps, "taps reversed (w[K-1-k])", .flip_taps = 1)
MUTANT(zoo_missing_barrier, "a quarter of the 8x32 tiles read the previous channel (a race)",
       .stale_tiles = 1)
MUTANT(zoo_batch_stride, "the last batch reads the first batch's inputs", .last_batch_reads_first = 1)
MUTANT(zoo_channel_weights, "output channel O/2 uses the next channel's weights",
       .wrong_channel_weights = 1)
MUTANT(zoo_tile_seam, "the first position of each 32-tile reads the previous tile's window",
       .tile_seam = 1)
MUTANT(zoo_last_tap_skipped, "the tap loop stops one short: the newest tap (x at t) left out",
       .skip_last_tap = 1)
MUTANT(zoo_unwritten_tail, "the last partial tile of 32 positions is never written",
       .unwritten_tail = 1)

// --- when each bug shows -----------------------------------------------------------------------

static int has_bias(const c1d_shape *s) { return s->bias; }
static int dilated(const c1d_shape *s) { return s->D > 1 && s->K > 1; }
static int has_padding(const c1d_shape *s) { return s->K > 1 && s->L > 1; }
static int several_channels(const c1d_shape *s) { return s->C > 1; }
static int several_taps(const c1d_shape *s) { return s->K > 1; }
static int several_batches(const c1d_shape *s) { return s->N > 1; }
static int several_out_channels(const c1d_shape *s) { return s->O > 2 && s->C > 1; }
static int tiled_length(const c1d_shape *s) { return s->L > 64 && s->C > 1; }
static int partial_tile(const c1d_shape *s) { return s->L > 32 && s->L % 32 != 0; }
static int long_enough(const c1d_shape *s) { return s->L > 32; }

const c1d_zoo_entry c1d_cpu_zoo[] = {
    {&zoo_causal_shift, C1D_VERDICT_BUG_GLOBAL, C1D_REGION_NONE, NULL},
    {&zoo_left_padding, C1D_VERDICT_BUG_LOCALIZED, C1D_REGION_LEFT_EDGE, has_padding},
    {&zoo_missing_bias, C1D_VERDICT_BUG_GLOBAL, C1D_REGION_NONE, has_bias},
    {&zoo_dilation_ignored, C1D_VERDICT_BUG_GLOBAL, C1D_REGION_NONE, dilated},
    {&zoo_skipped_channel, C1D_VERDICT_BUG_GLOBAL, C1D_REGION_NONE, several_channels},
    {&zoo_stale_window, C1D_VERDICT_BUG_GLOBAL, C1D_REGION_NONE, several_channels},
    {&zoo_flipped_taps, C1D_VERDICT_BUG_GLOBAL, C1D_REGION_NONE, several_taps},
    {&zoo_missing_barrier, C1D_VERDICT_BUG_LOCALIZED, C1D_REGION_TILE_BLOCKS, tiled_length},
    {&zoo_batch_stride, C1D_VERDICT_BUG_LOCALIZED, C1D_REGION_BATCHES, several_batches},
    {&zoo_channel_weights, C1D_VERDICT_BUG_LOCALIZED, C1D_REGION_CHANNELS, several_out_channels},
    {&zoo_tile_seam, C1D_VERDICT_BUG_LOCALIZED, C1D_REGION_TILE_SEAMS, long_enough},
    {&zoo_last_tap_skipped, C1D_VERDICT_BUG_LOCALIZED, C1D_REGION_TAP, several_taps},
    {&zoo_unwritten_tail, C1D_VERDICT_NON_FINITE, C1D_REGION_LAST_PARTIAL_TILE, partial_tile},
};
const int c1d_cpu_zoo_count = (int)(sizeof c1d_cpu_zoo / sizeof c1d_cpu_zoo[0]);

// --- correct variants: other orders and precisions, never a bug --------------------------------

/* Reverse order: c from C-1 down to 0, k from K-1 down to 0. */
static c1d_status reverse_order_run(const c1d_shape *s, const float *x, const float *w,
                                    const float *b, float *y, c1d_exec *ex) {
  (void)ex;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < s->N; n++)
    for (int64_t o = 0; o < s->O; o++)
      for (int64_t t = 0; t < s->L; t++) {
        float acc = s->bias ? b[o] : 0.0f;
        for (int64_t c = s->C - 1; c >= 0; c--)
          for (int64_t k = s->K - 1; k >= 0; k--) {
            int64_t src = c1d_source_time(s, t, k);
            acc = c1d_fma(src >= 0 ? x[c1d_x_index(s, n, c, src)] : 0.0f,
                          w[c1d_w_index(s, o, c, k)], acc);
          }
        y[c1d_y_index(s, n, o, t)] = acc;
      }
  return C1D_OK;
}

extern const c1d_impl c1d_cpu_naive;

static c1d_status stored_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                             float *y, c1d_exec *ex, float (*round_out)(float)) {
  c1d_status st = c1d_cpu_naive.run(s, x, w, b, y, ex);
  for (int64_t i = 0; i < c1d_y_count(s); i++) y[i] = round_out(y[i]);
  return st;
}

static float to_bf16(float v) { return c1d_round_bf16(v); }
static float to_fp16(float v) { return c1d_round_fp16(v); }

static c1d_status bf16_store_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                                 float *y, c1d_exec *ex) {
  return stored_run(s, x, w, b, y, ex, to_bf16);
}

static c1d_status fp16_store_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                                 float *y, c1d_exec *ex) {
  return stored_run(s, x, w, b, y, ex, to_fp16);
}

static const c1d_impl zoo_reverse_order = {.name = "zoo_reverse_order",
                                           .summary = "fp32, c and k summed in reverse",
                                           .backend = C1D_BACKEND_CPU,
                                           .precision = C1D_PREC_FP32,
                                           .tier = C1D_TIER_MUTANT,
                                           .run = reverse_order_run};
static const c1d_impl zoo_bf16_store = {.name = "zoo_bf16_store",
                                        .summary = "naive order, output stored as bf16",
                                        .backend = C1D_BACKEND_CPU,
                                        .precision = C1D_PREC_BF16,
                                        .tier = C1D_TIER_MUTANT,
                                        .run = bf16_store_run};
static const c1d_impl zoo_fp16_store = {.name = "zoo_fp16_store",
                                        .summary = "naive order, output stored as fp16",
                                        .backend = C1D_BACKEND_CPU,
                                        .precision = C1D_PREC_FP16,
                                        .tier = C1D_TIER_MUTANT,
                                        .run = fp16_store_run};

extern const c1d_impl c1d_cpu_tap_partial, c1d_cpu_kahan, c1d_cpu_tf32_inputs;

const c1d_zoo_entry c1d_cpu_correct_variants[] = {
    {&c1d_cpu_naive, C1D_VERDICT_FP32_ROUNDING, C1D_REGION_NONE, NULL},
    {&c1d_cpu_tap_partial, C1D_VERDICT_FP32_ROUNDING, C1D_REGION_NONE, NULL},
    {&c1d_cpu_kahan, C1D_VERDICT_FP32_ROUNDING, C1D_REGION_NONE, NULL},
    {&zoo_reverse_order, C1D_VERDICT_FP32_ROUNDING, C1D_REGION_NONE, NULL},
    {&c1d_cpu_tf32_inputs, C1D_VERDICT_TF32_INPUTS, C1D_REGION_NONE, NULL},
    {&zoo_bf16_store, C1D_VERDICT_REDUCED_PRECISION, C1D_REGION_NONE, NULL},
    {&zoo_fp16_store, C1D_VERDICT_REDUCED_PRECISION, C1D_REGION_NONE, NULL},
};
const int c1d_cpu_correct_variants_count =
    (int)(sizeof c1d_cpu_correct_variants / sizeof c1d_cpu_correct_variants[0]);
