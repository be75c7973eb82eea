/* The report writers on a real small run (implementations that run, one that is skipped, one that
 * fails, a comparison, two trials): the JSON parses and carries every documented field,
 * the CSV has the documented columns with one row per implementation and trial, the console table fits
 * in 100 columns, and docs/report-format.md names every field the writers emit. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/report.h"
#include "harness/runner.h"

extern const c1d_impl c1d_cpu_naive, c1d_cpu_kahan;

static c1d_status fail_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                           c1d_exec *ex) {
  return c1d_fail(C1D_ERR_INTERNAL, "broken, \"quoted\", on purpose");
}
static const c1d_impl failing = {.name = "failing", .summary = "always fails", .backend = C1D_BACKEND_CPU,
                                 .precision = C1D_PREC_FP32, .run = fail_run};

static const char *never(const c1d_shape *s) { return "never supported (test)"; }
static const c1d_impl skipped = {.name = "skipped", .summary = "unsupported everywhere",
                                 .backend = C1D_BACKEND_CPU, .precision = C1D_PREC_FP32,
                                 .supported = never, .run = fail_run};

static c1d_run_results results;
static const c1d_machine machine = {.cpu = "Test CPU", .threads = 2, .memory_bytes = 1e9,
                                    .gpu_reason = "no CUDA device: test"};
static const c1d_report_meta meta = {"convlab run --test", NULL, NULL, NULL, NULL, &machine, 0};

/* Two trials of four implementations (ran, skipped, failed, ran) and a comparison of the two that ran. */
static void setup(void) {
  static const c1d_impl *impls[] = {&c1d_cpu_naive, &skipped, &failing, &c1d_cpu_kahan};
  c1d_run_config cfg;
  c1d_run_config_default(&cfg);
  cfg.shape = (c1d_shape){.N = 1, .C = 4, .O = 3, .L = 32, .K = 2, .D = 1};
  cfg.impls = impls;
  cfg.n_impls = 4;
  cfg.trials = 2;
  cfg.repeats = 1;
  cfg.oracle = C1D_ORACLE_CPU;
  cfg.compare_a = "naive";
  cfg.compare_b = "kahan";
  cr_assert_eq(c1d_run(&cfg, &results), C1D_OK, "%s", c1d_error_detail());
}

static void teardown(void) { c1d_run_results_free(&results); }

TestSuite(reports, .init = setup, .fini = teardown);

// --- JSON --------------------------------------------------------------------------------------

static cJSON *parsed(void) {
  char *text = c1d_report_json_text(&meta, &results);
  cr_assert_not_null(text);
  cJSON *root = cJSON_Parse(text);
  cr_assert_not_null(root, "the JSON report does not parse");
  free(text);
  return root;
}

static cJSON *need(const cJSON *o, const char *key) {
  cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  cr_assert_not_null(v, "missing field '%s'", key);
  return v;
}

static void need_all(const cJSON *o, const char *const *keys) {
  for (; *keys; keys++) need(o, *keys);
}

static const char *const top_keys[] = {"convlab_version", "command", "problem", "inputs", "machine",
                                       "compile_flags", "tolerances", "oracle", "implementations",
                                       "comparisons", NULL};
static const char *const problem_keys[] = {"N", "C", "O", "L", "K", "D", "bias", "flops", NULL};
static const char *const inputs_keys[] = {"source", "dist", "seed", "trials", "files", NULL};
static const char *const files_keys[] = {"x", "w", "b", "y", NULL};
static const char *const machine_keys[] = {"cpu", "threads", "memory_bytes", "gpu", "gpu_unavailable", NULL};
static const char *const tolerance_keys[] = {"atol", "rtol", "lambda", "default_atol", "default_rtol", NULL};
static const char *const impl_keys[] = {"name", "backend", "precision", "summary", "status", "skip_reason",
                                        "trials", NULL};
static const char *const trial_keys[] = {"seed", "status", "error", "metrics", "histograms", "time_ms",
                                         "gflops", "algo", "math", "used_tf32", "repeat_identical",
                                         "profiles", "explanation", "tf32_model", NULL};
static const char *const explanation_keys[] = {"verdict", "reason", "model", "evidence", "region", NULL};
static const char *const evidence_keys[] = {"count", "nonfinite", "beyond_fp32_det", "beyond_fp32_prob",
                                            "beyond_tf32", "beyond_model", "rel_l2", "candidate_on_sample",
                                            "models", "fingerprint", "repeat_identical", NULL};
static const char *const region_keys[] = {"count", "fraction", "kind", "n", "o", "t", NULL};
static const char *const profile_keys[] = {"width", "mean", "max", NULL};
static const char *const metric_keys[] = {
    "count", "max_abs", "argmax_abs", "max_rel", "rel_l2", "ulp_p50", "ulp_p99", "ulp_max",
    "fail_default", "fail_default_frac", "fail_user", "fail_user_frac", "beyond_det", "beyond_det_frac",
    "beyond_prob", "beyond_prob_frac", "max_det_ratio", "max_prob_ratio", "nonfinite",
    "first_nonfinite", "nonfinite_ref", NULL};
static const char *const hist_keys[] = {"lo_log10", "hi_log10", "counts", "zero", "below", "above",
                                        "nonfinite", NULL};
static const char *const time_keys[] = {"median", "min", "repeats", NULL};
static const char *const comparison_keys[] = {"a", "b", "reference", "bound_u", "trials", NULL};

Test(reports, json_parses_and_carries_the_documented_top_level_fields) {
  cJSON *root = parsed();
  need_all(root, top_keys);
  need_all(need(root, "problem"), problem_keys);
  need_all(need(root, "inputs"), inputs_keys);
  need_all(need(need(root, "inputs"), "files"), files_keys);
  need_all(need(root, "machine"), machine_keys);
  need_all(need(root, "tolerances"), tolerance_keys);
  cr_expect_eq(cJSON_GetNumberValue(need(need(root, "problem"), "L")), 32);
  cr_expect(cJSON_IsFalse(need(need(root, "problem"), "bias")));
  cr_expect_str_eq(cJSON_GetStringValue(need(need(root, "inputs"), "source")), "generated");
  cr_expect_str_eq(cJSON_GetStringValue(need(need(root, "inputs"), "dist")), "conv_init");
  cr_expect(cJSON_IsNull(need(need(root, "machine"), "gpu")));
  cr_expect_str_eq(cJSON_GetStringValue(need(root, "command")), "convlab run --test");
  cr_expect(strlen(cJSON_GetStringValue(need(root, "compile_flags"))) > 10);
  cJSON_Delete(root);
}

Test(reports, json_gives_each_implementation_its_status_trials_metrics_and_histograms) {
  cJSON *root = parsed(), *impls = need(root, "implementations");
  cr_assert_eq(cJSON_GetArraySize(impls), 4);
  cJSON *impl;
  cJSON_ArrayForEach(impl, impls) need_all(impl, impl_keys);
  cJSON *naive = cJSON_GetArrayItem(impls, 0), *skip = cJSON_GetArrayItem(impls, 1),
        *fail = cJSON_GetArrayItem(impls, 2);
  cr_expect_str_eq(cJSON_GetStringValue(need(naive, "status")), "ran");
  cr_expect_str_eq(cJSON_GetStringValue(need(skip, "status")), "skipped");
  cr_expect_str_eq(cJSON_GetStringValue(need(skip, "skip_reason")), "never supported (test)");
  cr_expect_eq(cJSON_GetArraySize(need(skip, "trials")), 0);
  cr_expect_str_eq(cJSON_GetStringValue(need(fail, "status")), "failed");
  cJSON *ftrial = cJSON_GetArrayItem(need(fail, "trials"), 0);
  cr_expect_str_eq(cJSON_GetStringValue(need(ftrial, "error")), "broken, \"quoted\", on purpose");
  cr_expect(cJSON_IsNull(need(ftrial, "metrics")));

  cJSON *trials = need(naive, "trials");
  cr_assert_eq(cJSON_GetArraySize(trials), 2);
  cJSON *t = cJSON_GetArrayItem(trials, 1);
  need_all(t, trial_keys);
  cr_expect_eq(cJSON_GetNumberValue(need(t, "seed")), 1);
  need_all(need(t, "metrics"), metric_keys);
  need_all(need(t, "time_ms"), time_keys);
  cJSON *ex = need(t, "explanation");
  need_all(ex, explanation_keys);
  need_all(need(ex, "evidence"), evidence_keys);
  need_all(need(ex, "region"), region_keys);
  cr_expect_str_eq(cJSON_GetStringValue(need(ex, "verdict")), "fp32-rounding");
  need_all(need(need(t, "profiles"), "t"), profile_keys);
  need_all(need(need(t, "profiles"), "o"), profile_keys);
  cJSON *abs = need(need(t, "histograms"), "abs_err");
  need_all(abs, hist_keys);
  need_all(need(need(t, "histograms"), "bound_ratio"), hist_keys);
  double total = cJSON_GetNumberValue(need(abs, "zero")) + cJSON_GetNumberValue(need(abs, "below")) +
                 cJSON_GetNumberValue(need(abs, "above")) + cJSON_GetNumberValue(need(abs, "nonfinite"));
  cJSON *c;
  cJSON_ArrayForEach(c, need(abs, "counts")) total += cJSON_GetNumberValue(c);
  cr_expect_eq(total, cJSON_GetNumberValue(need(need(t, "metrics"), "count")),
               "the histogram accounts for every element");
  cr_expect(cJSON_IsNull(need(t, "used_tf32")), "a CPU implementation does not report TF32 use");
  cJSON_Delete(root);
}

Test(reports, json_carries_the_comparison) {
  cJSON *root = parsed(), *cmps = need(root, "comparisons");
  cr_assert_eq(cJSON_GetArraySize(cmps), 1);
  cJSON *cmp = cJSON_GetArrayItem(cmps, 0);
  need_all(cmp, comparison_keys);
  cr_expect_str_eq(cJSON_GetStringValue(need(cmp, "reference")), "kahan");
  cr_expect_eq(cJSON_GetNumberValue(need(cmp, "bound_u")), 0x1p-23);
  need_all(need(cJSON_GetArrayItem(need(cmp, "trials"), 0), "metrics"), metric_keys);
  cJSON_Delete(root);
}

Test(reports, json_writes_non_finite_numbers_as_null) {
  results.impls[0].trials[0].metrics.ulp_max = INFINITY;
  results.impls[0].trials[0].gflops = NAN;
  cJSON *root = parsed();
  cJSON *t = cJSON_GetArrayItem(need(cJSON_GetArrayItem(need(root, "implementations"), 0), "trials"), 0);
  cr_expect(cJSON_IsNull(need(need(t, "metrics"), "ulp_max")));
  cr_expect(cJSON_IsNull(need(t, "gflops")));
  cJSON_Delete(root);
}

// --- CSV ---------------------------------------------------------------------------------------

/* Splits one RFC 4180 line into at most max fields; returns the count. */
static int split_csv(const char *line, char fields[][600], int max) {
  int n = 0;
  const char *p = line;
  for (;;) {
    char *out = n < max ? fields[n] : NULL;
    size_t len = 0;
    if (*p == '"') {
      for (p++; *p && !(*p == '"' && p[1] != '"'); p++) {
        if (*p == '"') p++;
        if (out && len < 599) out[len++] = *p;
      }
      if (*p == '"') p++;
    } else {
      for (; *p && *p != ',' && *p != '\n'; p++)
        if (out && len < 599) out[len++] = *p;
    }
    if (out) out[len] = '\0';
    n++;
    if (*p != ',') return n;
    p++;
  }
}

static char *csv_text(void) {
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&buf, &size);
  c1d_report_csv(f, &meta, &results);
  fclose(f);
  return buf;
}

Test(reports, csv_has_the_documented_columns_and_one_row_per_implementation_and_trial) {
  int ncol = 0;
  const char *const *cols = c1d_report_csv_columns(&ncol);
  char *text = csv_text();
  static char fields[64][600];
  int rows = 0;
  for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    int n = split_csv(line, fields, 64);
    cr_expect_eq(n, ncol, "row %d has %d cells, the header %d: %s", rows, n, ncol, line);
    if (rows == 0)
      for (int i = 0; i < ncol && i < n; i++) cr_expect_str_eq(fields[i], cols[i]);
    if (rows > 0 && strcmp(fields[0], "failing") == 0) {
      cr_expect_str_eq(fields[4], "failed");
      cr_expect_str_eq(fields[6], "broken, \"quoted\", on purpose", "quoting survives a round trip");
    }
    rows++;
  }
  /* header + naive 2 + skipped 1 + failing 2 + kahan 2 + comparison 2 */
  cr_expect_eq(rows, 1 + 2 + 1 + 2 + 2 + 2);
  free(text);
}

Test(reports, csv_starts_with_identity_and_shape_columns) {
  int n = 0;
  const char *const *cols = c1d_report_csv_columns(&n);
  const char *const first[] = {"name", "reference", "backend", "precision", "status", "skip_reason",
                               "error", "trial", "seed", "N", "C", "O", "L", "K", "D", "bias"};
  for (unsigned i = 0; i < sizeof first / sizeof first[0]; i++) cr_expect_str_eq(cols[i], first[i]);
}

// --- console -----------------------------------------------------------------------------------

Test(reports, console_table_fits_in_100_columns_and_names_every_implementation) {
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&buf, &size);
  c1d_report_console(f, &meta, &results);
  fclose(f);
  for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
    cr_expect_leq(strlen(line), 100, "too wide: %s", line);
  free(buf);
  f = open_memstream(&buf, &size);
  c1d_report_console(f, &meta, &results);
  fclose(f);
  cr_expect(strstr(buf, "naive ") && strstr(buf, "kahan "));
  cr_expect(strstr(buf, "skipped: never supported (test)") != NULL);
  cr_expect(strstr(buf, "FAILED: broken") != NULL);
  cr_expect(strstr(buf, "compare: naive against kahan") != NULL);
  free(buf);
}

Test(reports, csv_gives_each_explained_row_its_verdict_and_region) {
  int ncol = 0, verdict = -1, region = -1;
  const char *const *cols = c1d_report_csv_columns(&ncol);
  for (int i = 0; i < ncol; i++) {
    if (strcmp(cols[i], "verdict") == 0) verdict = i;
    if (strcmp(cols[i], "region") == 0) region = i;
  }
  cr_assert(verdict >= 0 && region >= 0, "verdict and region columns");
  /* The rows in order, and what each should say (the runner's own explanation, as in the JSON). */
  const c1d_trial_result *expect[9] = {&results.impls[0].trials[0], &results.impls[0].trials[1], NULL,
                                       NULL, NULL, &results.impls[3].trials[0], &results.impls[3].trials[1],
                                       &results.comparisons[0].trials[0], &results.comparisons[0].trials[1]};
  char *text = csv_text();
  static char fields[64][600];
  int row = -1;
  for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), row++) {
    if (row < 0) continue; /* the header */
    cr_assert_lt(row, 9);
    split_csv(line, fields, 64);
    const c1d_trial_result *t = expect[row];
    if (!t) {
      cr_expect_str_eq(fields[verdict], "", "skipped or failed: no verdict (%s)", fields[0]);
      cr_expect_str_eq(fields[region], "");
      continue;
    }
    cr_assert(t->explained, "row %d was explained", row);
    cr_expect_str_eq(fields[verdict], c1d_verdict_name(t->explanation.verdict), "%s", fields[0]);
    cr_expect_str_eq(fields[region], c1d_region_class_name(t->explanation.region.cls), "%s", fields[0]);
  }
  cr_expect_str_eq(fields[verdict], "fp32-rounding", "naive against kahan: float32 rounding");
  free(text);
}

static char *console_text(const c1d_run_results *r) {
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&buf, &size);
  c1d_report_console(f, &meta, r);
  fclose(f);
  return buf;
}

Test(reports, console_prints_long_names_whole_and_wraps_long_reasons) {
  static const char name[] = "file:y_e_bug_channel_seventeen.npy";
  snprintf(results.impls[0].name, sizeof results.impls[0].name, "%s", name);
  snprintf(results.impls[1].skip_reason, sizeof results.impls[1].skip_reason,
           "a reason long enough to need two lines of the table: it names the missing piece, says why "
           "the piece matters here, and ends with the word END");
  char *text = console_text(&results);
  char line[128];
  snprintf(line, sizeof line, "\n%s\n", name);
  cr_expect(strstr(text, line) != NULL, "the long name on a line of its own, uncut: %s", text);
  cr_expect(strstr(text, "with the word END\n") != NULL, "the reason is not cut: %s", text);
  for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
    cr_expect_leq(strlen(l), 100, "too wide: %s", l);
  free(text);
}

Test(reports, console_legend_says_that_the_bound_columns_are_float32s) {
  char *text = console_text(&results);
  cr_expect(strstr(text, ">det%, >prob%: beyond float32's bounds, deterministic (gamma_n*m) and probabilistic") &&
                strstr(text, "TF32 and bf16 rows exceed them by design"),
            "%s", text);
  free(text);
}

Test(reports, console_says_in_one_line_that_there_are_no_verdicts_when_nothing_ran) {
  static const c1d_impl *only[] = {&skipped};
  c1d_run_config cfg;
  c1d_run_results none;
  c1d_run_config_default(&cfg);
  cfg.shape = (c1d_shape){.N = 1, .C = 4, .O = 3, .L = 32, .K = 2, .D = 1};
  cfg.impls = only;
  cfg.n_impls = 1;
  cfg.oracle = C1D_ORACLE_CPU;
  cr_assert_eq(c1d_run(&cfg, &none), C1D_OK, "%s", c1d_error_detail());
  char *text = console_text(&none);
  cr_expect(strstr(text, "\nverdicts: none (nothing ran here)\n") != NULL, "%s", text);
  cr_expect(strstr(text, "verdicts (is it") == NULL, "no empty verdicts header: %s", text);
  free(text);
  c1d_run_results_free(&none);
}

// --- the documentation -------------------------------------------------------------------------

/* docs/report-format.md as text, in a buffer of the test's. */
static const char *format_document(void) {
  static char doc[65536];
  FILE *f = fopen(C1D_SOURCE_DIR "/docs/report-format.md", "r");
  cr_assert_not_null(f, "docs/report-format.md is missing");
  const size_t n = fread(doc, 1, sizeof doc - 1, f);
  doc[n] = '\0';
  fclose(f);
  cr_expect_lt(n, sizeof doc - 1, "the document outgrew the test's buffer");
  return doc;
}

Test(reports, format_document_names_every_json_field_and_csv_column) {
  const char *doc = format_document();
  const char *const *lists[] = {top_keys, problem_keys, inputs_keys, machine_keys, tolerance_keys,
                                impl_keys, trial_keys, metric_keys, hist_keys, time_keys, comparison_keys,
                                explanation_keys, evidence_keys, region_keys, profile_keys};
  for (unsigned l = 0; l < sizeof lists / sizeof lists[0]; l++)
    for (const char *const *k = lists[l]; *k; k++) {
      char quoted[64], ticked[64];
      snprintf(quoted, sizeof quoted, "\"%s\"", *k);
      snprintf(ticked, sizeof ticked, "`%s`", *k);
      cr_expect(strstr(doc, quoted) || strstr(doc, ticked), "the document lacks JSON field %s", *k);
    }
  int ncol = 0;
  const char *const *cols = c1d_report_csv_columns(&ncol);
  for (int i = 0; i < ncol; i++) {
    char ticked[64];
    snprintf(ticked, sizeof ticked, "`%s`", cols[i]);
    cr_expect(strstr(doc, ticked) != NULL, "the document lacks CSV column %s", cols[i]);
  }
}

// --- issue 23: what a run leaves out, and rows of a reduced-precision output ----------------------

#include "harness/registry.h"
#include "numerics/arith.h"

extern const c1d_impl c1d_cpu_grouped_naive, c1d_cpu_bf16_products;

static char *json_of(const c1d_run_results *r) {
  char *text = c1d_report_json_text(&meta, r);
  cr_assert_not_null(text);
  return text;
}

static char *csv_of(const c1d_run_results *r) {
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&buf, &size);
  c1d_report_csv(f, &meta, r);
  fclose(f);
  return buf;
}

/* The console's lines joined where the table wrapped them (a newline and the name column's blanks). */
static void unwrap(char *text) {
  char *out = text;
  for (const char *p = text; *p;) {
    if (p[0] == '\n' && strncmp(p + 1, "                   ", 19) == 0) {
      *out++ = ' ';
      p += 20;
    } else {
      *out++ = *p++;
    }
  }
  *out = '\0';
}

/* Every main-tier implementation that can run here: what convlab run runs without --impl. */
static int default_selection(const c1d_impl **out, int max) {
  int n = 0, k = 0;
  const c1d_impl *const *table = c1d_registry(&n);
  for (int i = 0; i < n && k < max; i++)
    if (table[i]->tier == C1D_TIER_MAIN && !c1d_impl_unavailable(table[i])) out[k++] = table[i];
  return k;
}

static void run_small(const c1d_impl *const *impls, int n, c1d_shape s, c1d_run_results *res) {
  c1d_run_config cfg;
  c1d_run_config_default(&cfg);
  cfg.shape = s;
  cfg.impls = impls;
  cfg.n_impls = n;
  cfg.repeats = 1;
  cfg.oracle = C1D_ORACLE_CPU;
  cr_assert_eq(c1d_run(&cfg, res), C1D_OK, "%s", c1d_error_detail());
}

static void run_default(c1d_run_results *res) {
  const c1d_impl *impls[64];
  const int n = default_selection(impls, 64);
  cr_assert_gt(n, 0);
  run_small(impls, n, (c1d_shape){.N = 1, .C = 8, .O = 4, .L = 64, .K = 4, .D = 1}, res);
}

static void need_no_gpu(void) {
  if (!c1d_backend_unavailable(C1D_BACKEND_GPU)) cr_skip_test("this machine runs the GPU rows: none left out");
}

Test(reports_unavailable, a_default_run_lists_the_gpu_rows_in_one_line_with_the_reason) {
  need_no_gpu();
  c1d_run_results res;
  run_default(&res);
  int count = 0;
  const char *const *names = c1d_gpu_main_names(&count);
  cr_assert_geq(count, 4);
  char *text = console_text(&res), *copy = strdup(text);
  for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
    cr_expect_leq(strlen(l), 100, "too wide: %s", l);
  free(copy);
  unwrap(text);
  char line[512];
  snprintf(line, sizeof line, "\nGPU rows (%s, %s, %s, ... %d in all): not run: %s\n", names[0], names[1], names[2],
           count, c1d_backend_unavailable(C1D_BACKEND_GPU));
  cr_expect(strstr(text, line) != NULL, "no line '%s' in:\n%s", line, text);
  free(text);
  c1d_run_results_free(&res);
}

Test(reports_unavailable, a_default_runs_json_names_every_gpu_row_left_out_and_why) {
  need_no_gpu();
  c1d_run_results res;
  run_default(&res);
  char *text = json_of(&res);
  cJSON *root = cJSON_Parse(text);
  cr_assert_not_null(root);
  cJSON *left = need(root, "unavailable");
  cr_assert(cJSON_IsArray(left) && cJSON_GetArraySize(left) == 1, "one group: %s", cJSON_Print(left));
  cJSON *g = cJSON_GetArrayItem(left, 0), *names = need(g, "names");
  cr_expect_str_eq(cJSON_GetStringValue(need(g, "reason")), c1d_backend_unavailable(C1D_BACKEND_GPU));
  int count = 0;
  const char *const *expect = c1d_gpu_main_names(&count);
  cr_assert_eq(cJSON_GetArraySize(names), count);
  for (int i = 0; i < count; i++) cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetArrayItem(names, i)), expect[i]);
  cJSON_Delete(root);
  free(text);
  /* The CSV: a skipped row each, with the reason, as --impl naming them gives. */
  char *csv = csv_of(&res);
  char row[256];
  snprintf(row, sizeof row, "\n%s,oracle,gpu,", expect[0]);
  cr_expect(strstr(csv, row) != NULL, "no CSV row for %s:\n%s", expect[0], csv);
  cr_expect(strstr(csv, c1d_backend_unavailable(C1D_BACKEND_GPU)) != NULL);
  free(csv);
  c1d_run_results_free(&res);
}

Test(reports, a_run_of_named_implementations_leaves_nothing_unlisted) {
  char *text = json_of(&results);
  cJSON *root = cJSON_Parse(text);
  cr_assert_not_null(root);
  cJSON *left = need(root, "unavailable");
  cr_expect(cJSON_IsArray(left) && cJSON_GetArraySize(left) == 0, "--impl named them: nothing left out");
  cJSON_Delete(root);
  free(text);
  char *console = console_text(&results);
  cr_expect(strstr(console, "GPU rows (") == NULL, "%s", console);
  free(console);
}

Test(reports_unavailable, names_every_main_gpu_row_of_a_cuda_build) {
  int count = 0, n = 0, gpu_rows = 0;
  const char *const *names = c1d_gpu_main_names(&count);
  const c1d_impl *const *table = c1d_registry(&n);
  for (int i = 0; i < count; i++) {
    const c1d_impl *impl = c1d_find_impl(names[i]); /* NULL in a build without CUDA */
    cr_expect(!impl || (impl->backend == C1D_BACKEND_GPU && impl->tier == C1D_TIER_MAIN),
              "%s is not a main-tier GPU row", names[i]);
  }
  for (int i = 0; i < n; i++) {
    if (table[i]->backend != C1D_BACKEND_GPU || table[i]->tier != C1D_TIER_MAIN) continue;
    int listed = 0;
    for (int j = 0; j < count; j++) listed |= strcmp(names[j], table[i]->name) == 0;
    cr_expect(listed, "%s is missing from c1d_gpu_main_names (harness/registry.c)", table[i]->name);
    gpu_rows++;
  }
  cr_expect(gpu_rows == 0 || gpu_rows == count, "%d main GPU rows in the table, %d listed", gpu_rows, count);
}

// --- a bf16 output: ULPs in bf16, the contract's bounds, no TF32 model ------------------------------

#define BF16_XWY {C1D_DTYPE_BF16, C1D_DTYPE_BF16, C1D_DTYPE_F32, C1D_DTYPE_F32, C1D_DTYPE_BF16}

Test(reports_lowp, a_correctly_rounded_bf16_row_is_0_ulp_and_within_its_contracts_bounds) {
  static const c1d_impl *impls[] = {&c1d_cpu_grouped_naive, &c1d_cpu_bf16_products};
  c1d_shape s = {.N = 1, .C = 64, .O = 16, .L = 256, .K = 4, .D = 1, .bias = 1, .dt = BF16_XWY};
  s.dt.b = C1D_DTYPE_BF16;
  c1d_run_results res;
  run_small(impls, 2, s, &res);
  const c1d_trial_result *t = &res.impls[0].trials[0];
  cr_assert_eq(res.impls[0].state, C1D_RESULT_RAN);
  cr_assert(t->explained && t->explanation.exact == t->explanation.count,
            "grouped_naive rounds every bf16 output correctly here: %s", t->explanation.reason);
  cr_expect_eq(t->metrics.ulp_p50, 0.0, "ulp50 %g: in bf16 ulps a correctly rounded output is 0 away",
               t->metrics.ulp_p50);
  cr_expect_eq(t->metrics.ulp_max, 0.0, "ulpmax %g", t->metrics.ulp_max);
  cr_expect_eq(t->metrics.beyond_det, 0, "%lld beyond the contract's deterministic bound",
               (long long)t->metrics.beyond_det);
  cr_expect_eq(t->metrics.beyond_prob, 0, "%lld beyond the contract's probabilistic bound",
               (long long)t->metrics.beyond_prob);
  /* The products rounded to bf16 are beyond the contract: the bounds still see them. */
  const c1d_metrics *m = &res.impls[1].trials[0].metrics;
  cr_expect_gt(m->beyond_det, 0, "bf16_products exceeds the contract's bound somewhere");
  cr_expect_gt(m->ulp_p99, 0.0);
  char *text = console_text(&res);
  cr_expect(strstr(text, "ulp (bf16): distance in bf16 ulps") != NULL, "the legend says the ULPs' type: %s", text);
  cr_expect(strstr(text, "plus half an ulp of bf16") != NULL, "the legend says the bounds' rounding: %s", text);
  for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
    cr_expect_leq(strlen(l), 100, "too wide: %s", l);
  free(text);
  char *json = json_of(&res);
  cJSON *root = cJSON_Parse(json);
  cJSON *mj = need(cJSON_GetArrayItem(need(cJSON_GetArrayItem(need(root, "implementations"), 0), "trials"), 0),
                   "metrics");
  cr_expect_str_eq(cJSON_GetStringValue(need(mj, "ulp_type")), "bf16");
  cJSON_Delete(root);
  free(json);
  c1d_run_results_free(&res);
}

Test(reports_lowp, metrics_count_ulps_in_the_outputs_own_type) {
  const double exact[4] = {1.0 + 0x1p-12, 3.0 + 0x1p-9, -0.1, 1e-6};
  for (int dt = 1; dt <= 2; dt++) {
    const float step = dt == 1 ? 0x1p-7f : 0x1p-10f; /* one ulp at 1.0 */
    float y[4];
    for (int i = 0; i < 4; i++) y[i] = dt == 1 ? c1d_round_bf16((float)exact[i]) : c1d_round_fp16((float)exact[i]);
    y[0] = 1.0f + step; /* one ulp above the rounded 1.0 */
    c1d_metric_options opt;
    c1d_metric_options_default(&opt);
    opt.out_dtype = dt;
    c1d_metrics m;
    cr_assert_eq(c1d_metrics_compute(y, exact, 4, &opt, &m), 0);
    cr_expect_eq(m.ulp_max, 1.0, "type %d: the largest distance is one step of the type (got %g)", dt, m.ulp_max);
    cr_expect_eq(m.ulp_p50, 0.0, "type %d: the others are correctly rounded", dt);
    cr_expect_eq(m.ulp_dtype, dt);
  }
}

Test(reports_lowp, the_problem_line_names_the_types_of_the_tensors_the_problem_has) {
  static const c1d_impl *impls[] = {&c1d_cpu_grouped_naive};
  const c1d_dtypes all = {C1D_DTYPE_BF16, C1D_DTYPE_BF16, C1D_DTYPE_BF16, C1D_DTYPE_BF16, C1D_DTYPE_BF16};
  for (int bias = 0; bias < 2; bias++) {
    c1d_run_results res; /* --dtype all=bf16, with and without --bias */
    run_small(impls, 1, (c1d_shape){.N = 1, .C = 8, .O = 4, .L = 64, .K = 4, .D = 1, .bias = bias, .dt = all}, &res);
    char *text = console_text(&res), first[256];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(text, "\n"), text); /* the problem line */
    free(text);
    cr_expect(strstr(first, bias ? "bias=1" : "bias=0"), "%s", first);
    cr_expect(!strstr(first, "b=bf16") == !bias, "b's type only with a bias: %s", first);
    cr_expect(!strstr(first, " s=bf16"), "no states: no states' type: %s", first);
    char *json = json_of(&res);
    cJSON *root = cJSON_Parse(json);
    cJSON *dt = need(need(root, "problem"), "dtypes");
    cr_expect_str_eq(cJSON_GetStringValue(need(dt, "b")), bias ? "bf16" : "f32");
    cJSON_Delete(root);
    free(json);
    c1d_run_results_free(&res);
  }
}

Test(reports_lowp, no_tf32_model_is_reported_where_rounding_to_tf32_changes_nothing) {
  static const c1d_impl *impls[] = {&c1d_cpu_grouped_naive};
  c1d_run_results res;
  run_small(impls, 1, (c1d_shape){.N = 1, .C = 64, .O = 16, .L = 256, .K = 4, .D = 1, .dt = BF16_XWY}, &res);
  const c1d_trial_result *t = &res.impls[0].trials[0];
  cr_assert(t->explained);
  cr_expect(!c1d_model_applies(&t->explanation, C1D_MODEL_TF32_RNA), "bf16 inputs are TF32 values");
  cr_expect(c1d_model_applies(&t->explanation, C1D_MODEL_FP32));
  char *json = json_of(&res);
  cJSON *root = cJSON_Parse(json);
  cJSON *trial = cJSON_GetArrayItem(need(cJSON_GetArrayItem(need(root, "implementations"), 0), "trials"), 0);
  cJSON *models = need(need(need(trial, "explanation"), "evidence"), "models");
  cr_expect_eq(cJSON_GetArraySize(need(models, "tf32_rna")), 0, "tf32_rna: {} (no 0 where nothing applies)");
  cr_expect_not_null(cJSON_GetObjectItem(need(models, "fp32"), "rel_l2"));
  cr_expect(cJSON_IsNull(need(trial, "tf32_model")));
  cJSON_Delete(root);
  free(json);
  c1d_run_results_free(&res);
}

/* The naive order's output moved by a constant everywhere: a bug across the whole output. */
static c1d_status offset_run(const c1d_shape *s, const float *x, const float *w, const float *b, float *y,
                             c1d_exec *ex) {
  c1d_status st = c1d_cpu_naive.run(s, x, w, b, y, ex);
  for (int64_t i = 0; st == C1D_OK && i < c1d_y_count(s); i++) y[i] += 0.01f;
  return st;
}
static const c1d_impl offset_everywhere = {.name = "offset_everywhere", .summary = "naive + 0.01 (test)",
                                           .backend = C1D_BACKEND_CPU, .precision = C1D_PREC_FP32,
                                           .run = offset_run};

Test(reports, a_bug_everywhere_reads_as_a_sentence) {
  static const c1d_impl *impls[] = {&offset_everywhere};
  c1d_run_results res;
  run_small(impls, 1, (c1d_shape){.N = 2, .C = 16, .O = 8, .L = 256, .K = 4, .D = 1}, &res);
  const c1d_explanation *e = &res.impls[0].trials[0].explanation;
  cr_assert(res.impls[0].trials[0].explained);
  cr_assert_eq(e->verdict, C1D_VERDICT_BUG_GLOBAL, "%s", e->reason);
  cr_expect(strstr(e->reason, "a bug in everywhere") == NULL, "%s", e->reason);
  cr_expect(strstr(e->reason, "a bug across the whole output (n ") != NULL, "%s", e->reason);
  c1d_run_results_free(&res);
}

Test(reports, format_document_names_the_unavailable_groups_and_the_ulps_type) {
  const char *doc = format_document();
  static const char *const fields[] = {"\"unavailable\"", "\"names\"", "\"reason\"", "`ulp_type`"};
  for (unsigned i = 0; i < sizeof fields / sizeof fields[0]; i++)
    cr_expect(strstr(doc, fields[i]) != NULL, "the document lacks %s", fields[i]);
}
