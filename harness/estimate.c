/* The run estimate (estimate.h): two calibration runs through the runner itself, so that everything a
 * real run does is in the measurement; a third, first, run on the smallest shape pays the one-time
 * costs (threads, the CUDA context, first page faults) that the real run pays only once too. */
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
#define MAX_OUTPUTS 65536

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* s with N = 1 and about `outputs` outputs: O first capped, then L, C, K and D unchanged. */
static c1d_shape small_shape(const c1d_shape *s, int64_t outputs, int64_t max_o) {
  c1d_shape t = *s;
  t.N = 1;
  t.O = s->O < max_o ? s->O : max_o;
  t.L = clamp64(outputs / t.O, s->L < 16 ? s->L : 16, s->L);
  return t;
}

/* Implementation i can run on shape s here. */
static int runs_on(const c1d_impl *impl, const c1d_shape *s) {
  return !c1d_impl_unavailable(impl) && (!impl->supported || !impl->supported(s));
}

/* Implementation runs (warm-ups included) of impl per trial under cfg. */
static int runs_per_trial(const c1d_run_config *cfg, const c1d_impl *impl) {
  return c1d_run_default_repeats(cfg, impl) + c1d_run_warmups(cfg, impl);
}

int c1d_run_worth_estimating(const c1d_run_config *cfg) {
  const double flops = c1d_flops(&cfg->shape);
  double work = flops; /* the oracle */
  for (int i = 0; i < cfg->n_impls; i++)
    if (runs_on(cfg->impls[i], &cfg->shape)) work += runs_per_trial(cfg, cfg->impls[i]) * flops;
  return work * cfg->trials >= C1D_ESTIMATE_MIN_GFLOP * 1e9;
}

/* One calibration point: wall time, oracle time and each row's per-run time on shape s. */
typedef struct point {
  c1d_shape s;
  double wall_ms, oracle_ms, models_ms, rest_ms;
  double *run_ms; /* per row; NAN where the row did not run */
} point;

static c1d_status measure(const c1d_run_config *cfg, const c1d_shape *s, point *pt) {
  c1d_run_config small = *cfg;
  c1d_run_results res;
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
  small.estimate = NULL;
  small.oracle = c1d_run_resolve_oracle(cfg); /* the one the real run will use */
  if (cfg->x) small.dist = C1D_DIST_CONV_INIT;
  if (cfg->n_candidates > 0) { /* zeros stand in for the files: the analysis costs the same */
    cands = calloc((size_t)cfg->n_candidates, sizeof *cands);
    zeros = calloc((size_t)c1d_y_count(s), sizeof *zeros);
    if (!cands || !zeros) {
      st = c1d_fail(C1D_ERR_NO_MEMORY, "out of memory for the run estimate");
      goto done;
    }
    for (int i = 0; i < cfg->n_candidates; i++) cands[i] = (c1d_candidate){cfg->candidates[i].name, zeros};
    small.candidates = cands;
  }
  pt->s = *s;
  const double t0 = now_ms();
  st = c1d_run(&small, &res);
  pt->wall_ms = now_ms() - t0;
  if (st == C1D_OK) {
    pt->oracle_ms = res.oracle_ms;
    pt->models_ms = res.models_ms;
    pt->rest_ms = pt->wall_ms - res.oracle_ms - res.models_ms;
    for (int i = 0; i < cfg->n_impls + cfg->n_candidates; i++) {
      pt->run_ms[i] = NAN;
      if (i >= cfg->n_impls || res.impls[i].state != C1D_RESULT_RAN) continue;
      pt->run_ms[i] = res.impls[i].trials[0].time_median_ms;
      pt->rest_ms -= runs_per_trial(&small, cfg->impls[i]) * pt->run_ms[i];
    }
    if (pt->rest_ms < 0.0) pt->rest_ms = 0.0;
  }
done:
  c1d_run_results_free(&res);
  free(cands);
  free(zeros);
  return st;
}

c1d_status c1d_run_estimate_make(const c1d_run_config *cfg, c1d_run_estimate *e) {
  const int rows = cfg->n_impls + cfg->n_candidates;
  const c1d_shape *s = &cfg->shape;
  point lo = {0}, hi = {0};
  c1d_status st = C1D_OK;
  memset(e, 0, sizeof *e);
  e->n_rows = rows;
  e->trials = cfg->trials;
  e->row_s = calloc((size_t)rows + 1, sizeof *e->row_s);
  lo.run_ms = calloc((size_t)rows + 1, sizeof *lo.run_ms);
  hi.run_ms = calloc((size_t)rows + 1, sizeof *hi.run_ms);
  if (!e->row_s || !lo.run_ms || !hi.run_ms) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "out of memory for the run estimate");
    goto done;
  }
  const int64_t outputs = clamp64((int64_t)(CALIBRATION_GFLOP * 1e9 / (2.0 * (double)s->C * (double)s->K)),
                                  MIN_OUTPUTS, MAX_OUTPUTS);
  const c1d_shape tiny = small_shape(s, 16, 1), big = small_shape(s, outputs, 64);
  if ((st = measure(cfg, &tiny, &lo)) != C1D_OK || (st = measure(cfg, &tiny, &lo)) != C1D_OK ||
      (st = measure(cfg, &big, &hi)) != C1D_OK)
    goto done;
  /* The rest: a fixed part plus a part per output, through the two points. */
  const double out_lo = (double)c1d_y_count(&tiny), out_hi = (double)c1d_y_count(&big);
  double per_output = out_hi > out_lo ? (hi.rest_ms - lo.rest_ms) / (out_hi - out_lo) : hi.rest_ms / out_hi;
  if (per_output < 0.0) per_output = hi.rest_ms / out_hi;
  const double fixed = fmax(0.0, lo.rest_ms - per_output * out_lo);
  /* The rounding models run on a sample of at most C1D_EXPLAIN_SAMPLE outputs, C*K products each. */
  const double sampled = fmin((double)c1d_y_count(s), C1D_EXPLAIN_SAMPLE) / fmin(out_hi, C1D_EXPLAIN_SAMPLE);
  e->models_s = 1e-3 * hi.models_ms * sampled;
  e->other_s = 1e-3 * (fixed + per_output * (double)c1d_y_count(s));
  /* Per-run times scale with the flops; a row that could not run small borrows the slowest rate. */
  const double scale = c1d_flops(s) / c1d_flops(&big);
  double slowest = hi.oracle_ms;
  for (int i = 0; i < cfg->n_impls; i++)
    if (!isnan(hi.run_ms[i]) && hi.run_ms[i] > slowest) slowest = hi.run_ms[i];
  e->oracle_s = 1e-3 * hi.oracle_ms * scale;
  double per_trial = e->oracle_s + e->models_s + e->other_s, work = c1d_flops(s);
  for (int i = 0; i < cfg->n_impls; i++) {
    if (!runs_on(cfg->impls[i], s)) continue;
    const int runs = runs_per_trial(cfg, cfg->impls[i]);
    const double run_ms = isnan(hi.run_ms[i]) ? slowest : hi.run_ms[i];
    e->row_s[i] = 1e-3 * runs * run_ms * scale;
    e->runs += runs * cfg->trials;
    per_trial += e->row_s[i];
    work += runs * c1d_flops(s);
  }
  e->seconds = per_trial * cfg->trials;
  e->gflop = work * cfg->trials * 1e-9;
done:
  free(lo.run_ms);
  free(hi.run_ms);
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
  char when[32], each[32], all[32], what[160] = "";
  int running = 0;
  c1d_format_duration(e->seconds, when, sizeof when);
  format_work(c1d_flops(&cfg->shape) * 1e-9, each, sizeof each);
  format_work(e->gflop, all, sizeof all);
  for (int i = 0; i < cfg->n_impls; i++) running += e->row_s[i] > 0.0 || runs_on(cfg->impls[i], &cfg->shape);
  if (running > 0)
    snprintf(what, sizeof what, "%d runs of %s (%d implementation%s, %d trial%s) and ", e->runs, each,
             running, running == 1 ? "" : "s", cfg->trials, cfg->trials == 1 ? "" : "s");
  else
    snprintf(what, sizeof what, "%s for ", each);
  snprintf(buf, size, "about %s here: %sthe float64 oracle on the %s%s%s, %s in all (speeds measured "
                      "just now)",
           when, what, c1d_run_resolve_oracle(cfg) == C1D_ORACLE_GPU ? "gpu" : "cpu",
           cfg->n_candidates > 0 ? ", with the analysis of " : "",
           cfg->n_candidates == 0 ? "" : cfg->n_candidates == 1 ? "one output" : "several outputs", all);
}
