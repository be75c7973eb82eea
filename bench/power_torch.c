/* PyTorch's CPU conv1d as a correct output: the inputs of every problem of a campaign are written as
 * .npy into one temporary directory (float32 arrays holding each tensor's values, exact in its type),
 * one Python process (Debian's /usr/bin/python3 with python3-torch, bench/power_torch.py) computes every
 * output (groups; initial states concatenated before x; SiLU by F.silu; on all-bf16 problems also in
 * bf16), and each problem reads its own back. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "bench/power_internal.h"
#include "harness/npy.h"

#ifndef C1D_POWER_TORCH_SCRIPT
#define C1D_POWER_TORCH_SCRIPT "bench/power_torch.py"
#endif
#define POWER_PYTHON "/usr/bin/python3"

extern char **environ;

static void file_in(const power_torch *pt, const char *what, int index, char *buf, size_t size) {
  snprintf(buf, size, "%s/%s_%d.npy", pt->dir, what, index);
}

/* The last non-empty line of the file, for an error message. */
static void last_line(const char *path, char *buf, size_t size) {
  buf[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0]) snprintf(buf, size, "%s", line);
  }
  fclose(f);
}

int power_torch_has_bf16(const c1d_shape *s) {
  const c1d_dtypes *t = &s->dt;
  return t->x == C1D_DTYPE_BF16 && t->w == C1D_DTYPE_BF16 && t->b == C1D_DTYPE_BF16 && t->s == C1D_DTYPE_BF16 &&
         t->y == C1D_DTYPE_BF16;
}

static c1d_status write_inputs(const power_torch *pt, const c1d_power_problem *p, FILE *manifest) {
  const c1d_shape *s = &p->shape;
  float *x = malloc((size_t)c1d_x_count(s) * sizeof *x), *w = malloc((size_t)c1d_w_count(s) * sizeof *w);
  float *b = malloc((size_t)(s->O + 1) * sizeof *b), *st_v = malloc((size_t)(c1d_s_count(s) + 1) * sizeof *st_v);
  c1d_status st = C1D_OK;
  if (!x || !w || !b || !st_v) {
    st = c1d_fail(C1D_ERR_NO_MEMORY, "power: cannot allocate PyTorch's inputs for problem %d", p->index);
    goto done;
  }
  power_generate(p, x, w, b, st_v);
  char path[128];
  const int64_t xs[3] = {s->N, s->C, s->L}, ws[3] = {s->O, c1d_cin_per_group(s), s->K}, bs[1] = {s->O};
  const int64_t ss[3] = {s->N, s->C, c1d_pad(s)};
  file_in(pt, "x", p->index, path, sizeof path);
  if ((st = c1d_npy_write_f32(path, x, 3, xs)) != C1D_OK) goto done;
  file_in(pt, "w", p->index, path, sizeof path);
  if ((st = c1d_npy_write_f32(path, w, 3, ws)) != C1D_OK) goto done;
  if (s->bias) {
    file_in(pt, "b", p->index, path, sizeof path);
    if ((st = c1d_npy_write_f32(path, b, 1, bs)) != C1D_OK) goto done;
  }
  if (s->states) {
    file_in(pt, "s", p->index, path, sizeof path);
    if ((st = c1d_npy_write_f32(path, st_v, 3, ss)) != C1D_OK) goto done;
  }
  fprintf(manifest, "%d %lld %lld %lld %lld %lld %lld %d %lld %d %d %d\n", p->index, (long long)s->N,
          (long long)s->C, (long long)s->O, (long long)s->L, (long long)s->K, (long long)s->D, s->bias,
          (long long)c1d_groups(s), s->states, s->act == C1D_ACT_SILU, power_torch_has_bf16(s));
done:
  free(x);
  free(w);
  free(b);
  free(st_v);
  return st;
}

c1d_status power_torch_prepare(const c1d_power_problem *probs, int count, power_torch *pt, FILE *log) {
  snprintf(pt->dir, sizeof pt->dir, "/tmp/convlab_power_XXXXXX");
  if (!mkdtemp(pt->dir)) {
    pt->dir[0] = '\0';
    return c1d_fail(C1D_ERR_IO, "power: cannot create a temporary directory for PyTorch: %s",
                    strerror(errno));
  }
  char manifest_path[96], log_path[96];
  snprintf(manifest_path, sizeof manifest_path, "%s/manifest.txt", pt->dir);
  snprintf(log_path, sizeof log_path, "%s/torch.log", pt->dir);
  FILE *manifest = fopen(manifest_path, "w");
  if (!manifest) return c1d_fail(C1D_ERR_IO, "power: cannot write %s: %s", manifest_path, strerror(errno));
  c1d_status st = C1D_OK;
  for (int i = 0; i < count && st == C1D_OK; i++) st = write_inputs(pt, &probs[i], manifest);
  if (fclose(manifest) != 0 && st == C1D_OK)
    st = c1d_fail(C1D_ERR_IO, "power: cannot write %s", manifest_path);
  if (st != C1D_OK) return st;

  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  char *const argv[] = {POWER_PYTHON, C1D_POWER_TORCH_SCRIPT, pt->dir, NULL};
  pid_t pid;
  int rc = posix_spawn(&pid, POWER_PYTHON, &fa, NULL, argv, environ), status = 0;
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return c1d_fail(C1D_ERR_IO, "power: cannot run %s for PyTorch's outputs: %s (install python3-torch, "
                    "or pass --no-torch)", POWER_PYTHON, strerror(rc));
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    char why[512];
    last_line(log_path, why, sizeof why);
    return c1d_fail(C1D_ERR_IO, "power: PyTorch's conv1d failed (%s %s): %s", POWER_PYTHON,
                    C1D_POWER_TORCH_SCRIPT, why[0] ? why : "no message");
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (log) {
    char said[512];
    last_line(log_path, said, sizeof said);
    fprintf(log, "power: %s in %.1f s\n", said,
            (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  }
  return C1D_OK;
}

c1d_status power_torch_output(const power_torch *pt, const c1d_power_problem *p, power_torch_kind kind, float *y) {
  static const char *const names[] = {"y", "yb", "ybc"};
  char path[128];
  file_in(pt, names[kind], p->index, path, sizeof path);
  float *data = NULL;
  c1d_npy_header h;
  c1d_status st = c1d_npy_read_f32(path, 0, &data, &h, NULL);
  if (st != C1D_OK) return st;
  const c1d_shape *s = &p->shape;
  if (h.ndim != 3 || h.shape[0] != s->N || h.shape[1] != s->O || h.shape[2] != s->L) {
    free(data);
    return c1d_fail(C1D_ERR_FORMAT, "power: %s does not hold an (N, O, L) output", path);
  }
  memcpy(y, data, (size_t)c1d_y_count(s) * sizeof *y);
  free(data);
  return C1D_OK;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

void power_torch_cleanup(power_torch *pt) {
  if (!pt->dir[0]) return;
  if (nftw(pt->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
    fprintf(stderr, "power: could not remove %s\n", pt->dir);
  pt->dir[0] = '\0';
}
