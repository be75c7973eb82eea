/* The problem's flags, the user's files and the announcement of long work, for convlab run and convlab
 * explain (cmd_shared.h). */
#include "harness/cmd_shared.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/escape.h"
#include "harness/progress.h"
#include "harness/suggest.h"
#include "reference/dtype.h"

// --- the problem's flags ---------------------------------------------------------------------------

int c1d_problem_options(c1d_problem_flags *f, c1d_option *o) {
  const c1d_option t[C1D_PROBLEM_OPTIONS] = {
      {"--groups", C1D_OPT_INT, &f->groups, 1, C1D_MAX_ELEMENTS, "G",
       "groups: w is (O, C/G, K); G = C = O is depthwise (default 1; files: from w)", 0},
      {"--activation", C1D_OPT_STRING, &f->activation, 0, 0, "ACT", "none (default) or silu, after the bias", 0},
      {"--layout", C1D_OPT_STRING, &f->layout, 0, 0, "ncl|nlc",
       "ncl (default), or nlc: channel-last x (N,L,C) and y (N,L,O) in files", 0},
  };
  memcpy(o, t, sizeof t);
  return C1D_PROBLEM_OPTIONS;
}

/* text as one of names[n] (the index), or C1D_ERR_USAGE "<flag> must be A or B (got 'x'...)". */
static c1d_status parse_word(const char *flag, const char *text, const char *const *names, int n, int *out) {
  for (int i = 0; i < n; i++)
    if (!strcmp(text, names[i])) {
      *out = i;
      return C1D_OK;
    }
  const char *near = c1d_suggest(text, names, n);
  if (near) return c1d_fail(C1D_ERR_USAGE, "%s must be %s or %s (got '%s'; did you mean %s?)", flag, names[0], names[1], text, near);
  return c1d_fail(C1D_ERR_USAGE, "%s must be %s or %s (got '%s')", flag, names[0], names[1], text);
}

c1d_status c1d_problem_flags_parse(const c1d_problem_flags *f, c1d_input_problem *pb) {
  static const char *const acts[C1D_ACT_COUNT] = {"none", "silu"};
  static const char *const layouts[2] = {"ncl", "nlc"};
  int v = 0;
  c1d_status st;
  pb->G = f->groups;
  if (f->activation) {
    if ((st = parse_word("--activation", f->activation, acts, C1D_ACT_COUNT, &v)) != C1D_OK) return st;
    pb->act = (c1d_activation)v;
  }
  if (f->layout) {
    if ((st = parse_word("--layout", f->layout, layouts, 2, &v)) != C1D_OK) return st;
    pb->layout = (c1d_layout_order)v;
  }
  return C1D_OK;
}

c1d_status c1d_parse_dtypes(const char *text, c1d_dtypes *out) {
  char spec[256];
  if (strlen(text) >= sizeof spec) return c1d_fail(C1D_ERR_USAGE, "--dtype is too long (%zu characters)", strlen(text));
  snprintf(spec, sizeof spec, "%s", text);
  c1d_dtypes dt = *out;
  for (char *save = NULL, *e = strtok_r(spec, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(e, '=');
    if (!eq) return c1d_fail(C1D_ERR_USAGE, "--dtype expects TENSOR=TYPE entries such as x=bf16 (got '%s')", e);
    *eq = '\0';
    c1d_dtype d;
    if (c1d_dtype_parse(eq + 1, &d) != C1D_OK) {
      char why[300];
      snprintf(why, sizeof why, "%s", c1d_error_detail());
      return c1d_fail(C1D_ERR_USAGE, "--dtype %s=%s: %s", e, eq + 1, why);
    }
    if (!strcmp(e, "all")) dt = (c1d_dtypes){d, d, d, d, d};
    else if (!strcmp(e, "x")) dt.x = d;
    else if (!strcmp(e, "w")) dt.w = d;
    else if (!strcmp(e, "b")) dt.b = d;
    else if (!strcmp(e, "s")) dt.s = d;
    else if (!strcmp(e, "y")) dt.y = d;
    else
      return c1d_fail(C1D_ERR_USAGE, "--dtype: unknown tensor '%s' (x, w, b, s for the initial states, y, or all)", e);
  }
  *out = dt;
  return C1D_OK;
}

// --- the user's files ------------------------------------------------------------------------------

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

c1d_status c1d_user_files_name(c1d_user_files *u, c1d_run_config *cfg) {
  if (u->case_path) { /* the case's y is its one output */
    u->case_ys.items[0] = u->case_path;
    u->case_ys.n = 1;
    u->ys = &u->case_ys;
  }
  const int n = u->ys ? u->ys->n : 0;
  for (int i = 0; i < n; i++) {
    const char *path = u->ys->items[i], *name = base_name(path);
    for (int j = 0; j < n; j++) {
      if (j == i) continue;
      if (strcmp(u->ys->items[j], path) == 0)
        return c1d_fail(C1D_ERR_USAGE, "--y %s is given twice", path);
      if (strcmp(base_name(u->ys->items[j]), name) == 0) name = path; /* a/y.npy and b/y.npy */
    }
    snprintf(u->names[i], sizeof u->names[i], "file:%s", name);
    u->cands[i] = (c1d_candidate){u->names[i], NULL};
  }
  cfg->candidates = n > 0 ? u->cands : NULL;
  cfg->n_candidates = n;
  return C1D_OK;
}

static c1d_input_paths paths_with(const c1d_user_files *u, const char *y) {
  return (c1d_input_paths){.x = u->x, .w = u->w, .b = u->b, .y = y, .s = u->s};
}

c1d_status c1d_user_files_shape(c1d_user_files *u, c1d_shape *s) {
  if (u->case_path) return c1d_input_case_shape(u->case_path, &u->problem, s, &u->case_file);
  c1d_input_paths p = paths_with(u, NULL);
  c1d_status st = c1d_input_files_shape_of(&p, &u->problem, s);
  const char *first_y = NULL;
  c1d_dtype y_type = C1D_DTYPE_F32;
  for (int i = 0; u->ys && i < u->ys->n && st == C1D_OK; i++) {
    p = paths_with(u, u->ys->items[i]);
    if ((st = c1d_input_files_shape_of(&p, &u->problem, s)) != C1D_OK) break;
    if (first_y && s->dt.y != y_type)
      return c1d_fail(C1D_ERR_FORMAT, "%s is %s but %s is %s: the outputs of one problem have one type",
                      u->ys->items[i], c1d_dtype_name(s->dt.y), first_y, c1d_dtype_name(y_type));
    if (!first_y) first_y = u->ys->items[i], y_type = s->dt.y;
  }
  return st;
}

static void note_rounding(const char *cmd, const char *path, const c1d_npy_conversion *c) {
  if (path && c->inexact > 0)
    c1d_print_line(stderr, "convlab %s: note: %s is float64; %lld values were rounded to float32 (largest "
                           "relative change %.2g); every implementation and the oracle use the rounded values",
                   cmd, path, (long long)c->inexact, c->max_rel_change);
}

c1d_status c1d_user_files_load(const char *cmd, c1d_user_files *u, c1d_run_config *cfg) {
  c1d_status st = c1d_run_check_memory(cfg, "these files");
  if (st != C1D_OK) return st;
  if (u->case_path) {
    if ((st = c1d_input_case_load(u->case_path, &u->case_file, &cfg->shape, &u->tensors)) != C1D_OK) return st;
    u->y[0] = u->tensors.y; /* owned as the candidate's */
    u->tensors.y = NULL;
  } else {
    c1d_input_paths p = paths_with(u, NULL);
    if ((st = c1d_input_files_load(&p, &cfg->shape, &u->tensors)) != C1D_OK) return st;
    /* Each y through the same checked loader, with the inputs' data read once. */
    for (int i = 0; u->ys && i < u->ys->n; i++)
      if ((st = c1d_input_files_load_output(u->ys->items[i], &cfg->shape, &u->y[i])) != C1D_OK) return st;
    note_rounding(cmd, u->x, &u->tensors.cx);
    note_rounding(cmd, u->w, &u->tensors.cw);
    note_rounding(cmd, u->b, &u->tensors.cb);
    note_rounding(cmd, u->s, &u->tensors.cs);
  }
  for (int i = 0; u->ys && i < u->ys->n; i++) u->cands[i].y = u->y[i];
  cfg->x = u->tensors.x;
  cfg->w = u->tensors.w;
  cfg->b = u->tensors.b;
  cfg->st = u->tensors.s;
  return C1D_OK;
}

void c1d_user_files_free(c1d_user_files *u) {
  if (!u) return;
  c1d_st_free(&u->case_file);
  c1d_input_tensors_free(&u->tensors);
  for (int i = 0; i < C1D_OPT_LIST_MAX; i++) {
    free(u->y[i]);
    u->y[i] = NULL;
  }
}

c1d_status c1d_announce_estimate(const char *cmd, c1d_run_config *cfg, int asked, int allow_long,
                                 c1d_run_estimate *e) {
  memset(e, 0, sizeof *e);
  if (!asked && !c1d_run_worth_estimating(cfg)) return C1D_OK;
  c1d_status st = c1d_run_estimate_make(cfg, e);
  if (st != C1D_OK) {
    c1d_run_estimate_free(e);
    memset(e, 0, sizeof *e);
    return asked ? st : C1D_OK;
  }
  e->before_s = c1d_process_age_s();
  const int too_long = e->seconds > C1D_ESTIMATE_LIMIT_S && !allow_long;
  char line[512], when[32], limit[32];
  c1d_format_duration(e->before_s + e->seconds, when, sizeof when);
  snprintf(limit, sizeof limit, "%.0f h", C1D_ESTIMATE_LIMIT_S / 3600.0);
  if (too_long && !asked) { /* before anything is run or written: likely a slip in --repeats or --trials */
    c1d_run_estimate_free(e);
    memset(e, 0, sizeof *e);
    return c1d_fail(C1D_ERR_USAGE, "this run is estimated at about %s, beyond %s; pass --allow-long to run it "
                    "anyway", when, limit);
  }
  c1d_run_estimate_describe(cfg, e, line, sizeof line);
  if (asked && too_long)
    printf("convlab %s: %s; beyond %s, so it runs only with --allow-long\n", cmd, line, limit);
  else if (asked)
    printf("convlab %s: %s\n", cmd, line);
  else if (e->seconds >= C1D_ESTIMATE_ANNOUNCE_S) {
    fprintf(stderr, "convlab %s: %s\n", cmd, line);
    cfg->progress = 1; /* announced work shows its progress off a terminal too: plain lines (progress.h) */
  }
  fflush(NULL);
  cfg->estimate = e;
  return C1D_OK;
}
