/* The runner's preparation: configuration defaults, the checks made before anything is allocated
 * (shape, counts, names, memory), the choice of oracle, and the result tables. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "harness/execute.h"
#include "harness/explain.h"
#include "harness/registry.h"
#include "harness/report_set.h"
#include "harness/runner.h"
#include "harness/runner_internal.h"
#include "numerics/bounds.h"
#include "reference/oracle.h"

c1d_status c1d_oracle_parse(const char *text, c1d_oracle_choice *out) {
  static const struct { const char *name; c1d_oracle_choice choice; } names[] = {
      {"auto", C1D_ORACLE_AUTO}, {"cpu", C1D_ORACLE_CPU}, {"gpu", C1D_ORACLE_GPU}};
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(text, names[i].name) == 0) {
      *out = names[i].choice;
      return C1D_OK;
    }
  return c1d_fail(C1D_ERR_USAGE, "--oracle must be cpu, gpu or auto (got '%s')", text);
}

void c1d_run_config_default(c1d_run_config *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->shape = c1d_headline_shape();
  cfg->dist = C1D_DIST_CONV_INIT; /* the story's inputs: x ~ N(0,1), nn.Conv1d's default weights */
  cfg->trials = 1;
  cfg->atol = C1D_DEFAULT_ATOL;
  cfg->rtol = C1D_DEFAULT_RTOL;
  cfg->lambda = C1D_DEFAULT_LAMBDA;
  cfg->oracle = C1D_ORACLE_AUTO;
  /* float32 errors of O(1) outputs live between 1e-9 and 1e-2; TF32 and real bugs go above. Four bins
   * per decade; values outside the range are counted as below/above, never lost. */
  cfg->abs_hist_lo = -12.0;
  cfg->abs_hist_hi = 2.0;
  cfg->abs_hist_bins = 56;
  /* Errors over the deterministic bound: usually 1e-4..1e-1 of it; > 1 is beyond the bound. */
  cfg->ratio_hist_lo = -6.0;
  cfg->ratio_hist_hi = 3.0;
  cfg->ratio_hist_bins = 36;
}

double c1d_physical_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (double)pages * (double)page : 0.0;
}

int c1d_run_default_repeats(const c1d_run_config *cfg, const c1d_impl *impl) {
  if (cfg->repeats > 0) return cfg->repeats;
  if (impl->backend == C1D_BACKEND_GPU) return C1D_REPEATS_GPU;
  return c1d_flops(&cfg->shape) > C1D_NO_WARMUP_GFLOP * 1e9 ? C1D_REPEATS_CPU_LARGE : C1D_REPEATS_CPU;
}

int c1d_run_warmups(const c1d_run_config *cfg, const c1d_impl *impl) {
  return impl->backend == C1D_BACKEND_GPU || c1d_flops(&cfg->shape) <= C1D_NO_WARMUP_GFLOP * 1e9;
}

c1d_oracle_choice c1d_run_resolve_oracle(const c1d_run_config *cfg) {
  if (cfg->oracle != C1D_ORACLE_AUTO) return cfg->oracle;
  /* The GPU oracle is the plain problem's (dense, no states, no activation). */
  if (c1d_groups(&cfg->shape) == 1 && !cfg->shape.states && cfg->shape.act == C1D_ACT_NONE &&
      c1d_gpu_oracle_built() && c1d_gpu_why_unavailable() == NULL &&
      c1d_flops(&cfg->shape) >= C1D_GPU_ORACLE_MIN_GFLOP * 1e9)
    return C1D_ORACLE_GPU;
  return C1D_ORACLE_CPU;
}

/* Where the names of --compare point: an index into the results (impls, then candidates), or -1. */
int c1d_run_find_result(const c1d_run_config *cfg, const char *name) {
  for (int i = 0; i < cfg->n_impls; i++)
    if (strcmp(cfg->impls[i]->name, name) == 0) return i;
  for (int i = 0; i < cfg->n_candidates; i++)
    if (strcmp(cfg->candidates[i].name, name) == 0) return cfg->n_impls + i;
  return -1;
}

/* Reported values per trial in the JSON report, beyond the histograms and the profiles. */
#define JSON_VALUES_PER_TRIAL 120
/* A JSON value at the report's peak: its cJSON node with its key (about 112 bytes with malloc's
 * overhead) and its text three times over (cJSON_Print's growing buffer, then the copy). Measured on
 * a 400-trial run: about 80 bytes per value all told; this keeps a margin. */
#define JSON_BYTES_PER_VALUE 160.0

static int profile_bins(int64_t extent) {
  const int64_t width = (extent + C1D_PROFILE_BINS - 1) / C1D_PROFILE_BINS;
  return (int)((extent + width - 1) / width);
}

int c1d_run_memory_parts(const c1d_run_config *cfg, c1d_memory_part *parts) {
  const c1d_shape *s = &cfg->shape;
  const double nx = (double)c1d_x_count(s), nw = (double)c1d_w_count(s), nb = (double)c1d_b_count(s);
  const double ny = (double)c1d_y_count(s), L = (double)s->L, threads = (double)omp_get_max_threads();
  const double rows = (double)(cfg->n_impls + cfg->n_candidates + (cfg->compare_a ? 1 : 0));
  int any_cpu = 0, any_gpu = 0, gpu_rows = 0, any_packed = 0, n = 0;
  for (int i = 0; i < cfg->n_impls; i++) {
    any_cpu |= cfg->impls[i]->backend == C1D_BACKEND_CPU;
    any_gpu |= cfg->impls[i]->backend == C1D_BACKEND_GPU;
    gpu_rows += cfg->impls[i]->backend == C1D_BACKEND_GPU;
    any_packed |= cfg->impls[i]->backend == C1D_BACKEND_GPU &&
                  (cfg->impls[i]->caps & (C1D_CAP_DTYPES | C1D_CAP_CHANNEL_LAST));
  }
  const double json_values = JSON_VALUES_PER_TRIAL + cfg->abs_hist_bins + cfg->ratio_hist_bins +
                             2.0 * profile_bins(s->L) + 2.0 * profile_bins(s->O);
#define PART(what, b) parts[n++] = (c1d_memory_part){what, (b)}
  PART("the program and its libraries", C1D_PROGRAM_BYTES);
  PART("the inputs x, w, b, s", 4.0 * (nx + nw + nb + (double)c1d_s_count(s)));
  PART("the oracle's sum before the activation", s->act != C1D_ACT_NONE ? 8.0 * ny : 0.0);
  PART("the oracle's y and m", 16.0 * ny);
  PART("the output buffer and its first run's copy", 8.0 * ny);
  PART("the next GPU row's output and first run, timed while one is analysed", gpu_rows > 1 ? 8.0 * ny : 0.0);
  PART("terms per position (runner and explainer)", 16.0 * L);
  PART("candidate outputs (--y)", 4.0 * ny * cfg->n_candidates);
  PART("--compare's two outputs", cfg->compare_a ? 12.0 * ny : 0.0);
  /* split_3xtf32 keeps two copies of x and w; tap_partial K rows of L per thread; kahan* L per thread. */
  PART("a CPU implementation's scratch",
       any_cpu ? 8.0 * (nx + nw) + threads * L * (s->K > 4 ? 4.0 * (double)s->K : 16.0) : 0.0);
  /* reference/oracle_f64.c: with states, x and the sums over L + (K-1)*D positions; a grouped
   * problem with many terms, one group's x and sums at a time. */
  const double padded = (double)(s->L + c1d_pad(s)), Nd = (double)s->N;
  const double G = (double)c1d_groups(s);
  PART("the oracle's copies with the states",
       s->states ? Nd * (4.0 * (double)s->C + 16.0 * (double)s->O) * padded : 0.0);
  PART("the oracle's copies of one group",
       G > 1 && c1d_terms(s) > 256 ? Nd * (4.0 * (double)s->C + 16.0 * (double)s->O) / G * padded : 0.0);
  PART("the CPU oracle's packed w and tiles",
       c1d_run_resolve_oracle(cfg) == C1D_ORACLE_CPU ? c1d_oracle_f64_scratch_bytes(s) : 0.0);
  /* The naive order's output, sigma, the classification's arrays and one model's full arrays
   * (harness/explain.h), plus a model's rounded copies of x and w while it is made. */
  PART("the explainer's reference noise, models and classification", c1d_explainer_host_bytes(s) + 8.0 * (nx + nw));
  PART("gpu_naive's output for the explainer", any_gpu ? 4.0 * ny : 0.0);
  /* One tensor at a time packed for the device, or an output's bytes before their conversion. */
  PART("a typed or channel-last GPU row's packed tensor", any_packed ? 4.0 * (nx > ny ? nx : ny) : 0.0);
  c1d_shape part = *s; /* the CPU rows' own explainer when they cover only the first batch rows */
  part.N = cfg->cpu_batch_rows;
  PART("the CPU rows' explainer (their batch rows)",
       cfg->cpu_batch_rows > 0 && cfg->cpu_batch_rows < s->N ? c1d_explainer_host_bytes(&part) : 0.0);
  PART("the metrics' per-thread tables and block sums", threads * 16384.0 + ny / 256.0);
  PART("the per-trial result tables", rows * cfg->trials * (double)sizeof(c1d_trial_result));
  PART("the JSON report (tree and text)", rows * cfg->trials * json_values * JSON_BYTES_PER_VALUE);
#undef PART
  return n;
}

double c1d_run_host_bytes(const c1d_run_config *cfg) {
  c1d_memory_part parts[C1D_MEMORY_PARTS];
  const int n = c1d_run_memory_parts(cfg, parts);
  double total = 0.0;
  for (int i = 0; i < n; i++) total += parts[i].bytes;
  return total;
}

static int finite_nonneg(double v) { return isfinite(v) && v >= 0.0; }

c1d_status c1d_run_check(const c1d_run_config *cfg) {
  c1d_status st = c1d_shape_validate(&cfg->shape);
  if (st != C1D_OK) return st;
  if (cfg->trials < 1) return c1d_fail(C1D_ERR_USAGE, "trials must be at least 1 (got %d)", cfg->trials);
  if (cfg->x && cfg->trials != 1)
    return c1d_fail(C1D_ERR_USAGE, "inputs from files make one trial (got %d trials)", cfg->trials);
  if (cfg->x && (!cfg->w || (cfg->shape.bias && !cfg->b) || (!cfg->shape.bias && cfg->b)))
    return c1d_fail(C1D_ERR_USAGE, "caller inputs need x and w, and b exactly when the shape has bias");
  if (cfg->n_candidates > 0 && cfg->trials != 1)
    return c1d_fail(C1D_ERR_USAGE, "a candidate output belongs to one set of inputs (got %d trials)",
                    cfg->trials);
  if (cfg->repeats < 0) return c1d_fail(C1D_ERR_USAGE, "repeats must be >= 0 (got %d)", cfg->repeats);
  if (cfg->cpu_batch_rows < 0 || cfg->cpu_batch_rows > cfg->shape.N)
    return c1d_fail(C1D_ERR_USAGE, "CPU batch rows must be within 0..N (got %lld with N = %lld)",
                    (long long)cfg->cpu_batch_rows, (long long)cfg->shape.N);
  if (cfg->cpu_batch_rows > 0 && cfg->cpu_batch_rows < cfg->shape.N && (cfg->compare_a || cfg->save_outputs_dir))
    return c1d_fail(C1D_ERR_USAGE, "CPU rows on part of the batch cannot be compared or saved (whole outputs "
                                   "needed)");
  if (!finite_nonneg(cfg->atol) || !finite_nonneg(cfg->rtol))
    return c1d_fail(C1D_ERR_USAGE, "atol and rtol must be finite and >= 0");
  if (!(cfg->lambda > 0.0) || !isfinite(cfg->lambda))
    return c1d_fail(C1D_ERR_USAGE, "lambda must be finite and > 0");
  if (cfg->n_impls + cfg->n_candidates < 1) return c1d_fail(C1D_ERR_USAGE, "nothing to run");
  for (int i = 0; i < cfg->n_impls; i++)
    if (!cfg->impls[i] || !cfg->impls[i]->name || !cfg->impls[i]->run)
      return c1d_fail(C1D_ERR_INTERNAL, "implementation %d has no name or run()", i);
  for (int i = 0; i < cfg->n_candidates; i++)
    if (!cfg->candidates[i].name || !cfg->candidates[i].y)
      return c1d_fail(C1D_ERR_INTERNAL, "candidate %d has no name or data", i);
  if (!cfg->compare_a != !cfg->compare_b)
    return c1d_fail(C1D_ERR_USAGE, "a comparison needs two names");
  if (cfg->compare_a) {
    const char *names[2] = {cfg->compare_a, cfg->compare_b};
    for (int i = 0; i < 2; i++)
      if (c1d_run_find_result(cfg, names[i]) < 0)
        return c1d_fail(C1D_ERR_USAGE, "--compare names '%s', which is not being run", names[i]);
    if (strcmp(cfg->compare_a, cfg->compare_b) == 0)
      return c1d_fail(C1D_ERR_USAGE, "--compare needs two different implementations");
  }
  if (cfg->shape.states && cfg->x && !cfg->st)
    return c1d_fail(C1D_ERR_USAGE, "the problem has initial states but no states tensor was given");
  if (cfg->oracle == C1D_ORACLE_GPU) {
    if (c1d_groups(&cfg->shape) > 1 || cfg->shape.states || cfg->shape.act != C1D_ACT_NONE)
      return c1d_fail(C1D_ERR_USAGE, "the GPU oracle is the dense problem's: use --oracle cpu with groups, "
                                     "states or an activation");
    if (!c1d_gpu_oracle_built())
      return c1d_fail(C1D_ERR_NO_DEVICE, "this build has no GPU oracle (gpu/oracle_f64.cu)");
    const char *why = c1d_gpu_why_unavailable();
    if (why) return c1d_fail(C1D_ERR_NO_DEVICE, "the GPU oracle cannot run: %s", why);
  }
  return c1d_run_check_memory(cfg, "this run");
}

c1d_status c1d_run_check_memory(const c1d_run_config *cfg, const char *what) {
  return c1d_run_check_memory_in(cfg, what, c1d_memory_available());
}

c1d_status c1d_run_check_memory_in(const c1d_run_config *cfg, const char *what, c1d_memory_room room) {
  c1d_memory_part parts[C1D_MEMORY_PARTS];
  const int n = c1d_run_memory_parts(cfg, parts);
  double need = 0.0;
  int largest = 0;
  for (int i = 0; i < n; i++) {
    need += parts[i].bytes;
    if (parts[i].bytes > parts[largest].bytes) largest = i;
  }
  if (room.bytes > 0.0 && need > room.bytes)
    return c1d_fail(C1D_ERR_NO_MEMORY, "%s needs about %.2f GiB of host memory (the largest part, %s: "
                    "%.2f GiB); %s leaves %.2f GiB", what, need / 1073741824.0, parts[largest].name,
                    parts[largest].bytes / 1073741824.0, room.limit, room.bytes / 1073741824.0);
  return C1D_OK;
}

// --- result tables -----------------------------------------------------------------------------

static void copy_text(char *dst, size_t size, const char *src) { snprintf(dst, size, "%s", src ? src : ""); }

/* Fills r's names and skip decisions for cfg and allocates the trials of everything that will run. */
void c1d_make_run_id(char *out, size_t size) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  struct tm utc;
  gmtime_r(&now.tv_sec, &utc);
  char when[32];
  strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &utc);
  unsigned rnd = 0;
  if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd) rnd = (unsigned)now.tv_nsec;
  snprintf(out, size, "%s-%ld-%08x", when, (long)getpid(), rnd);
}

c1d_status c1d_run_results_init(const c1d_run_config *cfg, c1d_run_results *r) {
  r->shape = cfg->shape;
  /* The reports name the types of the tensors the problem has: --dtype all=bf16 without --bias also
   * sets b's (and the states') type, and the problem line read "bias=0 ... b=bf16 s=bf16". */
  if (!r->shape.bias) r->shape.dt.b = C1D_DTYPE_F32;
  if (!r->shape.states) r->shape.dt.s = C1D_DTYPE_F32;
  r->flops = c1d_flops(&cfg->shape);
  r->from_files = cfg->x != NULL;
  r->dist = cfg->dist;
  r->seed = cfg->seed;
  r->trials = cfg->trials;
  r->cpu_batch_rows = cfg->cpu_batch_rows;
  r->atol = cfg->atol;
  r->rtol = cfg->rtol;
  r->lambda = cfg->lambda;
  r->oracle = c1d_run_resolve_oracle(cfg) == C1D_ORACLE_GPU ? "gpu" : "cpu";
  r->oracle_kernel = NULL;
  if (strcmp(r->oracle, "cpu") == 0) { /* a bad C1D_ORACLE_KERNEL fails here, before any work */
    c1d_oracle_kernel k;
    c1d_status st = c1d_oracle_kernel_select(&k);
    if (st != C1D_OK) return st;
    r->oracle_kernel = c1d_oracle_kernel_name(k);
  }
  r->n_impls = cfg->n_impls + cfg->n_candidates;
  r->impls = calloc((size_t)r->n_impls, sizeof *r->impls);
  if (!r->impls) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate the result table");
  for (int i = 0; i < r->n_impls; i++) {
    c1d_impl_result *ir = &r->impls[i];
    if (i < cfg->n_impls) {
      const c1d_impl *impl = cfg->impls[i];
      ir->impl = impl;
      copy_text(ir->name, sizeof ir->name, impl->name);
      ir->backend = impl->backend == C1D_BACKEND_GPU ? "gpu" : "cpu";
      ir->precision = c1d_precision_name(impl->precision);
      ir->summary = impl->summary ? impl->summary : "";
      const char *why = c1d_impl_unavailable(impl);
      if (!why) why = c1d_impl_unsupported(impl, &cfg->shape);
      if (why) {
        ir->state = C1D_RESULT_SKIPPED;
        copy_text(ir->skip_reason, sizeof ir->skip_reason, why);
        continue;
      }
    } else {
      copy_text(ir->name, sizeof ir->name, cfg->candidates[i - cfg->n_impls].name);
      ir->backend = "file";
      ir->precision = "fp32";
      ir->summary = "an output supplied by the user (--y), scored like an implementation";
    }
    ir->n_trials = cfg->trials;
    ir->trials = calloc((size_t)cfg->trials, sizeof *ir->trials);
    if (!ir->trials) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate the result table");
  }
  if (cfg->compare_a) {
    r->comparisons = calloc(1, sizeof *r->comparisons);
    if (!r->comparisons) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate the comparison");
    r->n_comparisons = 1;
    copy_text(r->comparisons->a, sizeof r->comparisons->a, cfg->compare_a);
    copy_text(r->comparisons->b, sizeof r->comparisons->b, cfg->compare_b);
    r->comparisons->n_trials = cfg->trials;
    r->comparisons->trials = calloc((size_t)cfg->trials, sizeof *r->comparisons->trials);
    if (!r->comparisons->trials) return c1d_fail(C1D_ERR_NO_MEMORY, "cannot allocate the comparison");
  }
  return C1D_OK;
}

void c1d_run_results_free(c1d_run_results *r) {
  if (!r) return;
  for (int i = 0; i < r->n_impls && r->impls; i++) free(r->impls[i].trials);
  free(r->impls);
  for (int i = 0; i < r->n_comparisons && r->comparisons; i++) free(r->comparisons[i].trials);
  free(r->comparisons);
  c1d_staged_set_discard(r->saved_outputs); /* nothing a reader sees, unless the reports committed it */
  memset(r, 0, sizeof *r);
}

int c1d_run_any_failed(const c1d_run_results *r) {
  for (int i = 0; i < r->n_impls; i++)
    if (r->impls[i].state == C1D_RESULT_FAILED) return 1;
  return 0;
}

const char *c1d_run_all_skipped(const c1d_run_results *r) {
  static _Thread_local char why[sizeof r->impls[0].name + sizeof r->impls[0].skip_reason + 2];
  if (r->n_impls == 0) return NULL;
  for (int i = 0; i < r->n_impls; i++)
    if (r->impls[i].state != C1D_RESULT_SKIPPED) return NULL;
  snprintf(why, sizeof why, "%s: %s", r->impls[0].name, r->impls[0].skip_reason);
  return why;
}
