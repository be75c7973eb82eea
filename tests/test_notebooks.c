/* The notebooks run on reports the tests produce. Each test writes inputs as .npy files, has convlab run
 * them (report.json, the HTML, every output saved, and an output of "yours" stored in fp16) and sweep a
 * small grid (sweep.csv), then executes one notebook with Debian's Jupyter (/usr/bin/python3 -m
 * nbconvert --execute) pointed there through CONVLAB_REPORT_DIR and CONVLAB_SWEEP_DIR, given as paths
 * relative to the repository root, as a user who ran convlab from there would give them (nbconvert runs
 * a notebook in notebooks/, so this fails unless the notebooks resolve them from the root). A notebook
 * passes when every cell ran without an error and it drew its figures. The executed notebooks stay in
 * the build directory (tests/notebooks/) for a person to read. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/inputs.h"
#include "harness/npy.h"
#include "numerics/arith.h"
#include "tests/support/process.h"

#define PYTHON "/usr/bin/python3"
#define KEEP_DIR C1D_BINARY_DIR "/tests/notebooks"

static char dir[64];

static void make_dir(void) {
  c1d_test_make_dir(dir, "c1d_nb");
  mkdir(C1D_BINARY_DIR "/tests", 0777);
  mkdir(KEEP_DIR, 0777);
}

static void remove_dir(void) { c1d_test_remove_dir(dir); }

TestSuite(notebooks, .init = make_dir, .fini = remove_dir, .timeout = 300);

/* Runs argv (NULL-terminated), stdout and stderr to dir/log; the exit code, or -1 on a signal. */
static int spawn(const char *const *argv) {
  char log[128];
  snprintf(log, sizeof log, "%s/log", dir);
  return c1d_test_spawn(argv, log, NULL);
}

/* The last part of the log, for a failure message (static buffer). */
static const char *log_tail(void) {
  char path[128];
  snprintf(path, sizeof path, "%s/log", dir);
  return c1d_test_tail(path);
}

/* Skips the test when Debian's Python lacks a module the notebooks need, naming the packages. */
static void need_jupyter(void) {
  static const char *const modules[][2] = {{"nbconvert", "python3-nbconvert"}, {"ipykernel", "python3-ipykernel"},
                                           {"matplotlib", "python3-matplotlib"}, {"numpy", "python3-numpy"}};
  char missing[256] = "";
  if (access(PYTHON, X_OK) != 0) cr_skip_test(PYTHON " is absent: the notebooks cannot run here");
  for (unsigned i = 0; i < sizeof modules / sizeof modules[0]; i++) {
    const char *argv[] = {PYTHON, "-c", NULL, NULL};
    char code[64];
    snprintf(code, sizeof code, "import %s", modules[i][0]);
    argv[2] = code;
    if (spawn(argv) != 0) {
      strcat(missing, missing[0] ? ", " : "");
      strcat(missing, modules[i][1]);
    }
  }
  if (missing[0])
    cr_skip_test(PYTHON " lacks %s (scripts/deps.sh test installs them): the notebooks cannot run here", missing);
}

/* abs (an absolute path) as seen from the repository root: "../../tmp/c1d_nb_x/report". */
static void from_root(const char *abs, char *out, size_t size) {
  char root[PATH_MAX];
  cr_assert_not_null(realpath(C1D_SOURCE_DIR, root));
  out[0] = '\0';
  for (const char *p = root; *p; p++)
    if (*p == '/') strncat(out, "../", size - strlen(out) - 1);
  strncat(out, abs + 1, size - strlen(out) - 1);
}

/* The naive output of dir/report's run rounded to fp16, as dir/y_fp16.npy: a row whose error is
 * reduced-precision storage, which the TF32 notebook must not count among its FP32 rows. */
static void write_fp16_output(const char *report, char *path, size_t size) {
  char naive[200];
  float *y = NULL;
  c1d_npy_header h;
  snprintf(naive, sizeof naive, "%s/outputs/naive.npy", report);
  cr_assert_eq(c1d_npy_read_f32(naive, 0, &y, &h, NULL), C1D_OK, "%s", c1d_error_detail());
  for (int64_t i = 0; i < h.count; i++) y[i] = c1d_round_fp16(y[i]);
  snprintf(path, size, "%s/y_fp16.npy", dir);
  cr_assert_eq(c1d_npy_write_f32(path, y, h.ndim, h.shape), C1D_OK);
  free(y);
}

/* dir/report: a run on inputs from files (so the TF32 notebook can recompute the model element by
 * element) with every output saved and the HTML, and a small sweep. */
static void make_reports(char *report, size_t size) {
  const c1d_shape s = {2, 32, 16, 256, 4, 2, 1};
  float *x = malloc((size_t)c1d_x_count(&s) * sizeof *x), *w = malloc((size_t)c1d_w_count(&s) * sizeof *w),
        *b = malloc((size_t)c1d_b_count(&s) * sizeof *b);
  cr_assert(x && w && b);
  c1d_generate(&s, C1D_DIST_CONV_INIT, 3, x, w, b);
  char xp[128], wp[128], bp[128], outputs[160];
  snprintf(xp, sizeof xp, "%s/x.npy", dir);
  snprintf(wp, sizeof wp, "%s/w.npy", dir);
  snprintf(bp, sizeof bp, "%s/b.npy", dir);
  const int64_t xs[3] = {s.N, s.C, s.L}, ws[3] = {s.O, s.C, s.K}, bs[1] = {s.O};
  cr_assert_eq(c1d_npy_write_f32(xp, x, 3, xs), C1D_OK);
  cr_assert_eq(c1d_npy_write_f32(wp, w, 3, ws), C1D_OK);
  cr_assert_eq(c1d_npy_write_f32(bp, b, 1, bs), C1D_OK);
  free(x);
  free(w);
  free(b);
  snprintf(report, size, "%s/report", dir);
  snprintf(outputs, sizeof outputs, "%s/outputs", report);
  const char *run[] = {C1D_TEST_CONVLAB, "run", "--x", xp, "--w", wp, "--b", bp, "--dilation", "2", "--bias",
                       "--impl", "naive,tap_partial,kahan,tf32_inputs", "--out", report, "--html",
                       "--save-outputs", outputs, NULL, NULL, NULL};
  cr_assert_eq(spawn(run), 0, "convlab run: %s", log_tail());
  char y16[160];
  write_fp16_output(report, y16, sizeof y16);
  run[18] = "--y"; /* the same run again, with that output of "yours" as a row */
  run[19] = y16;
  cr_assert_eq(spawn(run), 0, "convlab run --y: %s", log_tail());
  const char *sweep[] = {C1D_TEST_CONVLAB, "sweep", "--impl", "naive,kahan,tf32_inputs", "--trials", "2", "--n-max", "1024",
                         "--cout", "8", "--length", "64", "--k-cin", "4", "--k-max", "16", "--out", report, NULL};
  cr_assert_eq(spawn(sweep), 0, "convlab sweep: %s", log_tail());
}

static int count(const char *s, const char *needle) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

typedef struct notebook {
  char name[48];
  int figures; /* PNG outputs it draws on these reports */
} notebook;

static notebook notebooks_list[] = {{"error_distributions", 3}, {"tf32_vs_fp32", 4}, {"error_growth", 3}};

ParameterizedTestParameters(notebooks, executes_without_errors_on_fresh_reports) {
  return cr_make_param_array(notebook, notebooks_list, sizeof notebooks_list / sizeof notebooks_list[0]);
}

ParameterizedTest(notebook *nb, notebooks, executes_without_errors_on_fresh_reports) {
  need_jupyter();
  char report[128], source[256], executed[256];
  make_reports(report, sizeof report);
  snprintf(source, sizeof source, C1D_SOURCE_DIR "/notebooks/%s.ipynb", nb->name);
  snprintf(executed, sizeof executed, KEEP_DIR "/%s.ipynb", nb->name);
  char relative[PATH_MAX];
  from_root(report, relative, sizeof relative);
  setenv("CONVLAB_REPORT_DIR", relative, 1);
  setenv("CONVLAB_SWEEP_DIR", relative, 1);
  setenv("MPLBACKEND", "Agg", 1);
  setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1", 1); /* the kernel's debugger note about frozen modules */
  const char *argv[] = {PYTHON, "-m", "nbconvert", "--to", "notebook", "--execute",
                        "--ExecutePreprocessor.kernel_name=python3", "--ExecutePreprocessor.timeout=240",
                        "--output-dir", KEEP_DIR, source, NULL};
  const int code = spawn(argv);
  cr_assert_eq(code, 0, "nbconvert --execute %s exited with %d:\n%s", nb->name, code, log_tail());
  char *text = c1d_test_slurp(executed, NULL);
  cr_assert_not_null(text, "no executed notebook at %s", executed);
  cr_expect_eq(count(text, "\"output_type\": \"error\""), 0, "%s has an error output", nb->name);
  cr_expect_geq(count(text, "\"image/png\""), nb->figures, "%s drew %d figures", nb->name, count(text, "\"image/png\""));
  if (strcmp(nb->name, "tf32_vs_fp32") == 0) {
    const char *fp32 = strstr(text, "FP32 rows: [");
    cr_assert_not_null(fp32, "the notebook lists its FP32 rows");
    cr_expect(strncmp(fp32, "FP32 rows: ['naive', 'tap_partial', 'kahan']", 44) == 0,
              "the fp16-stored output is no FP32 row: %.80s", fp32);
  }
  free(text);
}

/* A report directory that is not there: the error names the file by its full path (not a relative
 * one that, read from where the user stands, may well exist) and the command that writes it. */
Test(notebooks, name_a_missing_report_in_full_with_the_command_that_writes_it) {
  need_jupyter();
  char missing[128], relative[PATH_MAX], source[256], expected[256];
  snprintf(missing, sizeof missing, "%s/none", dir);
  from_root(missing, relative, sizeof relative);
  setenv("CONVLAB_REPORT_DIR", relative, 1);
  setenv("MPLBACKEND", "Agg", 1);
  setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1", 1);
  snprintf(source, sizeof source, C1D_SOURCE_DIR "/notebooks/error_distributions.ipynb");
  const char *argv[] = {PYTHON, "-m", "nbconvert", "--to", "notebook", "--execute", "--output-dir", dir,
                        "--ExecutePreprocessor.kernel_name=python3", source, NULL};
  cr_assert_neq(spawn(argv), 0, "the notebook ran without its report");
  snprintf(expected, sizeof expected, "FileNotFoundError: %s/report.json is missing", missing);
  const char *log = log_tail();
  cr_expect(strstr(log, expected) != NULL, "the error names %s: %s", expected, log);
  cr_expect(strstr(log, "convlab run --out") != NULL, "and the command: %s", log);
}

/* The committed notebooks carry no outputs: they are sources, not results. */
ParameterizedTestParameters(notebooks, are_committed_with_outputs_cleared) {
  return cr_make_param_array(notebook, notebooks_list, sizeof notebooks_list / sizeof notebooks_list[0]);
}

ParameterizedTest(notebook *nb, notebooks, are_committed_with_outputs_cleared) {
  char source[256];
  snprintf(source, sizeof source, C1D_SOURCE_DIR "/notebooks/%s.ipynb", nb->name);
  char *text = c1d_test_slurp(source, NULL);
  cr_assert_not_null(text, "no notebook at %s", source);
  cr_expect_eq(count(text, "\"outputs\": []"), count(text, "\"cell_type\": \"code\""), "%s has outputs", nb->name);
  cr_expect_eq(count(text, "\"execution_count\": null"), count(text, "\"cell_type\": \"code\""),
               "%s has execution counts", nb->name);
  free(text);
}
