/* gpu_libraries: the library baselines (the cudnn_* and cublas_im2col_* rows)
 * and gpu_tf32_inputs. On small-integer inputs (|v| <= 8: exact in float32 and in TF32, every partial
 * sum below 2^24) each must equal the float64 oracle exactly, which proves the causal padding and the
 * bias; on random inputs cudnn_fp32 is float32-accurate, each TF32-allowed path's used_tf32 agrees with
 * the error it measurably has, and gpu_tf32_inputs equals the CPU model bit for bit.
 * GPU tests skip without a device; the "no device" test runs only without one. Run with --jobs 1. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness/inputs.h"
#include "harness/registry.h"
#include "numerics/arith.h"
#include "numerics/metrics.h"
#include "reference/oracle.h"
#include "tests/support/host_cases.h"

#ifdef C1D_HAVE_CUDA /* the whole suite; a build without CUDA checks their absence (end of file) */
#include "gpu/device.h"

static const char *const library_names[] = {"cudnn_fp32",         "cudnn_tf32",         "cudnn_fp32_fastest",
                                            "cudnn_tf32_fastest", "cudnn_fp32_det",     "cudnn_tf32_det",
                                            "cublas_im2col_fp32", "cublas_im2col_tf32", "cublas_fp32_best",
                                            "cublas_tf32_best"};
enum { N_LIBS = sizeof library_names / sizeof library_names[0] };

/* Odd sizes, K 1..9, D 1..4, bias on and off, C = 1, L shorter than the receptive field (K-1)*D. */
static const c1d_shape shapes[] = {
    {1, 1, 1, 1, 1, 1, 0},     {2, 3, 5, 17, 3, 2, 1},   {1, 1, 7, 33, 4, 1, 0},
    {3, 7, 9, 31, 9, 1, 1},    {2, 5, 3, 6, 4, 3, 0},    {1, 16, 16, 64, 2, 4, 1},
    {2, 37, 29, 101, 5, 3, 1}, {1, 64, 8, 40, 7, 2, 0},  {1, 2, 2, 3, 6, 4, 1},
    {1, 256, 4, 96, 4, 1, 0},  {4, 33, 70, 257, 3, 1, 1}, {2, 8, 8, 5, 3, 3, 0},
};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };

// --- helpers ---------------------------------------------------------------------------------------

static c1d_metrics metrics_of(const c1d_shape *s, const host_case *h) {
  c1d_metric_options opt;
  c1d_metrics m;
  c1d_metric_options_default(&opt);
  cr_assert_eq(c1d_metrics_compute(h->y, h->ref, c1d_y_count(s), &opt, &m), 0);
  return m;
}

/* FFT and Winograd transform the data: not exact on integers, though correct. */
static int is_transform_algo(const char *algo) {
  return strstr(algo, "FFT") != NULL || strstr(algo, "WINOGRAD") != NULL;
}

// --- without a device -----------------------------------------------------------------------------

Test(gpu_libraries, are_registered_and_name_their_library) {
  for (int i = 0; i < N_LIBS; i++) {
    const c1d_impl *impl = impl_named(library_names[i]);
    cr_assert_eq(impl->backend, C1D_BACKEND_GPU);
    cr_assert(strstr(impl->summary, strncmp(impl->name, "cudnn", 5) == 0 ? "cuDNN" : "cuBLAS"),
              "%s's summary names no library: %s", impl->name, impl->summary);
  }
  cr_assert_eq(impl_named("cudnn_fp32")->precision, C1D_PREC_FP32);
  cr_assert_eq(impl_named("cublas_im2col_fp32")->precision, C1D_PREC_FP32);
  cr_assert_eq(impl_named("cudnn_tf32")->precision, C1D_PREC_TF32_ALLOWED);
  cr_assert_eq(impl_named("cublas_im2col_tf32")->precision, C1D_PREC_TF32_ALLOWED);
  const c1d_impl *model = impl_named("gpu_tf32_inputs");
  cr_assert_str_eq(model->twin, "tf32_inputs");
  cr_assert(model->twin_bit_exact);
}

Test(gpu_libraries, are_unavailable_without_a_device_with_the_reason) {
  if (!c1d_gpu_unavailable()) cr_skip_test("a CUDA device is present");
  const char *names[] = {"cudnn_fp32", "cudnn_tf32", "cublas_im2col_fp32", "cublas_im2col_tf32",
                         "gpu_tf32_inputs"};
  for (int i = 0; i < 5; i++) {
    const char *why = c1d_impl_unavailable(impl_named(names[i]));
    cr_assert_not_null(why, "%s claims to be available", names[i]);
    cr_assert(strstr(why, "no CUDA device"), "%s: reason \"%s\"", names[i], why);
  }
  /* setup itself refuses cleanly too, with the same reason, and allocates nothing. */
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  const c1d_shape s = {1, 2, 2, 8, 3, 1, 0};
  const c1d_impl *cudnn = impl_named("cudnn_fp32");
  if (cudnn->supported(&s) == NULL) { /* built with cuDNN */
    cr_assert_eq(cudnn->setup(&s, &ex), C1D_ERR_NO_DEVICE);
    cr_assert(strstr(c1d_error_detail(), "no CUDA device"), "%s", c1d_error_detail());
    cr_assert_null(ex.state);
  }
}

Test(gpu_libraries, refuse_shapes_beyond_the_libraries_int_dimensions) {
  const c1d_shape huge = {1, 1, 1, (int64_t)1 << 32, 2, 1, 0};
  for (int i = 0; i < N_LIBS; i++) {
    const c1d_impl *impl = impl_named(library_names[i]);
    cr_assert_not_null(impl->supported(&huge), "%s accepts L = 2^32", impl->name);
  }
}

// --- exactness on integers ------------------------------------------------------------------------

ParameterizedTestParameters(gpu_libraries, equal_the_oracle_exactly_on_integer_inputs) {
  static int idx[N_SHAPES];
  for (int i = 0; i < N_SHAPES; i++) idx[i] = i;
  return cr_make_param_array(int, idx, N_SHAPES);
}

ParameterizedTest(int *si, gpu_libraries, equal_the_oracle_exactly_on_integer_inputs) {
  skip_without_device();
  const c1d_shape *s = &shapes[*si];
  host_case h = make_host_case(s, C1D_DIST_INTEGER, 300 + *si, 1);
  const char *names[] = {"cudnn_fp32",         "cudnn_tf32",         "cudnn_fp32_fastest",
                         "cudnn_tf32_fastest", "cudnn_fp32_det",     "cudnn_tf32_det",
                         "cublas_im2col_fp32", "cublas_im2col_tf32", "cublas_fp32_best",
                         "cublas_tf32_best", "gpu_tf32_inputs"};
  cr_assert_leq(c1d_integer_range(s), 8, "integers beyond 8 may not be exact in TF32");
  for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++) {
    c1d_exec ex;
    run_on_gpu(impl_named(names[i]), s, &h, &ex);
    if (is_transform_algo(ex.algo)) {
      c1d_metrics m = metrics_of(s, &h);
      cr_log_info("%s shape %d: transform algorithm %s, rel L2 %.3g (not exact on integers)", names[i],
                  *si, ex.algo, m.rel_l2);
      cr_assert_eq(m.nonfinite, 0);
      cr_assert_lt(m.rel_l2, 1e-5, "%s (%s) shape %d", names[i], ex.algo, *si);
      continue;
    }
    for (int64_t e = 0; e < c1d_y_count(s); e++)
      cr_assert_eq((double)h.y[e], h.ref[e], "%s (%s, %s) shape %d element %lld: %.9g vs %.17g",
                   names[i], ex.algo, ex.math, *si, (long long)e, h.y[e], h.ref[e]);
  }
  free_host_case(&h);
}

// --- float32 accuracy and what TF32 paths really did -----------------------------------------------

Test(gpu_libraries, cudnn_fp32_is_float32_accurate_on_normal_inputs) {
  skip_without_device();
  const c1d_shape s = {2, 64, 48, 1000, 4, 2, 1};
  host_case h = make_host_case(&s, C1D_DIST_NORMAL, 41, 1);
  c1d_exec ex;
  run_on_gpu(impl_named("cudnn_fp32"), &s, &h, &ex);
  c1d_metrics m = metrics_of(&s, &h);
  cr_log_info("cudnn_fp32: algo %s, math %s, rel L2 %.3g", ex.algo, ex.math, m.rel_l2);
  cr_assert_eq(m.nonfinite, 0);
  cr_assert_lt(m.rel_l2, 2e-6, "cudnn_fp32 rel L2 %.3g (%s, %s)", m.rel_l2, ex.algo, ex.math);
  cr_assert_eq(ex.used_tf32, 0, "cudnn_fp32 used TF32: %s", ex.math);
  cr_assert_str_eq(ex.math, "FMA (fp32)");
  free_host_case(&h);
}

Test(gpu_libraries, cublas_im2col_fp32_is_float32_accurate_on_normal_inputs) {
  skip_without_device();
  const c1d_shape s = {2, 64, 48, 1000, 4, 2, 1};
  host_case h = make_host_case(&s, C1D_DIST_NORMAL, 42, 1);
  c1d_exec ex;
  run_on_gpu(impl_named("cublas_im2col_fp32"), &s, &h, &ex);
  c1d_metrics m = metrics_of(&s, &h);
  cr_log_info("cublas_im2col_fp32: math %s, rel L2 %.3g", ex.math, m.rel_l2);
  cr_assert_lt(m.rel_l2, 2e-6, "rel L2 %.3g", m.rel_l2);
  cr_assert_eq(ex.used_tf32, 0, "%s", ex.math);
  free_host_case(&h);
}

/* used_tf32 must match the error: TF32 input rounding puts rel L2 near 1e-4..1e-3, float32 near 1e-7. */
static void check_used_tf32_against_error(const char *name, const c1d_shape *s, uint64_t seed) {
  host_case h = make_host_case(s, C1D_DIST_NORMAL, seed, 1);
  c1d_exec ex;
  run_on_gpu(impl_named(name), s, &h, &ex);
  c1d_metrics m = metrics_of(s, &h);
  char shape[128];
  c1d_shape_format(s, shape, sizeof shape);
  cr_log_info("%s on %s: algo \"%s\", math \"%s\", used_tf32 %d, rel L2 %.3g", name, shape, ex.algo,
              ex.math, ex.used_tf32, m.rel_l2);
  cr_assert_neq(ex.math[0], '\0', "%s reported no math type", name);
  cr_assert_neq(ex.used_tf32, -1, "%s: the probe could not tell (%s)", name, ex.math);
  if (ex.used_tf32)
    cr_assert_gt(m.rel_l2, 2e-5, "%s says TF32 (%s) but rel L2 is %.3g", name, ex.math, m.rel_l2);
  else {
    cr_assert_lt(m.rel_l2, 2e-6, "%s says fp32 (%s) but rel L2 is %.3g", name, ex.math, m.rel_l2);
    cr_assert(strncmp(ex.math, "FMA", 3) == 0, "%s: math \"%s\" for an fp32 path", name, ex.math);
  }
  free_host_case(&h);
}

Test(gpu_libraries, cudnn_tf32_reports_what_it_used_on_the_small_dilated_shape) {
  skip_without_device();
  const c1d_shape s = {4, 37, 29, 300, 5, 3, 1};
  check_used_tf32_against_error("cudnn_tf32", &s, 51);
}

Test(gpu_libraries, cudnn_tf32_reports_what_it_used_on_a_wide_shape) {
  skip_without_device();
  const c1d_shape s = {2, 256, 256, 1024, 4, 1, 0};
  check_used_tf32_against_error("cudnn_tf32", &s, 52);
}

Test(gpu_libraries, cublas_im2col_tf32_reports_what_it_used) {
  skip_without_device();
  const c1d_shape s = {2, 256, 256, 1024, 4, 1, 0};
  check_used_tf32_against_error("cublas_im2col_tf32", &s, 53);
}

Test(gpu_libraries, cudnn_tf32_names_its_algorithm_and_math_on_the_headline_shape) {
  skip_without_device();
  const c1d_shape s = c1d_headline_shape();
  const c1d_impl *impl = impl_named("cudnn_tf32");
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  ex.used_tf32 = -2;
  cr_assert_eq(impl->setup(&s, &ex), C1D_OK, "%s", c1d_error_detail());
  cr_log_info("cudnn_tf32 on the headline shape: algo \"%s\", math \"%s\", used_tf32 %d", ex.algo,
              ex.math, ex.used_tf32);
  cr_assert_neq(ex.algo[0], '\0');
  cr_assert_neq(ex.math[0], '\0');
  cr_assert(ex.used_tf32 == 0 || ex.used_tf32 == 1, "used_tf32 %d", ex.used_tf32);
  impl->teardown(&ex);
  cr_assert_null(ex.state);
}

// --- the TF32 model's GPU twin --------------------------------------------------------------------

ParameterizedTestParameters(gpu_libraries, gpu_tf32_inputs_equals_the_cpu_model_bit_for_bit) {
  static int idx[N_SHAPES];
  for (int i = 0; i < N_SHAPES; i++) idx[i] = i;
  return cr_make_param_array(int, idx, N_SHAPES);
}

ParameterizedTest(int *si, gpu_libraries, gpu_tf32_inputs_equals_the_cpu_model_bit_for_bit) {
  skip_without_device();
  const c1d_shape *s = &shapes[*si];
  const c1d_impl *cpu = impl_named("tf32_inputs");
  host_case h = make_host_case(s, C1D_DIST_NORMAL, 400 + *si, 0);
  const int64_t ny = c1d_y_count(s);
  float *want = malloc((size_t)ny * sizeof(float));
  cr_assert_not_null(want);
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  for (int64_t e = 0; e < ny; e++) want[e] = NAN;
  cr_assert_eq(cpu->run(s, h.x, h.w, h.b, want, &ex), C1D_OK);
  run_on_gpu(impl_named("gpu_tf32_inputs"), s, &h, &ex);
  for (int64_t e = 0; e < ny; e++)
    cr_assert_eq(c1d_float_bits(h.y[e]), c1d_float_bits(want[e]),
                 "shape %d element %lld: gpu %a, cpu %a", *si, (long long)e, h.y[e], want[e]);
  free(want);
  free_host_case(&h);
}

#else /* built without CUDA */

Test(gpu_libraries, are_absent_from_a_build_without_cuda) {
  const char *names[] = {"cudnn_fp32", "cudnn_tf32", "cublas_im2col_fp32", "cublas_im2col_tf32", "gpu_tf32_inputs"};
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
    cr_assert_null(c1d_find_impl(names[i]), "%s is registered without CUDA", names[i]);
}

#endif
