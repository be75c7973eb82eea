/* The runner: the fixed sequence of DESIGN.md for a list of implementations on one shape.
 *
 *   for each trial i (inputs from seed+i, or the caller's tensors):
 *     make inputs -> oracle (float64 y and magnitude m, CPU or GPU) -> for each implementation:
 *     poison y, set up, warm up, time `repeats` runs, tear down -> analyze_output (metrics against the
 *     oracle, histograms; the explainer's hook) -> optional .npy of the output -> pairwise comparison
 *
 * Implementations that cannot run here (c1d_impl_unavailable) or do not support the shape (supported())
 * are recorded as skipped with the reason. An implementation whose run() fails is recorded as failed with
 * the error detail; the run goes on. c1d_run itself fails only when the run as a whole cannot go on
 * (invalid shape, not enough memory, oracle failure, a file that cannot be written).
 *
 * Results are plain structs that report writers read; a new per-trial field is one member here, one
 * line in analyze_output (runner.c), and one line per writer. */
#ifndef C1D_RUNNER_H
#define C1D_RUNNER_H

#include <stdint.h>

#include "harness/explain.h"
#include "harness/inputs.h"
#include "harness/memory.h"
#include "numerics/classifier.h"
#include "numerics/histogram.h"
#include "numerics/metrics.h"
#include "reference/impl.h"
#include "reference/oracle.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum c1d_oracle_choice { C1D_ORACLE_AUTO, C1D_ORACLE_CPU, C1D_ORACLE_GPU } c1d_oracle_choice;

/* "cpu", "gpu" or "auto" into *out; C1D_ERR_USAGE ("--oracle must be cpu, gpu or auto (got 'x')"). */
c1d_status c1d_oracle_parse(const char *text, c1d_oracle_choice *out);

/* Defaults (c1d_run_config_default). */
#define C1D_REPEATS_GPU 20
/* With the default repeats, a GPU row's timed runs stop at about this much kernel time (at least
 * C1D_MIN_TIMED_RUNS of them): the slow reference kernels then cost a few runs, not twenty. */
#define C1D_GPU_DEFAULT_BUDGET_MS 300.0
#define C1D_REPEATS_CPU 3
#define C1D_REPEATS_CPU_LARGE 1       /* CPU runs above C1D_NO_WARMUP_GFLOP take seconds each */
#define C1D_NO_WARMUP_GFLOP 20.0      /* CPU: no warm-up run above this much work */
#define C1D_GPU_ORACLE_MIN_GFLOP 10.0 /* --oracle auto picks the GPU oracle from this much work */

/* A float32 output supplied by the user (convlab run --y), scored like an implementation. */
typedef struct c1d_candidate {
  const char *name; /* as reports show it, e.g. "file:y.npy" */
  const float *y;   /* N*O*L, caller-owned */
} c1d_candidate;

typedef struct c1d_run_config {
  c1d_shape shape;
  const c1d_impl *const *impls; /* what to run, in this order (registry entries or test-local ones) */
  int n_impls;
  const c1d_candidate *candidates; /* extra rows without timing; only with caller tensors */
  int n_candidates;

  /* Inputs: generated from (dist, seed + trial), or the caller's tensors when x is not NULL (then
   * trials must be 1; b is NULL iff !shape.bias; st, the initial states, NULL iff !shape.states). */
  c1d_dist dist;
  uint64_t seed;
  int trials;
  const float *x, *w, *b, *st;

  int repeats;                  /* timed runs per implementation; 0: the backend's default */
  /* > 0: the CPU implementations run on the first cpu_batch_rows batch rows only, and their outputs
   * and statistics cover that share of N*L (the GPU rows and the oracle cover all of it); 0: all. Not
   * with --compare or saved outputs, which need whole outputs. */
  int64_t cpu_batch_rows;
  double atol, rtol, lambda;    /* the user's allclose tolerances and the probabilistic bound's lambda */
  c1d_oracle_choice oracle;
  const char *compare_a, *compare_b; /* --compare A,B: B's output is the reference for A; or NULL */
  const char *save_outputs_dir;      /* directory for each output as .npy (created), or NULL */
  int progress;                      /* 1: progress on stderr: a redrawn line on a terminal, else a plain
                                        line every 10 s (progress.h) */
  const char *progress_who;          /* the progress line's prefix ("convlab run"); NULL: "convlab" */
  const struct c1d_run_estimate *estimate; /* harness/estimate.h: the progress line's weights and time
                                              left; NULL: weights by flops */
  int no_verdicts;                   /* 1: metrics only, no explainer (convlab bench shows no verdicts) */
  int gpu_rows_in_turn;              /* 1: each GPU row runs in its turn, not beside the last row's analysis
                                        (the estimate's calibration times each row's parts alone) */

  /* Histogram bins (log10 of |err|, and of |err| / deterministic bound). */
  double abs_hist_lo, abs_hist_hi, ratio_hist_lo, ratio_hist_hi;
  int abs_hist_bins, ratio_hist_bins;
} c1d_run_config;

/* The defaults: headline shape, conv_init inputs (the story's), seed 0, one trial, KernelBench's tolerances, lambda of
 * numerics/bounds.h, automatic oracle, histogram ranges covering float32 errors; impls left empty. */
void c1d_run_config_default(c1d_run_config *cfg);

/* |y - ref| along one axis, in at most C1D_PROFILE_BINS bins of `width` consecutive indices: the mean
 * and the maximum over everything else (over n and o for the t axis, over n and t for the o axis).
 * Non-finite outputs are left out (the metrics count them). Edge and tile bugs show up here. */
#define C1D_PROFILE_BINS 512
typedef struct c1d_profile {
  int bins;
  int64_t width;
  double mean[C1D_PROFILE_BINS], max[C1D_PROFILE_BINS];
} c1d_profile;

/* One implementation (or candidate, or comparison) on one trial's inputs. */
typedef struct c1d_trial_result {
  uint64_t seed;            /* the inputs' seed (the config's seed when inputs came from files) */
  c1d_status status;        /* C1D_OK, or why run()/setup() failed on this trial */
  char error[512];          /* the one-line detail when status != C1D_OK */
  c1d_metrics metrics;
  c1d_log_hist abs_err_hist;      /* log10 |y - ref| */
  c1d_log_hist bound_ratio_hist;  /* |y - ref| / deterministic bound */
  int repeats;              /* timed runs; 0 when not timed (candidates from files, comparisons) */
  double time_median_ms, time_min_ms; /* NAN when not timed */
  double gflops;            /* flops / median time; NAN when not timed */
  char algo[96], math[64];  /* what the implementation reported in c1d_exec */
  int used_tf32;            /* 1, 0, or -1 unknown */
  c1d_profile err_t, err_o; /* |y - ref| by position and by output channel */
  int repeat_checked;       /* two runs' outputs were compared (the first and the last) */
  int repeat_identical;     /* ... and had identical bits (different bits: a race, or an order that
                               changes from run to run) */
  int explained;            /* explanation holds the explainer's verdict */
  c1d_explanation explanation;
  double step_ms;           /* wall time of the whole step: set-up, runs, transfers, analysis, saving */
  double analysis_ms;       /* of which the analysis (metrics, profiles, verdict); for run estimates */
  int full_passes[C1D_FULL_PASS_KINDS]; /* passes over every element its verdict made first, by kind */
  double full_pass_ms;                  /* ... and their time, within analysis_ms */
} c1d_trial_result;

typedef enum c1d_result_state {
  C1D_RESULT_RAN,      /* every trial produced an output */
  C1D_RESULT_SKIPPED,  /* unavailable here or unsupported shape: skip_reason says which; no trials */
  C1D_RESULT_FAILED    /* at least one trial failed (its status and error say how) */
} c1d_result_state;

typedef struct c1d_impl_result {
  const c1d_impl *impl;    /* NULL for a candidate from a file */
  char name[96];
  const char *backend;     /* "cpu", "gpu" or "file" */
  const char *precision;   /* c1d_precision_name, or "fp32" for a candidate */
  const char *summary;
  c1d_result_state state;
  char skip_reason[256];
  int n_trials;            /* 0 when skipped */
  c1d_trial_result *trials;
} c1d_impl_result;

/* --compare A,B: A's output against B's promoted to double. The bounds use 2u (see runner.c). */
typedef struct c1d_comparison {
  char a[96], b[96];
  int n_trials;
  c1d_trial_result *trials; /* status != C1D_OK where A or B did not produce an output */
} c1d_comparison;

typedef struct c1d_run_results {
  c1d_shape shape;
  double flops;
  int from_files;           /* inputs were the caller's tensors */
  c1d_dist dist;
  uint64_t seed;
  int trials;
  int64_t cpu_batch_rows;   /* the config's: CPU rows cover batch rows [0, cpu_batch_rows) (0: all) */
  double atol, rtol, lambda;
  const char *oracle;       /* "cpu" or "gpu": the one used */
  const char *oracle_kernel; /* the CPU oracle's kernel set ("avx512", "avx2", "portable"); NULL on the GPU */
  double oracle_ms;         /* wall time of the oracle, summed over trials */
  double models_ms;         /* wall time of the explainer's rounding models, summed over trials */
  int n_impls;              /* implementations then candidates, in config order */
  c1d_impl_result *impls;
  int n_comparisons;        /* 0 or 1 */
  c1d_comparison *comparisons;
  char run_id[48];          /* this run's id (UTC time, process, random): in report.json and the manifest of
                               its saved outputs, which readers compare */
  struct c1d_staged_set *saved_outputs; /* --save-outputs: staged until the reports commit them
                                           (c1d_emit_reports); discarded by c1d_run_results_free if not */
} c1d_run_results;

/* Everything analyze_output (runner.c) sees for one output, while the output and the reference are both
 * in memory: the trial's inputs, the reference (the oracle, or B's output in a comparison) and, with the
 * oracle, the magnitude m and the term counts per position that the error bounds need. */
typedef struct c1d_output_view {
  const c1d_shape *s;
  const float *x, *w, *b;   /* the trial's host inputs */
  const float *y;           /* the output under analysis */
  const double *ref;        /* its reference, N*O*L doubles */
  const double *mag;        /* m = |b| + sum|w*x| per element */
  const int64_t *terms_t;   /* products summed at each position t (length L) */
  double u;                 /* unit roundoff of the bounds: float32's, doubled for a comparison */
  const c1d_impl *impl;     /* NULL for a candidate from a file or a comparison */
} c1d_output_view;

/* The estimate of what a run of cfg holds at its peak, as named parts (inputs, the oracle's y and m,
 * outputs, implementation and oracle scratch, the explainer's, per-trial tables, the JSON report, ...;
 * runner_setup.c). One more buffer is one more line there. Returns the count (<= C1D_MEMORY_PARTS). */
#define C1D_MEMORY_PARTS 24
typedef struct c1d_memory_part {
  const char *name;
  double bytes;
} c1d_memory_part;
int c1d_run_memory_parts(const c1d_run_config *cfg, c1d_memory_part *parts);

/* What the program holds before a run: its code and the libraries it loads (the CUDA runtime's ~220 MB
 * are measured with `convlab list`). */
#ifdef C1D_HAVE_CUDA
#define C1D_PROGRAM_BYTES (256.0 * 1048576.0)
#else
#define C1D_PROGRAM_BYTES (32.0 * 1048576.0)
#endif

/* The sum of the parts. */
double c1d_run_host_bytes(const c1d_run_config *cfg);

/* C1D_ERR_NO_MEMORY ("<what> needs about X GiB of host memory (the largest part, P: Y GiB); available
 * memory leaves Z GiB") when the estimate exceeds what may still be allocated (harness/memory.h:
 * MemAvailable, or a cgroup's limit); checked before anything is allocated or large files are read. */
c1d_status c1d_run_check_memory(const c1d_run_config *cfg, const char *what);

/* The same against a given room (for tests). */
c1d_status c1d_run_check_memory_in(const c1d_run_config *cfg, const char *what, c1d_memory_room room);

/* Physical memory of this machine in bytes (sysconf), or 0 if unknown. */
double c1d_physical_memory(void);

/* Checks cfg (shape, trials, repeats, tolerances, names in --compare, tensors, memory) without
 * allocating. C1D_ERR_INVALID_SHAPE/C1D_ERR_OVERFLOW/C1D_ERR_USAGE/C1D_ERR_NO_MEMORY/C1D_ERR_NO_DEVICE
 * with a one-line detail. */
c1d_status c1d_run_check(const c1d_run_config *cfg);

/* Runs cfg into *out (zeroed first; release with c1d_run_results_free even on failure). Returns C1D_OK
 * when the run completed, whatever the implementations did; else the status of what stopped it. */
c1d_status c1d_run(const c1d_run_config *cfg, c1d_run_results *out);

/* Frees what c1d_run allocated in r; r itself is the caller's. NULL does nothing. */
void c1d_run_results_free(c1d_run_results *r);

/* 1 when any implementation or candidate failed on any trial. */
int c1d_run_any_failed(const c1d_run_results *r);

/* When every implementation was skipped and there is no candidate: "name: reason" of the first one
 * (valid while r is); else NULL. */
const char *c1d_run_all_skipped(const c1d_run_results *r);

/* The oracle actually used for cfg on this machine: CPU or GPU (never AUTO). */
c1d_oracle_choice c1d_run_resolve_oracle(const c1d_run_config *cfg);

#ifdef __cplusplus
}
#endif
#endif
