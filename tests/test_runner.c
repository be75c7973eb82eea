/* The runner, driven with test-local implementations: poisoning exposes elements an implementation never
 * writes; metrics of a known candidate come out as constructed; skips, failures, trials, caller tensors,
 * comparisons, saved outputs and the checks made before anything is allocated. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "harness/execute.h"
#include "harness/memory.h"
#include "harness/npy.h"
#include "harness/progress.h"
#include "harness/registry.h"
#include "harness/report_set.h"
#include "harness/runner.h"
#include "reference/oracle.h"

extern const c1d_impl c1d_cpu_naive, c1d_cpu_tap_partial, c1d_cpu_kahan, c1d_cpu_tf32_inputs;

static const c1d_shape small = {.N = 2, .C = 5, .O = 3, .L = 40, .K = 3, .D = 2, .bias = 1};

// --- test-local implementations ----------------------------------------------------------------

/* Writes every element except the last position of each row (a classic off-by-one). */
static c1d_status skip_last_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                                float *y, c1d_exec *ex) {
  float *full = malloc((size_t)c1d_y_count(s) * sizeof *full);
  if (!full) return c1d_fail(C1D_ERR_NO_MEMORY, "test");
  c1d_status st = c1d_cpu_naive.run(s, x, w, b, full, ex);
  for (int64_t i = 0; i < c1d_y_count(s); i++)
    if (i % s->L != s->L - 1) y[i] = full[i];
  free(full);
  return st;
}
static const c1d_impl skip_last = {.name = "skip_last", .summary = "misses t = L-1",
                                   .backend = C1D_BACKEND_CPU, .precision = C1D_PREC_WRONG,
                                   .run = skip_last_run};

/* The oracle rounded to float32, with 1e-3 added at element 7. */
#define OFFSET_INDEX 7
static c1d_status offset_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                             float *y, c1d_exec *ex) {
  double *exact = malloc((size_t)c1d_y_count(s) * sizeof *exact);
  if (!exact) return c1d_fail(C1D_ERR_NO_MEMORY, "test");
  c1d_oracle_direct(s, x, w, b, exact);
  for (int64_t i = 0; i < c1d_y_count(s); i++) y[i] = (float)exact[i];
  y[OFFSET_INDEX] += 1e-3f;
  snprintf(ex->algo, sizeof ex->algo, "rounded oracle");
  ex->used_tf32 = 0;
  free(exact);
  return C1D_OK;
}
static const c1d_impl offset = {.name = "offset", .summary = "rounded oracle, one element off",
                                .backend = C1D_BACKEND_CPU, .precision = C1D_PREC_FP32,
                                .run = offset_run};

static const char *needs_k1(const c1d_shape *s) { return s->K == 1 ? NULL : "needs K == 1"; }
static const c1d_impl picky = {.name = "picky", .summary = "K == 1 only", .backend = C1D_BACKEND_CPU,
                               .precision = C1D_PREC_FP32, .supported = needs_k1,
                               .run = offset_run};

static c1d_status failing_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                              float *y, c1d_exec *ex) {
  return c1d_fail(C1D_ERR_INTERNAL, "deliberate failure 42");
}
static const c1d_impl failing = {.name = "failing", .summary = "always fails",
                                 .backend = C1D_BACKEND_CPU, .precision = C1D_PREC_FP32,
                                 .run = failing_run};

static c1d_status fake_gpu_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                               float *y, c1d_exec *ex) {
  return c1d_fail(C1D_ERR_CUDA, "fake GPU implementation");
}
static const c1d_impl fake_gpu = {.name = "fake_gpu", .summary = "a GPU descriptor",
                                  .backend = C1D_BACKEND_GPU, .precision = C1D_PREC_FP32,
                                  .run = fake_gpu_run};

static int setups, runs, teardowns;
static c1d_status counted_setup(const c1d_shape *s, c1d_exec *ex) {
  setups++;
  return C1D_OK;
}
static void counted_teardown(c1d_exec *ex) { teardowns++; }
static c1d_status counted_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                              float *y, c1d_exec *ex) {
  runs++;
  return c1d_cpu_naive.run(s, x, w, b, y, ex);
}
static const c1d_impl counted = {.name = "counted", .summary = "naive, counting calls",
                                 .backend = C1D_BACKEND_CPU, .precision = C1D_PREC_FP32,
                                 .setup = counted_setup, .teardown = counted_teardown,
                                 .run = counted_run};

static const c1d_impl naive_again = {.name = "naive_again", .summary = "naive under another name",
                                     .backend = C1D_BACKEND_CPU, .precision = C1D_PREC_FP32,
                                     .run = counted_run};

// --- helpers -----------------------------------------------------------------------------------

static c1d_run_config config_for(const c1d_impl *const *impls, int n) {
  c1d_run_config cfg;
  c1d_run_config_default(&cfg);
  cfg.shape = small;
  cfg.dist = C1D_DIST_NORMAL; /* the tests regenerate these inputs to check against them */
  cfg.impls = impls;
  cfg.n_impls = n;
  cfg.oracle = C1D_ORACLE_CPU;
  cfg.repeats = 2;
  return cfg;
}

static const c1d_impl_result *find(const c1d_run_results *r, const char *name) {
  for (int i = 0; i < r->n_impls; i++)
    if (strcmp(r->impls[i].name, name) == 0) return &r->impls[i];
  cr_assert_fail("no result named %s", name);
  return NULL;
}

// --- poisoning and metrics ---------------------------------------------------------------------

Test(runner, poisoning_exposes_every_element_an_implementation_never_writes) {
  const c1d_impl *impls[] = {&skip_last};
  c1d_run_config cfg = config_for(impls, 1);
  c1d_run_results r;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK, "%s", c1d_error_detail());
  const c1d_metrics *m = &r.impls[0].trials[0].metrics;
  cr_expect_eq(r.impls[0].state, C1D_RESULT_RAN);
  cr_expect_eq(m->nonfinite, small.N * small.O, "one unwritten element per row");
  cr_expect_eq(m->first_nonfinite, small.L - 1);
  cr_expect_eq(m->fail_default, small.N * small.O, "an unwritten element never passes allclose");
  cr_expect(isinf(m->ulp_max));
  c1d_run_results_free(&r);
}

Test(runner, measures_a_known_candidate_as_constructed) {
  const c1d_impl *impls[] = {&offset};
  c1d_run_config cfg = config_for(impls, 1);
  c1d_run_results r;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK, "%s", c1d_error_detail());
  const c1d_trial_result *t = &r.impls[0].trials[0];
  const c1d_metrics *m = &t->metrics;
  /* The expected error: recompute the exact value and the offset element's float32. */
  float x[2 * 5 * 40], w[3 * 5 * 3], b[3];
  double exact[2 * 3 * 40];
  c1d_generate(&small, C1D_DIST_NORMAL, 0, x, w, b);
  c1d_oracle_direct(&small, x, w, b, exact);
  const double want = fabs((double)((float)exact[OFFSET_INDEX] + 1e-3f) - exact[OFFSET_INDEX]);
  cr_expect_eq(m->count, c1d_y_count(&small));
  cr_expect_eq(m->argmax_abs, OFFSET_INDEX);
  cr_expect_eq(m->max_abs, want);
  cr_expect_eq(m->fail_default, 1);
  cr_expect_eq(m->nonfinite, 0);
  cr_expect_eq(m->ulp_p50, 0.0, "all but one element is the correctly rounded result");
  cr_expect_eq(m->beyond_det, 1);
  cr_expect_str_eq(t->algo, "rounded oracle", "what the implementation reports in c1d_exec is kept");
  cr_expect_eq(t->used_tf32, 0);
  cr_expect_eq(t->repeats, 2);
  cr_expect(t->time_min_ms <= t->time_median_ms && t->gflops > 0.0);
  cr_expect_eq(c1d_log_hist_total(&t->abs_err_hist), m->count, "the histogram counts every element");
  c1d_run_results_free(&r);
}

Test(runner, finds_every_cpu_implementation_exact_on_integer_inputs) {
  const c1d_impl *impls[] = {&c1d_cpu_naive, &c1d_cpu_tap_partial, &c1d_cpu_kahan, &c1d_cpu_tf32_inputs};
  c1d_run_config cfg = config_for(impls, 4);
  cfg.dist = C1D_DIST_INTEGER;
  c1d_run_results r;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK, "%s", c1d_error_detail());
  for (int i = 0; i < 4; i++) {
    cr_expect_eq(r.impls[i].state, C1D_RESULT_RAN);
    cr_expect_eq(r.impls[i].trials[0].metrics.max_abs, 0.0, "%s", r.impls[i].name);
  }
  c1d_run_results_free(&r);
}

// --- skips and failures ------------------------------------------------------------------------

Test(runner, reports_unsupported_and_unavailable_implementations_as_skipped_with_the_reason) {
  const c1d_impl *impls[] = {&picky, &fake_gpu, &c1d_cpu_naive};
  c1d_run_config cfg = config_for(impls, 3);
  c1d_run_results r;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK, "%s", c1d_error_detail());
  cr_expect_eq(r.impls[0].state, C1D_RESULT_SKIPPED);
  cr_expect_str_eq(r.impls[0].skip_reason, "needs K == 1");
  cr_expect_eq(r.impls[0].n_trials, 0);
  const char *why = c1d_impl_unavailable(&fake_gpu);
  if (why) {
    cr_expect_eq(r.impls[1].state, C1D_RESULT_SKIPPED);
    cr_expect_str_eq(r.impls[1].skip_reason, why);
  } else { /* a machine with a GPU runs it, and it fails as written */
    cr_expect_eq(r.impls[1].state, C1D_RESULT_FAILED);
  }
  cr_expect_eq(r.impls[2].state, C1D_RESULT_RAN);
  c1d_run_results_free(&r);
}

Test(runner, records_a_failing_implementation_and_runs_the_others) {
  const c1d_impl *impls[] = {&failing, &c1d_cpu_naive};
  c1d_run_config cfg = config_for(impls, 2);
  c1d_run_results r;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK, "a failing implementation does not fail the run");
  cr_expect_eq(r.impls[0].state, C1D_RESULT_FAILED);
  cr_expect_eq(r.impls[0].trials[0].status, C1D_ERR_INTERNAL);
  cr_expect_str_eq(r.impls[0].trials[0].error, "deliberate failure 42");
  cr_expect_eq(r.impls[1].state, C1D_RESULT_RAN);
  cr_expect(c1d_run_any_failed(&r));
  c1d_run_results_free(&r);
}

Test(runner, sets_up_warms_up_times_and_tears_down_once_per_trial) {
  const c1d_impl *impls[] = {&counted};
  c1d_run_config cfg = config_for(impls, 1);
  cfg.trials = 2;
  cfg.repeats = 3;
  c1d_run_results r;
  setups = runs = teardowns = 0;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK);
  cr_expect_eq(setups, 2);
  cr_expect_eq(teardowns, 2);
  cr_expect_eq(runs, 2 * (1 + 3), "a warm-up and three timed runs per trial");
  c1d_run_results_free(&r);
}

// --- trials, caller tensors, comparisons -------------------------------------------------------

Test(runner, gives_trial_i_the_seed_plus_i) {
  const c1d_impl *impls[] = {&c1d_cpu_naive};
  c1d_run_config cfg = config_for(impls, 1);
  cfg.trials = 3;
  cfg.seed = 10;
  c1d_run_results r;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK);
  for (int t = 0; t < 3; t++) cr_expect_eq(r.impls[0].trials[t].seed, 10u + (unsigned)t);
  cr_expect_neq(r.impls[0].trials[0].metrics.max_abs, r.impls[0].trials[1].metrics.max_abs,
                "fresh inputs per trial");
  c1d_run_results_free(&r);
}

Test(runner, scores_a_candidate_on_the_callers_tensors_without_timing_it) {
  float x[2 * 5 * 40], w[3 * 5 * 3], b[3], y[2 * 3 * 40];
  double exact[2 * 3 * 40];
  c1d_generate(&small, C1D_DIST_UNIFORM, 99, x, w, b);
  c1d_oracle_direct(&small, x, w, b, exact);
  for (int i = 0; i < 2 * 3 * 40; i++) y[i] = (float)exact[i];
  const c1d_candidate cand = {"file:y.npy", y};
  const c1d_impl *impls[] = {&c1d_cpu_naive};
  c1d_run_config cfg = config_for(impls, 1);
  cfg.x = x;
  cfg.w = w;
  cfg.b = b;
  cfg.candidates = &cand;
  cfg.n_candidates = 1;
  c1d_run_results r;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK, "%s", c1d_error_detail());
  cr_expect(r.from_files);
  const c1d_impl_result *c = find(&r, "file:y.npy");
  cr_expect_str_eq(c->backend, "file");
  cr_expect_eq(c->trials[0].metrics.ulp_max, 0.0);
  cr_expect_eq(c->trials[0].repeats, 0);
  cr_expect(isnan(c->trials[0].time_median_ms));
  c1d_run_results_free(&r);
}

Test(runner, compares_two_implementations_with_the_second_as_reference) {
  const c1d_impl *impls[] = {&c1d_cpu_naive, &naive_again, &c1d_cpu_kahan};
  c1d_run_config cfg = config_for(impls, 3);
  cfg.compare_a = "naive";
  cfg.compare_b = "naive_again";
  c1d_run_results r;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(r.n_comparisons, 1);
  const c1d_trial_result *t = &r.comparisons[0].trials[0];
  cr_expect_eq(t->status, C1D_OK);
  cr_expect_eq(t->metrics.max_abs, 0.0, "the same order gives the same bits");
  cr_expect_eq(t->metrics.count, c1d_y_count(&small));
  c1d_run_results_free(&r);
  cfg.compare_b = "kahan";
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK);
  cr_expect_gt(r.comparisons[0].trials[0].metrics.max_abs, 0.0);
  cr_expect_eq(r.comparisons[0].trials[0].metrics.beyond_det, 0, "two fp32 orders stay within 2u bounds");
  c1d_run_results_free(&r);
}

Test(runner, explains_a_comparison_whose_side_was_skipped) {
  const c1d_impl *impls[] = {&c1d_cpu_naive, &picky};
  c1d_run_config cfg = config_for(impls, 2);
  cfg.compare_a = "naive";
  cfg.compare_b = "picky";
  c1d_run_results r;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK);
  cr_expect_neq(r.comparisons[0].trials[0].status, C1D_OK);
  cr_expect(strstr(r.comparisons[0].trials[0].error, "picky has no output: needs K == 1") != NULL,
            "%s", r.comparisons[0].trials[0].error);
  c1d_run_results_free(&r);
}

Test(runner, saves_each_output_and_the_oracle_as_npy) {
  char dir[] = "/tmp/c1d_runner_XXXXXX", path[128];
  cr_assert_not_null(mkdtemp(dir));
  const c1d_impl *impls[] = {&c1d_cpu_naive};
  c1d_run_config cfg = config_for(impls, 1);
  snprintf(path, sizeof path, "%s/sub", dir);
  cfg.save_outputs_dir = path;
  c1d_run_results r;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK, "%s", c1d_error_detail());
  snprintf(path, sizeof path, "%s/sub/naive.npy", dir);
  cr_expect_neq(access(path, F_OK), 0, "an output is visible before its set commits");
  cr_assert_eq(c1d_staged_set_commit(r.saved_outputs), C1D_OK, "%s", c1d_error_detail());
  c1d_run_results_free(&r);
  float *y = NULL;
  double *ref = NULL;
  c1d_npy_header h;
  cr_assert_eq(c1d_npy_read_f32(path, 0, &y, &h, NULL), C1D_OK, "%s", c1d_error_detail());
  cr_expect_eq(h.ndim, 3);
  cr_expect_eq(h.shape[2], small.L);
  snprintf(path, sizeof path, "%s/sub/oracle.npy", dir);
  cr_assert_eq(c1d_npy_read_f64(path, &ref, &h), C1D_OK);
  cr_expect_eq(h.dtype, C1D_NPY_F8);
  float x[2 * 5 * 40], w[3 * 5 * 3], b[3];
  double exact[2 * 3 * 40];
  c1d_generate(&small, C1D_DIST_NORMAL, 0, x, w, b);
  c1d_oracle_direct(&small, x, w, b, exact);
  for (int i = 0; i < 2 * 3 * 40; i++) cr_expect(fabs(ref[i] - exact[i]) <= 1e-12 * (1 + fabs(exact[i])));
  free(y);
  free(ref);
  snprintf(path, sizeof path, "rm -rf '%s'", dir);
  cr_expect_eq(system(path), 0);
}

// --- checks before anything is allocated -------------------------------------------------------

Test(runner, refuses_bad_configurations_before_allocating) {
  const c1d_impl *impls[] = {&c1d_cpu_naive};
  c1d_run_config cfg = config_for(impls, 1);
  c1d_run_results r;
  cfg.shape.C = 0;
  cr_expect_eq(c1d_run(&cfg, &r), C1D_ERR_INVALID_SHAPE);
  cfg = config_for(impls, 1);
  cfg.trials = 0;
  cr_expect_eq(c1d_run(&cfg, &r), C1D_ERR_USAGE);
  cfg = config_for(impls, 1);
  cfg.compare_a = "naive";
  cfg.compare_b = "nowhere";
  cr_expect_eq(c1d_run(&cfg, &r), C1D_ERR_USAGE);
  cr_expect(strstr(c1d_error_detail(), "nowhere") != NULL);
  cfg = config_for(impls, 1);
  cfg.atol = -1.0;
  cr_expect_eq(c1d_run(&cfg, &r), C1D_ERR_USAGE);
  c1d_run_results_free(&r);
}

Test(runner, refuses_a_shape_larger_than_physical_memory_with_a_clear_message) {
  const c1d_impl *impls[] = {&c1d_cpu_naive};
  c1d_run_config cfg = config_for(impls, 1);
  cfg.shape = (c1d_shape){.N = 1024, .C = 1024, .O = 1024, .L = 1000000, .K = 4, .D = 1};
  cr_assert_eq(c1d_shape_validate(&cfg.shape), C1D_OK, "the shape itself is valid");
  c1d_run_results r;
  cr_expect_eq(c1d_run(&cfg, &r), C1D_ERR_NO_MEMORY);
  cr_expect(strstr(c1d_error_detail(), "GiB of host memory") != NULL, "%s", c1d_error_detail());
  c1d_run_results_free(&r);
}

Test(runner, refuses_the_gpu_oracle_where_it_cannot_run) {
  if (c1d_gpu_oracle_built() && !c1d_gpu_why_unavailable())
    cr_skip_test("this machine can run the GPU oracle");
  const c1d_impl *impls[] = {&c1d_cpu_naive};
  c1d_run_config cfg = config_for(impls, 1);
  cfg.oracle = C1D_ORACLE_GPU;
  c1d_run_results r;
  cr_expect_eq(c1d_run(&cfg, &r), C1D_ERR_NO_DEVICE);
  cr_expect_eq(c1d_run_resolve_oracle(&(c1d_run_config){.shape = small, .oracle = C1D_ORACLE_AUTO}),
               C1D_ORACLE_CPU);
  c1d_run_results_free(&r);
}

// --- the explainer's step and the race check ---------------------------------------------------

/* naive, plus 2^-20 of |y| on every element of the second and later calls: run-to-run different bits. */
static int flaky_calls;
static c1d_status flaky_run(const c1d_shape *s, const float *x, const float *w, const float *b,
                            float *y, c1d_exec *ex) {
  c1d_status st = c1d_cpu_naive.run(s, x, w, b, y, ex);
  if (flaky_calls++ > 0)
    for (int64_t i = 0; i < c1d_y_count(s); i++) y[i] += fabsf(y[i]) * 0x1p-20f;
  return st;
}
static const c1d_impl flaky = {.name = "flaky", .summary = "differs from run to run",
                               .backend = C1D_BACKEND_CPU, .precision = C1D_PREC_FP32,
                               .run = flaky_run};

Test(runner, explains_every_output_with_the_verdict_of_its_arithmetic) {
  const c1d_impl *impls[] = {&c1d_cpu_naive, &c1d_cpu_kahan, &c1d_cpu_tf32_inputs, &skip_last};
  c1d_run_config cfg = config_for(impls, 4);
  cfg.shape = (c1d_shape){.N = 2, .C = 32, .O = 8, .L = 70, .K = 4, .D = 1, .bias = 1};
  c1d_run_results r;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK, "%s", c1d_error_detail());
  const c1d_verdict expected[] = {C1D_VERDICT_FP32_ROUNDING, C1D_VERDICT_FP32_ROUNDING,
                                  C1D_VERDICT_TF32_INPUTS, C1D_VERDICT_NON_FINITE};
  for (int i = 0; i < 4; i++) {
    const c1d_trial_result *t = &r.impls[i].trials[0];
    cr_assert(t->explained, "%s has no explanation", r.impls[i].name);
    cr_expect_eq(t->explanation.verdict, expected[i], "%s: %s (%s)", r.impls[i].name,
                 c1d_verdict_name(t->explanation.verdict), t->explanation.reason);
  }
  cr_expect_str_eq(r.impls[3].trials[0].explanation.region.t, "69", "skip_last misses t = L-1");
  c1d_run_results_free(&r);
}

/* The run estimate counts each row's passes over every element apart from the rest of its analysis
 * (estimate.c): a row records the ones its verdict made first, not the ones it found made. */
Test(runner, records_the_passes_over_every_element_that_each_verdict_made_first) {
  c1d_impl tf32_again = c1d_cpu_tf32_inputs;
  tf32_again.name = "tf32_again";
  const c1d_impl *impls[] = {&c1d_cpu_naive, &c1d_cpu_tf32_inputs, &tf32_again};
  c1d_run_config cfg = config_for(impls, 3);
  cfg.shape = (c1d_shape){.N = 2, .C = 32, .O = 8, .L = 70, .K = 4, .D = 1, .bias = 1};
  c1d_run_results r;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK, "%s", c1d_error_detail());
  const int models[] = {0, 1, 0}; /* TF32's model on every element: the first TF32 row makes it */
  for (int i = 0; i < 3; i++) {
    const c1d_trial_result *t = &r.impls[i].trials[0];
    cr_assert(t->explained, "%s has no explanation", r.impls[i].name);
    cr_expect_eq(t->full_passes[C1D_FULL_PASS_MODEL], models[i], "%s: %d models on every element", r.impls[i].name,
                 t->full_passes[C1D_FULL_PASS_MODEL]);
    cr_expect_eq(t->full_passes[C1D_FULL_PASS_TC_BIAS], 0, "%s: a truncation bias", r.impls[i].name);
    cr_expect(t->full_pass_ms >= 0.0 && t->full_pass_ms <= t->analysis_ms, "%s: passes %g ms in an analysis of %g ms",
              r.impls[i].name, t->full_pass_ms, t->analysis_ms);
    if (models[i] == 0) cr_expect_eq(t->full_pass_ms, 0.0, "%s: no pass, %g ms", r.impls[i].name, t->full_pass_ms);
  }
  c1d_run_results_free(&r);
}

Test(runner, compares_the_first_and_the_last_run_bit_for_bit) {
  const c1d_impl *impls[] = {&c1d_cpu_naive, &flaky};
  c1d_run_config cfg = config_for(impls, 2);
  flaky_calls = 0;
  c1d_run_results r;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK, "%s", c1d_error_detail());
  cr_expect(r.impls[0].trials[0].repeat_checked);
  cr_expect(r.impls[0].trials[0].repeat_identical, "naive is deterministic");
  cr_expect(r.impls[1].trials[0].repeat_checked);
  cr_expect_not(r.impls[1].trials[0].repeat_identical, "flaky's runs differ");
  cr_expect_not(r.impls[1].trials[0].explanation.repeat_identical);
  c1d_run_results_free(&r);
}

Test(runner, profiles_show_where_the_errors_are) {
  const c1d_impl *impls[] = {&skip_last};
  c1d_run_config cfg = config_for(impls, 1);
  c1d_run_results r;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK, "%s", c1d_error_detail());
  const c1d_profile *pt = &r.impls[0].trials[0].err_t;
  cr_expect_eq(pt->width, 1);
  cr_expect_eq(pt->bins, small.L);
  cr_expect_eq(r.impls[0].trials[0].err_o.bins, small.O);
  c1d_run_results_free(&r);
}

Test(runner, attributes_a_comparison_to_the_side_with_the_larger_error) {
  const c1d_impl *impls[] = {&c1d_cpu_naive, &c1d_cpu_tf32_inputs};
  c1d_run_config cfg = config_for(impls, 2);
  cfg.shape = (c1d_shape){.N = 2, .C = 64, .O = 8, .L = 64, .K = 4, .D = 1, .bias = 0};
  cfg.compare_a = "naive";
  cfg.compare_b = "tf32_inputs";
  c1d_run_results r;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK, "%s", c1d_error_detail());
  const c1d_trial_result *t = &r.comparisons[0].trials[0];
  cr_assert(t->explained);
  cr_expect_eq(t->explanation.verdict, C1D_VERDICT_TF32_INPUTS, "%s", t->explanation.reason);
  cr_expect(strstr(t->explanation.reason, "comes from tf32_inputs") != NULL, "%s", t->explanation.reason);
  c1d_run_results_free(&r);
}

// --- the memory estimate --------------------------------------------------------------------------

static const char meminfo_6g[] = "MemTotal:       24684084 kB\nMemFree:  1000 kB\nMemAvailable:    6291456 kB\n";

Test(memory, counts_what_is_available_not_what_is_installed) {
  c1d_memory_room r = c1d_memory_available_from(meminfo_6g, NULL, NULL);
  cr_expect_eq(r.bytes, 6.0 * 1073741824.0, "MemAvailable, not MemTotal: %g", r.bytes);
  cr_expect_str_eq(r.limit, "available memory");
  r = c1d_memory_available_from(meminfo_6g, "max\n", "123456\n");
  cr_expect_eq(r.bytes, 6.0 * 1073741824.0, "a cgroup without a limit changes nothing");
  r = c1d_memory_available_from(meminfo_6g, "9223372036854771712\n", "2102743040\n");
  cr_expect_eq(r.bytes, 6.0 * 1073741824.0, "cgroup v1's 'no limit' changes nothing");
  r = c1d_memory_available_from(meminfo_6g, "2147483648\n", "1610612736\n");
  cr_expect_eq(r.bytes, 0.5 * 1073741824.0, "a cgroup's limit minus its usage, when lower: %g", r.bytes);
  cr_expect_str_eq(r.limit, "the cgroup's limit");
  r = c1d_memory_available_from(meminfo_6g, "1000\n", "5000\n");
  cr_expect_eq(r.bytes, 0.0, "a cgroup over its limit leaves nothing");
}

Test(memory, this_machine_reports_at_most_its_physical_memory) {
  c1d_memory_room r = c1d_memory_available();
  cr_expect_gt(r.bytes, 0.0);
  cr_expect_leq(r.bytes, c1d_physical_memory());
}

Test(memory, takes_the_address_space_limit_less_what_is_mapped_when_lower) {
  const c1d_memory_room six = c1d_memory_available_from(meminfo_6g, NULL, NULL);
  c1d_memory_room r = c1d_memory_within_address_space(six, 16e9, 1e9);
  cr_expect_eq(r.bytes, six.bytes, "a limit above the memory changes nothing");
  cr_expect_str_eq(r.limit, "available memory");
  r = c1d_memory_within_address_space(six, 3e9, 1e9);
  cr_expect_eq(r.bytes, 2e9, "the limit minus what is mapped: %g", r.bytes);
  cr_expect_str_eq(r.limit, "the address-space limit (ulimit -v)");
  r = c1d_memory_within_address_space(six, -1.0, 1e9);
  cr_expect_eq(r.bytes, six.bytes, "no limit");
  r = c1d_memory_within_address_space(six, 1e9, 2e9);
  cr_expect_eq(r.bytes, 0.0, "a limit already exceeded leaves nothing");
}

/* `prlimit --as=8e9 convlab run ...` passed the check and failed to allocate 48 s later. */
Test(memory, this_process_under_ulimit_v_reports_what_the_limit_leaves) {
  const c1d_memory_room free_room = c1d_memory_available();
  if (free_room.bytes < 2.0 * 1073741824.0)
    cr_skip_test("less than 2 GiB free: ulimit -v would not be the lowest limit");
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  cr_assert(f && fscanf(f, "%llu", &pages) == 1);
  fclose(f);
  const double mapped = (double)pages * (double)sysconf(_SC_PAGESIZE), gib = 1073741824.0;
  const struct rlimit as = {(rlim_t)(mapped + gib), (rlim_t)(mapped + gib)};
  cr_assert_eq(setrlimit(RLIMIT_AS, &as), 0); /* this test's process only (Criterion runs each in one) */
  const c1d_memory_room r = c1d_memory_available();
  cr_expect_str_eq(r.limit, "the address-space limit (ulimit -v)");
  cr_expect(r.bytes > 0.9 * gib && r.bytes <= gib, "about 1 GiB left: %.3f GiB", r.bytes / gib);
}

Test(memory, refuses_what_does_not_fit_in_the_room_left_naming_the_largest_part) {
  const c1d_impl *impls[] = {&c1d_cpu_naive};
  c1d_run_config cfg = config_for(impls, 1);
  /* 4 GiB of y and m, and twice that for the explainer's arrays (35 bytes an output, harness/explain.c) */
  cfg.shape = (c1d_shape){.N = 4, .C = 64, .O = 64, .L = 1 << 20, .K = 4, .D = 1};
  const c1d_memory_room lots = {64.0 * 1073741824.0, "available memory"};
  const c1d_memory_room little = {3.0 * 1073741824.0, "available memory"};
  cr_expect_eq(c1d_run_check_memory_in(&cfg, "this run", lots), C1D_OK, "%s", c1d_error_detail());
  cr_expect_eq(c1d_run_check_memory_in(&cfg, "this run", little), C1D_ERR_NO_MEMORY);
  cr_expect(strstr(c1d_error_detail(), "the largest part, the explainer's reference noise, models and "
                                       "classification: 10.76 GiB") &&
                strstr(c1d_error_detail(), "available memory leaves 3.00 GiB"),
            "%s", c1d_error_detail());
}

Test(memory, counts_the_per_trial_tables_and_the_json_report) {
  const c1d_impl *impls[] = {&c1d_cpu_naive, &c1d_cpu_kahan};
  c1d_run_config one = config_for(impls, 2), many = one;
  many.trials = 100000;
  c1d_memory_part a[C1D_MEMORY_PARTS], b[C1D_MEMORY_PARTS];
  const int n = c1d_run_memory_parts(&one, a);
  cr_assert_eq(c1d_run_memory_parts(&many, b), n);
  double grown = 0.0;
  for (int i = 0; i < n; i++) {
    cr_assert_str_eq(a[i].name, b[i].name);
    if (!strcmp(a[i].name, "the per-trial result tables") || !strcmp(a[i].name, "the JSON report (tree and text)")) {
      cr_expect_eq(b[i].bytes, a[i].bytes * 100000.0, "%s grows with the trials", a[i].name);
      grown += b[i].bytes;
    }
  }
  /* 100000 trials of two rows: over 10 GiB of tables and JSON (each row-trial is 20 kB, its JSON more). */
  cr_expect_gt(grown, 10.0 * 1073741824.0, "%g", grown);
}

Test(memory, does_not_grow_with_the_dilation) {
  const c1d_impl *impls[] = {&c1d_cpu_naive};
  c1d_run_config near = config_for(impls, 1), far = near;
  near.shape = (c1d_shape){.N = 4, .C = 1, .O = 64, .L = 1, .K = 4, .D = 1};
  far.shape = near.shape;
  far.shape.D = INT64_C(1) << 27; /* pad (K-1)*D = 3*2^27: nothing holds it */
  cr_expect_eq(c1d_run_host_bytes(&far), c1d_run_host_bytes(&near));
  c1d_run_results r;
  cr_expect_eq(c1d_run(&far, &r), C1D_OK, "%s", c1d_error_detail());
  c1d_run_results_free(&r);
}

// --- CPU rows on part of the batch ------------------------------------------------------------------

Test(runner, judges_cpu_rows_on_the_batch_rows_they_cover) {
  /* The headline run's CPU rows cover its first batch rows only: their metrics, profiles and verdicts
   * must concern those rows, not the rest of the output buffer (which they never write). */
  const c1d_impl *impls[] = {&c1d_cpu_naive, &c1d_cpu_kahan};
  c1d_run_config cfg = config_for(impls, 2);
  cfg.shape = (c1d_shape){.N = 4, .C = 16, .O = 8, .L = 512, .K = 4, .D = 1, .bias = 0};
  cfg.cpu_batch_rows = 1;
  c1d_run_results r;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(r.cpu_batch_rows, 1);
  for (int i = 0; i < 2; i++) {
    const c1d_trial_result *t = &find(&r, impls[i]->name)->trials[0];
    cr_assert_eq(t->metrics.count, cfg.shape.O * cfg.shape.L, "%s: metrics over the covered row only",
                 impls[i]->name);
    cr_assert_eq(t->metrics.nonfinite, 0);
    cr_assert(t->explained);
    cr_assert_eq(t->explanation.verdict, C1D_VERDICT_FP32_ROUNDING, "%s: %s (%s)", impls[i]->name,
                 c1d_verdict_name(t->explanation.verdict), t->explanation.reason);
  }
  c1d_run_results_free(&r);
}

Test(runner, refuses_partial_cpu_rows_with_a_comparison) {
  const c1d_impl *impls[] = {&c1d_cpu_naive, &c1d_cpu_kahan};
  c1d_run_config cfg = config_for(impls, 2);
  cfg.cpu_batch_rows = 1;
  cfg.compare_a = "naive";
  cfg.compare_b = "kahan";
  c1d_run_results r;
  cr_assert_eq(c1d_run(&cfg, &r), C1D_ERR_USAGE);
  cr_assert(strstr(c1d_error_detail(), "whole outputs"), "%s", c1d_error_detail());
}

/* Announced times count from the command's start (c1d_process_age_s): the process's age grows with the
 * wall clock, from where it started (a test's own process: its fork). */
Test(runner, the_process_age_grows_with_the_wall_clock) {
  const double before = c1d_process_age_s();
  cr_assert(before >= 0.0 && before < 60.0, "age at the start of a test: %g s", before);
  usleep(300000);
  const double after = c1d_process_age_s();
  cr_expect(after - before > 0.25 && after - before < 1.0, "0.3 s of sleep aged the process by %g s", after - before);
}
