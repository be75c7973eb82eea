/* The run estimate (estimate.h): calibration runs through the runner itself, so that everything a real
 * run does is in the measurement. A first run on the smallest shape pays the one-time costs (threads,
 * the CUDA context, first page faults) that the real run pays only once too; then the tiny shape again
 * (fixed costs), a small shape with every row, and the naive implementation alone on up to eight times
 * its outputs, beside every row whose analysis on the small shape cost far more than a typical row's
 * (its extra work is part fixed, part per output). Checked against real runs on the 2-core machine
 * (2026-12-02): make run's job 11 s announced, 10.3 s taken; the README's third example 64-70 s, 44 s. */
#include "harness/estimate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness/explain.h"
#include "harness/progress.h"
#include "harness/registry.h"
#include "harness/runner_internal.h"

#define CALIBRATION_GFLOP 0.5 /* per implementation run on the larger calibration shape: tens of ms */
#define MIN_OUTPUTS 256
#define MAX_OUTPUTS C1D_EXPLAIN_SAMPLE /* the models' sample: the analysis saturates it */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* s with N = 1 and about `outputs` outputs: O first capped (to a multiple of the groups), then L; C,
 * K, D and everything else unchanged. */
static c1d_shape small_shape(const c1d_shape *s, int64_t outputs, int64_t max_o) {
  c1d_shape t = *s;
  const int64_t g = s->G > 1 ? s->G : 1;
  t.N = 1;
  t.O = s->O < max_o ? s->O : max_o;
  t.O = (t.O + g - 1) / g * g;
  if (t.O > s->O) t.O = s->O;
  t.L = clamp64(outputs / t.O, s->L < 16 ? s->L : 16, s->L);
  return t;
}

/* Implementation i can run on shape s here: the runner's own test (a device, the capabilities the
 * problem needs, supported()). Without the capabilities, gpu_dw_naive and gpu_dw_fast, skipped on the
 * dense headline shape, were counted at 102 s each in make run's estimate on the H200. */
static int runs_on(const c1d_impl *impl, const c1d_shape *s) {
  return !c1d_impl_unavailable(impl) && !c1d_impl_unsupported(impl, s);
}

/* Implementation runs (warm-ups included) of impl per trial under cfg. */
static int runs_per_trial(const c1d_run_config *cfg, const c1d_impl *impl) {
  return c1d_run_default_repeats(cfg, impl) + c1d_run_warmups(cfg, impl);
}

/* The shape impl runs on under cfg: the CPU rows may cover the first cpu_batch_rows batch rows only. */
static c1d_run_config row_config(const c1d_run_config *cfg, const c1d_impl *impl) {
  c1d_run_config r = *cfg;
  if (impl && impl->backend == C1D_BACKEND_CPU && cfg->cpu_batch_rows > 0 && cfg->cpu_batch_rows < cfg->shape.N)
    r.shape.N = cfg->cpu_batch_rows;
  return r;
}

int c1d_run_worth_estimating(const c1d_run_config *cfg) {
  double work = c1d_flops(&cfg->shape); /* the oracle */
  for (int i = 0; i < cfg->n_impls; i++) {
    const c1d_run_config r = row_config(cfg, cfg->impls[i]);
    if (runs_on(cfg->impls[i], &r.shape)) work += runs_per_trial(&r, cfg->impls[i]) * c1d_flops(&r.shape);
  }
  return work * cfg->trials >= C1D_ESTIMATE_MIN_GFLOP * 1e9;
}

/* One calibration point on shape s: wall time, oracle, rounding models, and per row its per-run time,
 * its analysis and the rest of its step (set-up, transfers: not scaled); `other` is what remains
 * (inputs, session, the comparison). */
typedef struct point {
  c1d_shape s;
  double wall_ms, oracle_ms, models_ms, other_ms;
  double *run_ms, *analysis_ms, *overhead_ms; /* per row; NAN where the row did not run */
} point;

/* Runs cfg on shape s, or with `only` (n_only of them) those implementations alone: the naive one first,
 * an output like most, whose analysis costs what a typical row's does (the explainer's work depends on
 * what it is shown: an output of zeros fits no model, and every model is computed for it), then the
 * rows whose analysis costs more. */
static c1d_status measure(const c1d_run_config *cfg, const c1d_shape *s, const c1d_impl **only, int n_only,
                          point *pt) {
  c1d_run_config small = *cfg;
  c1d_run_results res;
  const int analysis_only = only != NULL;
  c1d_candidate *cands = NULL;
  float *zeros = NULL;
  c1d_status st = C1D_OK;
  memset(&res, 0, sizeof res);
  small.shape = *s;
  small.trials = 1;
  small.repeats = 1;
  small.x = small.w = small.b = small.st = NULL;
  small.save_outputs_dir = NULL;
  small.progress = 0;
  small.cpu_batch_rows = 0; /* N = 1 here: every row covers it all */
  small.estimate = NULL;
  small.oracle = c1d_run_resolve_oracle(cfg); /* the one the real run will use */
  if (cfg->x) small.dist = C1D_DIST_CONV_INIT;
  if (analysis_only) {
    small.impls = only;
    small.n_impls = n_only;
    small.n_candidates = 0;
    small.compare_a = small.compare_b = NULL;
  }
  if (small.n_candidates > 0) { /* zeros stand in for the files: the analysis costs the same */
    cands = calloc((size_t)small.n_candidates, sizeof *cands);
    zeros = calloc((size_t)c1d_y_count(s), sizeof *zeros);
    if (!cands || !zeros) {
      st = c1d_fail(C1D_ERR_NO_MEMORY, "out of memory for the run estimate");
      goto done;
    }
    for (int i = 0; i < small.n_candidates; i++)
      cands[i] = (c1d_candidate){analysis_only ? "zeros" : cfg->candidates[i].name, zeros};
    small.candidates = cands;
  }
  pt->s = *s;
  const double t0 = now_ms();
  st = c1d_run(&small, &res);
  pt->wall_ms = now_ms() - t0;
  if (st == C1D_OK) {
    pt->oracle_ms = res.oracle_ms;
    pt->models_ms = res.models_ms;
    pt->other_ms = pt->wall_ms - res.oracle_ms - res.models_ms;
    for (int i = 0; i < res.n_impls; i++) {
      pt->run_ms[i] = pt->analysis_ms[i] = pt->overhead_ms[i] = NAN;
      if (res.impls[i].state != C1D_RESULT_RAN) continue;
      const c1d_trial_result *t = &res.impls[i].trials[0];
      pt->other_ms -= t->step_ms;
      pt->analysis_ms[i] = t->analysis_ms;
      pt->run_ms[i] = i < small.n_impls ? t->time_median_ms : 0.0;
      const double runs = i < small.n_impls ? runs_per_trial(&small, small.impls[i]) * pt->run_ms[i] : 0.0;
      pt->overhead_ms[i] = fmax(0.0, t->step_ms - t->analysis_ms - runs);
    }
    if (pt->other_ms < 0.0) pt->other_ms = 0.0;
  }
done:
  c1d_run_results_free(&res);
  free(cands);
  free(zeros);
  return st;
}

static int alloc_point(point *pt, int rows) {
  pt->run_ms = calloc((size_t)rows + 1, sizeof *pt->run_ms);
  pt->analysis_ms = calloc((size_t)rows + 1, sizeof *pt->analysis_ms);
  pt->overhead_ms = calloc((size_t)rows + 1, sizeof *pt->overhead_ms);
  return pt->run_ms && pt->analysis_ms && pt->overhead_ms;
}

static void free_point(point *pt) {
  free(pt->run_ms);
  free(pt->analysis_ms);
  free(pt->overhead_ms);
}

/* The median of the finite values of v[0..n), or NAN. */
static double finite_median(const double *v, int n) {
  double *t = malloc((size_t)(n > 0 ? n : 1) * sizeof *t), m = NAN;
  int k = 0;
  for (int i = 0; t && i < n; i++)
    if (isfinite(v[i])) t[k++] = v[i];
  for (int i = 1; i < k; i++) /* insertion sort: tens of rows */
    for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
      const double x = t[j];
      t[j] = t[j - 1];
      t[j - 1] = x;
    }
  if (k > 0) m = k % 2 ? t[k / 2] : 0.5 * (t[k / 2 - 1] + t[k / 2]);
  free(t);
  return m;
}

c1d_status c1d_run_estimate_make(const c1d_run_config *cfg, c1d_run_estimate *e) {
  const int rows = cfg->n_impls + cfg->n_candidates;
  const c1d_shape *s = &cfg->shape;
  point lo = {0}, hi = {0}, wide = {0};
  const c1d_impl **only = calloc((size_t)cfg->n_impls + 1, sizeof *only); /* the wide point's rows */
  int *wide_of = calloc((size_t)rows + 1, sizeof *wide_of), n_only = 1;   /* a row's index there, 0: none */
  c1d_status st = C1D_OK;
  memset(e, 0, sizeof *e);
  e->n_rows = rows;
  e->trials = cfg->trials;
  e->row_s = calloc((size_t)rows + 1, sizeof *e->row_s);
  if (!e->row_s || !only || !wide_of || !alloc_point(&lo, rows) || !alloc_point(&hi, rows) ||
      !alloc_point(&wide, cfg->n_impls + 1)) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "out of memory for the run estimate");
    goto done;
  }
  /* Three points: tiny (fixed costs), big (every row: runs, analysis, set-up) and, when the real run
   * is larger still, the naive implementation alone on up to eight times big's outputs: the explainer's
   * work on its sample costs the same beyond C1D_EXPLAIN_SAMPLE outputs, so only two points past it
   * give the cost per output of the analysis and of the explainer's preparation, and the farther apart
   * they are, the less a busy machine's noise on the small one is multiplied. */
  const double flops_per_output = c1d_flops(s) / (double)c1d_y_count(s);
  const int64_t outputs = clamp64((int64_t)(CALIBRATION_GFLOP * 1e9 / flops_per_output), MIN_OUTPUTS, MAX_OUTPUTS);
  const c1d_shape tiny = small_shape(s, 16, 1), big = small_shape(s, outputs, 64);
  const int64_t wide_outputs = clamp64(c1d_y_count(s) / 4, 2 * c1d_y_count(&big), 8 * c1d_y_count(&big));
  const c1d_shape twice = small_shape(s, wide_outputs, 256);
  const double out = (double)c1d_y_count(s), out_lo = (double)c1d_y_count(&tiny);
  const double out_hi = (double)c1d_y_count(&big), out_2 = (double)c1d_y_count(&twice);
  if ((st = measure(cfg, &tiny, NULL, 0, &lo)) != C1D_OK || (st = measure(cfg, &tiny, NULL, 0, &lo)) != C1D_OK ||
      (st = measure(cfg, &big, NULL, 0, &hi)) != C1D_OK)
    goto done;
  const double typical_analysis = finite_median(hi.analysis_ms, rows);
  /* The wide point: naive, and each row whose analysis on big cost more than 1.5 times the typical
   * one (and 5 ms more), in the real run's order: its extra work (model arrays on every output,
   * models on the sample, shared with later rows that need the same model) is part fixed, part per
   * output, and only a second size tells the two apart. Measured once as one, that extra scaled with
   * the outputs made the tf32_inputs row of make run's job 10 times too long (18.6 s announced, 1.8 s
   * taken). */
  const int wide_analysis = out > out_2 && out_2 > out_hi;
  if (wide_analysis) {
    only[0] = c1d_find_impl("naive");
    if (!only[0]) {
      st = c1d_fail(C1D_ERR_INTERNAL, "the registry has no naive implementation");
      goto done;
    }
    for (int i = 0; i < cfg->n_impls; i++)
      if (isfinite(hi.analysis_ms[i]) && hi.analysis_ms[i] > 1.5 * typical_analysis &&
          hi.analysis_ms[i] > typical_analysis + 5.0 && cfg->impls[i] != only[0]) {
        wide_of[i] = n_only;
        only[n_only++] = cfg->impls[i];
      }
    if ((st = measure(cfg, &twice, only, n_only, &wide)) != C1D_OK) goto done;
  }
  const double by_output = out / out_hi, by_flops = c1d_flops(s) / c1d_flops(&big);
  /* What is not a row's: a fixed part plus a part per output, through the two points. */
  double per_output = out_hi > out_lo ? (hi.other_ms - lo.other_ms) / (out_hi - out_lo) : hi.other_ms / out_hi;
  if (per_output < 0.0) per_output = hi.other_ms / out_hi;
  const double fixed = fmax(0.0, lo.other_ms - per_output * out_lo);
  e->other_s = 1e-3 * (fixed + per_output * out);
  /* The explainer's preparation: the naive order on every output (per output) and the models on its
   * sample (fixed beyond C1D_EXPLAIN_SAMPLE outputs): through big and the wide point, past the sample. */
  const double models_slope = wide_analysis ? fmax(0.0, wide.models_ms - hi.models_ms) / (out_2 - out_hi) : NAN;
  const c1d_run_config cpu_rows = row_config(cfg, &(c1d_impl){.backend = C1D_BACKEND_CPU});
  const double out_part = (double)c1d_y_count(&cpu_rows.shape);
  e->models_s = 1e-3 * (wide_analysis ? hi.models_ms + models_slope * (out - out_hi) : hi.models_ms * by_output);
  if (out_part < out) /* the CPU rows' own explainer, on their batch rows */
    e->models_s += 1e-3 * (wide_analysis ? hi.models_ms + models_slope * fmax(0.0, out_part - out_hi)
                                         : hi.models_ms * out_part / out_hi);
  e->oracle_s = 1e-3 * hi.oracle_ms * by_flops;
  /* One output's analysis at the real size: through big's typical row and the wide point. */
  double analysis_slope = NAN;
  if (wide_analysis && isfinite(typical_analysis) && isfinite(wide.analysis_ms[0]))
    analysis_slope = fmax(0.0, (wide.analysis_ms[0] - typical_analysis) / (out_2 - out_hi));
  /* Per row: CPU runs scale with the flops; a GPU's small runs are latency, so its time per run grows
   * from tiny's to big's and on at that rate; the analysis as above, the set-up stays. A row that
   * could not run on the small shape borrows the slowest run and the typical analysis. */
  const double f_lo = c1d_flops(&tiny), f_hi = c1d_flops(&big);
  double slowest = hi.oracle_ms;
  for (int i = 0; i < cfg->n_impls; i++)
    if (isfinite(hi.run_ms[i]) && hi.run_ms[i] > slowest) slowest = hi.run_ms[i];
  double per_trial = e->oracle_s + e->models_s + e->other_s, work = c1d_flops(s);
  for (int i = 0; i < rows; i++) {
    const int is_impl = i < cfg->n_impls;
    const c1d_run_config r = row_config(cfg, is_impl ? cfg->impls[i] : NULL);
    if (is_impl && !runs_on(cfg->impls[i], &r.shape)) continue;
    const int runs = is_impl ? runs_per_trial(&r, cfg->impls[i]) : 0;
    const double f = c1d_flops(&r.shape), out_r = (double)c1d_y_count(&r.shape), row_flops = f / f_hi;
    double run_ms = (isfinite(hi.run_ms[i]) ? hi.run_ms[i] : slowest) * row_flops;
    if (is_impl && cfg->impls[i]->backend == C1D_BACKEND_GPU && isfinite(hi.run_ms[i]) && isfinite(lo.run_ms[i]))
      run_ms = hi.run_ms[i] + fmax(0.0, hi.run_ms[i] - lo.run_ms[i]) / (f_hi - f_lo) * (f - f_hi);
    /* A row's analysis beyond the typical one (model arrays on every output, models on the sample):
     * through big and the wide point where the row ran there, else scaled with the outputs. */
    const double analysis_big = isfinite(hi.analysis_ms[i]) ? hi.analysis_ms[i] : typical_analysis;
    const double extra = fmax(0.0, analysis_big - typical_analysis);
    double extra_ms = extra * out_r / out_hi;
    if (is_impl && wide_of[i] > 0 && isfinite(wide.analysis_ms[wide_of[i]]) && isfinite(wide.analysis_ms[0])) {
      const double extra_wide = fmax(0.0, wide.analysis_ms[wide_of[i]] - wide.analysis_ms[0]);
      const double slope = fmax(0.0, extra_wide - extra) / (out_2 - out_hi);
      extra_ms = fmax(0.0, extra - slope * out_hi) + slope * out_r;
    }
    const double analysis_ms = !isfinite(analysis_big) ? 0.0
                               : isnan(analysis_slope) ? analysis_big * out_r / out_hi
                                                       : typical_analysis + analysis_slope * (out_r - out_hi) + extra_ms;
    const double overhead_ms = isfinite(hi.overhead_ms[i]) ? hi.overhead_ms[i] : 0.0;
    e->row_s[i] = 1e-3 * (runs * run_ms + analysis_ms + overhead_ms);
    e->runs += (int64_t)runs * cfg->trials;
    per_trial += e->row_s[i];
    work += runs * f;
  }
  e->seconds = per_trial * cfg->trials;
  e->gflop = work * cfg->trials * 1e-9;
done:
  free_point(&lo);
  free_point(&hi);
  free_point(&wide);
  free(only);
  free(wide_of);
  return st;
}

void c1d_run_estimate_free(c1d_run_estimate *e) {
  if (!e) return;
  free(e->row_s);
  e->row_s = NULL;
}

/* "17.2 GFLOP", "1.12 TFLOP". */
static void format_work(double gflop, char *buf, size_t size) {
  if (gflop >= 1000.0)
    snprintf(buf, size, "%.3g TFLOP", gflop * 1e-3);
  else
    snprintf(buf, size, "%.3g GFLOP", gflop);
}

void c1d_run_estimate_describe(const c1d_run_config *cfg, const c1d_run_estimate *e, char *buf,
                               size_t size) {
  char when[32], each[32], all[32], what[224] = "";
  int running = 0;
  c1d_format_duration(e->seconds, when, sizeof when);
  format_work(c1d_flops(&cfg->shape) * 1e-9, each, sizeof each);
  format_work(e->gflop, all, sizeof all);
  for (int i = 0; i < cfg->n_impls; i++) running += e->row_s[i] > 0.0 || runs_on(cfg->impls[i], &cfg->shape);
  const int partial = cfg->cpu_batch_rows > 0 && cfg->cpu_batch_rows < cfg->shape.N;
  char rows_note[96] = "";
  if (partial)
    snprintf(rows_note, sizeof rows_note, ", the CPU ones on %lld of %lld batch rows",
             (long long)cfg->cpu_batch_rows, (long long)cfg->shape.N);
  if (running > 0)
    snprintf(what, sizeof what, "%lld runs of %s%s (%d implementation%s%s, %d trial%s) and ", (long long)e->runs,
             partial ? "up to " : "", each, running, running == 1 ? "" : "s", rows_note, cfg->trials,
             cfg->trials == 1 ? "" : "s");
  else
    snprintf(what, sizeof what, "%s for ", each);
  snprintf(buf, size, "about %s here: %sthe float64 oracle on the %s%s%s, %s in all (speeds measured "
                      "just now)",
           when, what, c1d_run_resolve_oracle(cfg) == C1D_ORACLE_GPU ? "gpu" : "cpu",
           cfg->n_candidates > 0 ? ", with the analysis of " : "",
           cfg->n_candidates == 0 ? "" : cfg->n_candidates == 1 ? "one output" : "several outputs", all);
}
