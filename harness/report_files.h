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

/* Describes the machine, prints to stdout, then writes the set under out_dir (created; may be NULL;
 * html adds report.html). argv is recorded as the command. C1D_ERR_IO or C1D_ERR_NO_MEMORY with the
 * detail; then no report file has changed (what stdout got stays). */
c1d_status c1d_emit_reports(int argc, char **argv, const c1d_input_paths *files, int json, int html,
                            const char *out_dir, const c1d_run_results *r);

#ifdef __cplusplus
}
#endif
#endif
