/* Printing and writing the reports of a finished run (report_files.h). */
#include "harness/report_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/atomic_file.h"
#include "harness/cli.h"
#include "harness/machine.h"
#include "harness/report.h"
#include "harness/report_html.h"

enum { N_FILES = 4 };

/* All files are complete in their temporary names before the first rename, so an error (disk full, a
 * bad directory) leaves the old reports, if any, exactly as they were. */
static c1d_status write_dir(const char *dir, const c1d_report_meta *meta, const c1d_run_results *r,
                            const char *json, int html) {
  static const char *const names[N_FILES] = {C1D_REPORT_JSON, C1D_REPORT_CSV, C1D_REPORT_TXT,
                                             C1D_REPORT_HTML};
  const int n_files = html ? 4 : 3;
  c1d_atomic_file af[N_FILES];
  c1d_status st = C1D_OK;
  int opened = 0;
  memset(af, 0, sizeof af);
  if ((st = c1d_make_dirs(dir)) != C1D_OK) return st;
  for (; opened < n_files; opened++) {
    char *path = c1d_path_join(dir, names[opened]);
    if (!path) {
      st = c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
      goto done;
    }
    st = c1d_atomic_open(&af[opened], path);
    free(path);
    if (st != C1D_OK) goto done;
  }
  fputs(json, af[0].f);
  c1d_report_csv(af[1].f, meta, r);
  c1d_report_console(af[2].f, meta, r);
  if (html) c1d_report_html(af[3].f, meta, r);
  for (int i = 0; i < n_files; i++)
    if (fflush(af[i].f) != 0 || ferror(af[i].f)) {
      st = c1d_fail(C1D_ERR_IO, "%s/%s: write failed", dir, names[i]);
      goto done;
    }
  for (int i = 0; i < n_files && st == C1D_OK; i++) st = c1d_atomic_commit(&af[i]);
done:
  for (int i = 0; i < N_FILES; i++) c1d_atomic_abort(&af[i]); /* no-op for committed files */
  return st;
}

c1d_status c1d_emit_reports(int argc, char **argv, const c1d_input_paths *files, int json, int html,
                            const char *out_dir, const c1d_run_results *r) {
  c1d_status st = C1D_OK;
  c1d_machine machine;
  char *args = c1d_cli_command_line(argc, argv), *text = NULL, *command = NULL;
  if (args && (command = malloc(strlen(args) + sizeof "convlab "))) /* argv[0] is the subcommand */
    sprintf(command, "convlab %s", args);
  free(args);
  c1d_machine_describe(&machine);
  c1d_report_meta meta = {command, files->x, files->w, files->b, files->y, &machine};
  text = c1d_report_json_text(&meta, r);
  if (!command || !text) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "out of memory writing the report");
    goto done;
  }
  if (out_dir && (st = write_dir(out_dir, &meta, r, text, html)) != C1D_OK) goto done;
  if (json)
    fputs(text, stdout);
  else
    c1d_report_console(stdout, &meta, r);
  fflush(stdout);
done:
  free(command);
  free(text);
  return st;
}
