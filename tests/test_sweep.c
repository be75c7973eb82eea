/* convlab sweep as a user meets it: the binary on a tiny grid (n = 4..4096 in the C series, a short K
 * series, 512 outputs per shape, two trials; a few seconds), then its CSV read back: the documented
 * columns, one row per (series, implementation, n, trial), n = C*K, the models' predictions, and the
 * growth exponents: about 1/2 for the naive float32 order, about 0 for TF32 inputs, refitted here from
 * the CSV and equal to the ones the summary prints. Bad command lines write nothing. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/process.h"

#define MAX_ROWS 512
#define MAX_COLS 32

static char dir[64];

static void make_dir(void) { c1d_test_make_dir(dir, "c1d_sweep"); }
static void remove_dir(void) { c1d_test_remove_dir(dir); }

TestSuite(sweep, .init = make_dir, .fini = remove_dir, .timeout = 120);

/* convlab with args (NULL-terminated); stdout and stderr into *out and *err (caller frees). */
static int run_convlab(const char *const *args, char **out, char **err) {
  char out_path[128], err_path[128];
  snprintf(out_path, sizeof out_path, "%s/stdout", dir);
  snprintf(err_path, sizeof err_path, "%s/stderr", dir);
  const char *argv[40] = {C1D_TEST_CONVLAB};
  for (int i = 0; args[i] && i < 38; i++) argv[i + 1] = args[i];
  const int code = c1d_test_spawn(argv, out_path, err_path);
  *out = c1d_test_slurp(out_path, NULL);
  *err = c1d_test_slurp(err_path, NULL);
  cr_assert(*out && *err);
  return code;
}

// --- the CSV -------------------------------------------------------------------------------------

static const char *const expected_columns[] = {
    "series", "impl", "backend", "precision", "dist", "n", "C", "K", "N", "O", "L", "trial", "seed",
    "status", "rel_l2", "max_rel", "max_abs", "ulp_p50", "ulp_p99", "beyond_det_frac", "beyond_prob_frac",
    "max_det_ratio", "cond", "verdict", "model_fp32_rel_l2", "model_tf32_rel_l2", "model_tf32_trunc_rel_l2",
    "model_bf16_rel_l2"};
#define N_COLS ((int)(sizeof expected_columns / sizeof expected_columns[0]))

typedef struct table {
  int rows;
  char cell[MAX_ROWS][MAX_COLS][48];
} table;

static int col(const char *name) {
  for (int i = 0; i < N_COLS; i++)
    if (!strcmp(expected_columns[i], name)) return i;
  cr_assert_fail("no column %s", name);
  return -1;
}

static const char *get(const table *t, int row, const char *name) { return t->cell[row][col(name)]; }
static double num(const table *t, int row, const char *name) {
  const char *s = get(t, row, name);
  return s[0] ? strtod(s, NULL) : NAN;
}

/* Splits the CSV (no quoting: the sweep writes none) and checks the header. */
static void read_table(const char *csv, table *t) {
  t->rows = -1; /* the header */
  for (const char *line = csv; *line && t->rows < MAX_ROWS;) {
    const char *end = strchr(line, '\n');
    cr_assert_not_null(end, "the CSV does not end with a newline");
    int c = 0;
    for (const char *p = line; p <= end; c++) {
      const char *stop = memchr(p, ',', (size_t)(end - p));
      if (!stop) stop = end;
      cr_assert_lt(c, N_COLS, "too many cells in: %.*s", (int)(end - line), line);
      if (t->rows < 0)
        cr_expect(strncmp(p, expected_columns[c], (size_t)(stop - p)) == 0 &&
                      strlen(expected_columns[c]) == (size_t)(stop - p),
                  "column %d is '%.*s', wanted '%s'", c, (int)(stop - p), p, expected_columns[c]);
      else
        snprintf(t->cell[t->rows][c], sizeof t->cell[0][0], "%.*s", (int)(stop - p), p);
      p = stop + 1;
    }
    cr_assert_eq(c, N_COLS, "%d cells in: %.*s", c, (int)(end - line), line);
    t->rows++;
    line = end + 1;
  }
}

/* Least-squares slope of log(rel_l2) on log(n) over the rows of impl in a series. */
static double slope(const table *t, const char *impl, const char *series, int *points) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int k = 0;
  for (int r = 0; r < t->rows; r++) {
    if (strcmp(get(t, r, "impl"), impl) || strcmp(get(t, r, "series"), series)) continue;
    const double x = log(num(t, r, "n")), y = log(num(t, r, "rel_l2"));
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
    k++;
  }
  *points = k;
  return (k * sxy - sx * sy) / (k * sxx - sx * sx);
}

/* The exponent the summary prints for impl and series ("naive normal C 22 ... 0.491"). */
static double printed_exponent(const char *out, const char *impl, const char *series) {
  for (const char *line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    char name[64], dist[32], ser[8];
    int points;
    if (sscanf(line, "%63s %31s %7s %d", name, dist, ser, &points) != 4) continue;
    if (strcmp(name, impl) || strcmp(ser, series)) continue;
    const char *end = strchr(line, '\n');
    const char *last = end ? end : line + strlen(line);
    while (last > line && last[-1] == ' ') last--;
    while (last > line && last[-1] != ' ') last--;
    return strtod(last, NULL);
  }
  cr_assert_fail("the summary has no line for %s, series %s:\n%s", impl, series, out);
  return NAN;
}

// --- the tests -----------------------------------------------------------------------------------

Test(sweep, fits_one_half_for_the_naive_order_and_zero_for_tf32_inputs) {
  char out_dir[128], csv_path[160], txt_path[160];
  snprintf(out_dir, sizeof out_dir, "%s/out", dir);
  snprintf(csv_path, sizeof csv_path, "%s/sweep.csv", out_dir);
  snprintf(txt_path, sizeof txt_path, "%s/sweep.txt", out_dir);
  /* C series n = 4..4096 (11 shapes), K series C=4, K = 1..16 (5 shapes); 512 outputs each. */
  const char *args[] = {"sweep", "--impl", "naive,tf32_inputs", "--trials", "2", "--n-max", "4096",
                        "--cout", "8", "--length", "64", "--k-cin", "4", "--k-max", "16", "--out", out_dir,
                        NULL};
  char *out, *err;
  const int code = run_convlab(args, &out, &err);
  cr_assert_eq(code, 0, "convlab sweep exited with %d: %s", code, err);
  char *csv = c1d_test_slurp(csv_path, NULL), *txt = c1d_test_slurp(txt_path, NULL);
  cr_assert(csv && txt, "sweep.csv and sweep.txt under --out");
  cr_expect_str_eq(txt, out, "sweep.txt is the printed summary");

  static table t;
  read_table(csv, &t);
  cr_assert_eq(t.rows, (11 + 5) * 2 * 2, "one row per series, n, implementation and trial");
  for (int r = 0; r < t.rows; r++) {
    cr_expect_str_eq(get(&t, r, "status"), "ok");
    cr_expect_eq(num(&t, r, "n"), num(&t, r, "C") * num(&t, r, "K"));
    cr_expect_gt(num(&t, r, "rel_l2"), 0.0);
    cr_expect_geq(num(&t, r, "cond"), 1.0, "||m|| >= ||y||");
    /* On every output (512 < the explainer's sample): the fp32 model is the naive order itself, so its
     * rel L2 is the naive row's; the TF32 model is the exact error of TF32 inputs, which the
     * tf32_inputs row carries plus its float32 accumulation error (about 1/500 of it). */
    const int naive = !strcmp(get(&t, r, "impl"), "naive");
    const char *model = naive ? "model_fp32_rel_l2" : "model_tf32_rel_l2";
    cr_expect_float_eq(num(&t, r, model), num(&t, r, "rel_l2"), (naive ? 1e-6 : 1e-2) * num(&t, r, "rel_l2"),
                       "row %d: %s", r, model);
    cr_expect_str_eq(get(&t, r, "verdict"), !strcmp(get(&t, r, "impl"), "naive") ? "fp32-rounding" : "tf32-inputs");
  }

  int points;
  const double naive = slope(&t, "naive", "C", &points), tf32 = slope(&t, "tf32_inputs", "C", &points);
  cr_expect_eq(points, 22);
  cr_expect(naive >= 0.3 && naive <= 0.8, "naive order: rel L2 ~ n^%.3f, expected about n^0.5", naive);
  cr_expect(tf32 >= -0.2 && tf32 <= 0.2, "TF32 inputs: rel L2 ~ n^%.3f, expected about n^0", tf32);
  cr_expect_float_eq(printed_exponent(out, "naive", "C"), naive, 0.0015);
  cr_expect_float_eq(printed_exponent(out, "tf32_inputs", "C"), tf32, 0.0015);
  cr_expect_float_eq(printed_exponent(out, "tf32_inputs", "K"), slope(&t, "tf32_inputs", "K", &points), 0.0015);
  free(csv);
  free(txt);
  free(out);
  free(err);
}

static int line_count(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

/* Arrays, not pointers: Criterion hands parameters to another process. "" ends args. */
typedef struct bad_line {
  char args[8][24];
  char message[48];
} bad_line;

static bad_line bad_lines[] = {
    {{"--impl", "nosuch"}, "unknown implementation 'nosuch'"},
    {{"--dist", "integer"}, "every sum exact"},
    {{"--dist", "gaussian"}, "gaussian"},
    {{"--n-max", "2", "--taps", "4"}, "C series would be empty"},
    {{"--trials", "0"}, "--trials"},
    {{"--bogus"}, "--bogus"},
};

ParameterizedTestParameters(sweep, bad_command_lines_exit_2_and_write_nothing) {
  return cr_make_param_array(bad_line, bad_lines, sizeof bad_lines / sizeof bad_lines[0]);
}

ParameterizedTest(bad_line *b, sweep, bad_command_lines_exit_2_and_write_nothing) {
  char out_dir[128];
  snprintf(out_dir, sizeof out_dir, "%s/out", dir);
  const char *args[16] = {"sweep", "--out", out_dir};
  int n = 3;
  for (int i = 0; b->args[i][0]; i++) args[n++] = b->args[i];
  args[n] = NULL;
  char *out, *err;
  cr_expect_eq(run_convlab(args, &out, &err), 2);
  cr_expect(strstr(err, b->message), "stderr '%s' lacks '%s'", err, b->message);
  cr_expect_eq(line_count(err), 1, "one line on stderr: %s", err);
  cr_expect_str_eq(out, "");
  cr_expect_neq(access(out_dir, F_OK), 0, "--out was created");
  free(out);
  free(err);
}
