/* Printing and writing the reports of a finished run (report_files.h). */
#include "harness/report_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/cli.h"
#include "harness/machine.h"
#include "harness/report.h"
#include "harness/report_html.h"
#include "harness/report_set.h"

static const char *const report_names[] = {C1D_REPORT_JSON, C1D_REPORT_CSV, C1D_REPORT_TXT,
                                           C1D_REPORT_HTML};

static c1d_report_set report_set(const char *dir, int html) {
  c1d_report_set set = {dir, "report", report_names, 4, html ? 4 : 3, 0, NULL, NULL};
  return set;
}

typedef struct report_ctx {
  const c1d_report_meta *meta;
  const c1d_run_results *r;
  const char *json;
} report_ctx;

static c1d_status write_report(FILE *f, int index, void *vctx) {
  const report_ctx *c = vctx;
  switch (index) {
    case 0: fputs(c->json, f); break;
    case 1: c1d_report_csv(f, c->meta, c->r); break;
    case 2: c1d_report_console(f, c->meta, c->r); break;
    default: c1d_report_html(f, c->meta, c->r); break;
  }
  return C1D_OK;
}

c1d_status c1d_report_files_check(const char *out_dir) {
  c1d_report_set set = report_set(out_dir, 1);
  return c1d_report_set_check(&set);
}

c1d_status c1d_saved_outputs_check(const char *dir) { return c1d_staged_set_check(dir, "outputs"); }

c1d_status c1d_emit_reports(const c1d_report_request *req, const c1d_run_results *r) {
  c1d_status st = C1D_OK;
  c1d_machine machine;
  char *args = c1d_cli_command_line(req->argc, req->argv), *text = NULL, *command = NULL;
  if (args && (command = malloc(strlen(args) + sizeof "convlab "))) /* argv[0] is the subcommand */
    sprintf(command, "convlab %s", args);
  free(args);
  c1d_machine_describe(&machine);
  c1d_report_meta meta = {command, req->x, req->w, req->b, req->y, &machine, req->n_y};
  text = c1d_report_json_text(&meta, r);
  if (!command || !text) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "out of memory writing the report");
    goto done;
  }
  /* stdout first: a set that cannot be written (a full disk) does not take the table with it. */
  if (req->print == C1D_PRINT_JSON)
    fputs(text, stdout);
  else if (req->print == C1D_PRINT_TABLE)
    c1d_report_console(stdout, &meta, r);
  fflush(stdout);
  report_ctx ctx = {&meta, r, text};
  c1d_report_set set = report_set(req->out_dir, req->html);
  set.run_id = r->run_id;
  set.with = r->saved_outputs; /* the saved outputs commit with the reports: one set, both or neither */
  if (req->out_dir)
    st = c1d_report_set_write(&set, write_report, &ctx);
  else if (r->saved_outputs)
    st = c1d_staged_set_commit(r->saved_outputs);
done:
  free(command);
  free(text);
  return st;
}
