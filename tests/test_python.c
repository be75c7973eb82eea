/* The Python helper (python/convlab, `import convlab`) as a PyTorch user meets it: tests/python/
 * test_helper.py runs with Debian's /usr/bin/python3 and python3-torch against the built libconvlab
 * (CONVLAB_LIB, which explain() calls), the built convlab (CONVLAB, for the cases save_case writes) and
 * the package in the repository (PYTHONPATH=python). Each group of its unittest cases is
 * one test here: real PyTorch CPU convolutions (fp32 dense, grouped and depthwise; bf16 depthwise with
 * SiLU and states by concatenation, in both layouts) explained as rounding, planted bugs (products
 * rounded to bf16 before the sum, an offset on one channel, states ignored) found where they are, and
 * clear errors (libconvlab missing, a float64 tensor, shapes that do not fit, a NaN). Also, one test
 * each: tests/python/test_reports.py and test_crosscheck_torch.py. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/process.h"

#define PYTHON "/usr/bin/python3"
#define SCRIPT C1D_SOURCE_DIR "/tests/python/test_helper.py"

static char dir[64];

static void make_dir(void) { c1d_test_make_dir(dir, "c1d_py"); }
static void remove_dir(void) { c1d_test_remove_dir(dir); }

TestSuite(python, .init = make_dir, .fini = remove_dir, .timeout = 300);

/* Runs argv with the helper's environment, stdout and stderr to dir/log: the exit code. */
static int spawn(const char *const *argv) {
  char log[128];
  snprintf(log, sizeof log, "%s/log", dir);
  /* the package in the repository first, then whatever the caller put there (scripts/emulate_avx2.sh's
   * sitecustomize) */
  static char *caller_path;
  static int caller_read;
  if (!caller_read) {
    const char *p = getenv("PYTHONPATH");
    caller_path = p && *p ? strdup(p) : NULL;
    caller_read = 1;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s%s%s", C1D_SOURCE_DIR "/python", caller_path ? ":" : "", caller_path ? caller_path : "");
  setenv("PYTHONPATH", path, 1);
  setenv("CONVLAB", C1D_TEST_CONVLAB, 1);
  setenv("CONVLAB_LIB", C1D_BINARY_DIR "/lib/libconvlab.so", 1); /* explain() calls the library */
#ifdef C1D_SANITIZER_PRELOAD
  /* The sanitizer build's library in an uninstrumented Python: the runtimes preloaded, leaks not counted
   * (Python's own allocations at exit are no finding; test_library counts the library's). */
  setenv("LD_PRELOAD", C1D_SANITIZER_PRELOAD, 1);
  setenv("ASAN_OPTIONS", "detect_leaks=0:allocator_may_return_null=1", 1);
#endif
  return c1d_test_spawn(argv, log, NULL);
}

static const char *log_tail(void) {
  char path[128];
  snprintf(path, sizeof path, "%s/log", dir);
  return c1d_test_tail(path);
}

/* Skips the test, naming the package, when Debian's Python lacks PyTorch (scripts/deps.sh test has it). */
static void need_torch(void) {
  if (access(PYTHON, X_OK) != 0) cr_skip_test(PYTHON " is absent: the Python helper cannot be tested here");
  const char *argv[] = {PYTHON, "-c", "import torch, numpy", NULL};
  if (spawn(argv) != 0)
    cr_skip_test(PYTHON " lacks python3-torch (scripts/deps.sh test installs it): %s", log_tail());
}

/* The unittest cases of one class of test_helper.py pass. */
static void run_class(const char *cls) {
  need_torch();
  const char *argv[] = {PYTHON, SCRIPT, "-v", cls, NULL};
  const int code = spawn(argv);
  cr_expect_eq(code, 0, "%s failed (exit %d):\n%s", cls, code, log_tail());
  cr_expect(strstr(log_tail(), "\nOK") != NULL, "%s did not report OK:\n%s", cls, log_tail());
}

Test(python, explains_pytorch_convolutions_fp32_and_bf16_as_rounding) { run_class("CorrectOutputsAreRounding"); }

Test(python, explains_this_cpus_pytorch_bf16_paths_by_the_arithmetic_each_was_seen_to_do) {
  run_class("ThisMachinesPyTorchIsExplained");
}

Test(python, explains_the_real_library_corpus_of_pytorch_and_cudnn_on_the_h200_as_rounding_at_its_stage) {
  run_class("RealLibraryOutputsAreRounding");
}

Test(python, finds_products_rounded_to_bf16_an_offset_channel_and_ignored_states) {
  run_class("PlantedBugsAreFound");
}

/* FFT convolutions (torch.fft in complex64, cuDNN's FFT arithmetic) with few terms per output: rounding,
 * and stale values or a channel offset planted on one: bugs. */
Test(python, explains_fft_convolutions_with_few_terms_as_rounding_and_finds_bugs_planted_on_them) {
  run_class("FftConvolutionsAreRounding");
}

/* cuDNN's FFT_TILING in float32 on an H100 at C*K = 16 and 4 (tests/data/cudnn_fft): rounding, though its
 * errors are 8 to 15 times the direct sum's; stale values or a channel offset planted on one: bugs, the
 * channel named. */
Test(python, explains_cudnn_fft_tiling_outputs_as_rounding_and_finds_bugs_planted_on_them) {
  run_class("CudnnFftTilingOutputsAreRounding");
}

Test(python, says_in_one_line_what_is_wrong_with_the_tensors_or_the_setup) { run_class("ClearErrors"); }

/* tests/python/test_reports.py: convlab.read_run and friends read one run's reports and saved outputs
 * through their sets' links, and refuse outputs of another run. NumPy only. */
Test(python, reads_one_runs_reports_and_outputs_and_refuses_a_mix) {
  if (access(PYTHON, X_OK) != 0) cr_skip_test(PYTHON " is absent: the Python helper cannot be tested here");
  const char *argv[] = {PYTHON, C1D_SOURCE_DIR "/tests/python/test_reports.py", "-v", NULL};
  const int code = spawn(argv);
  cr_expect_eq(code, 0, "test_reports.py failed (exit %d):\n%s", code, log_tail());
  cr_expect(strstr(log_tail(), "\nOK") != NULL, "test_reports.py did not report OK:\n%s", log_tail());
}

/* tests/python/test_crosscheck_torch.py: scripts/crosscheck_torch.py --rows-only, which convlab bench runs
 * for PyTorch's rows beside a grouped table (harness/bench_torch.c), without CUDA: its one-line refusals
 * (this PyTorch has no CUDA, flags that do not fit the inputs) and its rows' convolutions on the CPU
 * against a causal convolution in NumPy. NumPy only for the refusals; the rows skip without PyTorch. */
Test(python, crosscheck_rows_only_refuses_in_one_line_and_computes_the_rows_of_a_grouped_bench) {
  if (access(PYTHON, X_OK) != 0) cr_skip_test(PYTHON " is absent: the script cannot be tested here");
  const char *argv[] = {PYTHON, C1D_SOURCE_DIR "/tests/python/test_crosscheck_torch.py", "-v", NULL};
  const int code = spawn(argv);
  cr_expect_eq(code, 0, "test_crosscheck_torch.py failed (exit %d):\n%s", code, log_tail());
  cr_expect(strstr(log_tail(), "\nOK") != NULL, "test_crosscheck_torch.py did not report OK:\n%s", log_tail());
}

/* Issue 23: (x, w, y, b) by position or by name, and F.conv1d's (x, w, b, y) taken as such; a bias third
 * with no output named as one. */
Test(python, takes_the_documented_order_keywords_and_f_conv1d_order_and_names_a_lone_bias) {
  run_class("ArgumentOrder");
}

/* convlab.save_case writes what `convlab explain --case` reads, each tensor in its own type (bf16 kept). */
Test(python, saves_a_case_that_the_command_line_explains_as_the_helper_does) { run_class("SaveCase"); }

/* A SiLU output explained without activation="silu": the dict's "suggestion" and the assertion name it. */
Test(python, names_the_flag_a_call_left_out_when_the_output_fits_it) { run_class("ForgottenFlags"); }
