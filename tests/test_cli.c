/* The convlab program as a user meets it: the built binary is spawned with each bad command line and
 * must exit with 2 (usage) or 1 (a failure) after exactly one line on stderr that names the problem,
 * printing nothing on stdout; good command lines print what they promise, and --out appears whole or
 * not at all. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness/estimate.h"
#include "harness/execute.h"
#include "harness/memory.h"
#include "harness/npy.h"
#include "harness/registry.h"
#include "reference/oracle.h"
#include "tests/support/convlab_run.h"
#include "tests/support/process.h"

#define MAX_ARGS 16

// --- running the binary ------------------------------------------------------------------------

static char dir[64];

static void make_dir(void) { c1d_test_make_dir(dir, "c1d_cli"); }
static void remove_dir(void) { c1d_test_remove_dir(dir); }
/* A skipped test never reaches the suite's .fini: its directory goes first. */
#define SKIP_TEST(...)         \
  do {                         \
    remove_dir();              \
    cr_skip_test(__VA_ARGS__); \
  } while (0)

TestSuite(cli, .init = make_dir, .fini = remove_dir, .timeout = 120);

typedef c1d_outcome outcome;

static void run_convlab(const char *const *args, outcome *o) { c1d_test_run_convlab(dir, args, o); }

static int line_count(const char *s) { return c1d_test_line_count(s); }

static void expect_one_line_error(const outcome *o, int code, const char *message) {
  c1d_test_expect_one_line_error(o, code, message);
}

static const char *path_of(const char *name) { return c1d_test_path(dir, name); }

/* x (N=2, C=4, L=16), w (O=3, C, K=2), b (O), y (N, O, L) with simple values. */
static void write_tensors(int w_channels) {
  float x[2 * 4 * 16], w[3 * 8 * 2], b[3] = {0.5f, -1, 2}, y[2 * 3 * 16];
  for (int i = 0; i < 2 * 4 * 16; i++) x[i] = (float)(i % 7) - 3.0f;
  for (int i = 0; i < 3 * 8 * 2; i++) w[i] = (float)(i % 5) - 2.0f;
  for (int i = 0; i < 2 * 3 * 16; i++) y[i] = 0.0f;
  const int64_t sx[3] = {2, 4, 16}, sw[3] = {3, w_channels, 2}, sb = 3, sy[3] = {2, 3, 16};
  cr_assert_eq(c1d_npy_write_f32(path_of("x.npy"), x, 3, sx), C1D_OK);
  cr_assert_eq(c1d_npy_write_f32(path_of("w.npy"), w, 3, sw), C1D_OK);
  cr_assert_eq(c1d_npy_write_f32(path_of("b.npy"), b, 1, &sb), C1D_OK);
  cr_assert_eq(c1d_npy_write_f32(path_of("y.npy"), y, 3, sy), C1D_OK);
}

// --- usage errors: exit 2, one line --------------------------------------------------------------

typedef struct usage_case {
  char args[MAX_ARGS][48]; /* "" ends the list; "@x" etc. are replaced by files in the test dir */
  char message[64];
} usage_case;

static const usage_case usage_cases[] = {
    {{""}, "a command is needed"},
    {{"frobnicate"}, "unknown command 'frobnicate'"},
    {{"run", "--frobnicate"}, "unknown option '--frobnicate'"},
    {{"run", "-x"}, "unknown option '-x'"},
    {{"run", "stray"}, "unexpected argument 'stray'"},
    {{"run", "--batch"}, "--batch needs a value"},
    {{"run", "--batch", "abc"}, "--batch expects an integer (got 'abc')"},
    {{"run", "--batch", "12x"}, "--batch expects an integer (got '12x')"},
    {{"run", "--batch", " 12"}, "--batch expects an integer"},
    {{"run", "--batch", "-3"}, "--batch must be positive (got -3)"},
    {{"run", "--batch=0"}, "--batch must be positive (got 0)"},
    {{"run", "--batch", "99999999999999999999999"}, "--batch is out of range"},
    {{"run", "--length", "2000000000000"}, "--length must be at most"},
    {{"run", "--batch", "2", "--batch", "3"}, "--batch is given twice"},
    {{"run", "--bias=1"}, "--bias takes no value"},
    {{"run", "--seed", "-1"}, "--seed must be non-negative"},
    {{"run", "--seed", "18446744073709551616"}, "--seed is out of range"},
    {{"run", "--trials", "0"}, "--trials must be positive"},
    {{"run", "--repeats", "many"}, "--repeats expects an integer"},
    {{"run", "--atol", "nan"}, "--atol expects a number"},
    {{"run", "--atol", "-1e-3"}, "--atol must be at least 0"},
    {{"run", "--rtol", "1e999"}, "--rtol is out of range"},
    {{"run", "--lambda", "0"}, "--lambda must be positive"},
    {{"run", "--dist", "cauchy"}, "unknown distribution 'cauchy'"},
    {{"run", "--impl", "nosuch"}, "unknown implementation 'nosuch'"},
    {{"run", "--impl="}, "--impl needs a non-empty value"},
    {{"run", "--oracle", "tpu"}, "--oracle must be cpu, gpu or auto"},
    {{"run", "--compare", "naive"}, "--compare expects two names A,B"},
    {{"run", "--compare", "naive,kahan,tap_partial"}, "--compare expects two names A,B"},
    {{"run", "--compare", "naive,naive"}, "two different names"},
    {{"run", "--compare", "naive,nosuch"}, "--compare: unknown implementation 'nosuch'"},
    {{"run", "--cin", "4", "--taps", "1000000", "--dilation", "1000000"}, "receptive field"},
    {{"run", "--x", "@x"}, "--x and --w go together"},
    {{"run", "--b", "@b"}, "--b needs --x and --w"},
    {{"run", "--y", "@y"}, "--y needs --x and --w"},
    {{"run", "--x", "@x", "--w", "@w", "--dist", "normal"}, "--dist conflicts with --x"},
    {{"run", "--x", "@x", "--w", "@w", "--seed", "3"}, "--seed conflicts with --x"},
    {{"run", "--x", "@x", "--w", "@w", "--trials", "2"}, "--trials conflicts with --x"},
    {{"run", "--x", "@x", "--w", "@w", "--cin", "5"}, "--cin 5 disagrees with"},
    {{"run", "--x", "@x", "--w", "@w", "--taps", "3"}, "--taps 3 disagrees with"},
    {{"run", "--x", "@x", "--w", "@w", "--bias"}, "--bias with --x needs --b"},
    {{"list", "--every"}, "unknown option '--every'"},
    {{"explain"}, "--x, --w and --y are required"},
    {{"explain", "--x", "@x", "--w", "@w"}, "--x, --w and --y are required"},
    {{"explain", "--x", "@x", "--y", "@y"}, "--x, --w and --y are required"},
    {{"explain", "--x", "@x", "--w", "@w", "--y", "@y", "--dilation", "0"}, "--dilation must be"},
    {{"explain", "--x", "@x", "--w", "@w", "--y", "@y", "--oracle", "tpu"}, "--oracle must be cpu"},
    {{"explain", "--x", "@x", "--w", "@w", "--y", "@y", "--dist", "normal"}, "unknown option '--dist'"},
    {{"explain", "--x", "@x", "--w", "@w", "--y", "@y", "--html"}, "--html needs --out DIR"},
    {{"explain", "--x", "@x", "--w", "@w", "--y", "@y", "--y", "@y"}, "is given twice"},
    /* a typo gets the nearest name */
    {{"rn"}, "unknown command 'rn' (did you mean run?"},
    {{"run", "--cni", "4"}, "unknown option '--cni' (did you mean --cin?)"},
    {{"run", "--len", "64"}, "unknown option '--len' (did you mean --length?)"},
    {{"run", "-batch", "2"}, "unknown option '-batch' (did you mean --batch?)"},
    {{"run", "--impl", "naive,kahn"}, "unknown implementation 'kahn' (did you mean kahan?"},
    {{"run", "--compare", "naive,tf32_input"}, "unknown implementation 'tf32_input' (did you mean tf32_inputs?"},
    {{"run", "--dist", "normall"}, "unknown distribution 'normall' (did you mean normal?"},
    {{"sweep", "--impl", "naiv"}, "unknown implementation 'naiv' (did you mean naive?"},
    {{"explain", "--x", "@x", "--w", "@w", "--yy", "@y"}, "unknown option '--yy' (did you mean --y?)"},
};

ParameterizedTestParameters(cli, refuses_each_bad_command_line_with_exit_2_and_one_line) {
  return cr_make_param_array(usage_case, usage_cases, sizeof usage_cases / sizeof usage_cases[0]);
}

ParameterizedTest(const usage_case *c, cli, refuses_each_bad_command_line_with_exit_2_and_one_line) {
  const char *args[MAX_ARGS + 1];
  int n = 0;
  write_tensors(4);
  for (; n < MAX_ARGS && c->args[n][0]; n++)
    args[n] = c->args[n][0] == '@' ? path_of(c->args[n][1] == 'x'   ? "x.npy"
                                             : c->args[n][1] == 'w' ? "w.npy"
                                             : c->args[n][1] == 'b' ? "b.npy"
                                                                    : "y.npy")
                                   : c->args[n];
  args[n] = NULL;
  outcome *o = malloc(sizeof *o);
  run_convlab(args, o);
  expect_one_line_error(o, 2, c->message);
  free(o);
}

// --- failures: exit 1, one line naming the file --------------------------------------------------

Test(cli, names_a_file_whose_channels_do_not_match_and_exits_1) {
  outcome *o = malloc(sizeof *o);
  write_tensors(8);
  run_convlab((const char *[]){"run", "--x", path_of("x.npy"), "--w", path_of("w.npy"), NULL}, o);
  expect_one_line_error(o, 1, "w.npy has C=8 but");
  free(o);
}

Test(cli, names_a_missing_or_malformed_input_file) {
  outcome *o = malloc(sizeof *o);
  write_tensors(4);
  run_convlab((const char *[]){"run", "--x", path_of("none.npy"), "--w", path_of("w.npy"), NULL}, o);
  expect_one_line_error(o, 1, "none.npy: cannot open");
  FILE *f = fopen(path_of("junk.npy"), "w");
  fputs("not numpy", f);
  fclose(f);
  run_convlab((const char *[]){"run", "--x", path_of("x.npy"), "--w", path_of("junk.npy"), NULL}, o);
  expect_one_line_error(o, 1, "junk.npy: not a .npy file");
  free(o);
}

Test(cli, refuses_a_float64_candidate_output) {
  outcome *o = malloc(sizeof *o);
  write_tensors(4);
  double y[2 * 3 * 16] = {0};
  const int64_t sy[3] = {2, 3, 16};
  cr_assert_eq(c1d_npy_write_f64(path_of("y64.npy"), y, 3, sy), C1D_OK);
  run_convlab((const char *[]){"run", "--x", path_of("x.npy"), "--w", path_of("w.npy"), "--y",
                               path_of("y64.npy"), NULL},
              o);
  expect_one_line_error(o, 1, "must be float32");
  free(o);
}

Test(cli, refuses_a_shape_beyond_physical_memory_before_allocating) {
  outcome *o = malloc(sizeof *o);
  run_convlab((const char *[]){"run", "--batch", "1024", "--cin", "1024", "--cout", "1024", "--length",
                               "1000000", NULL},
              o);
  expect_one_line_error(o, 1, "GiB of host memory");
  free(o);
}

/* `prlimit --as=8e9 convlab run ...` passed the memory check and failed to allocate 48 s later. */
Test(cli, refuses_a_run_beyond_the_address_space_limit_at_once_naming_it) {
  const double gib = 1073741824.0;
  if (c1d_memory_available().bytes < 3.0 * gib)
    SKIP_TEST("less than 3 GiB free: ulimit -v would not be the lowest limit");
  /* 2 GiB of address space beyond what this process maps (convlab maps about as much at its start). */
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long long pages = 0;
  cr_assert(f && fscanf(f, "%llu", &pages) == 1);
  fclose(f);
  const rlim_t limit = (rlim_t)((double)pages * (double)sysconf(_SC_PAGESIZE) + 2.0 * gib);
  cr_assert_eq(setrlimit(RLIMIT_AS, &(struct rlimit){limit, limit}), 0); /* this test's process and its child */
  outcome *o = malloc(sizeof *o);
  const time_t t0 = time(NULL);
  run_convlab((const char *[]){"run", "--impl", "naive", "--batch", "1", "--cin", "64", "--cout", "64", "--length",
                               "1048576", NULL}, /* about 5 GiB */
              o);
  expect_one_line_error(o, 1, "the address-space limit (ulimit -v) leaves");
  cr_expect_leq(time(NULL) - t0, 5, "refused at once");
  free(o);
}

Test(cli, refuses_the_gpu_oracle_without_a_device) {
  if (c1d_gpu_oracle_built() && !c1d_gpu_why_unavailable())
    SKIP_TEST("this machine can run the GPU oracle");
  outcome *o = malloc(sizeof *o);
  run_convlab((const char *[]){"run", "--batch", "1", "--length", "64", "--oracle", "gpu", NULL}, o);
  expect_one_line_error(o, 1, "GPU oracle");
  free(o);
}

// --- what works ----------------------------------------------------------------------------------

Test(cli, prints_help_for_the_program_and_each_command_with_exit_0) {
  outcome *o = malloc(sizeof *o);
  run_convlab((const char *[]){"--help", NULL}, o);
  cr_expect_eq(o->code, 0);
  cr_expect(strstr(o->out, "usage: convlab <command>") && strstr(o->out, "run") && strstr(o->out, "list"));
  run_convlab((const char *[]){"run", "--help", NULL}, o);
  cr_expect_eq(o->code, 0);
  cr_expect(strstr(o->out, "--batch") && strstr(o->out, "--compare") && strstr(o->out, "--save-outputs"));
  run_convlab((const char *[]){"list", "--help", NULL}, o);
  cr_expect_eq(o->code, 0);
  cr_expect(strstr(o->out, "--mutants") != NULL);
  run_convlab((const char *[]){"--version", NULL}, o);
  cr_expect_eq(o->code, 0);
  cr_expect(strncmp(o->out, "convlab ", 8) == 0);
  free(o);
}

Test(cli, lists_the_main_tier_and_whether_it_runs_here) {
  outcome *o = malloc(sizeof *o);
  run_convlab((const char *[]){"list", NULL}, o);
  cr_expect_eq(o->code, 0);
  int n = 0;
  const c1d_impl *const *table = c1d_registry(&n);
  for (int i = 0; i < n; i++) {
    char line[160];
    snprintf(line, sizeof line, "\n%s ", table[i]->name);
    cr_expect_eq(strstr(o->out, line) != NULL, table[i]->tier == C1D_TIER_MAIN, "%s", table[i]->name);
  }
  free(o);
}

Test(cli, lists_every_tier_with_all) {
  outcome *o = malloc(sizeof *o);
  run_convlab((const char *[]){"list", "--all", NULL}, o);
  cr_expect_eq(o->code, 0);
  int n = 0, variants = 0;
  const c1d_impl *const *table = c1d_registry(&n);
  for (int i = 0; i < n; i++) {
    char line[160];
    snprintf(line, sizeof line, "\n%s ", table[i]->name);
    cr_expect(strstr(o->out, line) != NULL, "%s missing from list --all", table[i]->name);
    variants += table[i]->tier == C1D_TIER_VARIANT;
  }
  if (variants) cr_expect(strstr(o->out, "[variant]") != NULL, "variants are marked");
  free(o);
}

static cJSON *parse_json_stdout(const outcome *o) {
  cJSON *root = cJSON_Parse(o->out);
  cr_assert_not_null(root, "stdout is not JSON: %.200s", o->out);
  return root;
}

Test(cli, prints_the_json_report_with_every_selected_implementation) {
  outcome *o = malloc(sizeof *o);
  run_convlab((const char *[]){"run", "--batch", "1", "--cin", "8", "--cout", "4", "--length", "64",
                               "--impl", "all", "--json", NULL},
              o);
  cr_expect_eq(o->code, 0, "%s", o->err);
  cr_expect_str_eq(o->err, "", "no progress or notes when stderr is not a terminal");
  cJSON *root = parse_json_stdout(o), *impls = cJSON_GetObjectItem(root, "implementations");
  int n = 0;
  const c1d_impl *const *table = c1d_registry(&n);
  int mains = 0;
  for (int i = 0; i < n; i++) mains += table[i]->tier == C1D_TIER_MAIN;
  cr_expect_eq(cJSON_GetArraySize(impls), mains, "--impl all: every implementation of tier main");
  cJSON *impl;
  cJSON_ArrayForEach(impl, impls) {
    const char *status = cJSON_GetStringValue(cJSON_GetObjectItem(impl, "status"));
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(impl, "name"));
    const c1d_impl *d = c1d_find_impl(name);
    cr_assert_not_null(d);
    const c1d_shape shape = {.N = 1, .C = 8, .O = 4, .L = 64, .K = 4, .D = 1};
    if (c1d_impl_unavailable(d) || c1d_impl_unsupported(d, &shape))
      cr_expect_str_eq(status, "skipped", "%s cannot run this here: skipped, not failed", name);
    else
      cr_expect_str_eq(status, "ran", "%s", name);
  }
  cJSON_Delete(root);
  free(o);
}

/* The oracle's kernel set in run --json's report: the one C1D_ORACLE_KERNEL forces, or else the fastest
 * this CPU runs. */
static void expect_oracle_kernel(const char *forced, const char *wanted) {
  outcome *o = malloc(sizeof *o);
  if (forced)
    setenv("C1D_ORACLE_KERNEL", forced, 1);
  else
    unsetenv("C1D_ORACLE_KERNEL");
  run_convlab((const char *[]){"run", "--batch", "1", "--cin", "8", "--cout", "4", "--length", "64", "--impl",
                               "naive", "--json", NULL},
              o);
  unsetenv("C1D_ORACLE_KERNEL");
  cr_expect_eq(o->code, 0, "%s", o->err);
  cJSON *root = parse_json_stdout(o), *oracle = cJSON_GetObjectItem(root, "oracle");
  const char *kernel = cJSON_GetStringValue(cJSON_GetObjectItem(oracle, "kernel"));
  cr_expect(kernel && strcmp(kernel, wanted) == 0, "oracle.kernel %s, wanted %s", kernel ? kernel : "absent",
            wanted);
  cJSON_Delete(root);
  free(o);
}

Test(cli, names_the_oracle_kernel_that_ran_in_the_report) {
  /* The unforced choice, also where the suite runs with C1D_ORACLE_KERNEL set (an AVX2 machine emulated
   * on an AVX-512 one): select would honour it, and the unforced run does not see it. */
  const char *caller = getenv("C1D_ORACLE_KERNEL");
  char *saved = caller ? strdup(caller) : NULL;
  unsetenv("C1D_ORACLE_KERNEL");
  c1d_oracle_kernel best;
  cr_assert_eq(c1d_oracle_kernel_select(&best), C1D_OK);
  expect_oracle_kernel(NULL, c1d_oracle_kernel_name(best));
  for (int k = 0; k < C1D_ORACLE_KERNEL_COUNT; k++)
    if (c1d_oracle_kernel_available((c1d_oracle_kernel)k))
      expect_oracle_kernel(c1d_oracle_kernel_name((c1d_oracle_kernel)k), c1d_oracle_kernel_name((c1d_oracle_kernel)k));
  if (saved) setenv("C1D_ORACLE_KERNEL", saved, 1);
  free(saved);
}

Test(cli, refuses_an_oracle_kernel_it_does_not_know_in_one_line) {
  outcome *o = malloc(sizeof *o);
  setenv("C1D_ORACLE_KERNEL", "sse9", 1);
  run_convlab((const char *[]){"run", "--batch", "1", "--cin", "8", "--cout", "4", "--length", "64", NULL}, o);
  unsetenv("C1D_ORACLE_KERNEL");
  expect_one_line_error(o, 2, "C1D_ORACLE_KERNEL must be avx512, avx2 or portable (got 'sse9')");
  free(o);
}

Test(cli, scores_a_candidate_output_read_from_a_file) {
  outcome *o = malloc(sizeof *o);
  write_tensors(4);
  run_convlab((const char *[]){"run", "--x", path_of("x.npy"), "--w", path_of("w.npy"), "--b",
                               path_of("b.npy"), "--y", path_of("y.npy"), "--impl", "naive", "--dilation",
                               "3", "--json", NULL},
              o);
  cr_expect_eq(o->code, 0, "%s", o->err);
  cJSON *root = parse_json_stdout(o);
  cJSON *problem = cJSON_GetObjectItem(root, "problem");
  cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(problem, "D")), 3);
  cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(problem, "bias")));
  cJSON *impls = cJSON_GetObjectItem(root, "implementations");
  cr_assert_eq(cJSON_GetArraySize(impls), 2);
  cJSON *cand = cJSON_GetArrayItem(impls, 1);
  cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(cand, "name")), "file:y.npy");
  cJSON *metrics = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cand, "trials"), 0), "metrics");
  cr_expect_gt(cJSON_GetNumberValue(cJSON_GetObjectItem(metrics, "max_abs")), 0.0, "y is all zeros");
  cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "inputs"), "source")),
                   "files");
  cJSON_Delete(root);
  free(o);
}

Test(cli, notes_in_one_line_that_float64_inputs_were_rounded) {
  outcome *o = malloc(sizeof *o);
  write_tensors(4);
  double x[2 * 4 * 16];
  for (int i = 0; i < 2 * 4 * 16; i++) x[i] = 0.1 * (i % 9);
  const int64_t sx[3] = {2, 4, 16};
  cr_assert_eq(c1d_npy_write_f64(path_of("x64.npy"), x, 3, sx), C1D_OK);
  run_convlab((const char *[]){"run", "--x", path_of("x64.npy"), "--w", path_of("w.npy"), "--impl", "naive",
                               "--json", NULL},
              o);
  cr_expect_eq(o->code, 0, "%s", o->err);
  cr_expect_eq(line_count(o->err), 1, "%s", o->err);
  cr_expect(strstr(o->err, "x64.npy is float64") && strstr(o->err, "rounded to float32"), "%s", o->err);
  free(o);
}

Test(cli, scores_a_candidate_that_numpy_computed) {
  if (system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0)
    SKIP_TEST("/usr/bin/python3 has no NumPy (apt-get install python3-numpy)");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/tests/npy_interop.py conv '%s'", C1D_SOURCE_DIR, dir);
  cr_assert_eq(system(cmd), 0);
  outcome *o = malloc(sizeof *o);
  run_convlab((const char *[]){"run", "--x", path_of("conv_x.npy"), "--w", path_of("conv_w.npy"), "--b",
                               path_of("conv_b.npy"), "--y", path_of("conv_y.npy"), "--dilation", "2",
                               "--impl", "naive", "--json", NULL},
              o);
  cr_expect_eq(o->code, 0, "%s", o->err);
  cr_expect_str_eq(o->err, "", "w is float64 holding float32 values: no rounding note");
  cJSON *root = parse_json_stdout(o);
  cJSON *cand = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "implementations"), 1);
  cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(cand, "status")), "ran");
  cJSON *m = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cand, "trials"), 0), "metrics");
  cr_expect_leq(cJSON_GetNumberValue(cJSON_GetObjectItem(m, "ulp_max")), 1.0,
                "NumPy's float64 sums rounded once are within an ULP of the oracle");
  cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(m, "fail_default")), 0);
  cJSON_Delete(root);
  free(o);
}

static int count_entries(const char *d) {
  DIR *dd = opendir(d);
  int n = 0;
  if (!dd) return -1;
  for (struct dirent *e; (e = readdir(dd));)
    if (e->d_name[0] != '.') n++;
  closedir(dd);
  return n;
}

Test(cli, writes_the_three_reports_under_out_and_nothing_else) {
  outcome *o = malloc(sizeof *o);
  const char *out = path_of("reports/run1");
  run_convlab((const char *[]){"run", "--batch", "1", "--cin", "8", "--cout", "4", "--length", "64",
                               "--impl", "naive,kahan", "--out", out, NULL},
              o);
  cr_expect_eq(o->code, 0, "%s", o->err);
  cr_expect(strstr(o->out, "naive") && strstr(o->out, "kahan"), "the table is printed too");
  cr_expect_eq(count_entries(out), 3, "report.json, report.csv, report.txt and no temporary file");
  char path[256];
  snprintf(path, sizeof path, "%s/report.json", out);
  cr_expect_eq(access(path, R_OK), 0);
  free(o);
}

Test(cli, leaves_no_report_when_the_run_fails) {
  outcome *o = malloc(sizeof *o);
  const char *out = path_of("reports"), *blocker = path_of("file");
  FILE *f = fopen(blocker, "w");
  fclose(f);
  char save[200];
  snprintf(save, sizeof save, "%s/sub", blocker); /* a directory below a regular file cannot exist */
  run_convlab((const char *[]){"run", "--batch", "1", "--cin", "8", "--cout", "4", "--length", "64",
                               "--impl", "naive", "--out", out, "--save-outputs", save, NULL},
              o);
  expect_one_line_error(o, 1, "is not a directory");
  cr_expect_eq(count_entries(out), -1, "no report directory was made");
  free(o);
}

Test(cli, says_in_one_line_that_it_shrinks_the_default_shape_without_a_gpu) {
  if (!c1d_gpu_why_unavailable()) SKIP_TEST("this machine has a GPU: the default is the headline shape");
  outcome *o = malloc(sizeof *o);
  run_convlab((const char *[]){"run", "--impl", "naive", "--repeats", "1", NULL}, o);
  cr_expect_eq(o->code, 0, "%s", o->err);
  cr_expect_eq(line_count(o->err), 1, "%s", o->err);
  cr_expect(strstr(o->err, "no CUDA device") && strstr(o->err, "N=2 C=256 O=256 L=4096 K=4 D=1"), "%s",
            o->err);
  cr_expect(strstr(o->out, "N=2 C=256 O=256 L=4096 K=4 D=1") != NULL, "%s", o->out);
  free(o);
}

// --- a user's text in messages: escaped, one line whatever it holds ------------------------------

/* A name holding a newline and an ESC that starts a terminal escape sequence (red text), and how every
 * message shows it: as the CSV and the HTML report do. */
#define NASTY "a\nb\x1b[31m"
#define NASTY_SHOWN "a\\nb\\x1b[31m"

/* The line has the text, escaped, and no raw control character. */
static void expect_escaped(const char *text, const char *what, const char *shown) {
  cr_expect(strstr(text, shown) != NULL, "%s shows '%s': %s", what, shown, text);
  cr_expect(strchr(text, '\x1b') == NULL, "no raw ESC in %s: %s", what, text);
}

Test(cli, escapes_control_characters_of_paths_in_its_one_line_errors) {
  outcome *o = malloc(sizeof *o);
  write_tensors(4);
  char x[128], kase[128], out[128], shown[160];
  snprintf(x, sizeof x, "%s", path_of(NASTY ".npy"));
  snprintf(kase, sizeof kase, "%s", path_of(NASTY ".safetensors"));
  snprintf(out, sizeof out, "%s", path_of(NASTY "out"));
  FILE *f = fopen(out, "w"); /* where --out wants a directory */
  cr_assert_not_null(f);
  fclose(f);
  const struct {
    const char *args[16];
    int code;
    const char *name; /* the escaped name in the message, after the test directory */
    const char *message;
  } cases[] = {
      {{"run", "--x", x, "--w", path_of("w.npy"), NULL}, 1, NASTY_SHOWN ".npy", ": cannot open"},
      {{"run", "--case", kase, NULL}, 1, NASTY_SHOWN ".safetensors", ": cannot open"},
      {{"run", "--impl", "naive", "--batch", "1", "--cin", "4", "--length", "64", "--out", out, NULL}, 1,
       NASTY_SHOWN "out", " exists and is not a directory"},
      {{"explain", "--x", x, "--w", path_of("w.npy"), "--y", path_of("y.npy"), NULL}, 1, NASTY_SHOWN ".npy",
       ": cannot open"},
      {{"r" NASTY, NULL}, 2, NULL, "convlab: unknown command 'r" NASTY_SHOWN "'"},
      {{"run", "--impl", "naive," NASTY, NULL}, 2, NULL, "unknown implementation '" NASTY_SHOWN "'"},
      /* UTF-8 stays readable; a byte that is not UTF-8 and a C1 control (CSI, U+009B) are escaped */
      {{"run", "--impl", "naive,\xc3\xa9\xff\xc2\x9b", NULL}, 2, NULL,
       "unknown implementation '\xc3\xa9\\xff\\xc2\\x9b'"},
  };
  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    run_convlab(cases[i].args, o);
    if (cases[i].name)
      snprintf(shown, sizeof shown, "%s/%s%s", dir, cases[i].name, cases[i].message);
    else
      snprintf(shown, sizeof shown, "%s", cases[i].message);
    expect_one_line_error(o, cases[i].code, shown);
    expect_escaped(o->err, "the error", shown);
  }
  free(o);
}

Test(cli, escapes_control_characters_of_paths_in_its_notes_table_and_verdicts) {
  outcome *o = malloc(sizeof *o);
  write_tensors(4);
  double x[2 * 4 * 16];
  float y[2 * 3 * 16] = {0};
  for (int i = 0; i < 2 * 4 * 16; i++) x[i] = 0.1 * (i % 9);
  const int64_t sx[3] = {2, 4, 16}, sy[3] = {2, 3, 16};
  char xp[128], yp[128], shown[160];
  snprintf(xp, sizeof xp, "%s", path_of(NASTY "x64.npy"));
  snprintf(yp, sizeof yp, "%s", path_of(NASTY "y.npy"));
  cr_assert_eq(c1d_npy_write_f64(xp, x, 3, sx), C1D_OK);
  cr_assert_eq(c1d_npy_write_f32(yp, y, 3, sy), C1D_OK);
  run_convlab((const char *[]){"run", "--x", xp, "--w", path_of("w.npy"), "--y", yp, "--impl", "naive", NULL}, o);
  cr_assert_eq(o->code, 0, "%s", o->err);
  cr_expect_eq(line_count(o->err), 1, "the float64 note, on one line: %s", o->err);
  snprintf(shown, sizeof shown, "note: %s/" NASTY_SHOWN "x64.npy is float64", dir);
  expect_escaped(o->err, "the note", shown);
  snprintf(shown, sizeof shown, "inputs: x %s/" NASTY_SHOWN "x64.npy, w ", dir);
  expect_escaped(o->out, "the table", shown);
  expect_escaped(o->out, "the table", "\nfile:" NASTY_SHOWN "y.npy\n");
  const char *verdicts = strstr(o->out, "\nverdicts");
  cr_assert_not_null(verdicts, "%s", o->out);
  expect_escaped(verdicts, "the verdicts", "\nfile:" NASTY_SHOWN "y.npy\n");
  run_convlab((const char *[]){"explain", "--x", xp, "--w", path_of("w.npy"), "--y", yp, "--y", path_of("y.npy"),
                               NULL},
              o);
  cr_assert_eq(o->code, 0, "%s", o->err);
  expect_escaped(o->out, "explain's verdicts", "file:" NASTY_SHOWN "y.npy: A bug");
  free(o);
}

// --- convlab explain: a verdict on a user's output ----------------------------------------------

/* x (2,5,40), w (3,5,3), y = the exact result (integers), optionally with one output channel broken. */
static void write_explain_case(int break_channel) {
  enum { N = 2, C = 5, L = 40, O = 3, K = 3 };
  float x[N * C * L], w[O * C * K], y[N * O * L];
  for (int i = 0; i < N * C * L; i++) x[i] = (float)((i * 7) % 9) - 4.0f;
  for (int i = 0; i < O * C * K; i++) w[i] = (float)((i * 5) % 7) - 3.0f;
  for (int n = 0; n < N; n++)
    for (int o = 0; o < O; o++)
      for (int t = 0; t < L; t++) {
        float acc = 0.0f; /* integer sums: exact in float32 */
        for (int c = 0; c < C; c++)
          for (int k = 0; k < K; k++) {
            int src = t + k - (K - 1);
            if (src >= 0) acc += x[(n * C + c) * L + src] * w[(o * C + c) * K + k];
          }
        y[(n * O + o) * L + t] = acc + (break_channel && o == 1 ? 1.0f : 0.0f);
      }
  const int64_t sx[3] = {N, C, L}, sw[3] = {O, C, K}, sy[3] = {N, O, L};
  cr_assert_eq(c1d_npy_write_f32(path_of("x.npy"), x, 3, sx), C1D_OK);
  cr_assert_eq(c1d_npy_write_f32(path_of("w.npy"), w, 3, sw), C1D_OK);
  cr_assert_eq(c1d_npy_write_f32(path_of("y.npy"), y, 3, sy), C1D_OK);
}

Test(cli, explain_calls_an_exact_output_rounding_on_its_first_line) {
  outcome *o = malloc(sizeof *o);
  write_explain_case(0);
  run_convlab((const char *[]){"explain", "--x", path_of("x.npy"), "--w", path_of("w.npy"), "--y",
                               path_of("y.npy"), NULL},
              o);
  cr_assert_eq(o->code, 0, "stderr: %s", o->err);
  cr_assert(strncmp(o->out, "Not a bug", 9) == 0, "first line: %.200s", o->out);
  cr_assert(strstr(o->out, "(fp32-rounding)") != NULL, "%.300s", o->out);
  free(o);
}

Test(cli, explain_locates_a_broken_channel_and_exits_0) {
  outcome *o = malloc(sizeof *o);
  write_explain_case(1);
  run_convlab((const char *[]){"explain", "--x", path_of("x.npy"), "--w", path_of("w.npy"), "--y",
                               path_of("y.npy"), NULL},
              o);
  cr_assert_eq(o->code, 0, "a verdict is not a failure; stderr: %s", o->err);
  cr_assert(strncmp(o->out, "A bug in channel 1:", 19) == 0, "%.300s", o->out);
  cr_assert(strstr(o->out, "o 1,") != NULL, "%.300s", o->out);
  free(o);
}

Test(cli, explain_json_holds_the_verdict_and_its_evidence) {
  outcome *o = malloc(sizeof *o);
  write_explain_case(1);
  run_convlab((const char *[]){"explain", "--x", path_of("x.npy"), "--w", path_of("w.npy"), "--y",
                               path_of("y.npy"), "--json", NULL},
              o);
  cr_assert_eq(o->code, 0, "stderr: %s", o->err);
  cJSON *root = cJSON_Parse(o->out);
  cr_assert_not_null(root, "not JSON: %.200s", o->out);
  const cJSON *verdict = cJSON_GetObjectItem(root, "verdict");
  cr_assert(cJSON_IsString(verdict));
  cr_assert_str_eq(verdict->valuestring, "bug-localized");
  const cJSON *ev = cJSON_GetObjectItem(root, "evidence"), *region = cJSON_GetObjectItem(root, "region");
  cr_assert_not_null(cJSON_GetObjectItem(ev, "beyond_fp32_det"));
  cr_assert_not_null(cJSON_GetObjectItem(ev, "models"));
  cr_assert_not_null(cJSON_GetObjectItem(ev, "fingerprint"));
  cr_assert_str_eq(cJSON_GetObjectItem(region, "o")->valuestring, "1");
  cJSON_Delete(root);
  free(o);
}

Test(cli, exits_1_with_one_line_when_every_requested_implementation_was_skipped) {
  if (!c1d_find_impl("gpu_naive")) SKIP_TEST("built without CUDA: no GPU implementation to skip");
  if (!c1d_gpu_why_unavailable()) SKIP_TEST("a CUDA device is present: gpu_naive runs");
  outcome *o = malloc(sizeof *o);
  run_convlab((const char *[]){"run", "--impl", "gpu_naive", "--batch", "1", "--cin", "8", "--cout", "4",
                               "--length", "64", NULL},
              o);
  cr_expect_eq(o->code, 1, "exit %d: nothing ran", o->code);
  cr_expect_eq(line_count(o->err), 1, "one line: %s", o->err);
  cr_expect(strstr(o->err, "nothing ran: every requested implementation was skipped (gpu_naive: ") != NULL,
            "%s", o->err);
  cr_expect(strstr(o->out, "gpu_naive") != NULL, "the table with the reason is still printed");
  free(o);
}

Test(cli, records_64_bit_seeds_exactly_in_json_and_csv) {
  outcome *o = malloc(sizeof *o);
  const char *out = path_of("seeds");
  run_convlab((const char *[]){"run", "--cin", "8", "--cout", "4", "--length", "64", "--impl", "naive",
                               "--seed", "18446744073709551615", "--trials", "2", "--out", out, NULL},
              o);
  cr_assert_eq(o->code, 0, "%s", o->err);
  char path[256];
  snprintf(path, sizeof path, "%s/report.json", out);
  char *json = c1d_test_slurp(path, NULL);
  cr_assert_not_null(json);
  cr_expect(strstr(json, "\"seed\":\t18446744073709551615,") != NULL, "the JSON seed is 2^64-1 exactly");
  cr_expect(strstr(json, "\"seed\":\t0,") != NULL, "trial 1's seed wraps to 0");
  snprintf(path, sizeof path, "%s/report.csv", out);
  char *csv = c1d_test_slurp(path, NULL);
  cr_assert_not_null(csv);
  cr_expect(strstr(csv, ",ok,,,0,18446744073709551615,") != NULL, "the CSV seed is 2^64-1, not -1: %.300s", csv);
  cr_expect(strstr(csv, ",ok,,,1,0,") != NULL, "%.400s", csv);
  free(json);
  free(csv);
  free(o);
}

/* 1000000 trials of a tiny problem once grew to 23.8 GB before the kernel killed it. */
Test(cli, refuses_a_million_trials_before_any_work_with_one_line, .timeout = 30) {
  outcome *o = malloc(sizeof *o);
  run_convlab((const char *[]){"run", "--batch", "1", "--cin", "8", "--cout", "4", "--length", "64",
                               "--trials", "1000000", NULL},
              o);
  expect_one_line_error(o, 1, "GiB of host memory (the largest part, the JSON report");
  free(o);
}

// --- explain: reports like run, several outputs, the rounding note -------------------------------

/* y_ok: the exact result; y_bug: output channel 1 off by one (write_explain_case's two cases). */
static void write_two_outputs(void) {
  char from[200], to[200];
  write_explain_case(1);
  snprintf(from, sizeof from, "%s", path_of("y.npy"));
  snprintf(to, sizeof to, "%s", path_of("y_bug.npy"));
  cr_assert_eq(rename(from, to), 0);
  write_explain_case(0);
  snprintf(to, sizeof to, "%s", path_of("y_ok.npy"));
  cr_assert_eq(rename(from, to), 0);
}

Test(cli, explain_writes_the_reports_of_run_under_out_with_html) {
  outcome *o = malloc(sizeof *o);
  write_two_outputs();
  const char *out = path_of("explained");
  run_convlab((const char *[]){"explain", "--x", path_of("x.npy"), "--w", path_of("w.npy"), "--y",
                               path_of("y_bug.npy"), "--out", out, "--html", NULL},
              o);
  cr_assert_eq(o->code, 0, "stderr: %s", o->err);
  cr_expect(strncmp(o->out, "A bug in channel 1:", 19) == 0,
            "stdout keeps explain's own words: %.200s", o->out);
  cr_expect_eq(count_entries(out), 4, "report.json, report.csv, report.txt, report.html");
  char path[256];
  snprintf(path, sizeof path, "%s/report.csv", out);
  char *csv = c1d_test_slurp(path, NULL);
  cr_assert_not_null(csv);
  cr_expect(strstr(csv, ",verdict,region\n") != NULL, "the CSV has the verdict columns: %.300s", csv);
  cr_expect(strstr(csv, "file:y_bug.npy,oracle,file,") != NULL, "%.400s", csv);
  cr_expect(strstr(csv, ",bug-localized,channels\n") != NULL, "%s", csv);
  free(csv);
  snprintf(path, sizeof path, "%s/report.html", out);
  char *html = c1d_test_slurp(path, NULL);
  cr_expect(html && strstr(html, "file:y_bug.npy") && strstr(html, "bug-localized"), "the page shows the row");
  free(html);
  free(o);
}

Test(cli, explain_gives_each_y_its_row_named_by_its_file) {
  outcome *o = malloc(sizeof *o);
  write_two_outputs();
  run_convlab((const char *[]){"explain", "--x", path_of("x.npy"), "--w", path_of("w.npy"), "--y",
                               path_of("y_ok.npy"), "--y", path_of("y_bug.npy"), NULL},
              o);
  cr_assert_eq(o->code, 0, "stderr: %s", o->err);
  cr_expect(strncmp(o->out, "file:y_ok.npy: Not a bug", 24) == 0, "%.200s", o->out);
  cr_expect(strstr(o->out, "\n\nfile:y_bug.npy: A bug in channel 1:") != NULL, "%s",
            o->out);
  run_convlab((const char *[]){"explain", "--x", path_of("x.npy"), "--w", path_of("w.npy"), "--y",
                               path_of("y_ok.npy"), "--y", path_of("y_bug.npy"), "--json", NULL},
              o);
  cr_assert_eq(o->code, 0, "stderr: %s", o->err);
  cJSON *root = parse_json_stdout(o);
  cr_assert(cJSON_IsArray(root) && cJSON_GetArraySize(root) == 2, "one object per --y");
  const char *names[2] = {"file:y_ok.npy", "file:y_bug.npy"}, *verdicts[2] = {"fp32-rounding", "bug-localized"};
  for (int i = 0; i < 2; i++) {
    cJSON *e = cJSON_GetArrayItem(root, i);
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(e, "name")), names[i]);
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(e, "verdict")), verdicts[i]);
    cr_expect(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "files"), "y")),
                     names[i] + 5) != NULL);
  }
  cJSON_Delete(root);
  free(o);
}

Test(cli, names_two_outputs_of_the_same_file_name_by_their_paths) {
  outcome *o = malloc(sizeof *o);
  write_two_outputs();
  char sub[200], moved[220];
  snprintf(sub, sizeof sub, "%s", path_of("other"));
  cr_assert_eq(mkdir(sub, 0777), 0);
  snprintf(moved, sizeof moved, "%s/y_ok.npy", sub);
  cr_assert_eq(rename(path_of("y_bug.npy"), moved), 0);
  run_convlab((const char *[]){"run", "--x", path_of("x.npy"), "--w", path_of("w.npy"), "--y",
                               path_of("y_ok.npy"), "--y", moved, "--impl", "naive", "--json", NULL},
              o);
  cr_assert_eq(o->code, 0, "stderr: %s", o->err);
  cJSON *root = parse_json_stdout(o), *impls = cJSON_GetObjectItem(root, "implementations");
  cr_assert_eq(cJSON_GetArraySize(impls), 3, "naive and the two files");
  char want[300];
  snprintf(want, sizeof want, "file:%s", moved);
  cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(impls, 2), "name")), want);
  cJSON *ys = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "inputs"), "files"), "y");
  cr_expect(cJSON_IsArray(ys) && cJSON_GetArraySize(ys) == 2, "inputs.files.y lists both");
  cJSON_Delete(root);
  free(o);
}

Test(cli, compares_an_output_of_yours_with_an_implementation_by_its_file_name) {
  outcome *o = malloc(sizeof *o);
  write_two_outputs();
  run_convlab((const char *[]){"run", "--x", path_of("x.npy"), "--w", path_of("w.npy"), "--y",
                               path_of("y_bug.npy"), "--compare", "file:y_bug.npy,naive", "--json", NULL},
              o);
  cr_assert_eq(o->code, 0, "stderr: %s", o->err);
  cJSON *root = parse_json_stdout(o);
  cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(root, "implementations")), 2,
               "--compare alone: naive and the file, nothing else");
  cJSON *cmp = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "comparisons"), 0);
  cr_assert_not_null(cmp);
  cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(cmp, "a")), "file:y_bug.npy");
  cJSON_Delete(root);
  free(o);
}

Test(cli, explain_notes_in_one_line_that_float64_inputs_were_rounded) {
  outcome *o = malloc(sizeof *o);
  write_explain_case(0);
  enum { N = 2, C = 5, L = 40 };
  double x[N * C * L];
  for (int i = 0; i < N * C * L; i++) x[i] = 0.1 * (i % 9);
  const int64_t sx[3] = {N, C, L};
  cr_assert_eq(c1d_npy_write_f64(path_of("x64.npy"), x, 3, sx), C1D_OK);
  run_convlab((const char *[]){"explain", "--x", path_of("x64.npy"), "--w", path_of("w.npy"), "--y",
                               path_of("y.npy"), NULL},
              o);
  cr_expect_eq(o->code, 0, "%s", o->err);
  cr_expect_eq(line_count(o->err), 1, "%s", o->err);
  cr_expect(strstr(o->err, "convlab explain: note: ") && strstr(o->err, "x64.npy is float64") &&
                strstr(o->err, "rounded to float32"),
            "%s", o->err);
  free(o);
}

Test(cli, explains_the_example_tensors_of_the_readme) {
  if (system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0)
    SKIP_TEST("/usr/bin/python3 has no NumPy (apt-get install python3-numpy)");
  char cmd[512], t[200], paths[6][240];
  snprintf(t, sizeof t, "%s", path_of("tensors"));
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/scripts/example_tensors.py '%s' >/dev/null", C1D_SOURCE_DIR, t);
  cr_assert_eq(system(cmd), 0);
  const char *names[6] = {"x", "w", "b", "mine", "mine_tf32", "mine_bug"};
  for (int i = 0; i < 6; i++) snprintf(paths[i], sizeof paths[i], "%s/%s.npy", t, names[i]);
  outcome *o = malloc(sizeof *o);
  run_convlab((const char *[]){"explain", "--x", paths[0], "--w", paths[1], "--b", paths[2], "--dilation", "2",
                               "--y", paths[3], "--y", paths[4], "--y", paths[5], NULL},
              o);
  cr_assert_eq(o->code, 0, "stderr: %s", o->err);
  cr_expect(strstr(o->out, "file:mine.npy: Not a bug: rounding") != NULL, "%.300s", o->out);
  cr_expect(strstr(o->out, "file:mine_tf32.npy: Not a bug: the inputs were rounded to TF32") != NULL, "%s", o->out);
  cr_expect(strstr(o->out, "file:mine_bug.npy: A bug in channel 5: n 0-1, o 5,") != NULL,
            "%s", o->out);
  free(o);
}

// --- a GPU that is not there ----------------------------------------------------------------------

Test(cli, compare_exits_1_in_one_line_when_a_side_cannot_run_here) {
  if (!c1d_find_impl("gpu_naive")) SKIP_TEST("built without CUDA: no GPU implementation");
  if (!c1d_gpu_why_unavailable()) SKIP_TEST("this machine has a CUDA device");
  outcome *o = malloc(sizeof *o);
  run_convlab((const char *[]){"run", "--compare", "gpu_naive,cudnn_tf32", NULL}, o);
  expect_one_line_error(o, 1, "--compare gpu_naive,cudnn_tf32 cannot run here: gpu_naive: ");
  cr_expect(strstr(o->err, c1d_gpu_why_unavailable()) != NULL, "the reason in full: %s", o->err);
  free(o);
}

Test(cli, says_no_cuda_device_in_plain_words_where_there_is_no_driver) {
  if (!c1d_find_impl("gpu_naive")) SKIP_TEST("built without CUDA: no GPU implementation");
  if (!c1d_gpu_why_unavailable()) SKIP_TEST("this machine has a CUDA device");
  if (access("/proc/driver/nvidia/version", F_OK) == 0) SKIP_TEST("an NVIDIA driver is loaded here");
  outcome *o = malloc(sizeof *o);
  run_convlab((const char *[]){"list", NULL}, o);
  cr_expect_eq(o->code, 0);
  cr_expect(strstr(o->out, "gpu_naive ") && strstr(o->out, "no: no CUDA device (no driver or no GPU)\n"),
            "%.600s", o->out);
  cr_expect(strstr(o->out, "insufficient") == NULL, "no talk of an old driver: %.600s", o->out);
  free(o);
}

Test(cli, compare_alone_runs_its_two_names_only) {
  outcome *o = malloc(sizeof *o);
  run_convlab((const char *[]){"run", "--compare", "naive,tf32_inputs", "--batch", "1", "--cin", "8", "--cout", "4",
                               "--length", "64", "--json", NULL},
              o);
  cr_assert_eq(o->code, 0, "%s", o->err);
  cJSON *root = parse_json_stdout(o), *impls = cJSON_GetObjectItem(root, "implementations");
  cr_assert_eq(cJSON_GetArraySize(impls), 2, "naive and tf32_inputs, not the default list too");
  cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(impls, 0), "name")), "naive");
  cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(impls, 1), "name")), "tf32_inputs");
  cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(root, "comparisons")), 1);
  cJSON_Delete(root);
  run_convlab((const char *[]){"run", "--compare", "naive,tf32_inputs", "--impl", "kahan", "--batch", "1", "--cin",
                               "8", "--cout", "4", "--length", "64", "--json", NULL},
              o);
  cr_assert_eq(o->code, 0, "%s", o->err);
  root = parse_json_stdout(o);
  cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(root, "implementations")), 3, "--impl's, then --compare's");
  cJSON_Delete(root);
  free(o);
}

// --- sizes, estimates and progress ----------------------------------------------------------------

Test(cli, keeps_n_and_l_cpu_sized_when_only_some_shape_flags_are_given) {
  outcome *o = malloc(sizeof *o);
  run_convlab((const char *[]){"run", "--impl", "naive", "--cin", "8", "--taps", "2", "--repeats", "1", "--json",
                               NULL},
              o);
  cr_assert_eq(o->code, 0, "%s", o->err);
  cJSON *root = parse_json_stdout(o), *p = cJSON_GetObjectItem(root, "problem");
  cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(p, "N")), 2);
  cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(p, "L")), 4096);
  cr_expect_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(p, "C")), 8);
  cJSON_Delete(root);
  cr_expect_eq(line_count(o->err), 1, "one line says so: %s", o->err);
  cr_expect(strchr(o->err, '\r') == NULL, "no progress line when stderr is not a terminal: %s", o->err);
  cr_expect(strstr(o->err, "so N=2 C=8 O=256 L=4096 K=2 D=1") && strstr(o->err, "CPU-sized N and L"), "%s", o->err);
  run_convlab((const char *[]){"run", "--impl", "naive", "--cin", "8", "--batch", "1", "--repeats", "1", NULL}, o);
  cr_assert_eq(o->code, 0, "%s", o->err);
  cr_expect(strstr(o->err, "so N=1 C=8 O=256 L=4096") && strstr(o->err, "a CPU-sized L"), "%s", o->err);
  run_convlab((const char *[]){"run", "--impl", "naive", "--cin", "8", "--batch", "1", "--length", "64", NULL}, o);
  cr_assert_eq(o->code, 0, "%s", o->err);
  cr_expect_str_eq(o->err, "", "N and L given: nothing to say");
  free(o);
}

/* "about 2 min 05 s here" -> 125; -1 when the line has no estimate. */
static double estimate_seconds(const char *text) {
  const char *p = strstr(text, "about ");
  double a = 0, b = 0;
  if (!p) return -1;
  p += 6;
  if (sscanf(p, "%lf h %lf min", &a, &b) == 2 && strstr(p, " h ") && strstr(p, " h ") < strstr(p, "here"))
    return 3600 * a + 60 * b;
  if (sscanf(p, "%lf min %lf s", &a, &b) == 2) return 60 * a + b;
  if (sscanf(p, "%lf s", &a) == 1) return a;
  return -1;
}

Test(cli, estimate_says_how_big_the_run_is_and_how_long_it_takes_here_then_stops) {
  outcome *o = malloc(sizeof *o);
  const char *out = path_of("never");
  run_convlab((const char *[]){"run", "--estimate", "--impl", "naive,kahan", "--batch", "32", "--length", "8192",
                               "--out", out, NULL},
              o);
  cr_assert_eq(o->code, 0, "%s", o->err);
  cr_expect_eq(line_count(o->out), 1, "one line: %s", o->out);
  cr_expect(strncmp(o->out, "convlab run: about ", 19) == 0, "%s", o->out);
  cr_expect(strstr(o->out, "runs of 137 GFLOP (2 implementations, 1 trial) and the float64 oracle") != NULL, "%s",
            o->out);
  cr_expect(strstr(o->out, "speeds measured just now") != NULL, "%s", o->out);
  cr_expect_gt(estimate_seconds(o->out), 0.0, "%s", o->out);
  cr_expect_eq(count_entries(out), -1, "nothing ran, nothing was written");
  write_explain_case(0);
  run_convlab((const char *[]){"explain", "--x", path_of("x.npy"), "--w", path_of("w.npy"), "--y", path_of("y.npy"),
                               "--estimate", NULL},
              o);
  cr_assert_eq(o->code, 0, "%s", o->err);
  cr_expect(strncmp(o->out, "convlab explain: about ", 23) == 0 && line_count(o->out) == 1, "%s", o->out);
  free(o);
}

/* A slip such as --repeats 1000000 on a small shape (about 5000 h here) is refused before anything runs
 * or is written, naming the flag that allows it; --estimate still says how long it would take. The
 * program is given a minute: a run that started anyway is stopped, not waited for. */
Test(cli, refuses_a_run_estimated_beyond_a_day_unless_allow_long_is_given) {
  outcome *o = malloc(sizeof *o);
  const char *out = path_of("never");
  const char *args[] = {"run", "--impl", "naive", "--batch", "1", "--cin", "256", "--cout", "256", "--length",
                        "1024", "--repeats", "1000000", "--trials", "1000", "--out", out, NULL};
  char out_path[128], err_path[128];
  snprintf(out_path, sizeof out_path, "%s/stdout", dir);
  snprintf(err_path, sizeof err_path, "%s/stderr", dir);
  const char *argv[C1D_TEST_MAX_ARGS + 2] = {C1D_TEST_CONVLAB};
  for (int i = 0; args[i]; i++) argv[i + 1] = args[i];
  const pid_t pid = c1d_test_spawn_async(argv, out_path, err_path);
  int status = 0, waited = 0;
  while (waitpid(pid, &status, WNOHANG) == 0 && waited++ < 600) usleep(100 * 1000);
  if (waited > 600) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    cr_assert_fail("a run of thousands of hours started, and was still running after a minute");
  }
  char *err = c1d_test_slurp(err_path, NULL), *text = c1d_test_slurp(out_path, NULL);
  cr_assert(err && text);
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 2, "exit 2, a usage error (stderr: %s)", err);
  cr_expect_eq(line_count(err), 1, "one line: %s", err);
  cr_expect(strncmp(err, "convlab run: this run is estimated at about ", 44) == 0, "%s", err);
  cr_expect(strstr(err, " h ") && strstr(err, ", beyond 24 h; pass --allow-long to run it anyway"), "%s", err);
  cr_expect_str_eq(text, "", "nothing on stdout");
  cr_expect_eq(count_entries(out), -1, "nothing ran, nothing was written");
  free(err);
  free(text);
  const char *estimate[] = {"run", "--impl", "naive", "--batch", "1", "--cin", "256", "--cout", "256", "--length",
                            "1024", "--repeats", "1000000", "--trials", "1000", "--estimate", NULL};
  run_convlab(estimate, o);
  cr_expect_eq(o->code, 0, "%s", o->err);
  cr_expect(strncmp(o->out, "convlab run: about ", 19) == 0 && line_count(o->out) == 1, "%s", o->out);
  cr_expect(strstr(o->out, "1000001000 runs of 0.537 GFLOP") != NULL, "%s", o->out);
  cr_expect(strstr(o->out, "; beyond 24 h, so it runs only with --allow-long\n") != NULL, "%s", o->out);
  run_convlab((const char *[]){"run", "--help", NULL}, o);
  cr_expect(strstr(o->out, "--allow-long") && strstr(o->out, "beyond 24 h"), "--help names the flag: %s", o->out);
  free(o);
}

/* Trials of `run --impl naive,kahan` (one estimated here) enough for three times the announcement
 * threshold: the run's own calibration may see a less busy machine than this one did (in CI's parallel
 * suites one trial's estimate varied by 2x), and the run must still be announced. At most 40. */
static int trials_to_announce(void) {
  outcome *o = malloc(sizeof *o);
  run_convlab((const char *[]){"run", "--estimate", "--impl", "naive,kahan", NULL}, o);
  cr_assert_eq(o->code, 0, "%s", o->err);
  const double one = estimate_seconds(o->out);
  cr_assert_gt(one, 0.0, "%s", o->out);
  free(o);
  const int trials = (int)(3.0 * C1D_ESTIMATE_ANNOUNCE_S / one) + 1;
  return trials > 40 ? 40 : trials;
}

/* A run of several seconds, its stderr on a terminal: the estimate comes first, then a progress line
 * that says what runs, how far the job is and the time left, cleared at the end; the estimate is near
 * what the run then takes (within a factor 3: the machine's load may change between the calibration
 * and the work). */
Test(cli, announces_long_work_then_shows_its_progress_and_time_left_on_a_terminal, .timeout = 240) {
  const int trials = trials_to_announce();
  char t[16], out_path[128], tty_path[128];
  snprintf(t, sizeof t, "%d", trials);
  snprintf(out_path, sizeof out_path, "%s/stdout", dir);
  snprintf(tty_path, sizeof tty_path, "%s/tty", dir);
  const char *argv[] = {C1D_TEST_CONVLAB, "run", "--impl", "naive,kahan", "--trials", t, NULL};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  cr_assert_eq(c1d_test_spawn_tty(argv, out_path, tty_path), 0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  const double took = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  char *tty = c1d_test_slurp(tty_path, NULL), *out = c1d_test_slurp(out_path, NULL);
  cr_assert(tty && out);
  const char *line = strstr(tty, "convlab run: about ");
  cr_assert_not_null(line, "a run of %.1f s is announced: %.300s", took, tty);
  const double said = estimate_seconds(line);
  cr_expect(said >= C1D_ESTIMATE_ANNOUNCE_S, "announced because it is long: %.200s", line);
  cr_expect(took < 3.0 * said && took > said / 3.0, "estimated %.1f s, took %.1f s", said, took);
  const char *progress = strstr(tty, "\r\033[Kconvlab run: ");
  cr_expect(progress && progress > line, "a redrawn line after the announcement: %.300s", tty);
  char last[64];
  if (trials > 1)
    snprintf(last, sizeof last, ": trial %d/%d, kahan (4 runs)", trials, trials);
  else
    snprintf(last, sizeof last, " left: kahan (4 runs)");
  cr_expect(strstr(tty, last) != NULL, "what runs (%s): %.2000s", last, tty);
  cr_expect(strstr(tty, "%, about ") && strstr(tty, " left: "), "how far, and the time left: %.2000s", tty);
  const size_t n = strlen(tty);
  cr_expect(n >= 4 && strcmp(tty + n - 4, "\r\033[K") == 0, "the line is cleared at the end");
  cr_expect(strstr(out, "\r") == NULL && strstr(out, "naive ") != NULL, "stdout is the table alone");
  free(tty);
  free(out);
}

// --- progress in a log, and the estimate's promptness (issue 23) ----------------------------------

/* The progress lines of text (each ended by a newline): those that begin with prefix and a digit (the
 * percent; the announcement "convlab run: about ..." shares the prefix); -1 when text does not end with
 * a newline or holds a carriage return or an escape (a redrawn line, not a log's). */
static int progress_lines(const char *text, const char *prefix, const char **first) {
  const size_t n = strlen(text), k = strlen(prefix);
  *first = NULL;
  if (strpbrk(text, "\r\033") || (n > 0 && text[n - 1] != '\n')) return -1;
  int count = 0;
  for (const char *line = text; *line; line = strchr(line, '\n') + 1)
    if (strncmp(line, prefix, k) == 0 && line[k] >= '0' && line[k] <= '9') {
      if (!*first) *first = line;
      count++;
    }
  return count;
}

/* Through a pipe or into a log, announced work prints a plain progress line every interval (1 s here
 * through C1D_PROGRESS_LOG_S; 10 s by default): whole lines, each with how far the job is and the
 * time left, never going back; a run too short to be announced prints none. */
Test(cli, prints_progress_as_whole_lines_into_a_log_for_announced_work_only, .timeout = 240) {
  outcome *o = malloc(sizeof *o);
  cr_assert_eq(setenv("C1D_PROGRESS_LOG_S", "1", 1), 0);
  const int trials = trials_to_announce();
  char t[16], out_path[128], err_path[128];
  snprintf(t, sizeof t, "%d", trials);
  snprintf(out_path, sizeof out_path, "%s/stdout", dir);
  snprintf(err_path, sizeof err_path, "%s/stderr", dir);
  const char *argv[] = {C1D_TEST_CONVLAB, "run", "--impl", "naive,kahan", "--trials", t, NULL};
  cr_assert_eq(c1d_test_spawn(argv, out_path, err_path), 0);
  char *err = c1d_test_slurp(err_path, NULL), *out = c1d_test_slurp(out_path, NULL);
  cr_assert(err && out);
  const char *announced = strstr(err, "convlab run: about "), *first = NULL;
  cr_assert_not_null(announced, "announced: %.300s", err);
  const int lines = progress_lines(err, "convlab run: ", &first);
  cr_expect_geq(lines, 2, "a line a second through a run of %.0f s or more: %.2000s", estimate_seconds(announced), err);
  cr_expect(first > announced, "after the announcement: %.2000s", err);
  double before = -1.0;
  for (const char *line = first; line && *line; line = strchr(line, '\n') + 1) {
    if (strncmp(line, "convlab run: ", 13) != 0 || line[13] < '0' || line[13] > '9') continue;
    double pct = -1.0;
    const char *left = strstr(line, " left: "), *end = strchr(line, '\n');
    cr_expect(sscanf(line, "convlab run: %lf%%, about ", &pct) == 1 && left && left < end,
              "how far, and the time left: %.*s", (int)(end - line), line);
    cr_expect(pct >= before && pct <= 100.0, "never going back: %.0f%% after %.0f%%", pct, before);
    before = pct;
  }
  cr_expect(strstr(out, "naive ") != NULL && strstr(out, "convlab run: ") == NULL, "stdout is the table alone: %.300s",
            out);
  free(err);
  free(out);
  /* N and L given: no note, and far too short to be announced, so nothing at all on stderr */
  run_convlab((const char *[]){"run", "--impl", "naive", "--batch", "1", "--length", "1024", "--repeats", "1", NULL},
              o);
  cr_assert_eq(o->code, 0, "%s", o->err);
  cr_expect_str_eq(o->err, "", "a short run prints no progress line in a log");
  free(o);
}

/* The estimate of a run too big to start unannounced (the README's --cin 512 --taps 8 line, 670 GFLOP):
 * one line, first, through a pipe, and nothing else. How soon it comes (within 1 s on the idle 2-core
 * machine) is a speed claim, measured side by side with the runs by scripts/estimate_check.sh, not
 * timed here where other suites share the cores. */
Test(cli, says_its_estimate_first_in_one_line_through_a_pipe) {
  outcome *o = malloc(sizeof *o);
  run_convlab((const char *[]){"run", "--impl", "naive,kahan,tf32_inputs", "--cin", "512", "--taps", "8", "--dilation",
                               "2", "--bias", "--trials", "3", "--estimate", NULL},
              o);
  cr_assert_eq(o->code, 0, "%s", o->err);
  cr_assert(strncmp(o->out, "convlab run: about ", 19) == 0, "%s", o->out);
  cr_expect_eq(strchr(o->out, '\n'), o->out + strlen(o->out) - 1, "one line: %s", o->out);
  cr_expect_geq(estimate_seconds(o->out), C1D_ESTIMATE_ANNOUNCE_S, "big enough to be announced: %s", o->out);
  free(o);
}

/* convlab sweep says how long it will take, like run: --estimate prints that one line and stops. */
Test(cli, sweep_says_how_long_it_takes_here_then_stops) {
  outcome *o = malloc(sizeof *o);
  const char *out = path_of("never");
  run_convlab((const char *[]){"sweep", "--estimate", "--impl", "naive", "--trials", "1", "--out", out, NULL}, o);
  cr_assert_eq(o->code, 0, "%s", o->err);
  cr_expect_eq(line_count(o->out), 1, "one line: %s", o->out);
  cr_expect(strncmp(o->out, "convlab sweep: about ", 21) == 0, "%s", o->out);
  cr_expect(strstr(o->out, " shapes, 1 implementation, 1 trial each, n = C*K up to 16384 (speeds measured just now)"),
            "%s", o->out);
  cr_expect_gt(estimate_seconds(o->out), 0.0, "%s", o->out);
  cr_expect_str_eq(o->err, "", "%s", o->err);
  cr_expect_eq(count_entries(out), -1, "nothing ran, nothing was written");
  free(o);
}
