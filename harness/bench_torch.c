/* PyTorch's rows for convlab bench's grouped table; see bench_torch.h. */
#define _GNU_SOURCE /* nftw */
#include "harness/bench_torch.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/atomic_file.h"
#include "harness/npy.h"
#include "reference/dtype.h"

/* The script in the source tree this convlab was built from (harness/CMakeLists.txt). */
#ifndef C1D_CROSSCHECK_TORCH_SCRIPT
#define C1D_CROSSCHECK_TORCH_SCRIPT "scripts/crosscheck_torch.py"
#endif
/* env finds python3 on PATH: the device machine's has CUDA PyTorch, Debian's /usr/bin/python3 has not. */
#define ENV_PROGRAM "/usr/bin/env"
#define PATH_SIZE 4096

extern char **environ;

c1d_status c1d_bench_write_inputs(const char *dir, const c1d_shape *s, const float *x, const float *w,
                                  const float *b, const float *st) {
  const int64_t xs[3] = {s->N, s->C, s->L}, ws[3] = {s->O, c1d_cin_per_group(s), s->K}, bs[1] = {s->O};
  const int64_t ss[3] = {s->N, s->C, c1d_pad(s)};
  const char *names[4] = {"x.npy", "w.npy", "b.npy", "s.npy"};
  const float *data[4] = {x, w, b, st};
  const int64_t *shapes[4] = {xs, ws, bs, ss};
  const int ndims[4] = {3, 3, 1, 3};
  c1d_status status = c1d_make_dirs(dir);
  for (int i = 0; i < 4 && status == C1D_OK; i++) {
    if (!data[i]) continue;
    char *path = c1d_path_join(dir, names[i]);
    status = path ? c1d_npy_write_f32(path, data[i], ndims[i], shapes[i])
                  : c1d_fail(C1D_ERR_NO_MEMORY, "out of memory");
    free(path);
  }
  return status;
}

// --- the temporary directory ---------------------------------------------------------------------

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

static void remove_tree(const char *dir) {
  if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
    fprintf(stderr, "convlab bench: could not remove %s\n", dir);
}

/* $TMPDIR/convlab_torch_XXXXXX (or /tmp/...) into dir: 0, or -1 with the reason in why. */
static int make_temp_dir(char *dir, size_t size, char *why, size_t why_size) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !tmp[0]) tmp = "/tmp";
  if ((size_t)snprintf(dir, size, "%s/convlab_torch_XXXXXX", tmp) >= size) {
    snprintf(why, why_size, "TMPDIR is too long");
    return -1;
  }
  if (mkdtemp(dir)) return 0;
  snprintf(why, why_size, "cannot create a directory in %s for PyTorch's inputs: %s", tmp, strerror(errno));
  dir[0] = '\0';
  return -1;
}

// --- the script ----------------------------------------------------------------------------------

/* The last non-empty line of a file (the script's refusal, or a traceback's exception), or "". */
static void last_line(const char *path, char *buf, size_t size) {
  char line[512];
  FILE *f = fopen(path, "r");
  buf[0] = '\0';
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    const size_t n = strlen(line);
    if (!n) continue;
    memcpy(buf, line, n < size ? n + 1 : size); /* cut to the buffer */
    buf[size - 1] = '\0';
  }
  fclose(f);
}

/* Runs the script on dir's inputs, its stdout and stderr into log: its wait status, or -1 (why set). */
static int run_script(const char *dir, const c1d_shape *s, int repeats, const char *out, const char *log,
                      char *why, size_t why_size) {
  char g[24], d[24], r[24];
  snprintf(g, sizeof g, "%lld", (long long)c1d_groups(s));
  snprintf(d, sizeof d, "%lld", (long long)s->D);
  snprintf(r, sizeof r, "%d", repeats);
  char *const argv[] = {"env", "python3", C1D_CROSSCHECK_TORCH_SCRIPT, "--rows-only", "--inputs", (char *)dir,
                        "--groups", g, "--dilation", d, "--dtype", (char *)c1d_dtype_name(s->dt.x),
                        "--activation", s->act == C1D_ACT_SILU ? "silu" : "none", "--repeats", r,
                        "--out", (char *)out, NULL};
  posix_spawn_file_actions_t fa;
  pid_t pid;
  int status = 0;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  const int rc = posix_spawn(&pid, ENV_PROGRAM, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    snprintf(why, why_size, "cannot run %s python3: %s", ENV_PROGRAM, strerror(rc));
    return -1;
  }
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      snprintf(why, why_size, "cannot wait for python3: %s", strerror(errno));
      return -1;
    }
  return status;
}

/* The reason a finished script gave no rows, from its wait status and its log. */
static void script_failure(int status, const char *log, char *why, size_t size) {
  static const char prefix[] = "crosscheck: ";
  if (WIFSIGNALED(status)) {
    snprintf(why, size, "python3 %s was killed by signal %d", C1D_CROSSCHECK_TORCH_SCRIPT, WTERMSIG(status));
    return;
  }
  if (WEXITSTATUS(status) == 127) { /* env's own status: no such program */
    snprintf(why, size, "no python3 on PATH (%s python3)", ENV_PROGRAM);
    return;
  }
  last_line(log, why, size);
  if (!strncmp(why, prefix, sizeof prefix - 1)) memmove(why, why + sizeof prefix - 1, strlen(why) - sizeof prefix + 2);
  if (!why[0])
    snprintf(why, size, "python3 %s exited with status %d", C1D_CROSSCHECK_TORCH_SCRIPT, WEXITSTATUS(status));
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *text = NULL;
  long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)n + 1))) {
    text[fread(text, 1, (size_t)n, f)] = '\0';
  }
  fclose(f);
  return text;
}

// --- its JSON ------------------------------------------------------------------------------------

static double number_in(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void string_in(const cJSON *o, const char *key, char *buf, size_t size) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  snprintf(buf, size, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

c1d_status c1d_bench_torch_parse(const char *text, c1d_torch_rows *out) {
  memset(out, 0, sizeof *out);
  cJSON *root = cJSON_Parse(text);
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(root, "rows"), *row, *item;
  if (!cJSON_IsObject(root) || !cJSON_IsObject(rows)) {
    cJSON_Delete(root);
    return c1d_fail(C1D_ERR_FORMAT, "not the JSON of crosscheck_torch.py --rows-only");
  }
  string_in(root, "torch", out->version, sizeof out->version);
  string_in(root, "device", out->device, sizeof out->device);
  out->cudnn = number_in(root, "cudnn");
  cJSON_ArrayForEach(row, rows) {
    if (out->n == C1D_TORCH_MAX_ROWS || !cJSON_IsObject(row)) continue;
    c1d_torch_row *r = &out->rows[out->n++];
    snprintf(r->name, sizeof r->name, "%s", row->string);
    string_in(row, "label", r->label, sizeof r->label);
    r->ms = number_in(row, "ms");
    r->rel_l2 = number_in(row, "rel_l2");
    r->max_abs = number_in(row, "max_abs");
    r->fail_fraction = number_in(row, "fail_allclose_fraction");
  }
  cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(root, "left_out")) {
    const size_t used = strlen(out->left_out);
    snprintf(out->left_out + used, sizeof out->left_out - used, "%s%s: %s", used ? "; " : "", item->string,
             cJSON_IsString(item) ? item->valuestring : "");
  }
  cJSON_Delete(root);
  if (!out->n) return c1d_fail(C1D_ERR_FORMAT, "crosscheck_torch.py --rows-only gave no rows");
  out->measured = 1;
  return C1D_OK;
}

const c1d_torch_row *c1d_torch_find(const c1d_torch_rows *t, const char *prefix) {
  for (int i = 0; t && t->measured && i < t->n; i++)
    if (!strncmp(t->rows[i].name, prefix, strlen(prefix))) return &t->rows[i];
  return NULL;
}

// --- all of it -----------------------------------------------------------------------------------

/* In dir: the inputs written, the script run, its JSON read. 0, or -1 with out->reason set. */
static int measure_in(const char *dir, const c1d_shape *s, const float *x, const float *w, const float *b,
                      const float *st, int repeats, c1d_torch_rows *out) {
  char json[PATH_SIZE], log[PATH_SIZE];
  if (snprintf(json, sizeof json, "%s/torch.json", dir) >= (int)sizeof json ||
      snprintf(log, sizeof log, "%s/torch.log", dir) >= (int)sizeof log) {
    snprintf(out->reason, sizeof out->reason, "TMPDIR is too long");
    return -1;
  }
  if (access(C1D_CROSSCHECK_TORCH_SCRIPT, R_OK) != 0) {
    snprintf(out->reason, sizeof out->reason, "%s is missing", C1D_CROSSCHECK_TORCH_SCRIPT);
    return -1;
  }
  if (c1d_bench_write_inputs(dir, s, x, w, b, st) != C1D_OK) {
    snprintf(out->reason, sizeof out->reason, "%s", c1d_error_detail());
    return -1;
  }
  const int status = run_script(dir, s, repeats, json, log, out->reason, sizeof out->reason);
  if (status < 0) return -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    script_failure(status, log, out->reason, sizeof out->reason);
    return -1;
  }
  char *text = read_file(json);
  const c1d_status parsed = text ? c1d_bench_torch_parse(text, out) : c1d_fail(C1D_ERR_IO, "no %s", json);
  free(text);
  if (parsed == C1D_OK) return 0;
  snprintf(out->reason, sizeof out->reason, "%s", c1d_error_detail());
  return -1;
}

void c1d_bench_torch(const c1d_shape *s, const float *x, const float *w, const float *b, const float *st,
                     int repeats, int progress, c1d_torch_rows *out) {
  char dir[PATH_SIZE];
  memset(out, 0, sizeof *out);
  out->cudnn = NAN;
  if (make_temp_dir(dir, sizeof dir, out->reason, sizeof out->reason) != 0) return;
  if (progress)
    fprintf(stderr, "convlab bench: PyTorch's rows (python3 %s --rows-only) ...\n", C1D_CROSSCHECK_TORCH_SCRIPT);
  if (measure_in(dir, s, x, w, b, st, repeats, out) != 0) {
    out->measured = 0;
    out->n = 0;
  }
  remove_tree(dir); /* the inputs can be gigabytes: never left behind */
}
