/* Report writers over a run's results: a console table (one line per implementation, 100 columns), JSON
 * (cJSON; schema in docs/report-format.md) and CSV (one row per implementation and trial). Writers only
 * read the results; a new field is one line in each writer. */
#ifndef C1D_REPORT_H
#define C1D_REPORT_H

#include <stdio.h>

#include "harness/machine.h"
#include "harness/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a report says beyond the results: how convlab was invoked, from which files, where. */
typedef struct c1d_report_meta {
  const char *command;                    /* the command line, for the record */
  const char *x_path, *w_path, *b_path;   /* input files, or NULL when generated */
  const char *const *y_paths;             /* the candidate output files (n_y of them), or NULL */
  const c1d_machine *machine;             /* may be NULL (then "machine" is null) */
  int n_y;
} c1d_report_meta;

/* The console table, with a header line and a legend. */
void c1d_report_console(FILE *f, const c1d_report_meta *meta, const c1d_run_results *r);

/* The report as a cJSON tree (caller frees with cJSON_Delete), or NULL when out of memory. */
struct cJSON *c1d_report_json(const c1d_report_meta *meta, const c1d_run_results *r);

/* The report as indented JSON text ending in a newline (caller frees), or NULL when out of memory. */
char *c1d_report_json_text(const c1d_report_meta *meta, const c1d_run_results *r);

/* One explanation (verdict, reason, evidence, region) as a cJSON object, or NULL when out of memory;
 * shared by the run report and `convlab explain --json`. */
struct cJSON *c1d_explanation_json(const c1d_explanation *e);
/* The problem object of run's and explain's JSON: the shape, groups, states, activation, layout and
 * the five tensors' types (docs/report-format.md). */
struct cJSON *c1d_problem_json(const c1d_shape *s);

/* The trial among n whose verdict is the most severe (bugs first), and how many trials share it. */
const c1d_trial_result *c1d_worst_verdict(const c1d_trial_result *trials, int n, int *same);

/* The TF32 model's predicted relative L2 for a row that used or claims TF32 (else NAN). */
double c1d_tf32_prediction(const c1d_impl_result *ir, const c1d_trial_result *t);

/* The implementations a run left out because they cannot run here (the GPU rows on a machine without
 * a CUDA device, or in a build without CUDA), one group per reason. Only for a run that covers every
 * main-tier implementation that can run here (convlab run without --impl); an implementation among the
 * run's rows (named by --impl) is not in a group: its row says why it was skipped. */
#define C1D_MAX_UNAVAILABLE 64
typedef struct c1d_unavailable_group {
  int n;
  const char *names[C1D_MAX_UNAVAILABLE]; /* registry names, table order */
  const char *reason;                     /* c1d_backend_unavailable's words */
} c1d_unavailable_group;

/* Fills at most max groups; returns how many (0: nothing was left out). */
int c1d_report_unavailable(const c1d_run_results *r, c1d_unavailable_group *groups, int max);

/* The group in one line: "GPU rows (gpu_naive, gpu_tap_partial, gpu_kahan, ... 23 in all): not run:
 * REASON"; truncated to size. */
void c1d_unavailable_text(const c1d_unavailable_group *g, char *buf, size_t size);

/* The verdict as the sentence a person reads first ("Not a bug: rounding, consistent with float32
 * accumulation in some order (fp32-rounding)."), as convlab explain's first line; truncated to size. */
void c1d_verdict_headline(const c1d_explanation *e, char *buf, size_t size);

/* Whether a rounding model's statistics say anything on these inputs: evaluated, and different from
 * the exact result somewhere. The TF32 models on bf16 or fp16 inputs (which TF32 holds exactly) are
 * not: they are left out (or shown as "-") rather than printed as 0. */
int c1d_model_applies(const c1d_explanation *e, int model);

/* The CSV header and one row per implementation (or candidate, or comparison) and trial; a skipped
 * implementation has one row with empty metrics. RFC 4180 quoting. */
void c1d_report_csv(FILE *f, const c1d_report_meta *meta, const c1d_run_results *r);

/* The CSV column names, in order (count in *n). */
const char *const *c1d_report_csv_columns(int *n);

#ifdef __cplusplus
}
#endif
#endif
