/* The run estimate (estimate.h): calibration runs through the runner itself, so that everything a real
 * run does is in the measurement, on small shapes chosen for what each measures (0.2-0.6 s in all on
 * the idle 2-core machine, 1.3-1.6 s on the H200's):
 *
 *   tiny    16 outputs, every row, twice: the first pays the one-time costs (threads, libraries, first
 *           page faults) that the real run will not pay again; the second, the fixed costs of a trial.
 *   runs    two points, verdicts off, the median of 3 runs of every implementation and of the
 *           explainer's naive order: the real C, K, D and L (up to 4096: the row kernels' speed depends
 *           on it), O channels for about 0.13 GFLOP per run, then a quarter of them. A run costs a fixed
 *           part, a part per input element (rows that round or split x once per run) and a part per
 *           flop. The CPU oracle has a point of its own (64 channels: its speed grows with them).
 *   sample  every row, verdicts on, on about 2^21 / ((C/G)*K) outputs (a chunk of the explainer's per
 *           thread at least), all of them its sample: a model on the sample costs (C/G)*K products per
 *           element, 3-12 us here. A row that calls models beyond the preparation's shows it here.
 *   wide    2 and 4 times the sample's outputs with about 16 products each (C cut), the naive order's
 *           row and the rows that call models: what an output costs beyond the sample (the full
 *           passes), the same sample on both. Only where the real output holds 8 sample points or more.
 *           Past four threads, threads/4 times larger and the better of two measurements each.
 *   far     past four threads, the naive order's row alone on threads/4 times the second wide point,
 *           where the real output holds twice that: the typical row's cost per output (on the wide
 *           points alone it was within a 16-thread host's jitter).
 *   passes  the passes over every element that a row's verdict made on the sample point (a model's
 *           values, TF32's truncation biases, the squared products: explain.h), each kind timed alone
 *           at the real C*K; a row's analysis on the points is counted without them.
 *
 * Each cost is then the tiny point's plus its growth: runs and the oracle as above, each analysis and
 * the rounding models by p per output (the wide points) plus sigma per output of the sample (up to
 * C1D_EXPLAIN_SAMPLE; the sample point). Past the sample its elements are scattered over the tensors,
 * each missing the caches: TF32's model timed on scattered elements of the real tensors and on the
 * sample point's in order gives the factor (1.4 at the default run's shape, 2.2 at the README's third).
 * With the user's tensors the points run on their prefix, the candidates' outputs included. The points
 * run each GPU row in its turn; the real run times a GPU row beside the last row's analysis (runner.c),
 * so the model hides the shorter of the two.
 *
 * Checked with scripts/estimate_check.sh on the idle 2-core machine (2026-12-02): every command of
 * issue 23 within 25 % (the README's third command 30 s announced, 32.7 s taken; the default run 7.3
 * and 8.2 s; the sweep 6.4 and 6.0 s). The earlier calibration took 0.7-5.8 s and announced the third
 * command at 49-53 s for 30-34 s: it timed the models on 65536 outputs at the real C*K, scaled a loaded
 * machine's per-loop delays on small points up with the outputs, and ran its runs on shapes whose
 * short rows ran slower. On the H200, make run's job: 37-45 s announced, 28-31 s taken (the earlier
 * estimate: 60-63 s); there a typical output's analysis costs 10 ns at C*K = 1024 and 24 ns at 16,
 * which the wide points measure. On a busy machine the short calibration runs lose more to other
 * processes than the real run does: the estimate is then long. */
#include "harness/estimate.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness/execute.h"
#include "harness/explain.h"
#include "harness/inputs.h"
#include "harness/progress.h"
#include "harness/registry.h"
#include "harness/runner_internal.h"
#include "reference/models.h"
#include "reference/oracle.h"

#define RUNS_FLOPS 134217728.0  /* per implementation run on the second runs point: 3-25 ms here */
#define ORACLE_FLOPS 536870912.0 /* the CPU oracle's point: about 10 ms */
#define SAMPLE_PRODUCTS 2097152.0 /* outputs x products on the sample point: 10-30 ms per model */
#define SAMPLE C1D_EXPLAIN_SAMPLE /* the explainer's sample: its models cost this many outputs' */
#define WIDE_PRODUCTS 16
#define TINY_OUTPUTS 16

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* s with about `outputs` outputs on `rows` output channels (rounded to whole groups), N = 1 unless the
 * channels and the real L are too few; L at least 4 causal paddings (or the real L), so that few
 * outputs sit in the padding, where sums are shorter. C, K, D and everything else unchanged. */
static c1d_shape shape_for(const c1d_shape *s, double outputs, int64_t rows) {
  c1d_shape t = *s;
  const int64_t g = c1d_groups(s), pad = c1d_pad(s);
  const int64_t l_min = s->L < 16 + 4 * pad ? s->L : 16 + 4 * pad;
  t.N = 1;
  t.O = clamp64(rows, 1, s->O);
  t.O = (t.O + g - 1) / g * g;
  if (t.O > s->O) t.O = s->O;
  t.L = clamp64((int64_t)ceil(outputs / (double)t.O), l_min, s->L);
  t.N = clamp64((int64_t)ceil(outputs / (double)(t.O * t.L)), 1, s->N);
  return t;
}

/* A wide point's shape: the problem with about WIDE_PRODUCTS products per output (C cut to whole
 * groups) and `outputs` outputs on up to 64 channels, past the sample. */
static c1d_shape wide_shape(const c1d_shape *s, int64_t outputs) {
  c1d_shape t = *s;
  const int64_t g = c1d_groups(s), per_group = c1d_cin_per_group(s);
  const int64_t wanted = (WIDE_PRODUCTS + s->K - 1) / s->K;
  t.N = 1;
  t.C = g * clamp64(wanted, 1, per_group);
  t.O = clamp64(64, 1, s->O);
  t.O = (t.O + g - 1) / g * g;
  if (t.O > s->O) t.O = s->O;
  t.L = (outputs + t.O - 1) / t.O;
  if (t.L < 16 + 4 * c1d_pad(s)) t.L = 16 + 4 * c1d_pad(s);
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

/* The implementation the explainer runs for its naive order on the CPU (explain.c: naive on the plain
 * problem, grouped_naive on the others), or NULL when it cannot run on s. */
static const c1d_impl *naive_order_impl(const c1d_shape *s) {
  const c1d_impl *impl = c1d_find_impl(c1d_shape_is_plain(s) ? "naive" : "grouped_naive");
  return impl && runs_on(impl, s) ? impl : NULL;
}

/* Inputs of shape t as the runner generates them (dist, seed): x, w, b (O of them, bias or not) and the
 * initial states (NULL without). */
typedef struct generated {
  float *x, *w, *b, *st;
} generated;

static void generated_free(generated *g) { free(g->x), free(g->w), free(g->b), free(g->st); }

/* 1, or 0 when out of memory (nothing to free then). */
static int generated_make(const c1d_shape *t, c1d_dist dist, uint64_t seed, generated *g) {
  g->x = malloc((size_t)c1d_x_count(t) * sizeof *g->x), g->w = malloc((size_t)c1d_w_count(t) * sizeof *g->w);
  g->b = malloc((size_t)(t->O > 0 ? t->O : 1) * sizeof *g->b);
  g->st = t->states ? malloc((size_t)c1d_s_count(t) * sizeof *g->st) : NULL;
  if (!g->x || !g->w || !g->b || (t->states && !g->st)) {
    generated_free(g);
    return 0;
  }
  c1d_generate(t, dist, seed, g->x, g->w, t->bias ? g->b : NULL);
  if (g->st) c1d_generate_states(t, dist, seed, g->st);
  return 1;
}

// --- measuring one point ---------------------------------------------------------------------------

/* One calibration point: per row (the config's implementations, then its candidates, then the naive
 * order's implementation in slot `rows`) its time per run, its analysis and the rest of its step
 * (set-up, transfers); NAN where the row did not run. `other` is what remains of the wall time
 * (inputs, buffers, session, the comparison). */
typedef struct point {
  c1d_shape s;
  double oracle_ms, models_ms, other_ms;
  double *run_ms, *analysis_ms, *overhead_ms; /* analysis_ms without the passes over every element */
  int *passes;                                /* per slot, C1D_FULL_PASS_KINDS counts: those passes */
} point;

static int alloc_point(point *pt, int slots) {
  pt->run_ms = malloc((size_t)slots * sizeof *pt->run_ms);
  pt->analysis_ms = malloc((size_t)slots * sizeof *pt->analysis_ms);
  pt->overhead_ms = malloc((size_t)slots * sizeof *pt->overhead_ms);
  pt->passes = calloc((size_t)slots * C1D_FULL_PASS_KINDS, sizeof *pt->passes);
  for (int i = 0; pt->run_ms && pt->analysis_ms && pt->overhead_ms && i < slots; i++)
    pt->run_ms[i] = pt->analysis_ms[i] = pt->overhead_ms[i] = NAN;
  pt->oracle_ms = pt->models_ms = pt->other_ms = NAN;
  return pt->run_ms && pt->analysis_ms && pt->overhead_ms && pt->passes;
}

static void free_point(point *pt) {
  free(pt->run_ms);
  free(pt->analysis_ms);
  free(pt->overhead_ms);
  free(pt->passes);
}

/* A point's inputs and candidates. With the user's tensors, their prefix (batch row 0, the first
 * output channels, the first L steps: causal, so a problem of its own whose outputs are the prefix of
 * theirs) where the point keeps C and the groups' channels; else the runner generates the inputs
 * (NULL here), and each candidate stands in as the naive order's output on them: what the analysis of
 * an output that is rounding costs (zeros, the earlier stand-in, fit no model: every model was
 * computed, and explain's estimate of a float32 output was 10 times what it took). */
typedef struct point_data {
  float *x, *w, *b, *st; /* owned prefixes of the user's tensors, or NULL */
  float **y;             /* per candidate (owned), or NULL */
  float *stand_in;       /* the naive order's output, or zeros (owned) */
} point_data;

static void point_data_free(point_data *d, int n_cands) {
  free(d->x), free(d->w), free(d->b), free(d->st), free(d->stand_in);
  for (int i = 0; d->y && i < n_cands; i++) free(d->y[i]);
  free(d->y);
}

/* src (N, R, L) rows -> dst (t.N, r, t.L): the first r rows of each of the first t.N batch rows. */
static float *prefix(const float *src, int64_t rows, int64_t length, const c1d_shape *t, int64_t r, int64_t l) {
  float *dst = malloc((size_t)(t->N * r * l > 0 ? t->N * r * l : 1) * sizeof *dst);
  for (int64_t n = 0; dst && n < t->N; n++)
    for (int64_t i = 0; i < r; i++)
      memcpy(dst + (n * r + i) * l, src + (n * rows + i) * length, (size_t)l * sizeof *dst);
  return dst;
}

static c1d_status point_data_make(const c1d_run_config *cfg, const c1d_shape *t, point_data *d) {
  const c1d_shape *s = &cfg->shape;
  memset(d, 0, sizeof *d);
  if (cfg->x && t->C == s->C && (c1d_groups(s) == 1 || t->O == s->O)) {
    const int64_t wr = c1d_cin_per_group(s) * s->K, pad = c1d_pad(s);
    d->x = prefix(cfg->x, s->C, s->L, t, s->C, t->L);
    d->w = malloc((size_t)(t->O * wr) * sizeof *d->w);
    if (d->w) memcpy(d->w, cfg->w, (size_t)(t->O * wr) * sizeof *d->w);
    if (s->bias && (d->b = malloc((size_t)t->O * sizeof *d->b))) memcpy(d->b, cfg->b, (size_t)t->O * sizeof *d->b);
    if (s->states) d->st = prefix(cfg->st, s->C, pad, t, s->C, pad);
    d->y = calloc((size_t)cfg->n_candidates + 1, sizeof *d->y);
    for (int i = 0; d->y && i < cfg->n_candidates; i++)
      d->y[i] = prefix(cfg->candidates[i].y, s->O, s->L, t, t->O, t->L);
    int ok = d->x && d->w && (!s->bias || d->b) && (!s->states || d->st) && d->y;
    for (int i = 0; ok && i < cfg->n_candidates; i++) ok = d->y[i] != NULL;
    return ok ? C1D_OK : c1d_fail(C1D_ERR_NO_MEMORY, "out of memory for the run estimate");
  }
  if (cfg->n_candidates == 0) return C1D_OK;
  d->stand_in = calloc((size_t)c1d_y_count(t), sizeof *d->stand_in);
  if (!d->stand_in) return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory for the run estimate");
  const c1d_impl *naive = naive_order_impl(t);
  generated g; /* the runner's trial 0 generates the same */
  if (naive && generated_make(t, cfg->x ? C1D_DIST_CONV_INIT : cfg->dist, cfg->x ? 0 : cfg->seed, &g)) {
    c1d_exec ex = {.used_tf32 = -1, .states = g.st};
    c1d_timing timing = {0};
    if (c1d_execute_cpu(naive, t, g.x, g.w, t->bias ? g.b : NULL, d->stand_in, NULL, 1, 0, &ex, &timing) != C1D_OK) {
      c1d_error_clear();
      memset(d->stand_in, 0, (size_t)c1d_y_count(t) * sizeof *d->stand_in);
    }
    generated_free(&g);
  }
  return C1D_OK;
}

/* Runs cfg once on shape s: the rows marked in `on` (NULL: all, with the comparison) plus `extra` (the
 * naive order's implementation, or NULL), verdicts on or off, on point_data's inputs and candidates. */
static c1d_status measure(const c1d_run_config *cfg, const c1d_shape *s, const unsigned char *on,
                          const c1d_impl *extra, int verdicts, point *pt) {
  const int rows = cfg->n_impls + cfg->n_candidates;
  c1d_run_config small = *cfg;
  c1d_run_results res;
  point_data data;
  const c1d_impl **impls = calloc((size_t)cfg->n_impls + 1, sizeof *impls);
  int *slot = calloc((size_t)rows + 1, sizeof *slot); /* result index -> row slot */
  c1d_candidate *cands = calloc((size_t)cfg->n_candidates + 1, sizeof *cands);
  c1d_status st = point_data_make(cfg, s, &data);
  int n = 0, n_cands = 0, extra_slot = -1;
  memset(&res, 0, sizeof res);
  if (st != C1D_OK) goto done;
  if (!impls || !slot || !cands) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "out of memory for the run estimate");
    goto done;
  }
  for (int i = 0; i < cfg->n_impls; i++) {
    if (on && !on[i]) continue;
    if (cfg->impls[i] == extra) extra_slot = n;
    slot[n] = i;
    impls[n++] = cfg->impls[i];
  }
  if (extra && extra_slot < 0) {
    extra_slot = n;
    slot[n] = rows;
    impls[n++] = extra;
  }
  for (int i = 0; i < cfg->n_candidates; i++) {
    if (on && !on[cfg->n_impls + i]) continue;
    slot[n + n_cands] = cfg->n_impls + i;
    cands[n_cands++] = (c1d_candidate){cfg->candidates[i].name, data.y ? data.y[i] : data.stand_in};
  }
  small.shape = *s;
  small.impls = impls;
  small.n_impls = n;
  small.candidates = n_cands > 0 ? cands : NULL;
  small.n_candidates = n_cands;
  small.trials = 1;
  small.repeats = verdicts ? 1 : 3; /* the runs points: the median of 3 */
  small.x = data.x, small.w = data.w, small.b = data.b, small.st = data.st;
  small.save_outputs_dir = NULL;
  small.progress = 0;
  small.cpu_batch_rows = 0; /* N is small here: every row covers it all */
  small.estimate = NULL;
  small.no_verdicts = !verdicts || cfg->no_verdicts;
  small.gpu_rows_in_turn = 1; /* each row's parts alone; the model overlaps them as the run will */
  small.oracle = c1d_run_resolve_oracle(cfg); /* the one the real run will use */
  if (cfg->x && !data.x) small.dist = C1D_DIST_CONV_INIT, small.seed = 0;
  if (on || !verdicts) small.compare_a = small.compare_b = NULL; /* its sides may not run here */
  pt->s = *s;
  const double t0 = now_ms();
  st = c1d_run(&small, &res);
  const double wall_ms = now_ms() - t0;
  if (st != C1D_OK) goto done;
  pt->oracle_ms = res.oracle_ms;
  pt->models_ms = res.models_ms;
  pt->other_ms = wall_ms - res.oracle_ms - res.models_ms;
  for (int j = 0; j < res.n_impls; j++) {
    if (res.impls[j].state != C1D_RESULT_RAN) continue;
    const c1d_trial_result *t = &res.impls[j].trials[0];
    const int k = slot[j], is_impl = j < n;
    const double run_ms = is_impl ? t->time_median_ms : 0.0;
    const double runs = is_impl ? runs_per_trial(&small, impls[j]) * run_ms : 0.0;
    pt->other_ms -= t->step_ms;
    pt->run_ms[k] = run_ms;
    pt->analysis_ms[k] = t->analysis_ms - t->full_pass_ms; /* the passes are counted apart */
    pt->overhead_ms[k] = fmax(0.0, t->step_ms - t->analysis_ms - runs);
    memcpy(pt->passes + k * C1D_FULL_PASS_KINDS, t->full_passes, sizeof t->full_passes);
    if (j == extra_slot && k != rows) { /* the naive order is also one of the rows */
      pt->run_ms[rows] = run_ms;
      pt->analysis_ms[rows] = pt->analysis_ms[k];
      pt->overhead_ms[rows] = pt->overhead_ms[k];
      memcpy(pt->passes + rows * C1D_FULL_PASS_KINDS, t->full_passes, sizeof t->full_passes);
    }
  }
  if (pt->other_ms < 0.0) pt->other_ms = 0.0;
done:
  c1d_run_results_free(&res);
  point_data_free(&data, cfg->n_candidates);
  free(impls);
  free(slot);
  free(cands);
  return st;
}

/* measure twice, keeping each part's smaller time: the sample point's costs are multiplied by up to
 * C1D_EXPLAIN_SAMPLE over its outputs, and a delay of other work there would be too. */
static c1d_status measure_best(const c1d_run_config *cfg, const c1d_shape *s, const unsigned char *on,
                               const c1d_impl *extra, int verdicts, point *pt) {
  const int slots = cfg->n_impls + cfg->n_candidates + 1;
  point again = {0};
  c1d_status st = measure(cfg, s, on, extra, verdicts, pt);
  if (st != C1D_OK) return st;
  if (!alloc_point(&again, slots)) {
    free_point(&again);
    return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory for the run estimate");
  }
  if ((st = measure(cfg, s, on, extra, verdicts, &again)) == C1D_OK) {
    pt->oracle_ms = fmin(pt->oracle_ms, again.oracle_ms);
    pt->models_ms = fmin(pt->models_ms, again.models_ms);
    pt->other_ms = fmin(pt->other_ms, again.other_ms);
    for (int i = 0; i < slots; i++) {
      pt->run_ms[i] = fmin(pt->run_ms[i], again.run_ms[i]);
      pt->analysis_ms[i] = fmin(pt->analysis_ms[i], again.analysis_ms[i]);
      pt->overhead_ms[i] = fmin(pt->overhead_ms[i], again.overhead_ms[i]);
    }
  }
  free_point(&again);
  return st;
}

// --- the model -------------------------------------------------------------------------------------

/* The output counts of the points, and how the analysis grows between them. */
typedef struct sizes {
  double out_lo, out_sample;
  double out_wide[2];                  /* the wide points'; NAN without them */
  double scattered;                    /* a model's cost per element of a scattered sample over an
                                          ordered one's (random_order_factor) */
} sizes;

/* A cost that grows by p per output and sigma per output of the explainer's sample: lo at the tiny
 * point, at_sample on the sample point (all its outputs in the sample: slope p + sigma), at_wide on the
 * two wide points (past the sample, the same sample: slope p, plus far_shift: what the far point adds
 * to the naive order's row's slope). Without them the cost per output is p_default (the naive order's
 * row's) where given, else all of it per output. */
typedef struct growth {
  double lo, p, sigma;
} growth;

static growth grow(const sizes *z, double lo, double at_sample, const double at_wide[2], double p_default,
                   double far_shift) {
  growth g = {isfinite(lo) ? lo : 0.0, 0.0, 0.0};
  const double alpha = fmax(0.0, at_sample - g.lo) / (z->out_sample - z->out_lo);
  if (!isfinite(alpha)) return g;
  g.p = alpha;
  if (at_wide && isfinite(at_wide[0]) && isfinite(at_wide[1]) && z->out_wide[1] > z->out_wide[0]) {
    g.p = fmax(0.0, fmax(0.0, at_wide[1] - at_wide[0]) / (z->out_wide[1] - z->out_wide[0]) + far_shift);
  } else if (isfinite(p_default)) {
    g.p = fmin(alpha, p_default);
  }
  g.sigma = fmax(0.0, alpha - g.p);
  return g;
}

/* Past the sample, its elements are scattered over the output: each costs z->scattered times more. */
static double grown(const sizes *z, const growth *g, double out) {
  const double in_sample = out <= SAMPLE ? out - z->out_lo : z->scattered * (SAMPLE - z->out_lo);
  return g->lo + g->p * (out - z->out_lo) + g->sigma * in_sample;
}

/* Float tensors of s filled with a value (touched: the caches and pages of real data), NULL when out of
 * memory. */
static float *filled(int64_t count, float value) {
  float *v = malloc((size_t)(count > 0 ? count : 1) * sizeof *v);
  for (int64_t i = 0; v && i < count; i++) v[i] = value;
  return v;
}

/* ms for TF32's model at `count` elements of s: in order from the first, or as the explainer's sample
 * past C1D_EXPLAIN_SAMPLE outputs is visited (its pseudo-random elements in (n, t, o) order,
 * c1d_explain_visit_order), timed after as many others (the real sample's elements read each line of x
 * again and again: the first ones' misses are not the rule); NAN when out of memory. */
static double model_ms(const c1d_shape *s, int64_t count, int scattered) {
  float *x = filled(c1d_x_count(s), 0.5f), *w = filled(c1d_w_count(s), 0.25f), *b = filled(s->O, 0.125f);
  float *st = s->states ? filled(c1d_s_count(s), 0.5f) : NULL;
  const int64_t total = c1d_y_count(s), S = total < SAMPLE ? total : SAMPLE;
  double *v = malloc((size_t)count * sizeof *v), ms = NAN;
  int64_t *idx = NULL, *visit = NULL; /* the explainer's sample and its visit order (scattered) */
  int ok = x && w && b && v && (!s->states || st);
  if (ok && scattered) {
    idx = malloc((size_t)S * sizeof *idx), visit = malloc((size_t)S * sizeof *visit);
    ok = idx && visit;
    if (ok) c1d_explain_sample_indices(s, S, idx);
    ok = ok && c1d_explain_visit_order(s, idx, S, visit) == 0;
  }
  if (ok) {
    c1d_model_inputs mi;
    c1d_model_inputs_view(x, w, st, c1d_model_spec_of(C1D_MODEL_TF32_RNA), &mi);
    double t0 = now_ms();
    for (int pass = scattered ? 0 : 1; pass < 2; pass++) {
      t0 = now_ms();
#pragma omp parallel for schedule(dynamic, 16)
      for (int64_t j = 0; j < count; j++) {
        const int64_t i = scattered ? idx[visit[(j + pass * count) % S]] : j % total;
        c1d_model_eval_at(s, &mi, s->bias ? b : NULL, i / (s->L * s->O), i / s->L % s->O, i % s->L, &v[j], NULL,
                          NULL);
      }
    }
    ms = now_ms() - t0;
    c1d_model_inputs_free(&mi);
  }
  free(x), free(w), free(b), free(st), free(v), free(idx), free(visit);
  return ms;
}

/* How much more a model costs per element of the explainer's sample at the real size than on the
 * sample point. There the sample is every output in order, each element reading the cache lines of x
 * and w its neighbour read; past C1D_EXPLAIN_SAMPLE outputs it is scattered, fewer neighbours share
 * lines (in the sample's random order every element missed the caches: the README's third command,
 * 5.6 ns a product there, 2.7 on the sample point, which made its estimate 25 % short; the visit order
 * of c1d_explain_visit_order took most of that away). TF32's model, which every preparation makes,
 * timed on about 2 million products each way, on the real tensors (x cut to 64 MB). */
static double random_order_factor(const c1d_shape *s, const c1d_shape *sample) {
  c1d_shape real = *s;
  real.N = clamp64((INT64_C(1) << 24) / (s->C * s->L), 1, s->N);
  const int64_t count = clamp64((INT64_C(1) << 21) / c1d_terms(s), 64, SAMPLE);
  const int64_t ordered = count < c1d_y_count(sample) ? count : c1d_y_count(sample); /* each element once */
  const double in_order = model_ms(sample, ordered, 0) / (double)ordered;
  const double scattered = model_ms(&real, count, 1) / (double)count;
  return in_order > 0.0 && scattered > in_order ? scattered / in_order : 1.0;
}

/* ms for one pass over every element of kind k on shape t (generated inputs), NAN when out of memory. */
static double full_pass_ms(const c1d_shape *t, c1d_full_pass k) {
  const int64_t M = c1d_y_count(t);
  float *d = malloc((size_t)(2 * M) * sizeof *d);
  double *ref = calloc((size_t)M, sizeof *ref), ms = NAN;
  c1d_model_inputs mi;
  generated g;
  if (d && ref && generated_make(t, C1D_DIST_CONV_INIT, 0, &g)) {
    const float *b = t->bias ? g.b : NULL;
    memset(d, 0, (size_t)(2 * M) * sizeof *d); /* its pages, as a real pass finds the heap's */
    const double t0 = now_ms();
    c1d_status rc = C1D_ERR_NO_MEMORY;
    if (k == C1D_FULL_PASS_SQ) {
      rc = c1d_sq_products_full(t, g.x, g.w, g.st, d);
    } else if (c1d_model_inputs_make(t, g.x, g.w, g.st, c1d_model_spec_of(C1D_MODEL_TF32_RNA), &mi) == C1D_OK) {
      rc = k == C1D_FULL_PASS_MODEL ? c1d_model_delta_full(t, &mi, b, ref, d) : c1d_tc_bias_full(t, &mi, b, d, d + M);
      c1d_model_inputs_free(&mi);
    }
    if (rc == C1D_OK) ms = now_ms() - t0;
    else c1d_error_clear();
    generated_free(&g);
  }
  free(d), free(ref);
  return ms;
}

/* ms per output of a pass over every element of kind k (explain.h) at the real C, K, D and groups: the
 * explainer makes them on first use, each at the real size, where they cost as much as the rest of a
 * row's analysis or more (on an H100's host, 67 M outputs: TF32's truncation biases 1.3 s, its model
 * 0.45 s, counted at 0.5 s for the whole row before), while on the calibration's points they take a
 * millisecond. TF32's model timed on 64 output channels at two sizes, one oracle tile's and about
 * 2^28 products (65536 outputs per thread at least): the difference, without the fixed costs that one
 * timing at a million outputs on 16 threads had multiplied by ten. NAN when out of memory. */
static double full_pass_ms_per_output(const c1d_shape *s, c1d_full_pass k) {
  const double threads = omp_get_max_threads();
  const double big = fmin((double)c1d_y_count(s), fmax(268435456.0 / (double)c1d_terms(s), 65536.0 * threads));
  const c1d_shape t_small = shape_for(s, 8192.0, 64), t_big = shape_for(s, big, 64);
  const double m_small = (double)c1d_y_count(&t_small), m_big = (double)c1d_y_count(&t_big);
  if (!(m_big > 2.0 * m_small)) return full_pass_ms(&t_big, k) / m_big; /* a small output: as it is */
  const double ms_small = full_pass_ms(&t_small, k), ms_big = full_pass_ms(&t_big, k);
  return fmax(0.0, ms_big - ms_small) / (m_big - m_small);
}

/* Solves a*u + b*v = e, c*u + d*v = f for u, v >= 0; where the two points cannot tell them apart, all
 * of it on u + v with equal weight through the first equation. */
static void solve2(double a, double b, double e, double c, double d, double f, double *u, double *v) {
  const double det = a * d - b * c;
  *u = *v = NAN;
  if (fabs(det) > 1e-12 * fabs(a * d) && isfinite(f)) {
    *u = (e * d - b * f) / det;
    *v = (a * f - e * c) / det;
  }
  if (!(*u >= 0.0) || !(*v >= 0.0)) *u = *v = a + b > 0.0 ? fmax(0.0, e) / (a + b) : 0.0;
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

/* A run's time on the runs points: a fixed part, a part per input element (rows that round or split x
 * once per run: tf32_inputs, split_3xtf32) and a part per flop. The two runs points differ in O alone
 * (the same inputs, 4 times the flops), the tiny point holds the fixed part; the real L is kept, since
 * the row kernels' cost per call is per row of L (at L = 256 naive ran at 15 GFLOP/s, at 4096 at 42). */
typedef struct run_cost {
  double fixed, per_input, per_flop; /* ms */
} run_cost;

static run_cost run_cost_of(const point *lo, const point *r1, const point *r2, double lo_ms, double r1_ms,
                            double r2_ms) {
  run_cost c = {0.0, 0.0, NAN};
  const double f1 = c1d_flops(&r1->s), f2 = c1d_flops(&r2->s), f_lo = c1d_flops(&lo->s);
  const double x1 = (double)c1d_x_count(&r1->s), x_lo = (double)c1d_x_count(&lo->s);
  if (!isfinite(r2_ms)) return c;
  c.per_flop = isfinite(r1_ms) && r2_ms > r1_ms && f2 > f1 ? (r2_ms - r1_ms) / (f2 - f1) : r2_ms / f2;
  const double at_r1 = isfinite(r1_ms) ? fmax(0.0, r1_ms - c.per_flop * f1) : 0.0; /* fixed + per input */
  const double at_lo = isfinite(lo_ms) ? fmax(0.0, lo_ms - c.per_flop * f_lo) : 0.0;
  c.per_input = x1 > x_lo && at_r1 > at_lo ? (at_r1 - at_lo) / (x1 - x_lo) : 0.0;
  c.fixed = fmin(at_lo, at_r1);
  return c;
}

static double run_cost_at(const run_cost *c, double inputs, double flops) {
  return c->fixed + c->per_input * inputs + c->per_flop * flops;
}

/* ms of the CPU oracle on shape t (generated inputs, as the runner's), NAN when it cannot run. Its
 * speed grows with the output channels up to a tile of 264 and with L: on the runs points (8 channels)
 * it ran at 36 GFLOP/s where the README's third command runs it at 82; at 64 channels, 50-60. */
static double oracle_ms(const c1d_shape *t) {
  double *y = malloc((size_t)c1d_y_count(t) * sizeof *y), *mag = malloc((size_t)c1d_y_count(t) * sizeof *mag);
  double *pre = t->act != C1D_ACT_NONE ? malloc((size_t)c1d_y_count(t) * sizeof *pre) : NULL, ms = NAN;
  generated g;
  if (y && mag && (t->act == C1D_ACT_NONE || pre) && generated_make(t, C1D_DIST_CONV_INIT, 0, &g)) {
    memset(y, 0, (size_t)c1d_y_count(t) * sizeof *y); /* its pages, as the runner's buffers have them */
    memset(mag, 0, (size_t)c1d_y_count(t) * sizeof *mag);
    const double t0 = now_ms();
    if (c1d_oracle_f64_ex(t, g.x, g.w, t->bias ? g.b : NULL, g.st, y, mag, pre, NULL, NULL) == C1D_OK)
      ms = now_ms() - t0;
    else
      c1d_error_clear();
    generated_free(&g);
  }
  free(y), free(mag), free(pre);
  return ms;
}

/* The CPU naive order's ms on shape t beyond the tiny shape's (0 when it did not run). */
static double naive_more(const run_cost *c, const c1d_shape *tiny, const c1d_shape *t) {
  if (!isfinite(c->per_flop)) return 0.0;
  return c->per_input * (double)(c1d_x_count(t) - c1d_x_count(tiny)) + c->per_flop * (c1d_flops(t) - c1d_flops(tiny));
}

/* Elements the inputs' generation (and upload) touch. */
static double input_count(const c1d_shape *s) {
  return (double)(c1d_x_count(s) + c1d_w_count(s) + c1d_s_count(s));
}

/* The calibration's shapes (header comment). */
typedef struct shapes {
  c1d_shape tiny, r1, r2, sample, wide[2], far, oracle;
  int with_far;
} shapes;

static shapes shapes_for(const c1d_shape *s) {
  shapes h;
  const double products = (double)c1d_terms(s), threads = omp_get_max_threads();
  const int64_t g = c1d_groups(s), l_min = s->L < 16 + 4 * c1d_pad(s) ? s->L : 16 + 4 * c1d_pad(s);
  h.tiny = shape_for(s, TINY_OUTPUTS, 1);
  /* The runs points: the real L up to 4096 (or up to 4 output channels per thread on the second
   * within RUNS_FLOPS), the second with RUNS_FLOPS' channels, the first with a quarter of them. */
  int64_t l_runs = (int64_t)(RUNS_FLOPS / (2.0 * products * 4.0 * threads));
  l_runs = l_runs >= s->L || s->L <= 4096 ? s->L : clamp64(l_runs > 4096 ? l_runs / 16 * 16 : 4096, l_min, s->L);
  const double runs_flops = fmin(RUNS_FLOPS, c1d_flops(s) / 8.0); /* a small run needs no more */
  const int64_t o_runs = clamp64((int64_t)(runs_flops / (2.0 * products * (double)l_runs)),
                                 s->O < 4 * (int64_t)threads ? s->O : 4 * (int64_t)threads, s->O);
  h.r2 = shape_for(s, (double)(o_runs * l_runs), o_runs);
  h.r1 = shape_for(s, (double)(h.r2.O / 4 * l_runs), h.r2.O / 4 > g ? h.r2.O / 4 : g);
  h.r1.L = h.r2.L;
  h.r1.N = h.r2.N; /* O alone differs */
  /* The sample point: SAMPLE_PRODUCTS, and at least one of the explainer's chunks of 256 elements per
   * thread (one chunk for two threads ran on one alone: twice the real cost per element) */
  const double sample_outputs = fmin(SAMPLE, ceil(fmax(256.0 * threads, SAMPLE_PRODUCTS / products) / 256.0) * 256.0);
  /* on the real L where it fits: x's rows as long as the real ones (the in-order passes over x then
   * miss the caches as the real ones do: 25 % more time per element at C*K = 16384) */
  h.sample = shape_for(s, sample_outputs, (int64_t)ceil(sample_outputs / (double)s->L));
  /* Their difference gives the analysis' cost per output: with many threads each one's share of a few
   * hundred thousand outputs is a few milliseconds, within a busy host's jitter (the H200's 16 threads
   * put make run's job at 8 to 43 s for 25-27 s), so the points grow with the threads past four. */
  const int64_t wide_scale = threads > 4.0 ? (int64_t)(threads / 4.0) : 1;
  h.wide[0] = wide_shape(s, 2 * SAMPLE * wide_scale);
  h.wide[1] = wide_shape(s, 4 * SAMPLE * wide_scale);
  /* Past four threads even those differ by 4 ms (the naive order's row on an H100's 16: 7.5 ns an
   * output counted, 10 ns taken at 67 M), so the naive order's row alone goes as far again: threads/4
   * times the second, where the real output holds twice that. */
  h.far = wide_shape(s, 4 * SAMPLE * wide_scale * wide_scale);
  h.with_far = threads > 4.0 && (double)c1d_y_count(s) >= 2.0 * (double)c1d_y_count(&h.far);
  h.oracle = shape_for(s, ORACLE_FLOPS / (2.0 * products), 64);
  return h;
}

c1d_status c1d_run_estimate_make(const c1d_run_config *cfg, c1d_run_estimate *e) {
  const int rows = cfg->n_impls + cfg->n_candidates, X = rows; /* X: the naive order's slot */
  const c1d_shape *s = &cfg->shape;
  point lo, r1, r2, smp, wide[2], far;
  memset(&lo, 0, sizeof lo), memset(&r1, 0, sizeof r1), memset(&r2, 0, sizeof r2), memset(&smp, 0, sizeof smp);
  memset(wide, 0, sizeof wide), memset(&far, 0, sizeof far);
  unsigned char *at_wide = calloc((size_t)rows + 1, 1), *calls_models = calloc((size_t)rows + 1, 1);
  unsigned char *none = calloc((size_t)rows + 1, 1); /* the far point: the naive order's row alone */
  double *alpha = calloc((size_t)rows + 1, sizeof *alpha);
  c1d_status st = C1D_OK;
  memset(e, 0, sizeof *e);
  e->n_rows = rows;
  e->trials = cfg->trials;
  e->row_s = calloc((size_t)rows + 1, sizeof *e->row_s);
  if (!e->row_s || !at_wide || !calls_models || !alpha || !alloc_point(&lo, rows + 1) || !alloc_point(&r1, rows + 1) ||
      !alloc_point(&r2, rows + 1) || !alloc_point(&smp, rows + 1) || !alloc_point(&wide[0], rows + 1) ||
      !alloc_point(&wide[1], rows + 1) || !alloc_point(&far, rows + 1) || !none) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "out of memory for the run estimate");
    goto done;
  }
  const c1d_impl *naive = naive_order_impl(s);
  const double out = (double)c1d_y_count(s), f = c1d_flops(s);
  const shapes h = shapes_for(s);
  /* the sample point twice where its costs are multiplied by more than 16 */
  const int sample_twice = fmin(out, SAMPLE) > 16.0 * (double)c1d_y_count(&h.sample);
  if ((st = measure(cfg, &h.tiny, NULL, naive, 1, &lo)) != C1D_OK || /* the one-time costs */
      (st = measure(cfg, &h.tiny, NULL, naive, 1, &lo)) != C1D_OK ||
      (st = measure(cfg, &h.r1, NULL, naive, 0, &r1)) != C1D_OK ||
      (st = measure(cfg, &h.r2, NULL, naive, 0, &r2)) != C1D_OK ||
      (st = sample_twice ? measure_best(cfg, &h.sample, NULL, naive, 1, &smp)
                         : measure(cfg, &h.sample, NULL, naive, 1, &smp)) != C1D_OK)
    goto done;
  /* The explainer's naive order runs on the CPU unless gpu_naive gives it (a GPU session, runner.c). */
  int gpu_session = c1d_run_resolve_oracle(cfg) == C1D_ORACLE_GPU;
  for (int i = 0; i < cfg->n_impls; i++)
    gpu_session |= cfg->impls[i]->backend == C1D_BACKEND_GPU && runs_on(cfg->impls[i], s);
  const c1d_impl *gn = c1d_find_impl("gpu_naive");
  const int naive_on_gpu = gpu_session && gn && runs_on(gn, s);
  const run_cost naive_cost = run_cost_of(&lo, &r1, &r2, lo.run_ms[X], r1.run_ms[X], r2.run_ms[X]);
#define NAIVE_MORE(t) naive_more(&naive_cost, &h.tiny, (t))

  sizes z = {(double)c1d_y_count(&h.tiny), (double)c1d_y_count(&h.sample), {NAN, NAN}, 1.0};
  if (out > SAMPLE && !cfg->no_verdicts) z.scattered = random_order_factor(s, &h.sample);
  if (!(z.out_sample > z.out_lo)) z.out_sample = z.out_lo + 1.0; /* a real output of 16: nothing grows */
  /* A row calls models on the sample when its analysis on the sample point costs more than the naive
   * order's row's by half a model or more (the preparation's growth there is about one model, TF32's);
   * the others cost what the naive order's row does per output, measured on the wide point (on the
   * sample point their cost is mostly noise, which the real size would multiply by hundreds). The
   * wide point holds that row, and the calling rows when the real output exceeds the sample. */
  for (int i = 0; i <= rows; i++) alpha[i] = (smp.analysis_ms[i] - lo.analysis_ms[i]) / (z.out_sample - z.out_lo);
  const double typical = isfinite(alpha[X]) ? alpha[X] : finite_median(alpha, rows);
  const double one_model_ms = smp.models_ms - lo.models_ms - (naive_on_gpu ? 0.0 : NAIVE_MORE(&h.sample));
  for (int i = 0; i < rows; i++)
    calls_models[i] = isfinite(alpha[i]) && (alpha[i] - (isfinite(typical) ? typical : 0.0)) *
                                                    (z.out_sample - z.out_lo) > fmax(0.5 * one_model_ms, 1.0);
  const int past_sample = out > SAMPLE;
  for (int i = 0; i < rows; i++) at_wide[i] = calls_models[i] && past_sample;
  /* without them where the sample point holds an eighth of the outputs or more: little to multiply */
  const int with_wide = !cfg->no_verdicts && (past_sample || (naive && out > 8.0 * z.out_sample));
  const int wide_twice = omp_get_max_threads() > 4; /* a jitter of milliseconds: the better of two */
  for (int k = 0; k < 2 && with_wide; k++) {
    if ((st = wide_twice ? measure_best(cfg, &h.wide[k], at_wide, naive, 1, &wide[k])
                         : measure(cfg, &h.wide[k], at_wide, naive, 1, &wide[k])) != C1D_OK)
      goto done;
    z.out_wide[k] = (double)c1d_y_count(&h.wide[k]);
  }
  const int with_far = with_wide && h.with_far && naive;
  if (with_far && (st = measure(cfg, &h.far, none, naive, 1, &far)) != C1D_OK) goto done;

  /* The rounding models (the explainer's preparation): its naive order as a run, the rest by output
   * and by output of the sample; the CPU rows' own explainer again on their batch rows. */
  double models_wide[2];
  for (int k = 0; k < 2; k++) models_wide[k] = wide[k].models_ms - (naive_on_gpu ? 0.0 : NAIVE_MORE(&h.wide[k]));
  const growth models = grow(&z, lo.models_ms, smp.models_ms - (naive_on_gpu ? 0.0 : NAIVE_MORE(&h.sample)),
                             models_wide, NAN, 0.0);
  double models_ms = grown(&z, &models, out) + (naive_on_gpu ? 0.0 : NAIVE_MORE(s));
  const c1d_run_config cpu_rows = row_config(cfg, &(c1d_impl){.backend = C1D_BACKEND_CPU});
  if (cpu_rows.shape.N < s->N && !cfg->no_verdicts)
    models_ms += grown(&z, &models, (double)c1d_y_count(&cpu_rows.shape)) + NAIVE_MORE(&cpu_rows.shape);
#undef NAIVE_MORE
  e->models_s = cfg->no_verdicts ? 0.0 : 1e-3 * models_ms;
  /* The oracle: on the GPU as a run; on the CPU from its own point, past the tiny point's. */
  const run_cost oracle = run_cost_of(&lo, &r1, &r2, lo.oracle_ms, r1.oracle_ms, r2.oracle_ms);
  e->oracle_s = 1e-3 * run_cost_at(&oracle, (double)c1d_x_count(s), f);
  const double cpu_oracle_ms = c1d_run_resolve_oracle(cfg) == C1D_ORACLE_CPU ? oracle_ms(&h.oracle) : NAN;
  const double f_oracle = c1d_flops(&h.oracle), lo_oracle = isfinite(lo.oracle_ms) ? lo.oracle_ms : 0.0;
  if (isfinite(cpu_oracle_ms) && f_oracle > c1d_flops(&h.tiny))
    e->oracle_s = 1e-3 * (lo_oracle + fmax(0.0, cpu_oracle_ms - lo_oracle) / (f_oracle - c1d_flops(&h.tiny)) *
                                          (f - c1d_flops(&h.tiny)));
  /* The rest: a fixed part, plus the inputs (per element generated) and the buffers (per output),
   * told apart by the second runs point (many inputs per output) and the wide or sample point. */
  const point *outer = with_wide ? &wide[1] : &smp;
  double per_input, per_output;
  solve2(input_count(&h.r2) - input_count(&h.tiny), (double)c1d_y_count(&h.r2) - z.out_lo, r2.other_ms - lo.other_ms,
         input_count(&outer->s) - input_count(&h.tiny), (double)c1d_y_count(&outer->s) - z.out_lo,
         outer->other_ms - lo.other_ms, &per_input, &per_output);
  e->other_s =
      1e-3 * (lo.other_ms + per_input * (input_count(s) - input_count(&h.tiny)) + per_output * (out - z.out_lo));

  /* Per row: its runs as above; its analysis by the naive order's row's cost per output, or, for a
   * row that calls models on the sample, as above, and the passes over every element it made on the
   * sample point at their own cost per output; its step's rest (set-up) as on the second runs point.
   * A row that could not run on a point borrows the slowest run and the typical analysis. */
  double pass_ms[C1D_FULL_PASS_KINDS];
  for (int k = 0; k < C1D_FULL_PASS_KINDS; k++) {
    int made = 0;
    for (int i = 0; i < rows; i++) made += smp.passes[i * C1D_FULL_PASS_KINDS + k];
    pass_ms[k] = made > 0 && !cfg->no_verdicts ? full_pass_ms_per_output(s, (c1d_full_pass)k) : 0.0;
  }
  double p_typical = typical, far_shift = 0.0;
  if (with_wide && isfinite(wide[0].analysis_ms[X]) && isfinite(wide[1].analysis_ms[X]))
    p_typical = fmax(0.0, wide[1].analysis_ms[X] - wide[0].analysis_ms[X]) / (z.out_wide[1] - z.out_wide[0]);
  const double out_far = (double)c1d_y_count(&h.far);
  if (with_far && isfinite(far.analysis_ms[X]) && isfinite(wide[1].analysis_ms[X])) {
    const double p_far = fmax(0.0, far.analysis_ms[X] - wide[1].analysis_ms[X]) / (out_far - z.out_wide[1]);
    far_shift = isfinite(p_typical) ? p_far - p_typical : 0.0;
    p_typical = p_far;
  }
  if (!isfinite(p_typical)) p_typical = 0.0;
  double slowest_per_flop = 0.0;
  for (int i = 0; i < cfg->n_impls; i++)
    if (isfinite(r2.run_ms[i])) slowest_per_flop = fmax(slowest_per_flop, r2.run_ms[i] / c1d_flops(&h.r2));
  double per_trial = e->oracle_s + e->models_s + e->other_s, work = f;
  /* With two GPU rows or more, a GPU row's runs go beside the last row's analysis (runner.c): the
   * shorter of the two is hidden. */
  int gpu_rows = 0;
  for (int i = 0; i < cfg->n_impls; i++)
    gpu_rows += cfg->impls[i]->backend == C1D_BACKEND_GPU && runs_on(cfg->impls[i], s);
  const int overlap = gpu_rows > 1 && !cfg->gpu_rows_in_turn;
  double last_analysis_ms = 0.0; /* of the last row that ran */
  for (int i = 0; i < rows; i++) {
    const int is_impl = i < cfg->n_impls;
    const c1d_run_config r = row_config(cfg, is_impl ? cfg->impls[i] : NULL);
    if (is_impl && !runs_on(cfg->impls[i], &r.shape)) continue;
    int n_runs = is_impl ? runs_per_trial(&r, cfg->impls[i]) : 0;
    const double f_r = c1d_flops(&r.shape), out_r = (double)c1d_y_count(&r.shape);
    const run_cost rc = run_cost_of(&lo, &r1, &r2, lo.run_ms[i], r1.run_ms[i], r2.run_ms[i]);
    const double run_ms =
        isfinite(rc.per_flop) ? run_cost_at(&rc, (double)c1d_x_count(&r.shape), f_r) : slowest_per_flop * f_r;
    /* A GPU row times as many runs as fit in C1D_GPU_DEFAULT_BUDGET_MS, C1D_MIN_TIMED_RUNS at least
     * (execute_gpu.c): counted at 20, make run's slow kernels made the H200's estimate 40 % long. */
    if (is_impl && cfg->impls[i]->backend == C1D_BACKEND_GPU && cfg->repeats == 0 &&
        run_ms * (n_runs - 1) > C1D_GPU_DEFAULT_BUDGET_MS)
      n_runs = 1 + (int)fmax(C1D_MIN_TIMED_RUNS, floor(C1D_GPU_DEFAULT_BUDGET_MS / run_ms));
    const double an_lo = isfinite(lo.analysis_ms[i]) ? lo.analysis_ms[i] : 0.0;
    double analysis_ms = an_lo + p_typical * (out_r - z.out_lo);
    if (calls_models[i]) {
      const double an_wide[2] = {wide[0].analysis_ms[i], wide[1].analysis_ms[i]};
      const growth g = grow(&z, an_lo, smp.analysis_ms[i], at_wide[i] ? an_wide : NULL, p_typical, far_shift);
      analysis_ms = grown(&z, &g, out_r);
    }
    for (int k = 0; k < C1D_FULL_PASS_KINDS; k++) /* the passes over every element it made on the sample point */
      if (isfinite(pass_ms[k])) analysis_ms += smp.passes[i * C1D_FULL_PASS_KINDS + k] * pass_ms[k] * out_r;
    if (cfg->no_verdicts) analysis_ms = an_lo; /* metrics alone: cheap */
    const double overhead_ms = isfinite(r2.overhead_ms[i]) ? r2.overhead_ms[i]
                               : isfinite(lo.overhead_ms[i]) ? lo.overhead_ms[i]
                                                             : 0.0;
    double device_ms = n_runs * run_ms + overhead_ms;
    if (overlap && is_impl && cfg->impls[i]->backend == C1D_BACKEND_GPU)
      device_ms -= fmin(device_ms, last_analysis_ms);
    last_analysis_ms = is_impl ? fmax(0.0, analysis_ms) : 0.0;
    e->row_s[i] = 1e-3 * (device_ms + fmax(0.0, analysis_ms));
    e->runs += (int64_t)n_runs * cfg->trials;
    per_trial += e->row_s[i];
    work += n_runs * f_r;
  }
  e->seconds = per_trial * cfg->trials;
  e->gflop = work * cfg->trials * 1e-9;
  if (getenv("C1D_ESTIMATE_TRACE")) { /* the parts, for whoever checks the model (scripts/estimate_check.sh) */
    fprintf(stderr, "estimate: per trial oracle %.3f s, models %.3f s, other %.3f s", e->oracle_s, e->models_s,
            e->other_s);
    for (int i = 0; i < rows; i++)
      fprintf(stderr, ", %s %.3f s%s", i < cfg->n_impls ? cfg->impls[i]->name : "candidate", e->row_s[i],
              calls_models[i] ? " (models)" : "");
    fprintf(stderr, "; analysis per output %.3g ms; passes per output: model %.3g, truncation bias %.3g, ",
            p_typical, pass_ms[C1D_FULL_PASS_MODEL], pass_ms[C1D_FULL_PASS_TC_BIAS]);
    fprintf(stderr, "squares %.3g ms", pass_ms[C1D_FULL_PASS_SQ]);
    fprintf(stderr, "; points: sample %lld outputs, runs O=%lld,%lld L=%lld, wide %s, far %lld, scattered x%.2f\n",
            (long long)c1d_y_count(&h.sample), (long long)h.r1.O, (long long)h.r2.O, (long long)h.r2.L,
            with_wide ? "yes" : "no", with_far ? (long long)out_far : 0LL, z.scattered);
  }
done:
  free_point(&lo);
  free_point(&r1);
  free_point(&r2);
  free_point(&smp);
  free_point(&wide[0]);
  free_point(&wide[1]);
  free_point(&far);
  free(none);
  free(at_wide);
  free(calls_models);
  free(alpha);
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
  c1d_format_duration(e->before_s + e->seconds, when, sizeof when);
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
