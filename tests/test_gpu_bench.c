/* gpu_bench: `convlab bench` (harness/cmd_bench.c) as a function: its exit statuses, the one-line refusal
 * without a device, and on a device a small bench whose JSON has every row with its ratios to both cuDNN
 * modes, its error and, beside TF32 rows, the model. PyTorch's rows of grouped benches (harness/
 * bench_torch.c) without a device: the script's JSON read back, and the one-line reason when python3 or
 * CUDA PyTorch is missing, with no temporary file left; the dense problem's FP32 and TF32 rows; on a
 * device a small depthwise bench and a small dense one whose JSON has them (or that reason) and the
 * ratios to them. Run with --jobs 1. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/bench_torch.h"
#include "harness/commands.h"
#include "harness/execute.h"
#include "harness/inputs.h"

static int bench(int argc, const char **argv) { return c1d_cmd_bench(argc, (char **)argv); }

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)n + 1);
  cr_assert_not_null(text);
  cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
  text[n] = '\0';
  fclose(f);
  return text;
}

Test(gpu_bench, answers_help_with_status_0) {
  const char *argv[] = {"bench", "--help"};
  cr_assert_eq(bench(2, argv), 0);
}

Test(gpu_bench, refuses_bad_arguments_with_status_2) {
  const char *a1[] = {"bench", "--repeats", "0"};
  const char *a2[] = {"bench", "--impl", "no_such_impl"};
  const char *a3[] = {"bench", "--frobnicate"};
  const char *a4[] = {"bench", "--taps", "0"};
  const char *a5[] = {"bench", "--ceiling-tflops", "-3"};
  cr_assert_eq(bench(3, a1), 2);
  cr_assert_eq(bench(3, a2), 2);
  cr_assert_eq(bench(2, a3), 2);
  cr_assert_eq(bench(3, a4), 2);
  cr_assert_eq(bench(3, a5), 2);
}

Test(gpu_bench, says_no_cuda_device_and_exits_1_without_one) {
  if (!c1d_gpu_why_unavailable()) cr_skip_test("a CUDA device is present");
  const char *argv[] = {"bench", "--quiet"};
  cr_assert_eq(bench(2, argv), 1);
}

Test(gpu_bench, reports_every_row_with_ratios_error_and_model) {
  const char *why = c1d_gpu_why_unavailable();
  if (why) cr_skip_test("%s", why);
  char dir[] = "/tmp/convlab_bench_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char out[256];
  snprintf(out, sizeof out, "%s/bench.json", dir);
  /* Three rows asked for: bench adds cudnn_tf32_fastest (the TF32 ratios) and gpu_tf32_inputs (the
   * model). */
  const char *argv[] = {"bench", "--impl", "cudnn_fp32_fastest,cudnn_fp32,cublas_im2col_tf32", "--batch", "2", "--cin", "37",
                        "--cout", "29", "--length", "300", "--taps", "5", "--dilation", "3", "--bias",
                        "--repeats", "3", "--quiet", "--out", out, "--save-inputs", dir};
  cr_assert_eq(bench((int)(sizeof argv / sizeof argv[0]), argv), 0);
  char *text = read_text(out);
  cJSON *root = cJSON_Parse(text);
  cr_assert_not_null(root);
  cJSON *rows = cJSON_GetObjectItem(root, "rows");
  cr_assert(cJSON_IsArray(rows));
  int seen_fp32 = 0, rows_seen = 0;
  cJSON *row;
  cJSON_ArrayForEach(row, rows) {
    const char *name = cJSON_GetObjectItem(row, "name")->valuestring;
    const char *state = cJSON_GetObjectItem(row, "state")->valuestring;
    rows_seen++;
    if (strcmp(state, "ran") != 0) {
      cr_log_info("%s %s: %s", name, state, cJSON_GetObjectItem(row, "reason")->valuestring);
      cr_assert_str_neq(state, "failed", "%s failed", name);
      continue;
    }
    cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(row, "ratio_to_cudnn_fp32_fastest")), "%s", name);
    cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(row, "ratio_to_cudnn_tf32_fastest")), "%s", name);
    cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(row, "rel_l2")), "%s", name);
    cr_assert(cJSON_IsString(cJSON_GetObjectItem(row, "algo")) || strncmp(name, "cudnn", 5), "%s names no algorithm", name);
    if (!strcmp(name, "cudnn_fp32_fastest")) {
      seen_fp32 = 1;
      cr_assert_float_eq(cJSON_GetObjectItem(row, "ratio_to_cudnn_fp32_fastest")->valuedouble, 1.0, 1e-12);
      cr_assert_lt(cJSON_GetObjectItem(row, "rel_l2")->valuedouble, 2e-6);
      cr_assert(strstr(cJSON_GetObjectItem(row, "algo")->valuestring, "fastest found"), "%s",
                cJSON_GetObjectItem(row, "algo")->valuestring);
    }
    if (!strcmp(name, "cudnn_tf32_fastest") || !strcmp(name, "cublas_im2col_tf32"))
      cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(row, "model_rel_l2")), "%s has no model", name);
  }
  cr_assert(seen_fp32);
  /* PyTorch's rows, or why there are none; with them, every row's ratio to its math mode's row */
  cJSON *torch = cJSON_GetObjectItem(root, "torch_rows");
  cr_assert(cJSON_IsObject(torch));
  const int measured = cJSON_IsTrue(cJSON_GetObjectItem(torch, "measured"));
  if (!measured) cr_log_info("PyTorch rows: not measured (%s)", cJSON_GetObjectItem(torch, "reason")->valuestring);
  cJSON_ArrayForEach(row, rows) {
    if (strcmp(cJSON_GetObjectItem(row, "state")->valuestring, "ran")) continue;
    const char *name = cJSON_GetObjectItem(row, "name")->valuestring;
    cr_assert_eq(cJSON_IsNumber(cJSON_GetObjectItem(row, "ratio_to_torch")), measured, "%s", name);
    const char *want = strstr(name, "tf32") ? "torch_conv1d_tf32" : "torch_conv1d_fp32";
    cr_assert_str_eq(cJSON_GetObjectItem(row, "torch_reference")->valuestring, want, "%s", name);
  }
  cr_assert_eq(rows_seen, 5, "cudnn_fp32_fastest, cudnn_fp32, cublas_im2col_tf32, cudnn_tf32_fastest and "
                             "gpu_tf32_inputs expected");
  snprintf(out, sizeof out, "%s/b.npy", dir);
  cr_assert_eq(access(out, R_OK), 0, "--save-inputs wrote no b.npy");
  cJSON_Delete(root);
  free(text);
}

// --- PyTorch's rows (harness/bench_torch.c) ------------------------------------------------------

Test(gpu_bench, takes_no_torch_and_says_so_in_help) {
  const char *argv[] = {"bench", "--no-torch", "--help"};
  cr_assert_eq(bench(3, argv), 0);
}

Test(gpu_bench, reads_pytorchs_rows_from_the_scripts_json) {
  const char *text =
      "{\"torch\": \"2.11.0\", \"cudnn\": 91400, \"device\": \"NVIDIA H200\", \"rows\": {"
      "\"torch_conv1d_bf16\": {\"label\": \"F.conv1d (its own kernel)\", \"ms\": 1.35, \"rel_l2\": 0.002,"
      " \"max_abs\": 0.01, \"fail_allclose_fraction\": 0.5},"
      "\"torch_cudnn_nhwc_bf16\": {\"label\": \"conv2d channels_last (cuDNN NHWC)\", \"ms\": 0.9}},"
      "\"left_out\": {}}";
  c1d_torch_rows t;
  cr_assert_eq(c1d_bench_torch_parse(text, &t), C1D_OK);
  cr_assert(t.measured);
  cr_assert_eq(t.n, 2);
  cr_assert_str_eq(t.version, "2.11.0");
  cr_assert_str_eq(t.device, "NVIDIA H200");
  cr_assert_float_eq(t.cudnn, 91400.0, 0.0);
  cr_assert_str_eq(t.left_out, "");
  const c1d_torch_row *conv1d = c1d_torch_find(&t, C1D_TORCH_CONV1D), *nhwc = c1d_torch_find(&t, C1D_TORCH_NHWC);
  cr_assert_not_null(conv1d);
  cr_assert_not_null(nhwc);
  cr_assert_str_eq(conv1d->name, "torch_conv1d_bf16");
  cr_assert_str_eq(conv1d->label, "F.conv1d (its own kernel)");
  cr_assert_float_eq(conv1d->ms, 1.35, 1e-12);
  cr_assert_float_eq(conv1d->fail_fraction, 0.5, 1e-12);
  cr_assert_float_eq(nhwc->ms, 0.9, 1e-12);
  cr_assert(isnan(nhwc->rel_l2) && isnan(nhwc->max_abs), "numbers the script left out are NAN");

  /* With SiLU: one row, and the one left out with the script's reason. */
  cr_assert_eq(c1d_bench_torch_parse("{\"torch\": \"2.11.0\", \"rows\": {\"torch_conv1d_fp32\": {\"ms\": 2}},"
                                     " \"left_out\": {\"torch_cudnn_nhwc_fp32\": \"cuDNN has no SiLU\"}}", &t),
               C1D_OK);
  cr_assert_null(c1d_torch_find(&t, C1D_TORCH_NHWC));
  cr_assert_str_eq(t.left_out, "torch_cudnn_nhwc_fp32: cuDNN has no SiLU");
  cr_assert(isnan(t.cudnn));

  cr_assert_eq(c1d_bench_torch_parse("Traceback (most recent call last):", &t), C1D_ERR_FORMAT);
  cr_assert_not(t.measured);
  cr_assert_eq(c1d_bench_torch_parse("{\"rows\": {}}", &t), C1D_ERR_FORMAT);
  cr_assert_null(c1d_torch_find(&t, C1D_TORCH_CONV1D));
  cr_assert_null(c1d_torch_find(NULL, C1D_TORCH_CONV1D));
}

static int entries_in(const char *dir) {
  DIR *d = opendir(dir);
  cr_assert_not_null(d, "cannot open %s", dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return n;
}

/* A depthwise problem of 8 channels, bias and states, its inputs seeded. */
static void run_torch(c1d_torch_rows *t) {
  c1d_shape s = {1, 8, 8, 32, 4, 2, 1};
  s.G = 8;
  s.states = 1;
  float x[8 * 32], w[8 * 4], b[8], st[8 * 6];
  c1d_generate(&s, C1D_DIST_NORMAL, 3, x, w, b);
  c1d_generate_states(&s, C1D_DIST_NORMAL, 3, st);
  c1d_bench_torch(&s, x, w, b, st, 3, 0, t);
}

Test(gpu_bench, says_in_one_line_why_pytorchs_rows_were_not_measured_and_leaves_no_file) {
  char dir[] = "/tmp/convlab_bench_torch_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  setenv("TMPDIR", dir, 1);
  c1d_torch_rows t;

  setenv("PATH", "/nonexistent", 1); /* env finds no python3 */
  run_torch(&t);
  cr_assert_not(t.measured);
  cr_assert_str_eq(t.reason, "no python3 on PATH (/usr/bin/env python3)");
  cr_assert_eq(entries_in(dir), 0, "the inputs were left in %s", dir);

  setenv("PATH", "/usr/bin:/bin", 1); /* Debian's python3: its PyTorch, if any, is CPU-only */
  if (access("/usr/bin/python3", X_OK) == 0) {
    run_torch(&t);
    if (t.measured) { /* a python3 with CUDA PyTorch, on a device machine */
      cr_assert_not_null(c1d_torch_find(&t, C1D_TORCH_CONV1D));
      cr_assert(c1d_torch_find(&t, C1D_TORCH_CONV1D)->ms > 0);
      cr_assert_lt(c1d_torch_find(&t, C1D_TORCH_NHWC)->rel_l2, 1e-6);
    } else {
      cr_log_info("PyTorch rows: not measured (%s)", t.reason);
      cr_assert(t.reason[0] && !strchr(t.reason, '\n'), "'%s'", t.reason);
      cr_assert_null(strstr(t.reason, "Traceback"), "%s", t.reason);
    }
    cr_assert_eq(entries_in(dir), 0, "the inputs were left in %s", dir);
  }

  char absent[96];
  snprintf(absent, sizeof absent, "%s/absent", dir);
  setenv("TMPDIR", absent, 1);
  run_torch(&t);
  cr_assert_not(t.measured);
  cr_assert(!strncmp(t.reason, "cannot create a directory in ", 29), "%s", t.reason);
  rmdir(dir);
}

/* The interpreter for the test below: Debian's python3 where it has NumPy and PyTorch (CI: python3-torch),
 * else the python3 first on PATH where that one has them (the device machine: CUDA PyTorch, run on the
 * CPU here), else Debian's (the script then says what is missing, and the test is skipped). */
static void python_with_torch(char *out, size_t n) {
  snprintf(out, n, "/usr/bin/python3");
  if (system("/usr/bin/python3 -c 'import numpy, torch' >/dev/null 2>&1") == 0) return;
  FILE *p = popen("command -v python3 2>/dev/null", "r");
  if (!p) return;
  char path[256] = "", cmd[320];
  const int got = fgets(path, sizeof path, p) != NULL;
  pclose(p);
  path[strcspn(path, "\n")] = '\0';
  if (!got || path[0] != '/' || strchr(path, '\'')) return;
  snprintf(cmd, sizeof cmd, "'%s' -c 'import numpy, torch' >/dev/null 2>&1", path);
  if (system(cmd) == 0) snprintf(out, n, "%s", path);
}

/* The whole way without a device: a python3 on PATH that runs one with NumPy and PyTorch with the script's
 * hidden --device cpu, so the inputs written, the script run and its JSON read back give rows (CPU times,
 * fp32 errors). run: the problem, measured into *t; the test is skipped where PyTorch or NumPy is missing. */
static void measure_on_cpu(void (*run)(c1d_torch_rows *), c1d_torch_rows *t) {
  char python[256];
  python_with_torch(python, sizeof python);
  if (access(python, X_OK) != 0) cr_skip_test("no %s", python);
  char dir[] = "/tmp/convlab_bench_torch_XXXXXX", bin[96], tmp[96], shim[128];
  cr_assert_not_null(mkdtemp(dir));
  snprintf(bin, sizeof bin, "%s/bin", dir);
  snprintf(tmp, sizeof tmp, "%s/tmp", dir);
  snprintf(shim, sizeof shim, "%s/python3", bin);
  cr_assert_eq(mkdir(bin, 0755), 0);
  cr_assert_eq(mkdir(tmp, 0755), 0);
  FILE *f = fopen(shim, "w");
  cr_assert_not_null(f);
  fprintf(f, "#!/bin/sh\nexec '%s' \"$@\" --device cpu\n", python);
  cr_assert_eq(fclose(f), 0);
  cr_assert_eq(chmod(shim, 0755), 0);
  char path[160];
  snprintf(path, sizeof path, "%s:/usr/bin:/bin", bin);
  setenv("PATH", path, 1);
  setenv("TMPDIR", tmp, 1);
  run(t);
  if (!t->measured && strstr(t->reason, " is needed")) cr_skip_test("%s", t->reason); /* PyTorch or NumPy */
  cr_assert(t->measured, "%s", t->reason);
  cr_assert_eq(entries_in(tmp), 0, "the inputs were left in %s", tmp);
  unlink(shim);
  rmdir(bin);
  rmdir(tmp);
  rmdir(dir);
}

Test(gpu_bench, measures_pytorchs_rows_through_the_script_and_reads_them_back) {
  c1d_torch_rows t;
  measure_on_cpu(run_torch, &t);
  cr_assert_str_eq(t.device, "cpu");
  cr_assert_eq(t.n, 2);
  const c1d_torch_row *conv1d = c1d_torch_find(&t, C1D_TORCH_CONV1D), *nhwc = c1d_torch_find(&t, C1D_TORCH_NHWC);
  cr_assert_str_eq(conv1d->name, "torch_conv1d_fp32");
  cr_assert_str_eq(nhwc->name, "torch_cudnn_nhwc_fp32");
  for (int i = 0; i < 2; i++) {
    cr_assert(t.rows[i].ms > 0, "%s", t.rows[i].name);
    cr_assert_lt(t.rows[i].rel_l2, 1e-6, "%s", t.rows[i].name);
    cr_assert(strstr(t.rows[i].label, "after torch.cat((s, x))"), "%s", t.rows[i].label); /* states given */
  }
}

/* A dense float32 problem (G = 1, bias, dilation 2). */
static void run_torch_dense(c1d_torch_rows *t) {
  const c1d_shape s = {2, 6, 5, 40, 3, 2, 1};
  float x[2 * 6 * 40], w[5 * 6 * 3], b[5];
  c1d_generate(&s, C1D_DIST_NORMAL, 4, x, w, b);
  c1d_bench_torch(&s, x, w, b, NULL, 3, 0, t);
}

/* The dense table's rows: F.conv1d with TF32 off and on, in cuDNN's benchmark mode (on the CPU here: both
 * float32-accurate). */
Test(gpu_bench, measures_pytorchs_fp32_and_tf32_rows_of_a_dense_problem) {
  c1d_torch_rows t;
  measure_on_cpu(run_torch_dense, &t);
  cr_assert_eq(t.n, 2);
  const c1d_torch_row *fp32 = c1d_torch_find(&t, "torch_conv1d_fp32"), *tf32 = c1d_torch_find(&t, "torch_conv1d_tf32");
  cr_assert_not_null(fp32);
  cr_assert_not_null(tf32);
  cr_assert(strstr(fp32->label, "TF32 off, benchmark mode"), "%s", fp32->label);
  cr_assert(strstr(tf32->label, "TF32 on, benchmark mode"), "%s", tf32->label);
  for (int i = 0; i < 2; i++) {
    cr_assert(t.rows[i].ms > 0, "%s", t.rows[i].name);
    cr_assert_lt(t.rows[i].rel_l2, 1e-6, "%s", t.rows[i].name);
  }
}

/* On a device: a small depthwise bench's JSON has PyTorch's rows, or the reason there are none, and every
 * row its ratios to them. */
Test(gpu_bench, reports_pytorchs_rows_beside_a_depthwise_bench) {
  const char *why = c1d_gpu_why_unavailable();
  if (why) cr_skip_test("%s", why);
  char dir[] = "/tmp/convlab_bench_XXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  char out[256];
  snprintf(out, sizeof out, "%s/bench.json", dir);
  /* gpu_dw_naive, and cudnn_lowp_fastest, which bench adds. */
  const char *argv[] = {"bench", "--depthwise", "--impl", "gpu_dw_naive", "--batch", "2", "--cin", "64",
                        "--length", "512", "--bias", "--dtype", "bf16", "--repeats", "3", "--quiet", "--out", out};
  cr_assert_eq(bench((int)(sizeof argv / sizeof argv[0]), argv), 0);
  char *text = read_text(out);
  cJSON *root = cJSON_Parse(text);
  cr_assert_not_null(root);
  cJSON *torch = cJSON_GetObjectItem(root, "torch_rows");
  cr_assert(cJSON_IsObject(torch));
  const int measured = cJSON_IsTrue(cJSON_GetObjectItem(torch, "measured"));
  if (!measured) {
    cr_assert(cJSON_IsString(cJSON_GetObjectItem(torch, "reason")));
    cr_log_info("PyTorch rows: not measured (%s)", cJSON_GetObjectItem(torch, "reason")->valuestring);
  } else {
    cJSON *row;
    int n = 0;
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(torch, "rows")) {
      n++;
      cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(row, "time_median_ms")));
      cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(row, "ratio_to_cudnn")));
      cr_assert_lt(cJSON_GetObjectItem(row, "rel_l2")->valuedouble, 1e-2); /* a bf16 output */
    }
    cr_assert_eq(n, 2, "torch_conv1d_bf16 and torch_cudnn_nhwc_bf16 expected");
  }
  cJSON *row;
  cJSON_ArrayForEach(row, cJSON_GetObjectItem(root, "rows")) {
    if (strcmp(cJSON_GetObjectItem(row, "state")->valuestring, "ran")) continue;
    cr_assert_eq(cJSON_IsNumber(cJSON_GetObjectItem(row, "ratio_to_torch_conv1d")), measured);
    cr_assert_eq(cJSON_IsNumber(cJSON_GetObjectItem(row, "ratio_to_torch_cudnn_nhwc")), measured);
  }
  cJSON_Delete(root);
  free(text);
}
