/* gpu_bench: `convlab bench` (harness/cmd_bench.c) as a function: its exit statuses, the one-line refusal
 * without a device, and on a device a small bench whose JSON has every row with its ratios to both cuDNN
 * modes, its error and, beside TF32 rows, the model. Run with --jobs 1. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/commands.h"
#include "harness/execute.h"

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
  cr_assert_eq(rows_seen, 5, "cudnn_fp32_fastest, cudnn_fp32, cublas_im2col_tf32, cudnn_tf32_fastest and "
                             "gpu_tf32_inputs expected");
  snprintf(out, sizeof out, "%s/b.npy", dir);
  cr_assert_eq(access(out, R_OK), 0, "--save-inputs wrote no b.npy");
  cJSON_Delete(root);
  free(text);
}
