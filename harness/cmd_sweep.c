/* convlab sweep: how the error grows with the reduction length n = C*K, per implementation and input
 * distribution. Two series of shapes, each run through the runner with the same trials:
 *
 *   C series: K fixed (--taps, default 4), C = 1, 2, 4, ... up to n = C*K = --n-max (default 16384);
 *   K series: C fixed (--k-cin, default 16), K = 1, 2, 4, ... up to --k-max (default 64), L >= 8K so
 *             that at most an eighth of the positions sit in the causal padding (fewer products there).
 *
 * Per-element error statistics depend on n and the data, not on N*L, so every shape is small (N=1,
 * O=16, L=256 by default) and the whole sweep takes seconds on a CPU. The CSV has one row per
 * (series, implementation, distribution, n, trial); the summary on stdout gives, per implementation,
 * distribution and series, the least-squares slope of log(rel L2) against log(n): about 0.5 for float32
 * sums (errors of random sign add up like sqrt(n)), about 0 for TF32 input rounding (one rounding per
 * input, relative to the result whatever n) and for compensated sums.
 *
 * --out DIR writes sweep.csv and sweep.txt (the summary) as one report set: both or neither.
 *
 * A sweep of more than a few seconds is announced first with its estimated time (--estimate: that line
 * and stop): the run estimates (estimate.h) of its smallest and largest shapes, the others on the line
 * between them in outputs times products (each shape's outputs all sit in the explainer's sample,
 * whose models cost products, as do the runs and the oracle). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/report_set.h"
#include "harness/cli.h"
#include "harness/commands.h"
#include "harness/estimate.h"
#include "harness/execute.h"
#include "harness/inputs.h"
#include "harness/progress.h"
#include "harness/registry.h"
#include "harness/runner.h"
#include "harness/suggest.h"
#include "numerics/classifier.h"

#define MAX_IMPLS 32
#define MAX_DISTS C1D_DIST_COUNT
#define COND_SAMPLE 512 /* outputs sampled for ||m|| / ||y|| */
/* The largest shape's outputs times products, times shapes and trials, below which a sweep is not
 * worth a calibration: about a second here (the default sweep: 4e9). */
#define ESTIMATE_MIN_PRODUCTS 1e8

static const char usage[] = "convlab sweep [options]";
static const char description[] =
    "Measures relative L2 error against n = C*K, the number of products summed per output: a C series\n"
    "(K fixed, C = 1, 2, 4, ...) up to --n-max and a K series (C fixed, K = 1, 2, 4, ...), for each\n"
    "implementation, distribution and trial, on small N*L (per-element statistics depend on n, not N*L).\n"
    "Prints the fitted growth exponent of relative L2 in n (log-log least squares) per implementation,\n"
    "distribution and series: about 0.5 for float32 sums, about 0 for TF32 inputs and compensated sums.\n"
    "Default implementations: naive, tap_partial, kahan, tf32_inputs, and with a CUDA device gpu_naive,\n"
    "cudnn_fp32, cudnn_tf32, cublas_im2col_fp32. --out DIR writes sweep.csv and sweep.txt.\n"
    "A sweep of more than a few seconds is announced with its estimated time first (--estimate: say\n"
    "it and stop).\n"
    "Exit status: 0 done, 1 an implementation or the run failed, 2 bad command line.";

static const char *const gpu_defaults[] = {"gpu_naive", "cudnn_fp32", "cudnn_tf32", "cublas_im2col_fp32"};

typedef struct sweep_args {
  const char *impl, *dist, *out;
  int64_t trials, N, O, L, taps, k_cin, k_max, n_max;
  uint64_t seed;
  int estimate;
} sweep_args;

/* One CSV row: one implementation on one trial of one shape. */
typedef struct sweep_row {
  char series;                   /* 'C' or 'K' */
  char name[96], backend[8], precision[24];
  c1d_dist dist;
  c1d_shape shape;
  int trial;
  uint64_t seed;
  const char *status;            /* "ok", "failed", "skipped" */
  c1d_metrics m;
  double cond;                   /* ||m||_2 / ||y||_2 on a sample: the sums' condition */
  int explained;
  c1d_verdict verdict;
  double model[C1D_MODEL_COUNT]; /* the rounding models' relative L2 on this trial's inputs */
} sweep_row;

typedef struct sweep_plan {
  sweep_args a;
  const c1d_impl *impls[MAX_IMPLS];
  int n_impls;
  c1d_dist dists[MAX_DISTS];
  int n_dists;
  sweep_row *rows;
  int n_rows, cap_rows, any_failed;
  /* The estimate: a trial of a shape costs fixed_s plus per_product_s per output and product. */
  int estimated;
  double fixed_s, per_product_s, seconds;
} sweep_plan;

// --- options -------------------------------------------------------------------------------------

#define N_OPTS 13
static void option_table(sweep_args *a, c1d_option *o) {
  const c1d_option t[N_OPTS] = {
      {"--impl", C1D_OPT_STRING, &a->impl, 0, 0, "A,B,..", "implementations (default: see above)", 0},
      {"--dist", C1D_OPT_STRING, &a->dist, 0, 0, "D,E,..",
       "distributions: conv_init (default), normal, uniform, ill_conditioned", 0},
      {"--trials", C1D_OPT_INT, &a->trials, 1, 1000, "T", "trials per shape, seeds S..S+T-1 (default 3)", 0},
      {"--seed", C1D_OPT_U64, &a->seed, 0, 0, "S", "first seed (default 0)", 0},
      {"--n-max", C1D_OPT_INT, &a->n_max, 1, INT64_C(1) << 24, "N", "largest n = C*K of the C series (default 16384)", 0},
      {"--taps", C1D_OPT_INT, &a->taps, 1, 4096, "K", "K of the C series (default 4)", 0},
      {"--k-cin", C1D_OPT_INT, &a->k_cin, 0, 1 << 20, "C", "C of the K series; 0: no K series (default 16)", 0},
      {"--k-max", C1D_OPT_INT, &a->k_max, 1, 4096, "K", "largest K of the K series (default 64)", 0},
      {"--batch", C1D_OPT_INT, &a->N, 1, 1 << 20, "N", "batch N of every shape (default 1)", 0},
      {"--cout", C1D_OPT_INT, &a->O, 1, 1 << 20, "O", "output channels O (default 16)", 0},
      {"--length", C1D_OPT_INT, &a->L, 1, 1 << 24, "L", "length L (default 256; the K series uses >= 8K)", 0},
      {"--out", C1D_OPT_STRING, &a->out, 0, 0, "DIR", "write sweep.csv and sweep.txt", 0},
      {"--estimate", C1D_OPT_FLAG, &a->estimate, 0, 0, NULL, "say how long the sweep takes here; stop", 0},
  };
  memcpy(o, t, sizeof t);
}

static c1d_status add_impl(sweep_plan *p, const char *name) {
  const c1d_impl *impl = c1d_find_impl(name);
  if (!impl) return c1d_fail_unknown_impl("unknown implementation", name);
  for (int i = 0; i < p->n_impls; i++)
    if (p->impls[i] == impl) return C1D_OK;
  if (p->n_impls == MAX_IMPLS) return c1d_fail(C1D_ERR_USAGE, "more than %d implementations", MAX_IMPLS);
  p->impls[p->n_impls++] = impl;
  return C1D_OK;
}

/* Calls add(p, name) for each name of a comma-separated list. */
static c1d_status each_name(sweep_plan *p, const char *list, c1d_status (*add)(sweep_plan *, const char *)) {
  char *copy = strdup(list), *save = NULL;
  c1d_status st = C1D_OK;
  if (!copy) return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
  for (char *tok = strtok_r(copy, ",", &save); tok && st == C1D_OK; tok = strtok_r(NULL, ",", &save))
    st = add(p, tok);
  free(copy);
  return st;
}

static c1d_status add_dist(sweep_plan *p, const char *name) {
  c1d_dist d;
  c1d_status st = c1d_dist_parse(name, &d);
  if (st != C1D_OK) return st;
  if (d == C1D_DIST_INTEGER)
    return c1d_fail(C1D_ERR_USAGE, "--dist integer makes every sum exact: there is no error to sweep");
  for (int i = 0; i < p->n_dists; i++)
    if (p->dists[i] == d) return C1D_OK;
  p->dists[p->n_dists++] = d;
  return C1D_OK;
}

static c1d_status build_plan(sweep_plan *p) {
  c1d_status st;
  if (p->a.impl) {
    if ((st = each_name(p, p->a.impl, add_impl)) != C1D_OK) return st;
  } else {
    static const char *const cpu_defaults[] = {"naive", "tap_partial", "kahan", "tf32_inputs"};
    for (unsigned i = 0; i < sizeof cpu_defaults / sizeof cpu_defaults[0]; i++)
      if ((st = add_impl(p, cpu_defaults[i])) != C1D_OK) return st;
    for (unsigned i = 0; i < sizeof gpu_defaults / sizeof gpu_defaults[0] && !c1d_gpu_why_unavailable(); i++)
      if (c1d_find_impl(gpu_defaults[i])) add_impl(p, gpu_defaults[i]);
  }
  if (p->n_impls == 0) return c1d_fail(C1D_ERR_USAGE, "--impl selects no implementation");
  if ((st = each_name(p, p->a.dist, add_dist)) != C1D_OK) return st;
  if (p->n_dists == 0) return c1d_fail(C1D_ERR_USAGE, "--dist selects no distribution");
  if (p->a.n_max < p->a.taps)
    return c1d_fail(C1D_ERR_USAGE, "--n-max %lld is below --taps %lld: the C series would be empty",
                    (long long)p->a.n_max, (long long)p->a.taps);
  return C1D_OK;
}

// --- the condition of the sums -------------------------------------------------------------------

/* ||m||_2 / ||y||_2 over a sample of outputs, m = |b| + sum|w*x|, on the trial's inputs (regenerated:
 * c1d_generate is a function of shape, distribution and seed). The bounds of BACKGROUND.md are
 * relative to m; this ratio turns them into bounds on the relative L2 the CSV reports. */
static c1d_status condition(const c1d_shape *s, c1d_dist dist, uint64_t seed, double *cond) {
  float *x = malloc((size_t)c1d_x_count(s) * sizeof *x), *w = malloc((size_t)c1d_w_count(s) * sizeof *w);
  c1d_status st = C1D_OK;
  if (!x || !w) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "out of memory for the inputs");
    goto done;
  }
  c1d_generate(s, dist, seed, x, w, NULL); /* the sweep's shapes have no bias */
  const int64_t count = c1d_y_count(s), step = count > COND_SAMPLE ? count / COND_SAMPLE : 1;
  double mm = 0.0, yy = 0.0;
  for (int64_t i = 0; i < count; i += step) {
    const int64_t n = i / (s->O * s->L), o = i / s->L % s->O, t = i % s->L;
    double y = 0.0, m = 0.0;
    for (int64_t c = 0; c < s->C; c++)
      for (int64_t k = 0; k < s->K; k++) {
        const int64_t src = c1d_source_time(s, t, k);
        if (src < 0) continue;
        const double p = (double)w[c1d_w_index(s, o, c, k)] * (double)x[c1d_x_index(s, n, c, src)];
        y += p;
        m += fabs(p);
      }
    mm += m * m;
    yy += y * y;
  }
  *cond = yy > 0.0 ? sqrt(mm / yy) : NAN;
done:
  free(x);
  free(w);
  return st;
}

// --- running one shape ---------------------------------------------------------------------------

static c1d_status push_row(sweep_plan *p, const sweep_row *row) {
  if (p->n_rows == p->cap_rows) {
    const int cap = p->cap_rows ? 2 * p->cap_rows : 256;
    sweep_row *grown = realloc(p->rows, (size_t)cap * sizeof *grown);
    if (!grown) return c1d_fail(C1D_ERR_NO_MEMORY, "out of memory for the sweep's rows");
    p->rows = grown;
    p->cap_rows = cap;
  }
  p->rows[p->n_rows++] = *row;
  return C1D_OK;
}

/* The runner's configuration of one shape: every implementation, the trials, one run each. */
static void point_config(const sweep_plan *p, c1d_dist dist, const c1d_shape *s, c1d_run_config *cfg) {
  c1d_run_config_default(cfg);
  cfg->shape = *s;
  cfg->impls = p->impls;
  cfg->n_impls = p->n_impls;
  cfg->dist = dist;
  cfg->seed = p->a.seed;
  cfg->trials = (int)p->a.trials;
  cfg->repeats = 1; /* errors, not times */
}

/* Runs every implementation on shape s, trials with seeds seed.., and appends the rows. */
static c1d_status run_point(sweep_plan *p, char series, c1d_dist dist, const c1d_shape *s) {
  c1d_run_config cfg;
  c1d_run_results res;
  double cond[1000];
  c1d_status st;
  point_config(p, dist, s, &cfg);
  if ((st = c1d_run(&cfg, &res)) != C1D_OK) goto done;
  for (int t = 0; t < cfg.trials; t++)
    if ((st = condition(s, dist, cfg.seed + (uint64_t)t, &cond[t])) != C1D_OK) goto done;
  for (int i = 0; i < res.n_impls; i++) {
    const c1d_impl_result *ir = &res.impls[i];
    for (int t = 0; t < (ir->state == C1D_RESULT_SKIPPED ? 1 : ir->n_trials); t++) {
      sweep_row row = {.series = series, .dist = dist, .shape = *s, .trial = t, .seed = cfg.seed + (uint64_t)t};
      snprintf(row.name, sizeof row.name, "%s", ir->name);
      snprintf(row.backend, sizeof row.backend, "%s", ir->backend);
      snprintf(row.precision, sizeof row.precision, "%s", ir->precision);
      for (int k = 0; k < C1D_MODEL_COUNT; k++) row.model[k] = NAN;
      row.cond = cond[t];
      if (ir->state == C1D_RESULT_SKIPPED) {
        row.status = "skipped";
      } else if (ir->trials[t].status != C1D_OK) {
        row.status = "failed";
        p->any_failed = 1;
      } else {
        const c1d_trial_result *tr = &ir->trials[t];
        row.status = "ok";
        row.m = tr->metrics;
        row.explained = tr->explained;
        row.verdict = tr->explanation.verdict;
        for (int k = 0; k < C1D_MODEL_COUNT && tr->explained; k++)
          if (tr->explanation.models[k].available) row.model[k] = tr->explanation.models[k].rel_l2;
      }
      if ((st = push_row(p, &row)) != C1D_OK) goto done;
    }
  }
done:
  c1d_run_results_free(&res);
  return st;
}

/* The sweep's shapes, in order: C series then K series, per distribution. visit(p, series, dist, shape,
 * ctx) for each until it returns something other than C1D_OK. */
typedef c1d_status (*point_fn)(sweep_plan *p, char series, c1d_dist dist, const c1d_shape *s, void *ctx);

static c1d_status each_point(sweep_plan *p, point_fn visit, void *ctx) {
  c1d_status st = C1D_OK;
  for (int d = 0; d < p->n_dists && st == C1D_OK; d++) {
    const c1d_dist dist = p->dists[d];
    for (int64_t C = 1; C * p->a.taps <= p->a.n_max && st == C1D_OK; C *= 2) {
      const c1d_shape s = {.N = p->a.N, .C = C, .O = p->a.O, .L = p->a.L, .K = p->a.taps, .D = 1};
      st = visit(p, 'C', dist, &s, ctx);
    }
    for (int64_t K = 1; p->a.k_cin > 0 && K <= p->a.k_max && st == C1D_OK; K *= 2) {
      const c1d_shape s = {.N = p->a.N, .C = p->a.k_cin, .O = p->a.O, .L = p->a.L > 8 * K ? p->a.L : 8 * K,
                           .K = K, .D = 1};
      st = visit(p, 'K', dist, &s, ctx);
    }
  }
  return st;
}

// --- the estimate and the progress line ----------------------------------------------------------

/* Outputs times products of one trial of s: what its models on the sample, runs and oracle cost. */
static double products_of(const c1d_shape *s) { return (double)c1d_y_count(s) * (double)c1d_terms(s); }

/* A shape's weight on the progress line: its estimated seconds, else its flops. */
static double point_weight(const sweep_plan *p, const c1d_shape *s) {
  if (!p->estimated) return c1d_flops(s);
  return (double)p->a.trials * (p->fixed_s + p->per_product_s * products_of(s));
}

static c1d_status add_weight(sweep_plan *p, char series, c1d_dist dist, const c1d_shape *s, void *ctx) {
  (void)series, (void)dist;
  *(double *)ctx += point_weight(p, s);
  return C1D_OK;
}

/* The smallest and the largest shape (outputs times products), and how many there are. */
typedef struct sweep_size {
  double smallest, largest;
  c1d_shape small, large;
  c1d_dist dist;
  int shapes;
  int64_t n_max;
} sweep_size;

static c1d_status add_size(sweep_plan *p, char series, c1d_dist dist, const c1d_shape *s, void *ctx) {
  sweep_size *z = ctx;
  (void)p, (void)series;
  if (z->shapes++ == 0 || products_of(s) < z->smallest) {
    z->smallest = products_of(s);
    z->small = *s;
    z->dist = dist;
  }
  if (products_of(s) > z->largest) {
    z->largest = products_of(s);
    z->large = *s;
  }
  if (s->C * s->K > z->n_max) z->n_max = s->C * s->K;
  return C1D_OK;
}

/* The run estimate of one trial of shape s, in *seconds. */
static c1d_status estimate_trial(const sweep_plan *p, c1d_dist dist, const c1d_shape *s, double *seconds) {
  c1d_run_config cfg;
  c1d_run_estimate e;
  memset(&e, 0, sizeof e);
  point_config(p, dist, s, &cfg);
  cfg.trials = 1;
  c1d_status st = c1d_run_check(&cfg);
  if (st == C1D_OK) st = c1d_run_estimate_make(&cfg, &e);
  *seconds = e.seconds;
  c1d_run_estimate_free(&e);
  return st;
}

/* The estimate, when the sweep is worth one or it was asked for: the run estimates of the smallest and
 * the largest shape, the others on the line between them in outputs times products (header comment).
 * The line goes to stdout when asked, else to stderr when the sweep reaches C1D_ESTIMATE_ANNOUNCE_S; a
 * calibration that fails leaves the sweep unestimated (an error only when asked). */
static c1d_status estimate_sweep(sweep_plan *p) {
  sweep_size z = {0};
  each_point(p, add_size, &z);
  double total = 0.0, small_s = 0.0, large_s = 0.0;
  if (!p->a.estimate && z.largest * (double)z.shapes * (double)p->a.trials < ESTIMATE_MIN_PRODUCTS) return C1D_OK;
  c1d_status st = estimate_trial(p, z.dist, &z.small, &small_s);
  if (st == C1D_OK) st = estimate_trial(p, z.dist, &z.large, &large_s);
  if (st != C1D_OK) return p->a.estimate ? st : C1D_OK;
  p->estimated = 1;
  p->per_product_s = z.largest > z.smallest ? fmax(0.0, large_s - small_s) / (z.largest - z.smallest) : 0.0;
  p->fixed_s = fmax(0.0, small_s - p->per_product_s * z.smallest);
  each_point(p, add_weight, &total);
  p->seconds = total;
  char when[32];
  c1d_format_duration(c1d_process_age_s() + total, when, sizeof when); /* from the command's start */
  FILE *f = p->a.estimate ? stdout : total >= C1D_ESTIMATE_ANNOUNCE_S ? stderr : NULL;
  if (f) {
    fprintf(f, "convlab sweep: about %s here: %d shapes, %d implementation%s, %lld trial%s each, n = C*K up "
               "to %lld (speeds measured just now)\n",
            when, z.shapes, p->n_impls, p->n_impls == 1 ? "" : "s", (long long)p->a.trials,
            p->a.trials == 1 ? "" : "s", (long long)z.n_max);
    fflush(f);
  }
  return C1D_OK;
}

/* One point, shown on the progress line weighted by its estimated seconds (else its flops). */
static c1d_status visit_point(sweep_plan *p, char series, c1d_dist dist, const c1d_shape *s, void *ctx) {
  c1d_progress_step(ctx, point_weight(p, s), "%s, %c series, n = %lld", c1d_dist_name(dist), series,
                    (long long)(s->C * s->K));
  return run_point(p, series, dist, s);
}

/* The progress line: on a terminal always, elsewhere (plain lines) when the sweep was announced. */
static c1d_status run_sweep(sweep_plan *p) {
  double total = 0.0;
  each_point(p, add_weight, &total);
  const int announced = p->estimated && p->seconds >= C1D_ESTIMATE_ANNOUNCE_S;
  c1d_progress *line = isatty(fileno(stderr)) || announced
                           ? c1d_progress_start(stderr, "convlab sweep", total, p->estimated)
                           : NULL;
  c1d_status st = each_point(p, visit_point, line);
  c1d_progress_end(line);
  return st;
}

// --- the fit and the summary ---------------------------------------------------------------------

typedef struct fit {
  int points;
  double slope;               /* least-squares slope of log(rel L2) on log(n) */
  int64_t n_lo, n_hi;
  double rel_lo, rel_hi;      /* mean rel L2 over the trials at n_lo and n_hi */
} fit;

static int64_t n_of(const sweep_row *r) { return r->shape.C * r->shape.K; }

static int usable(const sweep_row *r) { return !strcmp(r->status, "ok") && r->m.rel_l2 > 0.0 && isfinite(r->m.rel_l2); }

/* Over the rows of (name, dist, series) and, unless verdict < 0, of that verdict. */
static fit fit_rows(const sweep_plan *p, const char *name, c1d_dist dist, char series, int verdict) {
  fit f = {0, NAN, 0, 0, NAN, NAN};
  double sx = 0, sy = 0, sxx = 0, sxy = 0, lo_sum = 0, hi_sum = 0;
  int lo_count = 0, hi_count = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < p->n_rows; i++) {
      const sweep_row *r = &p->rows[i];
      if (r->dist != dist || r->series != series || strcmp(r->name, name) || !usable(r)) continue;
      if (verdict >= 0 && (!r->explained || (int)r->verdict != verdict)) continue;
      const int64_t n = n_of(r);
      if (pass == 0) { /* the sums, and the range of n */
        const double x = log((double)n), y = log(r->m.rel_l2);
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
        if (f.points++ == 0 || n < f.n_lo) f.n_lo = n;
        if (n > f.n_hi) f.n_hi = n;
      } else if (n == f.n_lo) {
        lo_sum += r->m.rel_l2;
        lo_count++;
      } else if (n == f.n_hi) {
        hi_sum += r->m.rel_l2;
        hi_count++;
      }
    }
  const double den = f.points * sxx - sx * sx;
  if (f.points >= 2 && den > 0.0) f.slope = (f.points * sxy - sx * sy) / den;
  if (lo_count) f.rel_lo = lo_sum / lo_count;
  if (hi_count) f.rel_hi = hi_sum / hi_count;
  return f;
}

/* When the verdict changes along n (a library that switches to TF32 above some size), one exponent
 * mixes two regimes: a line per verdict with its own range of n and fit. */
static void print_regimes(FILE *f, const sweep_plan *p, const char *name, c1d_dist dist, char series) {
  fit per[C1D_VERDICT_COUNT];
  int regimes = 0;
  for (int v = 0; v < C1D_VERDICT_COUNT; v++) {
    per[v] = fit_rows(p, name, dist, series, v);
    regimes += per[v].points > 0;
  }
  if (regimes < 2) return;
  for (int v = 0; v < C1D_VERDICT_COUNT; v++) {
    const fit *ft = &per[v];
    if (ft->points == 0) continue;
    fprintf(f, "  %-35s %6d %8lld %10.3e %8lld %10.3e ", c1d_verdict_name((c1d_verdict)v), ft->points,
            (long long)ft->n_lo, ft->rel_lo, (long long)ft->n_hi, ft->rel_hi);
    if (isnan(ft->slope))
      fprintf(f, "%8s\n", "-");
    else
      fprintf(f, "%8.3f\n", ft->slope);
  }
}

static void print_summary(FILE *f, const sweep_plan *p) {
  const sweep_args *a = &p->a;
  fprintf(f, "convlab sweep: C series K=%lld, C=1..%lld (n=%lld..%lld)", (long long)a->taps,
          (long long)(a->n_max / a->taps), (long long)a->taps, (long long)(a->n_max / a->taps * a->taps));
  if (a->k_cin > 0)
    fprintf(f, "; K series C=%lld, K=1..%lld", (long long)a->k_cin, (long long)a->k_max);
  fprintf(f, "; N=%lld O=%lld L=%lld; %lld trial%s from seed %llu\n\n", (long long)a->N, (long long)a->O,
          (long long)a->L, (long long)a->trials, a->trials == 1 ? "" : "s", (unsigned long long)a->seed);
  fprintf(f, "%-18s %-15s %-6s %6s %8s %10s %8s %10s %8s\n", "implementation", "dist", "series", "points",
          "n from", "rel L2", "n to", "rel L2", "exponent");
  for (int d = 0; d < p->n_dists; d++)
    for (int i = 0; i < p->n_impls; i++)
      for (int s = 0; s < (a->k_cin > 0 ? 2 : 1); s++) {
        const fit ft = fit_rows(p, p->impls[i]->name, p->dists[d], "CK"[s], -1);
        fprintf(f, "%-18s %-15s %-6c %6d ", p->impls[i]->name, c1d_dist_name(p->dists[d]), "CK"[s], ft.points);
        if (ft.points == 0) {
          fputs("(no output: skipped or failed; see sweep.csv)\n", f);
          continue;
        }
        fprintf(f, "%8lld %10.3e %8lld %10.3e ", (long long)ft.n_lo, ft.rel_lo, (long long)ft.n_hi, ft.rel_hi);
        if (isnan(ft.slope))
          fprintf(f, "%8s\n", "-");
        else
          fprintf(f, "%8.3f\n", ft.slope);
        print_regimes(f, p, p->impls[i]->name, p->dists[d], "CK"[s]);
      }
  fputs("\nexponent: least-squares slope of log(rel L2) against log(n = C*K), over every trial. About 0.5\n"
        "for float32 sums (rounding errors of random sign add up like sqrt(n)); about 0 for TF32 inputs\n"
        "(one rounding per input, relative to the result whatever n) and for compensated sums. Indented\n"
        "lines: an implementation whose verdict changes with n, fitted per verdict (e.g. a library that\n"
        "switches to TF32 above some size).\n",
        f);
}

// --- the CSV -------------------------------------------------------------------------------------

/* The models whose relative L2 the CSV carries: the first four (fp32, TF32 to nearest and truncated,
 * bf16 inputs), the columns below. */
enum { SWEEP_MODELS = C1D_MODEL_BF16_INPUTS + 1 };

static const char *const columns[] = {
    "series", "impl", "backend", "precision", "dist", "n", "C", "K", "N", "O", "L", "trial", "seed",
    "status", "rel_l2", "max_rel", "max_abs", "ulp_p50", "ulp_p99", "beyond_det_frac", "beyond_prob_frac",
    "max_det_ratio", "cond", "verdict", "model_fp32_rel_l2", "model_tf32_rel_l2", "model_tf32_trunc_rel_l2",
    "model_bf16_rel_l2"};

static void put_num(FILE *f, double v) {
  if (isnan(v))
    fputs(",", f);
  else
    fprintf(f, ",%.9g", v);
}

static void write_csv(FILE *f, const sweep_plan *p) {
  for (unsigned i = 0; i < sizeof columns / sizeof columns[0]; i++) fprintf(f, "%s%s", i ? "," : "", columns[i]);
  fputc('\n', f);
  for (int i = 0; i < p->n_rows; i++) {
    const sweep_row *r = &p->rows[i];
    const int ok = !strcmp(r->status, "ok");
    const double frac = r->m.count > 0 ? 1.0 / (double)r->m.count : NAN;
    fprintf(f, "%c,%s,%s,%s,%s,%lld,%lld,%lld,%lld,%lld,%lld,%d,%llu,%s", r->series, r->name, r->backend,
            r->precision, c1d_dist_name(r->dist), (long long)n_of(r), (long long)r->shape.C,
            (long long)r->shape.K, (long long)r->shape.N, (long long)r->shape.O, (long long)r->shape.L,
            r->trial, (unsigned long long)r->seed, r->status);
    put_num(f, ok ? r->m.rel_l2 : NAN);
    put_num(f, ok ? r->m.max_rel : NAN);
    put_num(f, ok ? r->m.max_abs : NAN);
    put_num(f, ok ? r->m.ulp_p50 : NAN);
    put_num(f, ok ? r->m.ulp_p99 : NAN);
    put_num(f, ok ? (double)r->m.beyond_det * frac : NAN);
    put_num(f, ok ? (double)r->m.beyond_prob * frac : NAN);
    put_num(f, ok ? r->m.max_det_ratio : NAN);
    put_num(f, r->cond);
    fprintf(f, ",%s", ok && r->explained ? c1d_verdict_name(r->verdict) : "");
    for (int k = 0; k < SWEEP_MODELS; k++) put_num(f, r->model[k]);
    fputc('\n', f);
  }
}

/* DIR/sweep.csv and DIR/sweep.txt as one report set (report_set.h): both or neither. */
static c1d_status write_sweep_file(FILE *f, int index, void *ctx) {
  if (index == 0)
    write_csv(f, ctx);
  else
    print_summary(f, ctx);
  return C1D_OK;
}

static const char *const sweep_names[2] = {"sweep.csv", "sweep.txt"};

static c1d_status write_files(const char *dir, const sweep_plan *p) {
  const c1d_report_set set = {dir, "sweep", sweep_names, 2, 2, 0};
  return c1d_report_set_write(&set, write_sweep_file, (void *)p);
}

/* Before the sweep: --out must be able to take the files (checked first, so no work is lost). */
static c1d_status check_out(const char *dir) {
  const c1d_report_set set = {dir, "sweep", sweep_names, 2, 2, 0};
  return dir ? c1d_report_set_check(&set) : C1D_OK;
}

// --- the command ---------------------------------------------------------------------------------

int c1d_cmd_sweep(int argc, char **argv) {
  sweep_plan plan;
  c1d_option opts[N_OPTS];
  int help = 0, code = C1D_EXIT_OK;
  c1d_status st;
  memset(&plan, 0, sizeof plan);
  plan.a = (sweep_args){.dist = "conv_init", .trials = 3, .N = 1, .O = 16, .L = 256, .taps = 4, .k_cin = 16,
                        .k_max = 64, .n_max = 16384};
  option_table(&plan.a, opts);
  if ((st = c1d_cli_parse(opts, N_OPTS, argc, argv, &help)) != C1D_OK) return c1d_cmd_error("sweep", st);
  if (help) {
    c1d_cli_help(stdout, usage, description, opts, N_OPTS);
    return C1D_EXIT_OK;
  }
  if ((st = build_plan(&plan)) != C1D_OK || (st = check_out(plan.a.out)) != C1D_OK ||
      (st = estimate_sweep(&plan)) != C1D_OK) {
    code = c1d_cmd_error("sweep", st);
    goto done;
  }
  if (plan.a.estimate) goto done;
  if ((st = run_sweep(&plan)) != C1D_OK ||
      (plan.a.out && (st = write_files(plan.a.out, &plan)) != C1D_OK)) {
    code = c1d_cmd_error("sweep", st);
    goto done;
  }
  print_summary(stdout, &plan);
  if (plan.any_failed) {
    fprintf(stderr, "convlab sweep: an implementation failed on some shape; sweep.csv has its rows\n");
    code = C1D_EXIT_FAILURE;
  }
done:
  free(plan.rows);
  return code;
}
