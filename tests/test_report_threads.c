/* Reports do not depend on the machine's core count: the same input run with OMP_NUM_THREADS 1, 2, 3
 * and 4 gives the same report.json, report.csv and report.txt byte for byte, once what is meant to
 * differ is taken out (times, GFLOP/s, and the machine's description with its thread count). */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/process.h"

static char dir[64];

static void make_dir(void) { c1d_test_make_dir(dir, "c1d_report_threads"); }
static void remove_dir(void) { c1d_test_remove_dir(dir); }

TestSuite(report_threads, .init = make_dir, .fini = remove_dir, .timeout = 120);

static char *read_report(const char *name) {
  char path[256];
  snprintf(path, sizeof path, "%s/out/%s", dir, name);
  char *text = c1d_test_slurp(path, NULL);
  cr_assert_not_null(text, "%s cannot be read", path);
  return text;
}

static void drop_timing(cJSON *o) {
  cJSON_DeleteItemFromObject(o, "time_ms");
  cJSON_DeleteItemFromObject(o, "gflops");
  for (cJSON *c = o->child; c; c = c->next) drop_timing(c);
}

/* The JSON report without its times, the machine and the run id (each run's own). */
static char *json_without_timing(void) {
  char *text = read_report("report.json");
  cJSON *root = cJSON_Parse(text);
  cr_assert_not_null(root);
  cJSON_DeleteItemFromObject(root, "machine");
  cr_assert_not_null(cJSON_GetObjectItem(root, "run_id"), "report.json names no run");
  cJSON_DeleteItemFromObject(root, "run_id");
  drop_timing(root);
  char *out = cJSON_Print(root);
  cJSON_Delete(root);
  free(text);
  return out;
}

/* The CSV without the columns time_median_ms, time_min_ms and gflops (no field here is quoted). */
static char *csv_without_timing(void) {
  char *text = read_report("report.csv"), *out = calloc(strlen(text) + 1, 1), *o = out;
  int drop[256] = {0}, header = 1;
  for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    int col = 0;
    for (char *f = line, *next; f; f = next, col++) {
      next = strchr(f, ',');
      if (next) *next++ = '\0';
      if (header)
        drop[col] = !strcmp(f, "time_median_ms") || !strcmp(f, "time_min_ms") || !strcmp(f, "gflops");
      if (col < 256 && !drop[col]) o += sprintf(o, "%s,", f);
    }
    header = 0;
    *o++ = '\n';
  }
  free(text);
  return out;
}

/* The console table without the oracle's time line and each row's time and GFLOP/s. */
static char *txt_without_timing(void) {
  static const char *const rows[] = {"naive ", "kahan ", "tf32_inputs "};
  char *text = read_report("report.txt"), *out = calloc(strlen(text) + 1, 1), *o = out;
  for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (!strncmp(line, "oracle:", 7)) continue;
    int row = 0;
    for (int i = 0; i < 3; i++) row |= !strncmp(line, rows[i], strlen(rows[i]));
    if (row) { /* name, time ms, GFLOP/s, then the errors */
      char name[64], time[32], gflops[32];
      int used = 0;
      cr_assert_eq(sscanf(line, "%63s %31s %31s %n", name, time, gflops, &used), 3, "%s", line);
      o += sprintf(o, "%s %s\n", name, line + used);
    } else {
      o += sprintf(o, "%s\n", line);
    }
  }
  free(text);
  return out;
}

Test(report_threads, reports_are_identical_whatever_the_thread_count) {
  char out[128], log[128];
  snprintf(out, sizeof out, "%s/out", dir);
  snprintf(log, sizeof log, "%s/log", dir);
  char *first[3] = {NULL, NULL, NULL};
  for (int threads = 1; threads <= 4; threads++) {
    char value[8];
    snprintf(value, sizeof value, "%d", threads);
    setenv("OMP_NUM_THREADS", value, 1);
    const char *argv[] = {C1D_TEST_CONVLAB, "run", "--batch", "2", "--cin", "64", "--cout", "32", "--length",
                          "1000", "--impl", "naive,kahan,tf32_inputs", "--trials", "2", "--bias",
                          "--out", out, NULL};
    cr_assert_eq(c1d_test_spawn(argv, log, NULL), 0, "the run with %d threads failed", threads);
    char *now[3] = {json_without_timing(), csv_without_timing(), txt_without_timing()};
    const char *names[3] = {"report.json", "report.csv", "report.txt"};
    for (int i = 0; i < 3; i++) {
      if (!first[i]) {
        first[i] = now[i];
        continue;
      }
      cr_expect_str_eq(now[i], first[i], "%s with %d threads differs from one thread's", names[i], threads);
      free(now[i]);
    }
  }
  unsetenv("OMP_NUM_THREADS");
  for (int i = 0; i < 3; i++) free(first[i]);
}
