/* gpu_zoo: the explainer on the GPU bug zoo (tests/zoo/gpu_zoo.cu). On a table of shapes (odd sizes,
 * partial tiles, D > 1, bias) and three random distributions, every GPU mutant's output (NaN-poisoned
 * first) is called a bug with its entry's verdict and region; the missing-barrier race is run in pairs,
 * up to four pairs, and must be called a bug on at least one run (the explainer is told whether the pair
 * gave identical bits). The correct GPU kernels and library paths are never called a bug over more than
 * 100 (shape, seed, distribution) runs, and get their own verdict on random inputs. The zoo's table is
 * checked without a device too (CI has nvcc but no GPU). Run with --jobs 1. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/explain.h"
#include "harness/inputs.h"
#include "harness/registry.h"
#include "reference/oracle.h"
#include "tests/support/host_cases.h"

#ifdef C1D_HAVE_CUDA
#include "gpu/device.h"
#include "tests/zoo/gpu_zoo.h"

/* Where the mutants' bugs show: odd sizes, partial tiles (L % 32), D > 1, bias on and off, O not a
 * multiple of 8, C past 32, N = 2 with O < C (the batch-stride mutant). */
static const c1d_shape zoo_shapes[] = {
    {2, 16, 12, 100, 4, 2, 1},  /* partial tile, bias, dilation, O < C */
    {3, 9, 17, 203, 3, 3, 1},   /* odd everything */
    {2, 64, 32, 130, 4, 1, 1},  /* the headline's K and D, partial tile of 2 */
    {4, 32, 40, 97, 5, 2, 1},   /* partial tile of 1 */
    {1, 37, 29, 200, 5, 3, 1},  /* the story's dilated shape */
    {2, 5, 70, 257, 2, 7, 0},   /* no bias, O = 70 (a partial block of warps), D = 7 */
    {2, 40, 24, 1000, 3, 1, 0}, /* many tiles */
    {2, 300, 16, 64, 4, 1, 1},  /* C = 300, tiles exactly full */
};
enum { N_ZOO_SHAPES = sizeof zoo_shapes / sizeof zoo_shapes[0] };

/* The no-false-alarm table: odd shapes down to a single element, L < (K-1)*D, C past one tiled stage. */
static const c1d_shape correct_shapes[] = {
    {1, 1, 1, 1, 1, 1, 0},     {2, 3, 5, 17, 3, 2, 1},   {1, 7, 9, 31, 9, 1, 1},
    {2, 5, 3, 6, 4, 3, 0},     {1, 37, 29, 101, 5, 3, 1}, {2, 64, 16, 70, 4, 1, 0},
    {1, 256, 8, 48, 4, 1, 0},  {3, 16, 33, 65, 2, 4, 1},  {2, 40, 24, 300, 4, 2, 1},
};
enum { N_CORRECT_SHAPES = sizeof correct_shapes / sizeof correct_shapes[0], N_SEEDS = 3 };

/* The correct GPU implementations; those not registered in this build are skipped, with a note. */
static const char *const correct_names[] = {
    "gpu_naive",       "gpu_tap_partial", "gpu_kahan",  "gpu_tiled_smem",     "gpu_oracle_f64",
    "gpu_tf32_inputs", "cudnn_fp32",      "cudnn_tf32", "cublas_im2col_fp32", "cublas_im2col_tf32",
};
enum { N_CORRECT = sizeof correct_names / sizeof correct_names[0] };

// --- helpers -------------------------------------------------------------------------------------

/* One (shape, distribution, seed): host inputs, the oracle, the explainer's models, device copies. */
typedef struct gpu_problem {
  c1d_shape s;
  c1d_dist dist;
  char text[160];            /* shape and distribution, for messages */
  float *x, *w, *b, *y;      /* host */
  double *ref, *mag;
  c1d_explainer ex;
  float *dx, *dw, *db, *dy;  /* device */
} gpu_problem;

static void problem_setup(gpu_problem *p, const c1d_shape *s, c1d_dist dist, uint64_t seed) {
  memset(p, 0, sizeof *p);
  p->s = *s;
  p->dist = dist;
  char shape[128];
  c1d_shape_format(s, shape, sizeof shape);
  snprintf(p->text, sizeof p->text, "%s, %s, seed %llu", shape, c1d_dist_name(dist),
           (unsigned long long)seed);
  const size_t nx = (size_t)c1d_x_count(s), nw = (size_t)c1d_w_count(s), ny = (size_t)c1d_y_count(s);
  p->x = malloc(nx * sizeof(float));
  p->w = malloc(nw * sizeof(float));
  p->b = malloc((size_t)(s->O + 1) * sizeof(float));
  p->y = malloc(ny * sizeof(float));
  p->ref = malloc(ny * sizeof(double));
  p->mag = malloc(ny * sizeof(double));
  cr_assert(p->x && p->w && p->b && p->y && p->ref && p->mag);
  c1d_generate(s, dist, seed, p->x, p->w, p->b);
  const float *b = s->bias ? p->b : NULL;
  cr_assert_eq(c1d_oracle_f64(s, p->x, p->w, b, p->ref, p->mag, NULL, NULL), C1D_OK);
  cr_assert_eq(c1d_explainer_prepare(&p->ex, s, p->x, p->w, b, p->ref, p->mag), C1D_OK, "%s",
               c1d_error_detail());
  cr_assert_eq(c1d_gpu_malloc((void **)&p->dx, nx * 4, "x"), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(c1d_gpu_malloc((void **)&p->dw, nw * 4, "w"), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(c1d_gpu_malloc((void **)&p->dy, ny * 4, "y"), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(c1d_gpu_upload(p->dx, p->x, nx * 4), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(c1d_gpu_upload(p->dw, p->w, nw * 4), C1D_OK, "%s", c1d_error_detail());
  if (s->bias) {
    cr_assert_eq(c1d_gpu_malloc((void **)&p->db, (size_t)s->O * 4, "b"), C1D_OK, "%s",
                 c1d_error_detail());
    cr_assert_eq(c1d_gpu_upload(p->db, p->b, (size_t)s->O * 4), C1D_OK, "%s", c1d_error_detail());
  }
}

static void problem_teardown(gpu_problem *p) {
  c1d_explainer_release(&p->ex);
  c1d_gpu_free(p->dx);
  c1d_gpu_free(p->dw);
  c1d_gpu_free(p->db);
  c1d_gpu_free(p->dy);
  free(p->x);
  free(p->w);
  free(p->b);
  free(p->y);
  free(p->ref);
  free(p->mag);
}

/* Poisons the device output, runs impl (already set up in ex, if it has a setup), downloads into y. */
static void run_impl(gpu_problem *p, const c1d_impl *impl, c1d_exec *ex, float *y) {
  const int64_t ny = c1d_y_count(&p->s);
  cr_assert_eq(c1d_gpu_poison(p->dy, ny), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(impl->run(&p->s, p->dx, p->dw, p->s.bias ? p->db : NULL, p->dy, ex), C1D_OK,
               "%s on %s: %s", impl->name, p->text, c1d_error_detail());
  cr_assert_eq(c1d_gpu_synchronize(), C1D_OK, "%s on %s: %s", impl->name, p->text,
               c1d_error_detail());
  cr_assert_eq(c1d_gpu_download(y, p->dy, (size_t)ny * sizeof(float)), C1D_OK, "%s",
               c1d_error_detail());
}

static c1d_explanation explain(gpu_problem *p, const float *y, int checked, int identical) {
  c1d_explanation e;
  cr_assert_eq(c1d_explainer_explain(&p->ex, y, checked, identical, &e), C1D_OK, "%s",
               c1d_error_detail());
  return e;
}

/* The three random distributions, on which every bug shows. Integer inputs hide a bug wherever a
 * zero input or weight makes the wrong term vanish; ill-conditioned ones (m ~ 1e3 |y|) hide bugs whose
 * error is near |y|, like reading a channel's near-copy, as TF32 or bf16 input rounding. */
static int random_dist(c1d_dist d) {
  return d == C1D_DIST_NORMAL || d == C1D_DIST_UNIFORM || d == C1D_DIST_CONV_INIT;
}

// --- the mutants -----------------------------------------------------------------------------------

/* One deterministic mutant: a bug, with its entry's verdict and region. */
static void check_mutant(gpu_problem *p, const c1d_zoo_entry *z) {
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  run_impl(p, z->impl, &ex, p->y);
  const c1d_explanation e = explain(p, p->y, 0, 0);
  cr_assert(c1d_verdict_is_bug(e.verdict), "%s on %s was called %s: %s", z->impl->name, p->text,
            c1d_verdict_name(e.verdict), e.reason);
  cr_assert_eq(e.verdict, z->expected, "%s on %s: expected %s, got %s: %s", z->impl->name, p->text,
               c1d_verdict_name(z->expected), c1d_verdict_name(e.verdict), e.reason);
  if (z->region != C1D_REGION_NONE)
    cr_assert_eq(e.region.cls, z->region, "%s on %s: region '%s' (%s), expected %s (n %s, o %s, t %s)",
                 z->impl->name, p->text, e.region.kind, c1d_region_class_name(e.region.cls),
                 c1d_region_class_name(z->region), e.region.n, e.region.o, e.region.t);
}

/* The race: pairs of runs until one run is called a bug (four pairs at most). */
static void check_race(gpu_problem *p, const c1d_zoo_entry *z) {
  const int64_t ny = c1d_y_count(&p->s);
  float *again = malloc((size_t)ny * sizeof(float));
  cr_assert_not_null(again);
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  c1d_explanation e;
  memset(&e, 0, sizeof e);
  int caught = 0, differed = 0, pairs = 0;
  for (; pairs < 4 && !caught; pairs++) {
    run_impl(p, z->impl, &ex, p->y);
    run_impl(p, z->impl, &ex, again);
    const int identical = memcmp(p->y, again, (size_t)ny * sizeof(float)) == 0;
    differed |= !identical;
    e = explain(p, p->y, 1, identical);
    if (!c1d_verdict_is_bug(e.verdict)) e = explain(p, again, 1, identical);
    caught = c1d_verdict_is_bug(e.verdict);
  }
  cr_assert(caught, "%s on %s: no run of %d pairs was called a bug%s; last: %s: %s", z->impl->name,
            p->text, pairs, differed ? " although two runs differed" : "",
            c1d_verdict_name(e.verdict), e.reason);
  cr_log_info("%s on %s: %s after %d pair(s)%s", z->impl->name, p->text,
              c1d_verdict_name(e.verdict), pairs,
              differed ? ", two runs gave different bits" : ", the runs repeated their bits");
  free(again);
}

static void check_zoo_on(const c1d_shape *s, int si) {
  skip_without_device();
  int checked = 0;
  for (int d = C1D_DIST_NORMAL; d < C1D_DIST_COUNT; d++) {
    if (!random_dist((c1d_dist)d)) continue;
    gpu_problem p;
    problem_setup(&p, s, (c1d_dist)d, 41 + (uint64_t)si);
    for (int i = 0; i < c1d_gpu_zoo_count; i++) {
      const c1d_zoo_entry *z = &c1d_gpu_zoo[i];
      if (z->applies && !z->applies(s)) continue;
      const char *why = z->impl->supported ? z->impl->supported(s) : NULL;
      cr_assert_null(why, "%s refuses %s: %s", z->impl->name, p.text, why);
      if (z->impl == &c1d_gpu_zoo_missing_barrier)
        check_race(&p, z);
      else
        check_mutant(&p, z);
      checked++;
    }
    problem_teardown(&p);
  }
  cr_assert_gt(checked, 0);
  cr_log_info("zoo shape %d: %d mutant runs, every one called a bug", si, checked);
}

ParameterizedTestParameters(gpu_zoo, every_mutant_is_called_a_bug_with_the_right_region) {
  static int idx[N_ZOO_SHAPES];
  for (int i = 0; i < N_ZOO_SHAPES; i++) idx[i] = i;
  return cr_make_param_array(int, idx, N_ZOO_SHAPES);
}
ParameterizedTest(int *si, gpu_zoo, every_mutant_is_called_a_bug_with_the_right_region,
                  .timeout = 300) {
  check_zoo_on(&zoo_shapes[*si], *si);
}

// --- correct implementations -----------------------------------------------------------------------

/* FFT and Winograd transform the data: their errors are normwise, not bounded element by element by
 * gamma_n * m, so the explainer is not expected to call them fp32-rounding. */
static int is_transform_algo(const char *algo) {
  return strstr(algo, "FFT") != NULL || strstr(algo, "WINOGRAD") != NULL;
}

/* The verdict an implementation must get on random inputs, or -1 when it cannot be told. */
static int own_verdict(const c1d_impl *impl, const c1d_exec *ex) {
  switch (impl->precision) {
    case C1D_PREC_FP64:
    case C1D_PREC_FP32:
    case C1D_PREC_FP32_COMP: return C1D_VERDICT_FP32_ROUNDING;
    case C1D_PREC_TF32: return C1D_VERDICT_TF32_INPUTS;
    case C1D_PREC_TF32_ALLOWED:
      return ex->used_tf32 == 1   ? C1D_VERDICT_TF32_INPUTS
             : ex->used_tf32 == 0 ? C1D_VERDICT_FP32_ROUNDING
                                  : -1;
    default: return -1;
  }
}

enum { MAX_CHECKED = N_CORRECT + 4 };

static void check_correct_on(const c1d_shape *s, int si) {
  skip_without_device();
  char shape[128];
  c1d_shape_format(s, shape, sizeof shape);
  /* The implementations, each set up once for the shape; the zoo's controls after them. */
  const c1d_impl *impls[MAX_CHECKED];
  c1d_exec execs[MAX_CHECKED];
  int count = 0, verdicts[MAX_CHECKED][C1D_VERDICT_COUNT];
  memset(verdicts, 0, sizeof verdicts);
  for (int i = 0; i < N_CORRECT; i++) {
    const c1d_impl *impl = c1d_find_impl(correct_names[i]);
    if (!impl) {
      cr_log_info("%s is not registered in this build", correct_names[i]);
      continue;
    }
    const char *why = impl->supported ? impl->supported(s) : NULL;
    if (why) {
      cr_log_info("%s skips %s: %s", impl->name, shape, why);
      continue;
    }
    memset(&execs[count], 0, sizeof execs[count]);
    execs[count].used_tf32 = -1;
    if (impl->setup)
      cr_assert_eq(impl->setup(s, &execs[count]), C1D_OK, "%s setup on %s: %s", impl->name, shape,
                   c1d_error_detail());
    impls[count++] = impl;
  }
  cr_assert(count > 0 && strcmp(impls[0]->name, "gpu_naive") == 0, "gpu_naive is not registered");
  for (int i = 0; i < c1d_gpu_zoo_controls_count; i++) {
    memset(&execs[count], 0, sizeof execs[count]);
    impls[count++] = c1d_gpu_zoo_controls[i].impl;
  }

  const int64_t ny = c1d_y_count(s);
  float *naive_y = malloc((size_t)ny * sizeof(float));
  cr_assert_not_null(naive_y);
  int runs = 0;
  for (int d = 0; d < C1D_DIST_COUNT; d++)
    for (uint64_t seed = 1; seed <= N_SEEDS; seed++) {
      gpu_problem p;
      problem_setup(&p, s, (c1d_dist)d, seed * 977 + (uint64_t)si);
      for (int i = 0; i < count; i++) {
        const c1d_impl *impl = impls[i];
        run_impl(&p, impl, &execs[i], p.y);
        if (i == 0) memcpy(naive_y, p.y, (size_t)ny * sizeof(float));
        if (impl->tier == C1D_TIER_MUTANT) /* a control: the zoo's template without its bug is gpu_naive exactly */
          cr_assert(memcmp(p.y, naive_y, (size_t)ny * sizeof(float)) == 0,
                    "%s differs from gpu_naive on %s", impl->name, p.text);
        const c1d_explanation e = explain(&p, p.y, 0, 0);
        verdicts[i][e.verdict]++;
        if (is_transform_algo(execs[i].algo)) {
          if (c1d_verdict_is_bug(e.verdict))
            cr_log_warn("%s (transform algorithm %s) called %s on %s: %s", impl->name,
                        execs[i].algo, c1d_verdict_name(e.verdict), p.text, e.reason);
          continue;
        }
        cr_assert_not(c1d_verdict_is_bug(e.verdict), "%s (%s %s) called %s on %s: %s", impl->name,
                      execs[i].algo, execs[i].math, c1d_verdict_name(e.verdict), p.text, e.reason);
        const int own = own_verdict(impl, &execs[i]);
        /* On random inputs and enough elements for stable medians, its own verdict. */
        if (own >= 0 && random_dist(p.dist) && ny >= 1000)
          cr_assert_eq(e.verdict, own, "%s (%s %s, used_tf32 %d) on %s: expected %s, got %s: %s",
                       impl->name, execs[i].algo, execs[i].math, execs[i].used_tf32, p.text,
                       c1d_verdict_name((c1d_verdict)own), c1d_verdict_name(e.verdict), e.reason);
      }
      problem_teardown(&p);
      runs++;
    }
  for (int i = 0; i < count; i++) {
    char line[256];
    int len = snprintf(line, sizeof line, "%s on %s (%d runs):", impls[i]->name, shape, runs);
    for (int v = 0; v < C1D_VERDICT_COUNT; v++)
      if (verdicts[i][v] && len < (int)sizeof line)
        len += snprintf(line + len, sizeof line - (size_t)len, " %s %d", c1d_verdict_name(v),
                        verdicts[i][v]);
    cr_log_info("%s", line);
    if (impls[i]->teardown) impls[i]->teardown(&execs[i]);
  }
  free(naive_y);
}

ParameterizedTestParameters(gpu_zoo, correct_gpu_implementations_are_never_called_a_bug) {
  static int idx[N_CORRECT_SHAPES];
  for (int i = 0; i < N_CORRECT_SHAPES; i++) idx[i] = i;
  return cr_make_param_array(int, idx, N_CORRECT_SHAPES);
}
ParameterizedTest(int *si, gpu_zoo, correct_gpu_implementations_are_never_called_a_bug,
                  .timeout = 300) {
  check_correct_on(&correct_shapes[*si], *si);
}

// --- the table, without a device ------------------------------------------------------------------

static int verdict_has_region(c1d_verdict v) {
  return v == C1D_VERDICT_BUG_LOCALIZED || v == C1D_VERDICT_NON_FINITE;
}

Test(gpu_zoo, lists_every_required_mutant_with_its_verdict_and_a_shape_that_shows_it) {
  cr_assert_geq(c1d_gpu_zoo_count, 8);
  /* The eight kinds, by name. */
  const char *required[] = {"gpu_zoo_missing_barrier", "gpu_zoo_causal_shift",
                            "gpu_zoo_circular_padding", "gpu_zoo_missing_bias",
                            "gpu_zoo_dilation_ignored", "gpu_zoo_unwritten_tail",
                            "gpu_zoo_stale_window",    "gpu_zoo_skipped_channel"};
  for (unsigned r = 0; r < sizeof required / sizeof required[0]; r++) {
    int found = 0;
    for (int i = 0; i < c1d_gpu_zoo_count; i++)
      found += strcmp(c1d_gpu_zoo[i].impl->name, required[r]) == 0;
    cr_assert_eq(found, 1, "%s is listed %d times", required[r], found);
  }
  for (int i = 0; i < c1d_gpu_zoo_count; i++) {
    const c1d_zoo_entry *z = &c1d_gpu_zoo[i];
    cr_assert_not_null(z->impl);
    const char *name = z->impl->name;
    cr_assert_not_null(z->impl->run, "%s has no run", name);
    cr_assert_eq(strncmp(name, "gpu_zoo_", 8), 0, "%s", name);
    cr_assert_eq(z->impl->backend, C1D_BACKEND_GPU, "%s", name);
    cr_assert_eq(z->impl->precision, C1D_PREC_WRONG, "%s", name);
    cr_assert_eq(z->impl->tier, C1D_TIER_MUTANT, "%s", name);
    cr_assert_eq(c1d_find_impl(name), z->impl, "%s is not in the registry (tier mutant)", name);
    cr_assert(c1d_verdict_is_bug(z->expected), "%s expects %s", name, c1d_verdict_name(z->expected));
    if (z->impl != &c1d_gpu_zoo_missing_barrier)
      cr_assert_eq(verdict_has_region(z->expected), z->region != C1D_REGION_NONE,
                   "%s: a localized or non-finite verdict names its region, a global one none", name);
    for (int j = 0; j < i; j++) cr_assert_str_neq(c1d_gpu_zoo[j].impl->name, name);
    /* Some shape of the GPU table shows the bug, and the mutant accepts every shape it applies to. */
    int shown = 0;
    for (int si = 0; si < N_ZOO_SHAPES; si++) {
      const c1d_shape *s = &zoo_shapes[si];
      if (z->applies && !z->applies(s)) continue;
      shown++;
      cr_assert_null(z->impl->supported ? z->impl->supported(s) : NULL,
                     "%s refuses zoo shape %d, to which it applies", name, si);
    }
    cr_assert_geq(shown, 2, "%s shows on %d zoo shapes", name, shown);
  }
  for (int i = 0; i < c1d_gpu_zoo_controls_count; i++) {
    const c1d_zoo_entry *z = &c1d_gpu_zoo_controls[i];
    cr_assert_eq(z->expected, C1D_VERDICT_FP32_ROUNDING);
    cr_assert_eq(z->impl->precision, C1D_PREC_FP32);
    cr_assert_eq(z->impl->backend, C1D_BACKEND_GPU);
    cr_assert_not_null(z->impl->run);
  }
  /* The no-false-alarm test covers at least 100 (shape, seed, distribution) runs. */
  cr_assert_geq(N_CORRECT_SHAPES * N_SEEDS * C1D_DIST_COUNT, 100);
}

Test(gpu_zoo, tiled_mutants_refuse_windows_wider_than_shared_memory_like_the_real_kernel) {
  const c1d_shape wide = {1, 4, 4, 100, 2, 20000, 0};
  const c1d_shape fits = {1, 4, 4, 100, 9, 1000, 0};
  const c1d_impl *tiled = c1d_find_impl("gpu_tiled_smem");
  cr_assert_not_null(tiled);
  cr_assert_not_null(tiled->supported(&wide));
  int tiled_mutants = 0;
  for (int i = 0; i < c1d_gpu_zoo_count; i++) {
    const c1d_impl *impl = c1d_gpu_zoo[i].impl;
    if (!strstr(impl->summary, "tiled kernel")) continue;
    tiled_mutants++;
    cr_assert_not_null(impl->supported, "%s has no supported()", impl->name);
    const char *why = impl->supported(&wide);
    cr_assert_not_null(why, "%s accepts a window wider than shared memory", impl->name);
    cr_assert(strstr(why, "shared memory"), "%s: %s", impl->name, why);
    cr_assert_null(impl->supported(&fits), "%s refuses a window that fits", impl->name);
  }
  cr_assert_geq(tiled_mutants, 6);
}

#else

Test(gpu_zoo, needs_a_cuda_build) { cr_skip_test("built without CUDA: the GPU bug zoo is not compiled"); }

#endif
