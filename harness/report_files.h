/* Where the reports of a finished run go: the console table (or, with --json, the JSON report) on
 * stdout, and with --out DIR the files report.json, report.csv and report.txt (and with --html
 * report.html) as one report set (report_set.h): a reader sees this run's set or the previous one. */
#ifndef C1D_REPORT_FILES_H
#define C1D_REPORT_FILES_H

#include "harness/input_files.h"
#include "harness/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The names of the files under --out. */
#define C1D_REPORT_JSON "report.json"
#define C1D_REPORT_CSV "report.csv"
#define C1D_REPORT_TXT "report.txt"
#define C1D_REPORT_HTML "report.html"

/* Before a run: whether out_dir can take the reports (creating nothing). C1D_ERR_IO with the detail. */
c1d_status c1d_report_files_check(const char *out_dir);

/* Before a run: whether --save-outputs DIR can take the saved outputs (creating nothing). */
c1d_status c1d_saved_outputs_check(const char *dir);

/* What goes to stdout beside the files. */
typedef enum c1d_stdout_report {
  C1D_PRINT_TABLE,  /* the console table and the verdicts */
  C1D_PRINT_JSON,   /* the JSON report */
  C1D_PRINT_NOTHING /* the command prints its own (convlab explain) */
} c1d_stdout_report;

typedef struct c1d_report_request {
  int argc;
  char **argv;                  /* the subcommand's argv (argv[0] its name), recorded as the command */
  const char *x, *w, *b;        /* input files, or NULL when generated */
  const char *const *y;         /* candidate output files, n_y of them */
  int n_y;
  c1d_stdout_report print;
  int html;                     /* with out_dir: report.html too */
  const char *out_dir;          /* where the set goes (created), or NULL */
} c1d_report_request;

/* Describes the machine, prints to stdout what req->print asks, then writes the set under out_dir, and
 * with it the run's saved outputs (r->saved_outputs, committed alone when there is no out_dir).
 * C1D_ERR_IO or C1D_ERR_NO_MEMORY with the detail; then no report file has changed (what stdout got
 * stays). */
c1d_status c1d_emit_reports(const c1d_report_request *req, const c1d_run_results *r);

#ifdef __cplusplus
}
#endif
#endif
