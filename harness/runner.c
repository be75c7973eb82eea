/* The runner's sequence (see runner.h): per trial, inputs -> oracle -> each implementation -> analysis
 * -> comparison. One output buffer is shared by all implementations; the oracle's y and m stay in
 * memory for the whole trial, so every analysis step sees the output and its reference together. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness/atomic_file.h"
#include "harness/estimate.h"
#include "harness/execute.h"
#include "harness/explain.h"
#include "harness/npy.h"
#include "harness/progress.h"
#include "harness/registry.h"
#include "harness/report_set.h"
#include "harness/runner.h"
#include "harness/runner_internal.h"
#include "numerics/bounds.h"
#include "numerics/trace.h"

typedef struct run_ctx {
  const c1d_run_config *cfg;
  c1d_run_results *res;
  const c1d_shape *s;
  c1d_oracle_choice oracle;
  float *gx, *gw, *gb, *gs;     /* generated inputs (owned); NULL with the caller's tensors */
  const float *st;              /* this trial's initial states (NULL without) */
  double *pre;                  /* the oracle's sum before the activation (with one) */
  const float *x, *w, *b;       /* this trial's inputs */
  double *ref, *mag;            /* the oracle's y and m */
  int64_t *terms_t;
  float *y;                     /* the output buffer every implementation writes */
  float *first;                 /* the first run's output, for the race check */
  float *y_next, *first_next;   /* the next GPU row's, while it runs beside an analysis (with >1 GPU row) */
  float *naive;                 /* gpu_naive's output for the explainer (with a GPU session) */
  c1d_explainer explainer;      /* this trial's rounding models (prepared after the oracle) */
  c1d_explainer part_explainer; /* the same on the CPU rows' batch rows (cpu_batch_rows), when partial */
  int cmp_a, cmp_b;             /* --compare: result indices, or -1 */
  float *keep_a;                /* A's output this trial */
  double *keep_b;               /* B's output promoted to double */
  c1d_gpu_session *gpu;
  c1d_progress *progress;       /* the line on a terminal, or NULL */
} run_ctx;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

// --- progress (a line on stderr when the caller asked and stderr is a terminal) --------------------

/* Step weights: the estimate's seconds when there is one (the inputs and the analysis of each output
 * share its "other" part equally), else flops. */
static double weight_setup(const run_ctx *c) {
  const c1d_run_estimate *e = c->cfg->estimate;
  return e ? e->other_s / (c->res->n_impls + 1) : 0.0;
}

static double weight_models(const run_ctx *c) {
  const c1d_run_estimate *e = c->cfg->estimate;
  return e ? e->models_s : 0.0;
}

static double weight_oracle(const run_ctx *c) {
  const c1d_run_estimate *e = c->cfg->estimate;
  return e ? e->oracle_s : c1d_flops(c->s);
}

static double weight_row(const run_ctx *c, int i) {
  const c1d_run_estimate *e = c->cfg->estimate;
  if (c->res->impls[i].state == C1D_RESULT_SKIPPED) return 0.0;
  if (e) return (i < e->n_rows ? e->row_s[i] : 0.0) + weight_setup(c);
  if (i >= c->cfg->n_impls) return 0.0;
  const c1d_impl *impl = c->cfg->impls[i];
  return (c1d_run_default_repeats(c->cfg, impl) + c1d_run_warmups(c->cfg, impl)) * c1d_flops(c->s);
}

static double weight_total(const run_ctx *c) {
  double per_trial = weight_setup(c) + weight_oracle(c) + weight_models(c);
  for (int i = 0; i < c->res->n_impls; i++) per_trial += weight_row(c, i);
  return per_trial * c->cfg->trials;
}

static void oracle_progress(double fraction, void *user) {
  const run_ctx *c = user;
  c1d_progress_within(c->progress, fraction);
}

/* "trial 2/5, " with several trials, else "". */
static const char *trial_label(const run_ctx *c, int trial, char *buf, size_t size) {
  if (c->cfg->trials == 1) return "";
  snprintf(buf, size, "trial %d/%d, ", trial + 1, c->cfg->trials);
  return buf;
}

// --- the analysis of one output ---------------------------------------------------------------

/* The per-output analysis step: called once per output (implementation, candidate, comparison) while
 * the output and its reference are both in memory: the metrics and histograms, the error profiles
 * along t and o, and, against the oracle (ex not NULL), the explainer's verdict. A new per-output step
 * is one more call here, writing a new member of c1d_trial_result. */
static void profile_init(c1d_profile *p, int64_t extent) {
  memset(p, 0, sizeof *p);
  p->width = (extent + C1D_PROFILE_BINS - 1) / C1D_PROFILE_BINS;
  p->bins = (int)((extent + p->width - 1) / p->width);
}

/* Mean and max of |y - ref| per bin of t and of o (non-finite outputs left out), in one pass over the
 * output. Blocks of rows in parallel, each with its own t bins and one sum per row, added afterwards in
 * block and row order: the means do not depend on the number of threads. */
static c1d_status compute_profiles(const c1d_output_view *v, c1d_trial_result *tr) {
  const c1d_shape *s = v->s;
  c1d_profile *pt = &tr->err_t, *po = &tr->err_o;
  profile_init(pt, s->L);
  profile_init(po, s->O);
  const int64_t rows = s->N * s->O, tb = pt->bins;
  /* at most 1024 blocks of partial t bins (a few MB), at least 64 rows each */
  const int64_t per_block = rows / 1024 + 1 > 64 ? rows / 1024 + 1 : 64, blocks = (rows + per_block - 1) / per_block;
  double *bsum = calloc((size_t)(blocks * tb), sizeof *bsum), *bmax = calloc((size_t)(blocks * tb), sizeof *bmax);
  int64_t *bcount = calloc((size_t)(blocks * tb), sizeof *bcount), *rcount = calloc((size_t)rows, sizeof *rcount);
  double *rsum = calloc((size_t)rows, sizeof *rsum), *rmax = calloc((size_t)rows, sizeof *rmax);
  if (!bsum || !bmax || !bcount || !rcount || !rsum || !rmax) {
    free(bsum), free(bmax), free(bcount), free(rcount), free(rsum), free(rmax);
    return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate the error profiles");
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t b = 0; b < blocks; b++) {
    double *ps = bsum + b * tb, *pm = bmax + b * tb;
    int64_t *pc = bcount + b * tb;
    for (int64_t row = b * per_block; row < rows && row < (b + 1) * per_block; row++) {
      const float *y = v->y + row * s->L; /* y is (N, O, L): row n * O + o */
      const double *ref = v->ref + row * s->L;
      double sum = 0.0, mx = 0.0;
      int64_t count = 0;
      /* bin by bin (a division per element would cost more than the rest), each in t order as before */
      for (int64_t bt = 0; bt < tb; bt++) {
        const int64_t t1 = (bt + 1) * pt->width < s->L ? (bt + 1) * pt->width : s->L;
        double bin_sum = ps[bt], bin_max = pm[bt];
        int64_t bin_count = pc[bt];
        for (int64_t t = bt * pt->width; t < t1; t++) {
          const double e = fabs((double)y[t] - ref[t]);
          if (!isfinite(e)) continue;
          bin_sum += e;
          bin_count++;
          if (e > bin_max) bin_max = e;
          sum += e;
          count++;
          if (e > mx) mx = e;
        }
        ps[bt] = bin_sum, pm[bt] = bin_max, pc[bt] = bin_count;
      }
      rsum[row] = sum, rmax[row] = mx, rcount[row] = count;
    }
  }
  for (int64_t bt = 0; bt < tb; bt++) {
    double sum = 0.0, mx = 0.0;
    int64_t count = 0;
    for (int64_t b = 0; b < blocks; b++) {
      sum += bsum[b * tb + bt];
      count += bcount[b * tb + bt];
      if (bmax[b * tb + bt] > mx) mx = bmax[b * tb + bt];
    }
    pt->mean[bt] = count ? sum / (double)count : 0.0;
    pt->max[bt] = mx;
  }
  for (int bo = 0; bo < po->bins; bo++) {
    const int64_t o0 = bo * po->width, o1 = o0 + po->width < s->O ? o0 + po->width : s->O;
    double sum = 0.0, mx = 0.0;
    int64_t count = 0;
    for (int64_t n = 0; n < s->N; n++)
      for (int64_t o = o0; o < o1; o++) {
        sum += rsum[n * s->O + o];
        count += rcount[n * s->O + o];
        if (rmax[n * s->O + o] > mx) mx = rmax[n * s->O + o];
      }
    po->mean[bo] = count ? sum / (double)count : 0.0;
    po->max[bo] = mx;
  }
  free(bsum), free(bmax), free(bcount), free(rcount), free(rsum), free(rmax);
  return C1D_OK;
}

static c1d_status analyze_output(const c1d_run_config *cfg, const c1d_output_view *v,
                                 c1d_explainer *ex, c1d_trial_result *tr) {
  c1d_metric_options opt;
  c1d_metric_options_default(&opt);
  opt.atol = cfg->atol;
  opt.rtol = cfg->rtol;
  opt.lambda = cfg->lambda;
  opt.mag = v->mag;
  opt.terms_t = v->terms_t;
  opt.L = v->s->L;
  opt.u = v->u;
  opt.out_dtype = (int)v->s->dt.y; /* ULPs and bounds in y's own type (bf16, fp16) */
  c1d_log_hist_init(&tr->abs_err_hist, cfg->abs_hist_lo, cfg->abs_hist_hi, cfg->abs_hist_bins);
  c1d_log_hist_init(&tr->bound_ratio_hist, cfg->ratio_hist_lo, cfg->ratio_hist_hi,
                    cfg->ratio_hist_bins);
  opt.abs_err_hist = &tr->abs_err_hist;
  opt.bound_ratio_hist = &tr->bound_ratio_hist;
  double clock = c1d_trace_now();
  if (c1d_metrics_compute(v->y, v->ref, c1d_y_count(v->s), &opt, &tr->metrics) != 0)
    return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate scratch space for the metrics");
  c1d_trace_stage("output: metrics", &clock);
  c1d_status st = compute_profiles(v, tr);
  c1d_trace_stage("output: error profiles", &clock);
  if (st != C1D_OK || !ex) return st;
  const c1d_full_passes before = ex->passes;
  st = c1d_explainer_explain(ex, v->y, tr->repeat_checked, tr->repeat_identical, &tr->explanation);
  tr->explained = st == C1D_OK;
  for (int k = 0; k < C1D_FULL_PASS_KINDS; k++) tr->full_passes[k] = ex->passes.count[k] - before.count[k];
  tr->full_pass_ms = ex->passes.ms - before.ms;
  c1d_trace_stage("output: explained", &clock);
  return st;
}

static c1d_output_view view_of(const run_ctx *c, const float *y, const c1d_impl *impl) {
  c1d_output_view v = {c->s, c->x, c->w, c->b, y, c->ref, c->mag, c->terms_t, C1D_U_FP32, impl};
  return v;
}

// --- saving outputs ----------------------------------------------------------------------------

/* DIR/<name>.npy for a single trial, DIR/<name>.seed<S>.npy with several. */
static c1d_status save_output(const run_ctx *c, const char *name, uint64_t seed, const float *y,
                              const double *y64) {
  const c1d_shape *s = c->s;
  char file[160];
  if (c->cfg->trials == 1)
    snprintf(file, sizeof file, "%s.npy", name);
  else
    snprintf(file, sizeof file, "%s.seed%llu.npy", name, (unsigned long long)seed);
  char *path = c1d_path_join(c1d_staged_set_dir(c->res->saved_outputs), file);
  if (!path) return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
  const int64_t shape[3] = {s->N, s->O, s->L};
  c1d_status st = y ? c1d_npy_write_f32(path, y, 3, shape) : c1d_npy_write_f64(path, y64, 3, shape);
  free(path);
  if (st != C1D_OK) { /* the detail names the staged file: say where the user asked for it */
    char why[400];
    snprintf(why, sizeof why, "%s", c1d_error_detail());
    const char *cause = strrchr(why, ':');
    return c1d_fail(st, "%s/%s: cannot save%s", c->cfg->save_outputs_dir, file, cause ? cause : "");
  }
  return c1d_staged_set_add(c->res->saved_outputs, file);
}

// --- one trial ---------------------------------------------------------------------------------

static void start_trial_result(c1d_trial_result *tr, uint64_t seed) {
  memset(tr, 0, sizeof *tr);
  tr->seed = seed;
  tr->used_tf32 = -1;
  tr->time_median_ms = tr->time_min_ms = tr->gflops = NAN;
}

/* Keeps the outputs that --compare needs later in this trial. */
static void keep_for_comparison(run_ctx *c, int index, const float *y) {
  const int64_t ny = c1d_y_count(c->s);
  if (index == c->cmp_a) memcpy(c->keep_a, y, (size_t)ny * sizeof *y);
  if (index == c->cmp_b)
    for (int64_t i = 0; i < ny; i++) c->keep_b[i] = y[i];
}

// --- a GPU row timed while the row before it is analysed ---------------------------------------

/* The device times one GPU row while the host's cores analyse the row before it (on the H200 the 18
 * GPU rows' timing runs, about 5 s of make run's job, hide under their analyses). The row runs on a
 * thread of its own into the spare buffers (y_next, first_next) and is joined before the analysis
 * step ends, so rows still begin and end in order; only the GPU session is touched there, and the
 * analysis never touches it. Timings are the device's own (CUDA events around each run). */
typedef struct gpu_ahead {
  run_ctx *c;
  int i;                /* the row, or -1: none */
  int repeats;
  pthread_t thread;
  int running;
  c1d_exec ex;
  c1d_timing t;
  c1d_status st;
  char error[sizeof ((c1d_trial_result *)0)->error];
  double ms;            /* its wall time */
} gpu_ahead;

static int row_repeats(const run_ctx *c, const c1d_impl *impl, const c1d_shape *rs, int *warmup) {
  c1d_run_config rcfg = *c->cfg;
  rcfg.shape = *rs;
  *warmup = c1d_run_warmups(&rcfg, impl);
  return c1d_run_default_repeats(&rcfg, impl);
}

static c1d_status execute_gpu_row(run_ctx *c, const c1d_impl *impl, float *y, float *first, int repeats,
                                  c1d_exec *ex, c1d_timing *t) {
  return c1d_execute_gpu(c->gpu, impl, y, first, repeats, c->cfg->repeats > 0 ? 0.0 : C1D_GPU_DEFAULT_BUDGET_MS,
                         ex, t);
}

static void *gpu_ahead_main(void *arg) {
  gpu_ahead *a = arg;
  const double t0 = now_ms();
  c1d_error_clear();
  a->st = execute_gpu_row(a->c, a->c->res->impls[a->i].impl, a->c->y_next, a->c->first_next, a->repeats, &a->ex,
                          &a->t);
  if (a->st != C1D_OK)
    snprintf(a->error, sizeof a->error, "%s", c1d_error_detail()[0] ? c1d_error_detail() : c1d_strerror(a->st));
  a->ms = now_ms() - t0;
  return NULL;
}

/* Starts the next row after `after` on its thread when it is a GPU row that will run; without spare
 * buffers or a thread it simply runs in its turn. */
static void gpu_ahead_start(run_ctx *c, int after, gpu_ahead *a) {
  int next = after + 1;
  while (next < c->cfg->n_impls && c->res->impls[next].state == C1D_RESULT_SKIPPED) next++;
  if (!c->y_next || c->cfg->gpu_rows_in_turn || next >= c->cfg->n_impls ||
      c->res->impls[next].impl->backend != C1D_BACKEND_GPU)
    return;
  int warmup;
  *a = (gpu_ahead){.c = c, .i = next, .ex = {.used_tf32 = -1}};
  a->repeats = row_repeats(c, a->c->res->impls[next].impl, c->s, &warmup);
  a->running = pthread_create(&a->thread, NULL, gpu_ahead_main, a) == 0;
  if (!a->running) a->i = -1;
}

static void gpu_ahead_join(gpu_ahead *a) {
  if (!a->running) return;
  pthread_join(a->thread, NULL);
  a->running = 0;
}

/* Runs implementation i on this trial's inputs (or takes its run from `ahead`, which ran it beside
 * the last analysis), then starts the next GPU row and analyses this one. Its own failures are
 * recorded in its result, not returned; only the analysis and saving can stop the run. */
static c1d_status run_impl_steps(run_ctx *c, int i, int trial, uint64_t seed, gpu_ahead *ahead) {
  c1d_impl_result *ir = &c->res->impls[i];
  c1d_trial_result *tr = &ir->trials[trial];
  const c1d_impl *impl = ir->impl;
  /* CPU rows on the first cpu_batch_rows batch rows: x, y, the oracle and m are [n]-major, so the
   * sub-shape's tensors are prefixes of the whole ones. */
  c1d_shape part = *c->s;
  if (impl->backend == C1D_BACKEND_CPU && c->cfg->cpu_batch_rows > 0) part.N = c->cfg->cpu_batch_rows;
  const c1d_shape *rs = &part;
  int warmup;
  const int repeats = row_repeats(c, impl, rs, &warmup);
  c1d_exec ex = {.used_tf32 = -1, .states = impl->backend == C1D_BACKEND_CPU ? c->st : NULL};
  c1d_timing t = {0};
  c1d_status st;
  double clock = c1d_trace_now();
  start_trial_result(tr, seed);
  char tl[32];
  c1d_progress_step(c->progress, weight_row(c, i), "%s%s (%d run%s)", trial_label(c, trial, tl, sizeof tl),
                    impl->name, repeats + warmup, repeats + warmup == 1 ? "" : "s");
  c1d_error_clear();
  if (ahead->i == i) { /* it ran beside the last analysis: its output is in the spare buffers */
    float *y = c->y, *first = c->first;
    c->y = c->y_next, c->first = c->first_next;
    c->y_next = y, c->first_next = first;
    ex = ahead->ex, t = ahead->t, st = ahead->st;
    tr->step_ms = ahead->ms; /* run_impl adds this step's own time */
    if (st != C1D_OK) c1d_fail(st, "%s", ahead->error);
    ahead->i = -1;
  } else if (impl->backend == C1D_BACKEND_GPU) {
    st = execute_gpu_row(c, impl, c->y, c->first, repeats, &ex, &t);
  } else {
    st = c1d_execute_cpu(impl, rs, c->x, c->w, c->b, c->y, c->first, repeats, warmup, &ex, &t);
  }
  snprintf(tr->algo, sizeof tr->algo, "%s", ex.algo);
  snprintf(tr->math, sizeof tr->math, "%s", ex.math);
  tr->used_tf32 = ex.used_tf32;
  if (st != C1D_OK) {
    tr->status = st;
    snprintf(tr->error, sizeof tr->error, "%s",
             c1d_error_detail()[0] ? c1d_error_detail() : c1d_strerror(st));
    ir->state = C1D_RESULT_FAILED;
    return C1D_OK;
  }
  char stage[96];
  snprintf(stage, sizeof stage, "run: %s (%d runs)", impl->name, t.repeats);
  c1d_trace_stage(stage, &clock);
  tr->repeats = t.repeats;
  tr->time_median_ms = t.median_ms;
  tr->time_min_ms = t.min_ms;
  tr->gflops = c1d_flops(rs) / (t.median_ms * 1e6);
  tr->repeat_checked = t.repeat_checked;
  tr->repeat_identical = t.repeat_identical;
  c1d_output_view v = view_of(c, c->y, impl);
  v.s = rs;
  const int partial = rs->N < c->s->N;
  gpu_ahead_start(c, i, ahead);
  const double t0 = now_ms();
  c1d_explainer *ex_of = c->cfg->no_verdicts ? NULL : partial ? &c->part_explainer : &c->explainer;
  st = analyze_output(c->cfg, &v, ex_of, tr);
  tr->analysis_ms = now_ms() - t0;
  if (st == C1D_OK) keep_for_comparison(c, i, c->y);
  if (st == C1D_OK && c->cfg->save_outputs_dir) st = save_output(c, impl->name, seed, c->y, NULL);
  gpu_ahead_join(ahead);
  if (st != C1D_OK) ahead->i = -1; /* the run stops: the row that ran ahead is not reported */
  return st;
}

/* The step's wall time around it, for run estimates. */
static c1d_status run_impl(run_ctx *c, int i, int trial, uint64_t seed, gpu_ahead *ahead) {
  const double t0 = now_ms();
  const c1d_status st = run_impl_steps(c, i, trial, seed, ahead);
  c->res->impls[i].trials[trial].step_ms += now_ms() - t0;
  return st;
}

static c1d_status run_candidate(run_ctx *c, int i, int trial, uint64_t seed) {
  const c1d_candidate *cand = &c->cfg->candidates[i - c->cfg->n_impls];
  c1d_trial_result *tr = &c->res->impls[i].trials[trial];
  c1d_progress_step(c->progress, weight_row(c, i), "analysing %s", cand->name);
  start_trial_result(tr, seed);
  c1d_output_view v = view_of(c, cand->y, NULL);
  const double t0 = now_ms();
  c1d_status st = analyze_output(c->cfg, &v, c->cfg->no_verdicts ? NULL : &c->explainer, tr);
  if (st == C1D_OK) keep_for_comparison(c, i, cand->y);
  tr->analysis_ms = tr->step_ms = now_ms() - t0;
  return st;
}

/* Why result i has no output in this trial, or NULL when it has one. */
static const char *missing_output(const run_ctx *c, int i, int trial) {
  const c1d_impl_result *ir = &c->res->impls[i];
  if (ir->state == C1D_RESULT_SKIPPED) return ir->skip_reason;
  if (ir->trials[trial].status != C1D_OK) return ir->trials[trial].error;
  return NULL;
}

/* Which side of A-B carries the difference: the one whose own error against the oracle is larger.
 * The pair's verdict is that side's verdict, with both sides' evidence in the reason. */
static void explain_comparison(run_ctx *c, int trial, c1d_trial_result *tr) {
  const c1d_trial_result *ta = &c->res->impls[c->cmp_a].trials[trial];
  const c1d_trial_result *tb = &c->res->impls[c->cmp_b].trials[trial];
  if (!ta->explained || !tb->explained) return;
  const int b_dominates = tb->metrics.rel_l2 > ta->metrics.rel_l2;
  const c1d_trial_result *dom = b_dominates ? tb : ta;
  tr->explanation = dom->explanation;
  tr->explained = 1;
  snprintf(tr->explanation.reason, sizeof tr->explanation.reason,
           "the difference (rel L2 %.2e) comes from %s, whose verdict is %s; against the oracle, "
           "%.95s has rel L2 %.2e (%s) and %.95s %.2e (%s)",
           tr->metrics.rel_l2, b_dominates ? c->cfg->compare_b : c->cfg->compare_a,
           c1d_verdict_name(dom->explanation.verdict), c->res->impls[c->cmp_a].name,
           ta->metrics.rel_l2, c1d_verdict_name(ta->explanation.verdict),
           c->res->impls[c->cmp_b].name, tb->metrics.rel_l2,
           c1d_verdict_name(tb->explanation.verdict));
}

/* A against B promoted to double. Each has error <= gamma_n(u)*m against the exact result, so their
 * difference is within 2*gamma_n(u)*m <= gamma_n(2u)*m: the bounds use 2u (and the probabilistic one
 * lambda*sqrt(n)*2u*m, conservative for the difference of two independent errors). */
static c1d_status run_comparison(run_ctx *c, int trial, uint64_t seed) {
  c1d_comparison *cmp = &c->res->comparisons[0];
  c1d_trial_result *tr = &cmp->trials[trial];
  start_trial_result(tr, seed);
  const int side[2] = {c->cmp_a, c->cmp_b};
  for (int k = 0; k < 2; k++) {
    const char *why = missing_output(c, side[k], trial);
    if (why) {
      tr->status = C1D_ERR_UNSUPPORTED;
      snprintf(tr->error, sizeof tr->error, "%.95s has no output: %.390s",
               c->res->impls[side[k]].name, why);
      return C1D_OK;
    }
  }
  c1d_output_view v = view_of(c, c->keep_a, NULL);
  v.ref = c->keep_b;
  v.u = 2.0 * C1D_U_FP32;
  c1d_status st = analyze_output(c->cfg, &v, NULL, tr);
  if (st == C1D_OK) explain_comparison(c, trial, tr);
  return st;
}

static c1d_status run_oracle(run_ctx *c, uint64_t seed) {
  c1d_status st;
  double t0 = now_ms();
  c1d_error_clear();
  if (c->oracle == C1D_ORACLE_GPU) {
    st = c1d_gpu_session_oracle(c->gpu, c->ref, c->mag);
  } else {
    st = c1d_oracle_f64_ex(c->s, c->x, c->w, c->b, c->st, c->ref, c->mag, c->pre,
                           c->progress ? oracle_progress : NULL, c);
  }
  c->res->oracle_ms += now_ms() - t0;
  if (st != C1D_OK) {
    char why[400]; /* a copy: c1d_fail must not format the detail buffer into itself */
    snprintf(why, sizeof why, "%s", c1d_error_detail()[0] ? c1d_error_detail() : c1d_strerror(st));
    return c1d_fail(st, "oracle failed: %s", why);
  }
  if (c->cfg->save_outputs_dir) return save_output(c, "oracle", seed, NULL, c->ref);
  return C1D_OK;
}

/* The explainer's reference noise is the naive order's output: with a GPU session, gpu_naive gives the
 * same bits (its CPU twin) in a fraction of the time. NULL when it cannot: the explainer then runs the
 * CPU naive order itself. */
static const float *naive_on_gpu(run_ctx *c) {
  if (!c->gpu || !c->naive) return NULL;
  const c1d_impl *gn = c1d_find_impl("gpu_naive");
  if (!gn || c1d_impl_unavailable(gn) || c1d_impl_unsupported(gn, c->s)) return NULL;
  c1d_exec ex = {.used_tf32 = -1};
  c1d_timing t = {0};
  c1d_error_clear();
  return c1d_execute_gpu(c->gpu, gn, c->naive, NULL, 1, 0.0, &ex, &t) == C1D_OK ? c->naive : NULL;
}

static c1d_status run_trial(run_ctx *c, int trial) {
  const c1d_run_config *cfg = c->cfg;
  const uint64_t seed = cfg->x ? cfg->seed : cfg->seed + (uint64_t)trial;
  c1d_status st = C1D_OK;
  char tl[32];
  c1d_progress_step(c->progress, weight_setup(c), "%s%s", trial_label(c, trial, tl, sizeof tl),
                    cfg->x ? "the inputs" : "generating the inputs");
  if (!cfg->x) {
    c1d_generate(c->s, cfg->dist, seed, c->gx, c->gw, c->gb);
    if (c->gs) c1d_generate_states(c->s, cfg->dist, seed, c->gs);
  }
  if (c->gpu && (st = c1d_gpu_session_upload(c->gpu, c->x, c->w, c->b, c->st)) != C1D_OK) return st;
  c1d_progress_step(c->progress, weight_oracle(c), "%sthe float64 oracle (%s)", trial_label(c, trial, tl, sizeof tl),
                    c->oracle == C1D_ORACLE_GPU ? "gpu" : "cpu");
  double clock = c1d_trace_now();
  if ((st = run_oracle(c, seed)) != C1D_OK) return st;
  c1d_trace_stage("trial: inputs' upload and the oracle", &clock);
  const double t0 = now_ms();
  if (!cfg->no_verdicts) {
    c1d_progress_step(c->progress, weight_models(c), "%sthe rounding models",
                      trial_label(c, trial, tl, sizeof tl));
    const c1d_explainer_inputs ein = {.x = c->x, .w = c->w, .b = c->b, .st = c->st, .ref = c->ref, .mag = c->mag,
                                     .pre = c->pre, .naive = naive_on_gpu(c)};
    st = c1d_explainer_prepare_ex(&c->explainer, c->s, &ein);
  }
  if (st == C1D_OK && !cfg->no_verdicts && cfg->cpu_batch_rows > 0 && cfg->cpu_batch_rows < c->s->N) {
    /* The CPU rows' verdicts judge the batch rows they cover: x, the oracle and m are [n]-major, so the
     * sub-shape's are prefixes of the whole. */
    c1d_shape part = *c->s;
    part.N = cfg->cpu_batch_rows;
    const c1d_explainer_inputs pin = {.x = c->x, .w = c->w, .b = c->b, .st = c->st, .ref = c->ref, .mag = c->mag,
                                      .pre = c->pre};
    if ((st = c1d_explainer_prepare_ex(&c->part_explainer, &part, &pin)) != C1D_OK)
      c1d_explainer_release(&c->explainer);
  }
  c->res->models_ms += now_ms() - t0;
  if (st != C1D_OK) return st;
  gpu_ahead ahead = {.i = -1};
  for (int i = 0; i < c->res->n_impls && st == C1D_OK; i++) {
    if (c->res->impls[i].state == C1D_RESULT_SKIPPED) continue;
    st = i < cfg->n_impls ? run_impl(c, i, trial, seed, &ahead) : run_candidate(c, i, trial, seed);
  }
  if (st == C1D_OK && c->res->n_comparisons) st = run_comparison(c, trial, seed);
  c1d_explainer_release(&c->explainer);
  c1d_explainer_release(&c->part_explainer);
  return st;
}

// --- the whole run -----------------------------------------------------------------------------

static int needs_gpu(const run_ctx *c) {
  if (c->oracle == C1D_ORACLE_GPU) return 1;
  for (int i = 0; i < c->cfg->n_impls; i++)
    if (c->res->impls[i].state != C1D_RESULT_SKIPPED && c->cfg->impls[i]->backend == C1D_BACKEND_GPU)
      return 1;
  return 0;
}

static c1d_status allocate_buffers(run_ctx *c) {
  const c1d_run_config *cfg = c->cfg;
  const c1d_shape *s = c->s;
  const size_t ny = (size_t)c1d_y_count(s);
  int failed = 0;
  if (s->states) c->st = cfg->x ? cfg->st : (c->gs = malloc((size_t)c1d_s_count(s) * sizeof(float)));
  if (s->act != C1D_ACT_NONE) c->pre = malloc((size_t)c1d_y_count(s) * sizeof *c->pre);
  failed |= (s->states && !c->st) || (s->act != C1D_ACT_NONE && !c->pre);
  if (cfg->x) {
    c->x = cfg->x;
    c->w = cfg->w;
    c->b = cfg->b;
  } else {
    c->x = c->gx = malloc((size_t)c1d_x_count(s) * sizeof(float));
    c->w = c->gw = malloc((size_t)c1d_w_count(s) * sizeof(float));
    failed |= !c->gx || !c->gw;
    if (s->bias) {
      c->b = c->gb = malloc((size_t)c1d_b_count(s) * sizeof(float));
      failed |= !c->gb;
    }
  }
  c->ref = malloc(ny * sizeof *c->ref);
  c->mag = malloc(ny * sizeof *c->mag);
  c->y = malloc(ny * sizeof *c->y);
  c->first = malloc(ny * sizeof *c->first);
  int gpu_rows = 0;
  for (int i = 0; i < cfg->n_impls; i++)
    gpu_rows += c->res->impls[i].state != C1D_RESULT_SKIPPED && cfg->impls[i]->backend == C1D_BACKEND_GPU;
  if (gpu_rows > 1) { /* spares: without them each row simply runs in its turn */
    c->y_next = malloc(ny * sizeof *c->y_next);
    c->first_next = malloc(ny * sizeof *c->first_next);
    if (!c->y_next || !c->first_next) {
      free(c->y_next), free(c->first_next);
      c->y_next = c->first_next = NULL;
    }
  }
  c->terms_t = malloc((size_t)s->L * sizeof *c->terms_t);
  failed |= !c->ref || !c->mag || !c->y || !c->first || !c->terms_t;
  if (c->cmp_a >= 0) {
    c->keep_a = malloc(ny * sizeof *c->keep_a);
    c->keep_b = malloc(ny * sizeof *c->keep_b);
    failed |= !c->keep_a || !c->keep_b;
  }
  if (failed)
    return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate %.2f GiB of host buffers",
                    c1d_run_host_bytes(cfg) / 1073741824.0);
  for (int64_t t = 0; t < s->L; t++) c->terms_t[t] = c1d_terms_at(s, t);
  return C1D_OK;
}

static void release_buffers(run_ctx *c) {
  free(c->gx);
  free(c->gw);
  free(c->gb);
  free(c->gs);
  free(c->pre);
  free(c->ref);
  free(c->mag);
  free(c->y);
  free(c->first);
  free(c->y_next);
  free(c->first_next);
  free(c->naive);
  free(c->terms_t);
  free(c->keep_a);
  free(c->keep_b);
  c1d_gpu_session_destroy(c->gpu);
}

c1d_status c1d_run(const c1d_run_config *cfg, c1d_run_results *out) {
  run_ctx c = {.cfg = cfg, .res = out, .s = &cfg->shape, .cmp_a = -1, .cmp_b = -1};
  c1d_status st;
  memset(out, 0, sizeof *out);
  if ((st = c1d_run_check(cfg)) != C1D_OK) return st;
  if ((st = c1d_run_results_init(cfg, out)) != C1D_OK) goto done;
  c.oracle = c1d_run_resolve_oracle(cfg);
  if (cfg->compare_a) {
    c.cmp_a = c1d_run_find_result(cfg, cfg->compare_a);
    c.cmp_b = c1d_run_find_result(cfg, cfg->compare_b);
  }
  if ((st = allocate_buffers(&c)) != C1D_OK) goto done;
  if (cfg->progress)
    c.progress = c1d_progress_start(stderr, cfg->progress_who ? cfg->progress_who : "convlab", weight_total(&c),
                                    cfg->estimate != NULL);
  if (needs_gpu(&c) && (st = c1d_gpu_session_create(c.s, &c.gpu)) != C1D_OK) goto done;
  if (c.gpu) c.naive = malloc((size_t)c1d_y_count(c.s) * sizeof *c.naive); /* NULL: the CPU's */
  c1d_make_run_id(out->run_id, sizeof out->run_id);
  if (cfg->save_outputs_dir &&
      (st = c1d_staged_set_open(cfg->save_outputs_dir, "outputs", ".npy", out->run_id, &out->saved_outputs)) != C1D_OK)
    goto done;
  for (int trial = 0; trial < cfg->trials; trial++)
    if ((st = run_trial(&c, trial)) != C1D_OK) goto done;
done:
  c1d_progress_end(c.progress);
  release_buffers(&c);
  return st;
}
