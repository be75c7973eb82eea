/* The user's files and the announcement of long work, for convlab run and convlab explain
 * (cmd_shared.h). */
#include "harness/cmd_shared.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

c1d_status c1d_user_files_name(c1d_user_files *u, c1d_run_config *cfg) {
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
  return (c1d_input_paths){u->x, u->w, u->b, y};
}

c1d_status c1d_user_files_shape(const c1d_user_files *u, int64_t D, c1d_shape *s) {
  c1d_input_paths p = paths_with(u, NULL);
  c1d_status st = c1d_input_files_shape(&p, D, s);
  for (int i = 0; u->ys && i < u->ys->n && st == C1D_OK; i++) {
    p = paths_with(u, u->ys->items[i]);
    st = c1d_input_files_shape(&p, D, s);
  }
  return st;
}

static void note_rounding(const char *cmd, const char *path, const c1d_npy_conversion *c) {
  if (path && c->inexact > 0)
    fprintf(stderr, "convlab %s: note: %s is float64; %lld values were rounded to float32 (largest "
                    "relative change %.2g); every implementation and the oracle use the rounded values\n",
            cmd, path, (long long)c->inexact, c->max_rel_change);
}

c1d_status c1d_user_files_load(const char *cmd, c1d_user_files *u, c1d_run_config *cfg) {
  c1d_status st = c1d_run_check_memory(cfg, "these files");
  if (st != C1D_OK) return st;
  c1d_input_paths p = paths_with(u, NULL);
  if ((st = c1d_input_files_load(&p, &cfg->shape, &u->tensors)) != C1D_OK) return st;
  /* Each y through the same checked loader, with the inputs' data read once. */
  for (int i = 0; u->ys && i < u->ys->n; i++) {
    c1d_input_tensors only_y;
    if ((st = c1d_npy_read_f32(u->ys->items[i], 0, &only_y.y, &only_y.hy, NULL)) != C1D_OK) return st;
    u->y[i] = only_y.y;
    if (only_y.hy.count != c1d_y_count(&cfg->shape))
      return c1d_fail(C1D_ERR_FORMAT, "%s changed while being read (%lld elements, expected %lld)",
                      u->ys->items[i], (long long)only_y.hy.count, (long long)c1d_y_count(&cfg->shape));
    u->cands[i].y = u->y[i];
  }
  note_rounding(cmd, u->x, &u->tensors.cx);
  note_rounding(cmd, u->w, &u->tensors.cw);
  note_rounding(cmd, u->b, &u->tensors.cb);
  cfg->x = u->tensors.x;
  cfg->w = u->tensors.w;
  cfg->b = u->tensors.b;
  return C1D_OK;
}

void c1d_user_files_free(c1d_user_files *u) {
  if (!u) return;
  c1d_input_tensors_free(&u->tensors);
  for (int i = 0; i < C1D_OPT_LIST_MAX; i++) {
    free(u->y[i]);
    u->y[i] = NULL;
  }
}

c1d_status c1d_announce_estimate(const char *cmd, c1d_run_config *cfg, int asked, c1d_run_estimate *e) {
  memset(e, 0, sizeof *e);
  if (!asked && !c1d_run_worth_estimating(cfg)) return C1D_OK;
  c1d_status st = c1d_run_estimate_make(cfg, e);
  if (st != C1D_OK) {
    c1d_run_estimate_free(e);
    memset(e, 0, sizeof *e);
    return asked ? st : C1D_OK;
  }
  char line[512];
  c1d_run_estimate_describe(cfg, e, line, sizeof line);
  if (asked)
    printf("convlab %s: %s\n", cmd, line);
  else if (e->seconds >= C1D_ESTIMATE_ANNOUNCE_S)
    fprintf(stderr, "convlab %s: %s\n", cmd, line);
  fflush(NULL);
  cfg->estimate = e;
  return C1D_OK;
}
