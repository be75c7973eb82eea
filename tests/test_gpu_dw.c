/* gpu_dw: the depthwise and grouped kernels (issue 16) and what proves them.
 *  - gpu_dw_naive, gpu_dw_fast and gpu_grouped equal their CPU twin grouped_naive bit for bit over a
 *    table of odd shapes (K 1-8, D 1-4, C and L not multiples of the vector widths, L < (K-1)*D, with and
 *    without states, SiLU and bias, both layouts for gpu_dw_fast, more rows than one grid holds), every
 *    one of the 243 element-type combinations of (x, w, b, s, y) on the shapes of gpu_dw_fast's three
 *    paths and a spread of them elsewhere; every element is written (outputs NaN-poisoned first) and two
 *    runs give the same bits. The runs go through the GPU session (harness/execute_gpu.c), which packs
 *    each tensor in its own type and, for gpu_dw_fast, channel-last, and converts the output back.
 *  - the GPU zoo's low-precision mutants (tests/zoo/gpu_zoo.cu) equal their CPU twins bit for bit and get
 *    their entries' verdict, region and stage; without a device, the same verdicts are checked on the CPU
 *    twins' outputs (so CI checks the table the device run relies on).
 *  - the correct kernels and the cuDNN rows (fp32, TF32 allowed, bf16/fp16 data) are never called a bug
 *    on grouped and depthwise problems; grouped_naive, whose bits the twins reproduce, is checked on the
 *    same table without a device.
 * GPU tests skip without a device. Run with --jobs 1. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/execute.h"
#include "harness/registry.h"
#include "numerics/arith.h"
#include "reference/dtype.h"
#include "tests/support/host_cases.h"
#include "tests/support/lowp_cases.h"

#ifdef C1D_HAVE_CUDA
#include "gpu/dw_fast.h"
#include "gpu/float_checks.h"
#include "tests/zoo/gpu_zoo.h"
#endif

extern const c1d_impl c1d_cpu_grouped_naive;

#define DW(n, c, l, k, d) .N = n, .C = c, .O = c, .L = l, .K = k, .D = d, .G = c
#define NLC .layout = C1D_LAYOUT_NLC
#define SILU .act = C1D_ACT_SILU
#define TYPES(x_, w_, b_, s_, y_) .dt = {C1D_DTYPE_##x_, C1D_DTYPE_##w_, C1D_DTYPE_##b_, C1D_DTYPE_##s_, C1D_DTYPE_##y_}

/* The twins' table. The first six are gpu_dw_fast's main paths, which see all 243 type combinations:
 * (N, C, L) vectors (D = 1, L % 8 == 0) in short rows and long ones, channel-last vectors (C % 8 == 0),
 * one thread per output, the L = 1 step with either layout's states. */
static const c1d_shape dw_shapes[] = {
    {DW(2, 24, 64, 4, 1), .bias = 1, .states = 1, SILU},        /* (N, C, L) short rows, Mamba's K */
    {DW(2, 6, 1048, 4, 1), .bias = 1, .states = 1, SILU},       /* (N, C, L) long rows, a ragged last chunk */
    {DW(2, 24, 64, 4, 1), .bias = 1, .states = 1, SILU, NLC},   /* channel-last vectors */
    {DW(2, 21, 37, 3, 2), .bias = 1, .states = 1, SILU},        /* one thread per output: D = 2, odd L */
    {DW(3, 24, 1, 3, 1), .bias = 1, .states = 1, SILU},         /* L = 1, a decode step: (N, C, L) states */
    {DW(3, 24, 1, 4, 1), .bias = 1, .states = 1, SILU, NLC},    /* the step with channel-last states */
    {DW(2, 21, 37, 3, 2), .bias = 1, .states = 1, NLC},         /* channel-last, C % 4 != 0: per output */
    {DW(2, 16, 40, 5, 3), .states = 1, NLC},                    /* channel-last dilated vectors */
    {DW(1, 16, 9, 4, 4), .bias = 1, .states = 1, SILU, NLC},    /* dilated, L = 9 < (K-1)*D = 12 */
    {DW(3, 8, 5, 8, 1), .bias = 1, .states = 1},                /* L = 5 < 7: per output */
    {DW(2, 12, 4, 8, 1), .states = 1, SILU},                    /* L = 4 < 7: fp32 vectors, two of history */
    {DW(2, 12, 8, 8, 1), .bias = 1, .states = 1},               /* K = 8 */
    {DW(2, 40, 48, 1, 3), .bias = 1, SILU},                     /* K = 1 with D = 3 */
    {DW(2, 40, 48, 1, 3), .bias = 1, NLC},                      /* the same, channel-last */
    {DW(1, 1, 33, 2, 1), .bias = 1},                            /* C = 1 */
    {DW(2, 32, 96, 7, 1), .bias = 1, .states = 1, NLC},         /* K = 7 channel-last (one block per SM) */
    {DW(2, 36, 100, 2, 1), .states = 1},                        /* L % 8 = 4: fp32 vectors, bf16 per output */
    {DW(3, 20, 30, 6, 2), SILU},                                /* no states, D = 2 */
    {DW(1, 600000, 8, 3, 1), .bias = 1},                        /* more rows than one grid's y holds */
    {DW(2, 4, 2056, 7, 1), .states = 1},                        /* long rows, fp32 history of two vectors */
    {DW(2, 256, 32779, 4, 1), .bias = 1, .states = 1, NLC},     /* channel-last strips of 16-32 positions */
};
enum { N_DW = sizeof dw_shapes / sizeof dw_shapes[0], N_ALL_TYPES_SHAPES = 6 };

/* gpu_grouped's: C/G > 1, O/G not a multiple of four, L < (K-1)*D. */
static const c1d_shape grouped_shapes[] = {
    {.N = 2, .C = 12, .O = 8, .G = 4, .L = 50, .K = 3, .D = 2, .bias = 1, .states = 1, SILU},
    {.N = 2, .C = 32, .O = 40, .G = 8, .L = 77, .K = 4, .D = 1, .bias = 1},
    {.N = 1, .C = 6, .O = 9, .G = 3, .L = 7, .K = 5, .D = 2, .states = 1},
    {.N = 2, .C = 64, .O = 64, .G = 2, .L = 40, .K = 4, .D = 1, .bias = 1, .states = 1, SILU},
};
enum { N_GROUPED = sizeof grouped_shapes / sizeof grouped_shapes[0] };

/* Combination i of the 243: x, w, b, s, y each f32, bf16 or f16 (base-3 digits of i). */
/* (inline: the build without CUDA has no caller) */
static inline c1d_dtypes types_of(int i) {
  c1d_dtypes d;
  d.x = (c1d_dtype)(i % 3), d.w = (c1d_dtype)(i / 3 % 3), d.b = (c1d_dtype)(i / 9 % 3);
  d.s = (c1d_dtype)(i / 27 % 3), d.y = (c1d_dtype)(i / 81 % 3);
  return d;
}
enum { N_TYPE_COMBINATIONS = 243 };

/* The combinations every other shape gets: uniform ones, the common mixed ones, and one that rotates. */
static inline int spread_of(int shape, int j) {
  static const int fixed[] = {0,                                /* all f32 */
                              1 + 3 + 9 + 27 + 81,              /* all bf16 */
                              2 * (1 + 3 + 9 + 27 + 81),        /* all f16 */
                              1 + 27 + 81,                      /* bf16 x, s, y; f32 w, b */
                              2 + 3 + 54,                       /* f16 x, s; bf16 w; f32 b, y */
                              3 + 18 + 81};                     /* f32 x, s; bf16 w, y; f16 b */
  return j < 6 ? fixed[j] : (shape * 37 + 11) % N_TYPE_COMBINATIONS;
}
enum { N_SPREAD = 7 };

static char *shape_text(const c1d_shape *s) {
  static char text[160];
  c1d_shape_format(s, text, sizeof text);
  return text;
}

// --- without a device: the registry, and the verdicts the device run relies on -----------------------

Test(gpu_dw, the_kernels_are_registered_with_their_caps_twins_and_limits) {
  const c1d_shape dw = {DW(2, 16, 32, 4, 1), .dt = {C1D_DTYPE_BF16, C1D_DTYPE_BF16, C1D_DTYPE_BF16, C1D_DTYPE_BF16,
                                                   C1D_DTYPE_BF16}};
  const c1d_shape grouped = grouped_shapes[1], dense = {2, 16, 16, 32, 4, 1, 0};
#ifdef C1D_HAVE_CUDA
  const char *names[] = {"gpu_dw_naive", "gpu_dw_fast", "gpu_grouped"};
  for (int i = 0; i < 3; i++) {
    const c1d_impl *impl = impl_named(names[i]);
    cr_assert_eq(impl->backend, C1D_BACKEND_GPU);
    cr_assert_eq(impl->tier, C1D_TIER_MAIN, "%s", names[i]);
    cr_assert_str_eq(impl->twin, "grouped_naive");
    cr_assert(impl->twin_bit_exact);
    cr_assert(impl->caps & C1D_CAP_DTYPES && impl->caps & C1D_CAP_STATES && impl->caps & C1D_CAP_SILU);
    cr_assert_not_null(c1d_impl_unsupported(impl, &dense), "%s accepts a dense problem", names[i]);
  }
  cr_assert_null(c1d_impl_unsupported(impl_named("gpu_dw_naive"), &dw));
  cr_assert_null(c1d_impl_unsupported(impl_named("gpu_dw_fast"), &dw));
  cr_assert_not_null(c1d_impl_unsupported(impl_named("gpu_grouped"), &dw), "gpu_grouped takes depthwise problems");
  cr_assert_not_null(c1d_impl_unsupported(impl_named("gpu_dw_fast"), &grouped));
  cr_assert_null(c1d_impl_unsupported(impl_named("gpu_grouped"), &grouped));
  cr_assert(impl_named("gpu_dw_fast")->caps & C1D_CAP_CHANNEL_LAST);
  cr_assert_not(impl_named("gpu_dw_naive")->caps & C1D_CAP_CHANNEL_LAST);
  /* cuDNN: groups and states on every row, bf16/fp16 data on the lowp rows, one type for all tensors. */
  cr_assert_null(c1d_impl_unsupported(impl_named("cudnn_fp32"), &grouped));
  cr_assert_not_null(c1d_impl_unsupported(impl_named("cudnn_fp32"), &dw), "cudnn_fp32 takes bf16 tensors");
  cr_assert_not_null(c1d_impl_unsupported(impl_named("cudnn_lowp"), &grouped), "cudnn_lowp takes fp32 tensors");
  c1d_shape mixed = dw;
  mixed.dt.w = C1D_DTYPE_F32;
  cr_assert_not_null(c1d_impl_unsupported(impl_named("cudnn_lowp_fastest"), &mixed));
  /* The low-precision mutants: tier mutant, registered, the five kinds. */
  const char *mutants[] = {"gpu_zoo_bf16_products", "gpu_zoo_fp16_accumulation", "gpu_zoo_states_ignored",
                           "gpu_zoo_silu_twice", "gpu_zoo_partial_vector"};
  cr_assert_eq(c1d_gpu_lowp_zoo_count, 5);
  for (int i = 0; i < 5; i++) {
    const c1d_zoo_entry *z = &c1d_gpu_lowp_zoo[i];
    cr_assert_str_eq(z->impl->name, mutants[i]);
    cr_assert_eq(c1d_find_impl(mutants[i]), z->impl, "%s is not in the registry", mutants[i]);
    cr_assert_eq(z->impl->tier, C1D_TIER_MUTANT);
    cr_assert_eq(z->impl->precision, C1D_PREC_WRONG);
    if (z->impl->twin) cr_assert_not_null(c1d_find_impl(z->impl->twin), "%s's twin %s", mutants[i], z->impl->twin);
  }
#else
  (void)dw, (void)grouped, (void)dense;
  cr_skip_test("built without CUDA: the GPU kernels are not compiled");
#endif
}

#ifdef C1D_HAVE_CUDA
/* The mutants' table: every low-precision mutant shows on at least two of these. */
static const c1d_shape mutant_shapes[] = {
    {DW(2, 64, 300, 4, 1), .bias = 1, .states = 1, SILU, TYPES(BF16, BF16, BF16, BF16, BF16)},
    {DW(2, 48, 200, 4, 1), .bias = 1, .states = 1, SILU, TYPES(F16, F16, F16, F16, F16)},
    {.N = 2, .C = 32, .O = 16, .G = 8, .L = 150, .K = 4, .D = 1, .bias = 1, SILU, TYPES(BF16, BF16, F32, F32, BF16)},
    {DW(2, 65, 256, 3, 2), .bias = 1, .states = 1, TYPES(F16, F16, F16, F16, F16)},
    {DW(3, 130, 129, 4, 1), .states = 1, SILU},
};
enum { N_MUTANT_SHAPES = sizeof mutant_shapes / sizeof mutant_shapes[0] };

/* What a mutant without a CPU twin writes: the partial-vector mutant leaves the last O % 8 channels
 * unwritten and computes the rest as grouped_naive does. An unwritten element reads as the GPU session's
 * poison (0xFF bytes) in y's type, widened to float: a NaN with its sign bit set (-nan, not C's NAN). */
static void expected_partial_vector(lowp_problem *p, float *out) {
  run_lowp_cpu(p, &c1d_cpu_grouped_naive, out);
  const c1d_shape *s = &p->s;
  const float unwritten = s->dt.y == C1D_DTYPE_BF16  ? c1d_bf16_bits_to_float(0xFFFFu)
                          : s->dt.y == C1D_DTYPE_F16 ? c1d_f16_bits_to_float(0xFFFFu)
                                                     : c1d_bits_float(0xFFFFFFFFu);
  for (int64_t n = 0; n < s->N; n++)
    for (int64_t o = s->O / 8 * 8; o < s->O; o++)
      for (int64_t t = 0; t < s->L; t++) out[c1d_y_index(s, n, o, t)] = unwritten;
}

static void assert_explanation(const c1d_zoo_entry *z, const c1d_explanation *e, const char *where_run,
                               const c1d_shape *s) {
  cr_assert_eq(e->verdict, z->expected, "%s (%s) on %s: expected %s, got %s: %s", z->impl->name, where_run,
               shape_text(s), c1d_verdict_name(z->expected), c1d_verdict_name(e->verdict), e->reason);
  if (z->region != C1D_REGION_NONE)
    cr_assert_eq(e->region.cls, z->region, "%s (%s) on %s: region %s (%s), expected %s", z->impl->name, where_run,
                 shape_text(s), c1d_region_class_name(e->region.cls), e->region.kind,
                 c1d_region_class_name(z->region));
  if (z->where) cr_assert_str_eq(e->where, z->where, "%s (%s) on %s: %s", z->impl->name, where_run, shape_text(s),
                                 e->reason);
}

Test(gpu_dw, the_mutants_cpu_twins_get_the_verdicts_the_gpu_zoo_expects) {
  int checked = 0;
  float *out = NULL;
  for (int si = 0; si < N_MUTANT_SHAPES; si++) {
    lowp_problem p;
    setup_lowp(&p, &mutant_shapes[si], C1D_DIST_CONV_INIT, 17 + (uint64_t)si);
    out = realloc(out, (size_t)c1d_y_count(&p.s) * sizeof(float));
    cr_assert_not_null(out);
    for (int i = 0; i < c1d_gpu_lowp_zoo_count; i++) {
      const c1d_zoo_entry *z = &c1d_gpu_lowp_zoo[i];
      if (z->applies && !z->applies(&p.s)) continue;
      if (z->impl->twin)
        run_lowp_cpu(&p, c1d_find_impl(z->impl->twin), out);
      else
        expected_partial_vector(&p, out);
      const c1d_explanation e = explain_lowp_output(&p, out);
      assert_explanation(z, &e, "its CPU twin", &p.s);
      checked++;
    }
    teardown_lowp(&p);
  }
  free(out);
  for (int i = 0; i < c1d_gpu_lowp_zoo_count; i++) {
    int shows = 0;
    for (int si = 0; si < N_MUTANT_SHAPES; si++)
      shows += !c1d_gpu_lowp_zoo[i].applies || c1d_gpu_lowp_zoo[i].applies(&mutant_shapes[si]);
    cr_assert_geq(shows, 2, "%s shows on %d of the mutants' shapes", c1d_gpu_lowp_zoo[i].impl->name, shows);
  }
  cr_assert_geq(checked, 12);
}
#endif

/* The no-false-alarm table: depthwise and grouped, both layouts, every kind of type. */
static const c1d_shape correct_shapes[] = {
    {DW(2, 64, 160, 4, 1), .bias = 1, .states = 1, SILU, TYPES(BF16, BF16, BF16, BF16, BF16)},
    {DW(2, 64, 128, 4, 1), .bias = 1, TYPES(BF16, BF16, BF16, BF16, BF16), NLC},
    {DW(2, 48, 120, 3, 2), .states = 1, TYPES(F16, F16, F16, F16, F16)},
    {DW(2, 40, 100, 4, 1), .bias = 1, .states = 1, SILU},
    {DW(3, 33, 97, 5, 1), .bias = 1, TYPES(BF16, F32, F32, BF16, BF16), NLC},
    {.N = 2, .C = 32, .O = 16, .G = 8, .L = 100, .K = 4, .D = 1, .bias = 1, SILU},
    {.N = 2, .C = 64, .O = 64, .G = 16, .L = 80, .K = 3, .D = 2, .bias = 1, .states = 1,
     TYPES(BF16, BF16, BF16, BF16, BF16)},
};
/* Seeds per (shape, distribution): three on the device, one in CI (the device run repeats the CPU
 * twin's verdict beside every GPU output). */
enum { N_CORRECT = sizeof correct_shapes / sizeof correct_shapes[0], N_SEEDS = 3, N_CPU_SEEDS = 1 };
static const c1d_dist correct_dists[] = {C1D_DIST_CONV_INIT, C1D_DIST_NORMAL, C1D_DIST_UNIFORM};

Test(gpu_dw, grouped_naive_whose_bits_the_twins_reproduce_is_never_called_a_bug) {
  int runs = 0;
  for (int si = 0; si < N_CORRECT; si++)
    for (int d = 0; d < 3; d++)
      for (uint64_t seed = 1; seed <= N_CPU_SEEDS; seed++) {
        lowp_problem p;
        setup_lowp(&p, &correct_shapes[si], correct_dists[d], seed * 131 + (uint64_t)si);
        const c1d_explanation e = explain_lowp(&p, &c1d_cpu_grouped_naive);
        cr_assert_eq(e.verdict, C1D_VERDICT_FP32_ROUNDING, "grouped_naive on %s (%s, seed %llu): %s: %s",
                     shape_text(&p.s), c1d_dist_name(correct_dists[d]), (unsigned long long)seed,
                     c1d_verdict_name(e.verdict), e.reason);
        teardown_lowp(&p);
        runs++;
      }
  cr_assert_geq(runs, 20);
}

// --- on the device --------------------------------------------------------------------------------------

#ifdef C1D_HAVE_CUDA

/* A problem with its GPU session: the inputs uploaded once, every implementation run through the session
 * (its typed and channel-last forms made there). */
typedef struct gpu_problem {
  lowp_problem p;
  c1d_gpu_session *g;
  float *first, *twin;
} gpu_problem;

static void gpu_session(gpu_problem *q) {
  const c1d_shape *s = &q->p.s;
  cr_assert_eq(c1d_gpu_session_create(s, &q->g), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(c1d_gpu_session_upload(q->g, q->p.x, q->p.w, lowp_bias(&q->p), lowp_states(&q->p)), C1D_OK, "%s",
               c1d_error_detail());
  q->first = malloc((size_t)c1d_y_count(s) * sizeof(float));
  q->twin = malloc((size_t)c1d_y_count(s) * sizeof(float));
  cr_assert(q->first && q->twin);
}

/* With the oracle and the explainer (for verdicts). */
static void gpu_setup(gpu_problem *q, const c1d_shape *s, c1d_dist dist, uint64_t seed) {
  setup_lowp(&q->p, s, dist, seed);
  gpu_session(q);
}

/* Inputs only (for bit comparisons). */
static void gpu_setup_inputs(gpu_problem *q, const c1d_shape *s, c1d_dist dist, uint64_t seed) {
  setup_lowp_inputs(&q->p, s, dist, seed);
  gpu_session(q);
}

static void gpu_teardown(gpu_problem *q) {
  c1d_gpu_session_destroy(q->g);
  free(q->first), free(q->twin);
  teardown_lowp(&q->p);
}

/* impl through the session into y: a warm-up and a timed run, each into a poisoned output; the two
 * must give the same bits. Returns what the implementation reported. */
static c1d_exec run_gpu(gpu_problem *q, const c1d_impl *impl, float *y) {
  c1d_exec ex;
  c1d_timing t;
  memset(&ex, 0, sizeof ex);
  memset(&t, 0, sizeof t);
  ex.used_tf32 = -1;
  const char *why = c1d_impl_unsupported(impl, &q->p.s);
  cr_assert_null(why, "%s refuses %s: %s", impl->name, shape_text(&q->p.s), why);
  cr_assert_eq(c1d_execute_gpu(q->g, impl, y, q->first, 1, 0.0, &ex, &t), C1D_OK, "%s on %s: %s", impl->name,
               shape_text(&q->p.s), c1d_error_detail());
  cr_assert(t.repeat_identical, "%s on %s: two runs gave different bits", impl->name, shape_text(&q->p.s));
  return ex;
}

static void assert_all_written(const char *name, const c1d_shape *s, const float *y) {
  for (int64_t i = 0; i < c1d_y_count(s); i++)
    if (isnan(y[i]))
      cr_assert_fail("%s left y[n=%lld, o=%lld, t=%lld] unwritten (NaN) at %s", name, (long long)(i / s->L / s->O),
                     (long long)(i / s->L % s->O), (long long)(i % s->L), shape_text(s));
}

/* Every kernel that takes s against grouped_naive: bits, every element, two runs. */
static int check_twins_on(const c1d_shape *s, uint64_t seed) {
  static const char *const kernels[] = {"gpu_dw_naive", "gpu_dw_fast", "gpu_grouped"};
  gpu_problem q;
  int ran = 0;
  gpu_setup_inputs(&q, s, C1D_DIST_NORMAL, seed);
  run_lowp_cpu(&q.p, &c1d_cpu_grouped_naive, q.twin);
  for (int k = 0; k < 3; k++) {
    const c1d_impl *impl = impl_named(kernels[k]);
    if (c1d_impl_unsupported(impl, s)) continue;
    run_gpu(&q, impl, q.p.y);
    assert_all_written(impl->name, s, q.p.y);
    char what[96];
    snprintf(what, sizeof what, "%s against grouped_naive", impl->name);
    assert_same_bits(what, s, q.p.y, q.twin);
    ran++;
  }
  gpu_teardown(&q);
  return ran;
}

Test(gpu_dw, the_twins_are_bit_exact_on_every_type_combination_of_the_fast_kernels_paths, .timeout = 240) {
  skip_without_device();
  int runs = 0;
  for (int si = 0; si < N_ALL_TYPES_SHAPES; si++)
    for (int i = 0; i < N_TYPE_COMBINATIONS; i++) {
      c1d_shape s = dw_shapes[si];
      s.dt = types_of(i);
      const int ran = check_twins_on(&s, 1000 + (uint64_t)i);
      cr_assert_eq(ran, 2, "gpu_dw_naive and gpu_dw_fast on %s", shape_text(&s));
      runs += ran;
    }
  cr_log_info("%d kernel runs bit-exact with grouped_naive", runs);
}

Test(gpu_dw, the_twins_are_bit_exact_over_the_odd_shapes, .timeout = 240) {
  skip_without_device();
  int runs = 0;
  for (int si = N_ALL_TYPES_SHAPES; si < N_DW; si++)
    for (int j = 0; j < N_SPREAD; j++) {
      c1d_shape s = dw_shapes[si];
      s.dt = types_of(spread_of(si, j));
      if (c1d_x_count(&s) > 4000000 && j > 1) continue; /* the largest shapes: two type sets */
      const int ran = check_twins_on(&s, 77 + (uint64_t)(si * N_SPREAD + j));
      cr_assert_eq(ran, 2, "gpu_dw_naive and gpu_dw_fast on %s", shape_text(&s));
      runs += ran;
    }
  for (int si = 0; si < N_GROUPED; si++)
    for (int j = 0; j < N_SPREAD; j++) {
      c1d_shape s = grouped_shapes[si];
      s.dt = types_of(spread_of(si, j));
      cr_assert_eq(check_twins_on(&s, 5 + (uint64_t)(si * N_SPREAD + j)), 1, "gpu_grouped on %s", shape_text(&s));
      runs++;
    }
  cr_log_info("%d kernel runs bit-exact with grouped_naive", runs);
}

/* The channel-last ring kernel (gpu/dw_fast_kernels.h) over strips longer than the launcher gives small
 * shapes (4 positions), so the strip is forced (C1D_DW_NLC_STRIP; Criterion runs each test in its own
 * process). Its ring holds 16 rows: 9 positions fill part of it, 37 wrap it twice and end part-way
 * through a third pass; the strips after the first start from x's rows, the first from the states. */
Test(gpu_dw, the_channel_last_ring_is_bit_exact_over_strips_that_wrap_it, .timeout = 240) {
  skip_without_device();
  static const c1d_shape shapes[] = {
      {DW(2, 24, 200, 4, 1), .bias = 1, .states = 1, SILU, NLC},
      {DW(2, 32, 96, 7, 1), .bias = 1, .states = 1, NLC},
      {DW(3, 16, 75, 2, 1), NLC},
      {DW(1, 40, 120, 1, 1), .bias = 1, NLC},
  };
  int runs = 0;
  for (int strip = 9; strip <= 37; strip += 28) {
    char text[8];
    snprintf(text, sizeof text, "%d", strip);
    cr_assert_eq(setenv("C1D_DW_NLC_STRIP", text, 1), 0);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
      for (int j = 0; j < N_SPREAD; j++) {
        c1d_shape s = shapes[si];
        s.dt = types_of(spread_of((int)si, j));
        cr_assert_eq(check_twins_on(&s, 300 + (uint64_t)(si * N_SPREAD + j)), 2, "gpu_dw_naive and gpu_dw_fast on %s",
                     shape_text(&s));
        runs += 2;
      }
  }
  unsetenv("C1D_DW_NLC_STRIP");
  cr_log_info("%d kernel runs bit-exact with grouped_naive under strips of 9 and 37", runs);
}

/* The PLAIN kernels (every tensor of x's type, no activation: the L = 1 step and the channel-last ring
 * compiled apart, gpu/dw_fast_kernels.h) take none of the type combinations above, whose shapes have a
 * SiLU; here they run on their own, each shape in the three types, and then (C1D_DW_PLAIN=0) the kernels
 * of every combination on the same problems. */
Test(gpu_dw, the_plain_kernels_are_bit_exact_where_every_tensor_has_x_type, .timeout = 240) {
  skip_without_device();
  static const c1d_shape shapes[] = {
      {DW(3, 24, 1, 4, 1), .bias = 1, .states = 1},      /* the step, (N, C, L) states */
      {DW(3, 24, 1, 3, 1), .bias = 1, .states = 1, NLC}, /* the step, channel-last states */
      {DW(5, 48, 1, 8, 1)},                              /* the step, K = 8, no bias or states */
      {DW(2, 24, 64, 4, 1), .bias = 1, .states = 1, NLC}, /* the ring */
      {DW(3, 16, 75, 2, 1), NLC},                        /* the ring, a ragged last strip */
      {DW(2, 32, 96, 7, 1), .states = 1, NLC},           /* the ring, K = 7 */
      {DW(2, 40, 48, 1, 1), .bias = 1, NLC},             /* the ring, K = 1 */
  };
  static const c1d_dtype types[] = {C1D_DTYPE_F32, C1D_DTYPE_BF16, C1D_DTYPE_F16};
  int runs = 0;
  for (int general = 0; general < 2; general++) {
    if (general) cr_assert_eq(setenv("C1D_DW_PLAIN", "0", 1), 0);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
      for (int ti = 0; ti < 3; ti++) {
        c1d_shape s = shapes[si];
        s.dt = (c1d_dtypes){types[ti], types[ti], types[ti], types[ti], types[ti]};
        cr_assert_eq(check_twins_on(&s, 500 + (uint64_t)(si * 3 + ti)), 2, "gpu_dw_naive and gpu_dw_fast on %s",
                     shape_text(&s));
        runs += 2;
      }
  }
  unsetenv("C1D_DW_PLAIN");
  cr_log_info("%d kernel runs bit-exact with grouped_naive, PLAIN and not", runs);
}

/* The PLAIN step's 8-byte copy (16-bit x, four channels a thread: gpu/dw_fast_kernels.h), the launcher's
 * choice for bf16 and fp16, against the 16-byte step (C1D_DW_VECTOR_BYTES=16) on the same problems; where
 * C % 8 == 4 only the 8-byte one applies. */
Test(gpu_dw, the_8_byte_step_is_bit_exact_on_16_bit_tensors, .timeout = 240) {
  skip_without_device();
  static const c1d_shape shapes[] = {
      {DW(3, 24, 1, 4, 1), .bias = 1, .states = 1},      /* (N, C, L) states */
      {DW(3, 24, 1, 3, 1), .bias = 1, .states = 1, NLC}, /* channel-last states */
      {DW(3, 20, 1, 3, 1), .bias = 1, .states = 1, NLC}, /* C % 8 == 4 */
      {DW(5, 44, 1, 8, 1), .states = 1},                 /* K = 8, C % 8 == 4 */
      {DW(4, 16, 1, 1, 1), .bias = 1},                   /* K = 1 */
      {DW(2, 36, 1, 5, 1), .bias = 1, .states = 1},      /* K = 5 (odd runs of states), C % 8 == 4 */
  };
  static const c1d_dtype types[] = {C1D_DTYPE_BF16, C1D_DTYPE_F16};
  int runs = 0;
  for (int wide = 0; wide < 2; wide++) {
    if (wide) cr_assert_eq(setenv("C1D_DW_VECTOR_BYTES", "16", 1), 0);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
      for (int ti = 0; ti < 2; ti++) {
        c1d_shape s = shapes[si];
        s.dt = (c1d_dtypes){types[ti], types[ti], types[ti], types[ti], types[ti]};
        cr_assert_eq(check_twins_on(&s, 700 + (uint64_t)(si * 2 + ti)), 2, "gpu_dw_naive and gpu_dw_fast on %s",
                     shape_text(&s));
        runs += 2;
      }
  }
  unsetenv("C1D_DW_VECTOR_BYTES");
  cr_log_info("%d kernel runs bit-exact with grouped_naive, 8- and 16-byte steps", runs);
}

/* The channel-last pairs kernel (C1D_DW_NLC_KERNEL=pairs: 16-bit x, PLAIN; two lanes share a ring column,
 * each reads half a row, gpu/dw_fast_kernels.h) under strips of 5, 16 and 37 positions: inside one batch
 * of its ring, two batches exactly, and three refills with a ragged end (its batches are K rounded up to
 * at least 8 rows); K = 1..8, channels that fill a block and that leave lanes idle (C / 8 < 64), states,
 * bias, several batches. */
/* Channel-last problems at K = 1..8 for the kernels forced in the tests below: strips that end inside a
 * ring batch, channels that fill a block and that leave lanes idle, states, bias, several batches. */
static const c1d_shape nlc_every_k[] = {
    {DW(2, 24, 200, 4, 1), .bias = 1, .states = 1, NLC},
    {DW(3, 16, 75, 2, 1), NLC},
    {DW(2, 32, 96, 7, 1), .states = 1, NLC},
    {DW(1, 40, 120, 1, 1), .bias = 1, NLC},
    {DW(2, 1040, 90, 3, 1), .bias = 1, .states = 1, NLC}, /* 130 vectors: two blocks, the second mostly idle */
    {DW(1, 64, 130, 5, 1), .states = 1, NLC},
    {DW(2, 8, 41, 6, 1), .bias = 1, NLC},
    {DW(1, 16, 300, 8, 1), .bias = 1, .states = 1, NLC},
};
enum { N_NLC_EVERY_K = sizeof nlc_every_k / sizeof nlc_every_k[0] };

Test(gpu_dw, the_pairs_kernel_is_bit_exact_on_16_bit_tensors, .timeout = 240) {
  skip_without_device();
  static const c1d_dtype types[] = {C1D_DTYPE_BF16, C1D_DTYPE_F16};
  static const char *strips[] = {"5", "16", "37"};
  cr_assert_eq(setenv("C1D_DW_NLC_KERNEL", "pairs", 1), 0);
  int runs = 0;
  for (int k = 0; k < 3; k++) {
    cr_assert_eq(setenv("C1D_DW_NLC_STRIP", strips[k], 1), 0);
    for (int si = 0; si < N_NLC_EVERY_K; si++)
      for (int ti = 0; ti < 2; ti++) {
        c1d_shape s = nlc_every_k[si];
        s.dt = (c1d_dtypes){types[ti], types[ti], types[ti], types[ti], types[ti]};
        cr_assert_eq(check_twins_on(&s, 900 + (uint64_t)(si * 2 + ti)), 2, "gpu_dw_naive and gpu_dw_fast on %s, strip %s",
                     shape_text(&s), strips[k]);
        cr_assert_str_eq(c1d_dw_fast_last_kernel(), "dw_fast_nlc_pairs_kernel", "on %s: %s ran", shape_text(&s),
                         c1d_dw_fast_last_kernel());
        runs += 2;
      }
  }
  unsetenv("C1D_DW_NLC_STRIP");
  unsetenv("C1D_DW_NLC_KERNEL");
  cr_log_info("%d kernel runs bit-exact with grouped_naive, the pairs kernel under strips of 5, 16 and 37", runs);
}

/* The channel-last flat kernel (one thread per output row vector, no ring: gpu/dw_fast_kernels.h), meant
 * for small problems (the launcher's choice up to DW_NLC_FLAT_MAX row reads), forced (C1D_DW_NLC_KERNEL=flat)
 * on the problems above and on SiLU, dilated, decode-like and long ones, PLAIN and in the common mixed
 * types (states of another type than x's keep the register kernel). */
Test(gpu_dw, the_flat_channel_last_kernel_is_bit_exact_at_every_k, .timeout = 240) {
  skip_without_device();
  static const c1d_shape more[] = {
      {DW(1, 64, 130, 5, 1), .states = 1, SILU, NLC},
      {DW(2, 16, 40, 5, 3), .states = 1, NLC},              /* dilated: taps D rows apart */
      {DW(1, 16, 9, 4, 4), .bias = 1, .states = 1, NLC},    /* dilated, L < (K-1)*D */
      {DW(3, 2048, 64, 4, 1), .bias = 1, .states = 1, NLC}, /* a decode-like shape */
      {DW(1, 8, 1000000, 2, 1), .bias = 1, NLC},            /* a long sequence: 8 M elements */
  };
  cr_assert_eq(setenv("C1D_DW_NLC_KERNEL", "flat", 1), 0);
  int runs = 0;
  for (int si = 0; si < N_NLC_EVERY_K + (int)(sizeof more / sizeof more[0]); si++)
    for (int j = 0; j < 6; j++) {
      c1d_shape s = si < N_NLC_EVERY_K ? nlc_every_k[si] : more[si - N_NLC_EVERY_K];
      s.dt = types_of(spread_of(si, j));
      if (s.states && s.dt.s != s.dt.x) continue; /* the register kernel's */
      if (c1d_x_count(&s) > 4000000 && j > 1) continue;
      cr_assert_eq(check_twins_on(&s, 1100 + (uint64_t)(si * 6 + j)), 2, "gpu_dw_naive and gpu_dw_fast on %s",
                   shape_text(&s));
      cr_assert_str_eq(c1d_dw_fast_last_kernel(), "dw_fast_nlc_flat_kernel", "on %s: %s ran", shape_text(&s),
                       c1d_dw_fast_last_kernel());
      runs += 2;
    }
  unsetenv("C1D_DW_NLC_KERNEL");
  /* the launcher's own choice: the flat kernel up to DW_NLC_FLAT_MAX row reads at D = 1, the strip
   * kernels on a large problem, on a dilated one, and where a strip is asked for */
  static const struct {
    c1d_shape s;
    int flat;
  } chosen[] = {
      {{DW(1, 2048, 64, 4, 1), NLC}, 1},   /* 2^16 row reads */
      {{DW(8, 2048, 64, 2, 1), NLC}, 1},   /* 2^18 */
      {{DW(1, 2048, 64, 4, 2), NLC}, 0},   /* dilated */
      {{DW(8, 2048, 512, 4, 1), NLC}, 0},  /* 2^22 */
      {{DW(2, 256, 32779, 4, 1), NLC}, 0}, /* 2^23 */
  };
  for (int i = 0; i < (int)(sizeof chosen / sizeof chosen[0]); i++) {
    c1d_shape s = chosen[i].s;
    s.dt = types_of(spread_of(0, 1));
    cr_assert_eq(check_twins_on(&s, 1201 + (uint64_t)i), 2, "on %s", shape_text(&s));
    cr_assert_eq(!strcmp(c1d_dw_fast_last_kernel(), "dw_fast_nlc_flat_kernel"), chosen[i].flat, "on %s: %s ran",
                 shape_text(&s), c1d_dw_fast_last_kernel());
    runs += 2;
  }
  cr_assert_eq(setenv("C1D_DW_NLC_STRIP", "8", 1), 0);
  c1d_shape strip = chosen[0].s;
  strip.dt = types_of(spread_of(0, 1));
  cr_assert_eq(check_twins_on(&strip, 1210), 2);
  unsetenv("C1D_DW_NLC_STRIP");
  cr_assert_str_neq(c1d_dw_fast_last_kernel(), "dw_fast_nlc_flat_kernel", "on %s, strips of 8", shape_text(&strip));
  cr_log_info("%d kernel runs bit-exact with grouped_naive, the flat channel-last kernel forced and chosen", runs + 2);
}

/* The launcher's routes (c1d_dw_fast_kernel_for: the launch's own routing code, on the host), checked with
 * or without a GPU: the L = 1 step in 8- or 16-byte vectors, the (N, C, L) flat and row kernels, and for
 * channel-last the flat kernel on small problems, the tile kernel on larger 16-bit PLAIN ones (K <= 4,
 * L >= 32), the rolling ring for fp32, the window ring with SiLU or mixed types, the pairs ring for
 * 16-bit K > 4 or L < 32, the register kernel for states of another type, the dilated kernel; the scalar
 * and element kernels where there are no whole vectors; then the environment's overrides. */
Test(gpu_dw, the_launcher_routes_each_problem_to_its_kernel) {
  static const struct {
    c1d_shape s;
    int types; /* types_of's index */
    const char *kernel;
  } routes[] = {
      {{DW(8, 4096, 4096, 4, 1)}, 121, "dw_fast_ncl_short_kernel"},               /* the anchor, (N, C, L) */
      {{DW(1, 2048, 1, 4, 1), NLC}, 121, "dw_fast_step_kernel<8 bytes>"},         /* 256 vectors of 16 bytes */
      {{DW(64, 8192, 1, 4, 1), NLC}, 121, "dw_fast_step_kernel"},                 /* 2^16 */
      {{DW(1, 2048, 1, 4, 1), .states = 1}, 0, "dw_fast_step_kernel"},            /* fp32 */
      {{DW(1, 2048, 64, 4, 1), NLC}, 121, "dw_fast_nlc_flat_kernel"},             /* 2^16 row reads */
      {{DW(8, 2048, 512, 4, 1), NLC}, 121, "dw_fast_nlc_tile_kernel"},            /* 2^22 row reads */
      {{DW(8, 8192, 512, 2, 1), NLC}, 121, "dw_fast_nlc_tile_kernel"},            /* 2^23, K = 2 */
      {{DW(1, 8192, 512, 2, 1), .bias = 1, NLC}, 242, "dw_fast_nlc_tile_kernel"}, /* fp16, 2^20 */
      {{DW(64, 2048, 40, 3, 1), .states = 1, NLC}, 121, "dw_fast_nlc_tile_kernel"},
      {{DW(8, 2048, 512, 4, 1), NLC}, 0, "dw_fast_nlc_rolling_kernel"},           /* fp32 */
      {{DW(8, 2048, 512, 4, 1), SILU, NLC}, 121, "dw_fast_nlc_kernel"},
      {{DW(8, 2048, 512, 4, 1), NLC}, 1 + 27 + 81, "dw_fast_nlc_kernel"},         /* fp32 w and b */
      {{DW(8, 2048, 512, 6, 1), NLC}, 121, "dw_fast_nlc_pairs_kernel"},           /* K > 4 */
      {{DW(4096, 256, 16, 4, 1), NLC}, 121, "dw_fast_nlc_pairs_kernel"},          /* L < 32 */
      {{DW(8, 2048, 512, 4, 1), .states = 1, NLC}, 1 + 3 + 9 + 81, "dw_fast_nlc_registers_kernel"}, /* fp32 s */
      {{DW(1, 2048, 64, 4, 2), NLC}, 121, "dw_fast_nlc_dilated_kernel"},
      {{DW(2, 64, 100, 4, 1)}, 121, "dw_fast_scalar_kernel"},                     /* L % 8 != 0 */
      {{DW(1, 12, 64, 4, 1), NLC}, 121, "dw_fast_scalar_kernel"},                 /* C % 8 != 0 */
      {{DW(1, 16, 64, 9, 1)}, 121, "dw_fast_element_kernel"},                     /* K > 8 */
  };
  for (int i = 0; i < (int)(sizeof routes / sizeof routes[0]); i++) {
    c1d_shape s = routes[i].s;
    s.dt = types_of(routes[i].types);
    cr_expect_str_eq(c1d_dw_fast_kernel_for(&s), routes[i].kernel, "on %s", shape_text(&s));
  }
  /* the overrides: a kernel named, a strip asked for, the (N, C, L) row kernel */
  static const struct {
    const char *name, *value;
    c1d_shape s;
    int types;
    const char *kernel;
  } forced[] = {
      {"C1D_DW_NLC_KERNEL", "tile", {DW(8, 2048, 512, 4, 1), NLC}, 0, "dw_fast_nlc_tile_kernel"},
      {"C1D_DW_NLC_KERNEL", "tile", {DW(1, 2048, 64, 4, 2), NLC}, 121, "dw_fast_nlc_dilated_kernel"},
      {"C1D_DW_NLC_KERNEL", "ring", {DW(8, 2048, 512, 4, 1), NLC}, 121, "dw_fast_nlc_pairs_kernel"},
      {"C1D_DW_NLC_KERNEL", "window", {DW(8, 2048, 512, 4, 1), NLC}, 121, "dw_fast_nlc_kernel"},
      {"C1D_DW_NLC_KERNEL", "flat", {DW(8, 2048, 512, 4, 1), NLC}, 121, "dw_fast_nlc_flat_kernel"},
      {"C1D_DW_NLC_STRIP", "8", {DW(8, 2048, 512, 4, 1), NLC}, 121, "dw_fast_nlc_pairs_kernel"},
      {"C1D_DW_NLC_STRIP", "8", {DW(1, 2048, 64, 4, 1), NLC}, 121, "dw_fast_nlc_pairs_kernel"},
      {"C1D_DW_NCL_KERNEL", "rows", {DW(8, 4096, 4096, 4, 1)}, 121, "dw_fast_ncl_kernel"},
  };
  for (int i = 0; i < (int)(sizeof forced / sizeof forced[0]); i++) {
    c1d_shape s = forced[i].s;
    s.dt = types_of(forced[i].types);
    cr_assert_eq(setenv(forced[i].name, forced[i].value, 1), 0);
    cr_expect_str_eq(c1d_dw_fast_kernel_for(&s), forced[i].kernel, "on %s with %s=%s", shape_text(&s), forced[i].name,
                     forced[i].value);
    unsetenv(forced[i].name);
  }
}

/* The channel-last tile kernel (one thread per output row vector, four a thread, the rows before a tile's
 * positions through shared memory: gpu/dw_fast_kernels.h), forced (C1D_DW_NLC_KERNEL=tile) on the problems
 * above and on SiLU, decode-like and long ones, PLAIN and in the common mixed types, under tiles of 16, 1,
 * 8 and 32 channel vectors (C1D_DW_NLC_TILE_VECTORS: 64, 1024, 128 and 32 positions a tile, so that the
 * rows before a tile cross the sequence's start and the states, and tiles are cut short by L); dilated
 * problems keep the dilated kernel. Then the launcher's own choice: the tile kernel for 16-bit PLAIN
 * problems of K <= 4 and L >= 32 beyond the flat kernel's reach, not for fp32, SiLU, K > 4, short
 * sequences or small problems. */
Test(gpu_dw, the_tile_channel_last_kernel_is_bit_exact_at_every_k, .timeout = 240) {
  skip_without_device();
  static const c1d_shape more[] = {
      {DW(1, 64, 130, 5, 1), .states = 1, SILU, NLC},
      {DW(3, 2048, 64, 4, 1), .bias = 1, .states = 1, NLC}, /* a decode-like shape */
      {DW(2, 24, 7, 8, 1), .states = 1, NLC},               /* L < K - 1: every tap row before t = 0 */
      {DW(1, 8, 1000000, 2, 1), .bias = 1, NLC},            /* a long sequence: 8 M elements */
  };
  static const char *vectors[] = {"16", "1", "8", "32"};
  cr_assert_eq(setenv("C1D_DW_NLC_KERNEL", "tile", 1), 0);
  int runs = 0;
  for (int vi = 0; vi < 4; vi++) {
    cr_assert_eq(setenv("C1D_DW_NLC_TILE_VECTORS", vectors[vi], 1), 0);
    for (int si = 0; si < N_NLC_EVERY_K + (int)(sizeof more / sizeof more[0]); si++)
      for (int j = 0; j < 6; j++) {
        c1d_shape s = si < N_NLC_EVERY_K ? nlc_every_k[si] : more[si - N_NLC_EVERY_K];
        s.dt = types_of(spread_of(si, j));
        if (s.states && s.dt.s != s.dt.x) continue; /* the register kernel's */
        if (c1d_x_count(&s) > 4000000 && (j > 1 || vi > 0)) continue;
        cr_assert_eq(check_twins_on(&s, 1300 + (uint64_t)(si * 6 + j)), 2,
                     "gpu_dw_naive and gpu_dw_fast on %s, tiles of %s vectors", shape_text(&s), vectors[vi]);
        cr_assert_str_eq(c1d_dw_fast_last_kernel(), "dw_fast_nlc_tile_kernel", "on %s: %s ran", shape_text(&s),
                         c1d_dw_fast_last_kernel());
        runs += 2;
      }
  }
  unsetenv("C1D_DW_NLC_TILE_VECTORS");
  c1d_shape dilated = {DW(2, 16, 40, 5, 3), .states = 1, NLC};
  dilated.dt = types_of(spread_of(0, 1));
  cr_assert_eq(check_twins_on(&dilated, 1399), 2);
  cr_assert_str_eq(c1d_dw_fast_last_kernel(), "dw_fast_nlc_dilated_kernel", "on %s", shape_text(&dilated));
  unsetenv("C1D_DW_NLC_KERNEL");
  static const struct {
    c1d_shape s;
    int types; /* spread_of(0, types): 0 all fp32, 1 all bf16, 2 all fp16, 3 bf16 x with fp32 w and b */
    int tile;
  } chosen[] = {
      {{DW(8, 2048, 512, 4, 1), NLC}, 1, 1},              /* 2^20 vectors x positions */
      {{DW(1, 8192, 512, 2, 1), .bias = 1, NLC}, 2, 1},   /* 2^19, K = 2 */
      {{DW(64, 2048, 40, 3, 1), .states = 1, NLC}, 1, 1}, /* L < 64: tiles of 32 vectors x 32 positions */
      {{DW(1, 2048, 64, 4, 1), NLC}, 1, 0},               /* the flat kernel's */
      {{DW(8, 2048, 512, 4, 1), NLC}, 0, 0},              /* fp32 */
      {{DW(8, 2048, 512, 4, 1), SILU, NLC}, 1, 0},        /* SiLU */
      {{DW(8, 2048, 512, 4, 1), NLC}, 3, 0},              /* mixed types */
      {{DW(8, 2048, 512, 6, 1), NLC}, 1, 0},              /* K > 4 */
      {{DW(4096, 256, 16, 4, 1), NLC}, 1, 0},             /* L < 32 */
  };
  for (int i = 0; i < (int)(sizeof chosen / sizeof chosen[0]); i++) {
    c1d_shape s = chosen[i].s;
    s.dt = types_of(spread_of(0, chosen[i].types));
    cr_assert_eq(check_twins_on(&s, 1401 + (uint64_t)i), 2, "on %s", shape_text(&s));
    cr_assert_eq(!strcmp(c1d_dw_fast_last_kernel(), "dw_fast_nlc_tile_kernel"), chosen[i].tile, "on %s: %s ran",
                 shape_text(&s), c1d_dw_fast_last_kernel());
    runs += 2;
  }
  cr_log_info("%d kernel runs bit-exact with grouped_naive, the tile channel-last kernel forced and chosen", runs + 2);
}

Test(gpu_dw, every_mutant_is_caught_with_its_verdict_and_where_or_region, .timeout = 240) {
  skip_without_device();
  int checked = 0;
  for (int si = 0; si < N_MUTANT_SHAPES; si++) {
    gpu_problem q;
    gpu_setup(&q, &mutant_shapes[si], C1D_DIST_CONV_INIT, 17 + (uint64_t)si);
    for (int i = 0; i < c1d_gpu_lowp_zoo_count; i++) {
      const c1d_zoo_entry *z = &c1d_gpu_lowp_zoo[i];
      if (z->applies && !z->applies(&q.p.s)) continue;
      run_gpu(&q, z->impl, q.p.y);
      if (z->impl->twin)
        run_lowp_cpu(&q.p, c1d_find_impl(z->impl->twin), q.twin);
      else
        expected_partial_vector(&q.p, q.twin);
      char what[96];
      snprintf(what, sizeof what, "%s against %s", z->impl->name, z->impl->twin ? z->impl->twin : "its CPU model");
      assert_same_bits(what, &q.p.s, q.p.y, q.twin);
      const c1d_explanation e = explain_lowp_output(&q.p, q.p.y);
      assert_explanation(z, &e, "on the GPU", &q.p.s);
      checked++;
    }
    gpu_teardown(&q);
  }
  cr_assert_geq(checked, 12);
}

/* FFT and Winograd transform the data: normwise errors, not element-wise ones (test_gpu_zoo.c). */
static int is_transform_algo(const char *algo) { return strstr(algo, "FFT") || strstr(algo, "WINOGRAD"); }

Test(gpu_dw, correct_kernels_and_cudnn_rows_are_never_called_a_bug, .timeout = 300) {
  skip_without_device();
  static const char *const names[] = {"gpu_dw_naive", "gpu_dw_fast", "gpu_grouped", "cudnn_fp32",
                                      "cudnn_tf32",   "cudnn_lowp"};
  enum { N_NAMES = sizeof names / sizeof names[0] };
  int runs[N_NAMES] = {0}, verdicts[N_NAMES][C1D_VERDICT_COUNT];
  memset(verdicts, 0, sizeof verdicts);
  const int64_t ny_max = 2 * 64 * 160;
  float *naive = malloc((size_t)ny_max * sizeof(float));
  cr_assert_not_null(naive);
  for (int si = 0; si < N_CORRECT; si++)
    for (int d = 0; d < 3; d++)
      for (uint64_t seed = 1; seed <= N_SEEDS; seed++) {
        gpu_problem q;
        gpu_setup(&q, &correct_shapes[si], correct_dists[d], seed * 131 + (uint64_t)si);
        cr_assert_leq(c1d_y_count(&q.p.s), ny_max);
        run_lowp_cpu(&q.p, &c1d_cpu_grouped_naive, naive);
        const c1d_explanation twin_e = explain_lowp_output(&q.p, naive);
        for (int i = 0; i < N_NAMES; i++) {
          const c1d_impl *impl = c1d_find_impl(names[i]);
          if (!impl || c1d_impl_unsupported(impl, &q.p.s)) continue;
          const c1d_exec ex = run_gpu(&q, impl, q.p.y);
          assert_all_written(impl->name, &q.p.s, q.p.y);
          const c1d_explanation e = explain_lowp_output(&q.p, q.p.y);
          verdicts[i][e.verdict]++;
          runs[i]++;
          if (impl->twin) /* the twins: grouped_naive's bits, so its verdict */
            cr_assert_eq(e.verdict, twin_e.verdict, "%s on %s: %s, grouped_naive %s", impl->name, shape_text(&q.p.s),
                         c1d_verdict_name(e.verdict), c1d_verdict_name(twin_e.verdict));
          if (is_transform_algo(ex.algo)) {
            if (c1d_verdict_is_bug(e.verdict))
              cr_log_warn("%s (transform algorithm %s) called %s on %s: %s", impl->name, ex.algo,
                          c1d_verdict_name(e.verdict), shape_text(&q.p.s), e.reason);
            continue;
          }
          cr_assert_not(c1d_verdict_is_bug(e.verdict), "%s (%s; %s) called %s on %s (%s, seed %llu): %s", impl->name,
                        ex.algo, ex.math, c1d_verdict_name(e.verdict), shape_text(&q.p.s),
                        c1d_dist_name(correct_dists[d]), (unsigned long long)seed, e.reason);
          if (!strncmp(impl->name, "cudnn", 5))
            cr_assert(ex.algo[0] && ex.math[0], "%s names no algorithm or math", impl->name);
        }
        gpu_teardown(&q);
      }
  for (int i = 0; i < N_NAMES; i++) {
    char line[256];
    int len = snprintf(line, sizeof line, "%s: %d runs:", names[i], runs[i]);
    for (int v = 0; v < C1D_VERDICT_COUNT; v++)
      if (verdicts[i][v] && len < (int)sizeof line)
        len += snprintf(line + len, sizeof line - (size_t)len, " %s %d", c1d_verdict_name(v), verdicts[i][v]);
    cr_log_info("%s", line);
  }
  cr_assert_geq(runs[1], 30, "gpu_dw_fast ran %d times", runs[1]);
  cr_assert_geq(runs[5], 20, "cudnn_lowp ran %d times", runs[5]);
  free(naive);
}

/* The kernels' SiLU divides without a division (numerics/activation.h); its CPU twin divides. The same
 * bits for every float input, against this GPU's own correctly rounded division. */
Test(gpu_dw, the_gpu_silu_equals_the_division_on_every_float) {
  skip_without_device();
#ifdef C1D_HAVE_CUDA
  uint64_t bad = 0;
  uint32_t first = 0;
  cr_assert_eq(c1d_gpu_silu_mismatches(&bad, &first), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(bad, 0, "%llu of 2^32 inputs differ from the division, the first v = %a (bits 0x%08x)",
               (unsigned long long)bad, (double)c1d_bits_float(first), first);
#endif
}

Test(gpu_dw, the_gpu_paired_roundings_equal_the_reference_on_every_float) {
  skip_without_device();
#ifdef C1D_HAVE_CUDA
  const c1d_dtype types[] = {C1D_DTYPE_BF16, C1D_DTYPE_F16};
  for (int i = 0; i < 2; i++) {
    uint64_t bad = 0;
    uint32_t first = 0;
    cr_assert_eq(c1d_gpu_round_mismatches(types[i], &bad, &first), C1D_OK, "%s", c1d_error_detail());
    cr_assert_eq(bad, 0, "%s: %llu of the 2^32 inputs round differently from the reference, the first v = %a (bits 0x%08x)",
                 c1d_dtype_name(types[i]), (unsigned long long)bad, (double)c1d_bits_float(first), first);
  }
#endif
}

Test(gpu_dw, cudnn_searches_run_on_depthwise_problems_and_name_their_algorithm) {
  skip_without_device();
  /* cuDNN's rows take no SiLU (its convolution call has no fused activation): bias and states only. */
  const c1d_shape shapes[] = {{DW(2, 64, 160, 4, 1), .bias = 1, .states = 1, TYPES(BF16, BF16, BF16, BF16, BF16)},
                              {DW(2, 40, 100, 4, 1), .bias = 1, .states = 1}};
  const char *names[] = {"cudnn_lowp_fastest", "cudnn_fp32_fastest"};
  for (int i = 0; i < 2; i++) {
    gpu_problem q;
    gpu_setup(&q, &shapes[i], C1D_DIST_CONV_INIT, 3);
    const c1d_exec ex = run_gpu(&q, impl_named(names[i]), q.p.y);
    assert_all_written(names[i], &q.p.s, q.p.y);
    cr_assert(strstr(ex.algo, "fastest found"), "%s: algo \"%s\"", names[i], ex.algo);
    const c1d_explanation e = explain_lowp_output(&q.p, q.p.y);
    cr_log_info("%s on %s: %s; %s: %s", names[i], shape_text(&q.p.s), ex.algo, ex.math, c1d_verdict_name(e.verdict));
    if (!is_transform_algo(ex.algo))
      cr_assert_not(c1d_verdict_is_bug(e.verdict), "%s called %s: %s", names[i], c1d_verdict_name(e.verdict), e.reason);
    gpu_teardown(&q);
  }
}

#endif
