/* gpu_fast: the fast kernels. gpu_fp32_fast equals the CPU naive order bit for bit and gpu_kahan_fast
 * equals kahan_blocked bit for bit on a table of shapes that reaches every code path (the compile-time
 * (K, D) instances and the general one, aligned 16-byte and ragged 4-byte copies, slabs and tiles cut by
 * C, O and L, pads wider than a tile); all four equal the float64 oracle exactly on integer inputs; the
 * tensor-core kernels' errors sit where their models put them (gpu_tf32 near tf32_inputs, gpu_3xtf32
 * near split_3xtf32 and under 1e-6); every element of an output with more than 2^31 elements is
 * written. GPU tests skip without a device; run with --jobs 1. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
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

/* {N, C, O, L, K, D, bias}. The first twelve are the suite's usual odd shapes (K up to 9, D up to 4,
 * L shorter than the receptive field); then O past one 128-channel block, L past one tile, the K = 2, 3,
 * 4 instances with L % 4 == 0 (16-byte copies) and not, K = 4 with D = 2 (general instance), a pad of
 * 600 (wider than a tile), K = 8 (eight taps per tensor-core k-step), and K = 1 with a large D. */
static const c1d_shape shapes[] = {
    {1, 1, 1, 1, 1, 1, 0},       {2, 3, 5, 17, 3, 2, 1},     {1, 1, 7, 33, 4, 1, 0},
    {3, 7, 9, 31, 9, 1, 1},      {2, 5, 3, 6, 4, 3, 0},      {1, 16, 16, 64, 2, 4, 1},
    {2, 37, 29, 101, 5, 3, 1},   {1, 64, 8, 40, 7, 2, 0},    {1, 2, 2, 3, 6, 4, 1},
    {1, 256, 4, 96, 4, 1, 0},    {4, 33, 70, 257, 3, 1, 1},  {2, 8, 8, 5, 3, 3, 0},
    {2, 19, 131, 300, 4, 1, 1},  {1, 24, 200, 1024, 4, 1, 0}, {1, 9, 33, 513, 2, 1, 1},
    {1, 12, 20, 260, 3, 1, 0},   {1, 5, 17, 2000, 3, 300, 1}, {2, 40, 256, 384, 4, 2, 0},
    {1, 3, 5, 100, 8, 1, 1},     {1, 1, 1, 700, 1, 5, 0},    {1, 17, 140, 1030, 2, 1, 0},
};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };

static const char *const fast_names[] = {"gpu_fp32_fast", "gpu_kahan_fast", "gpu_tf32", "gpu_3xtf32"};
enum { N_FAST = sizeof fast_names / sizeof fast_names[0] };

/* Every registered tensor-core kernel of a precision (main and variant tiers), from the registry. */
static int tensor_core_kernels(c1d_precision p, const c1d_impl **out, int max) {
  int n = 0, k = 0;
  const c1d_impl *const *table = c1d_registry(&n);
  for (int i = 0; i < n && k < max; i++)
    if (table[i]->backend == C1D_BACKEND_GPU && table[i]->precision == p && !table[i]->twin_bit_exact &&
        table[i]->tier != C1D_TIER_MUTANT && table[i]->twin)
      out[k++] = table[i];
  return k;
}

// --- helpers ---------------------------------------------------------------------------------------

static int *shape_indices(void) {
  static int idx[N_SHAPES];
  for (int i = 0; i < N_SHAPES; i++) idx[i] = i;
  return idx;
}

/* Runs a CPU implementation into out (poisoned first). */
static void run_cpu(const c1d_impl *impl, const c1d_shape *s, const host_case *h, float *out) {
  for (int64_t i = 0; i < c1d_y_count(s); i++) out[i] = NAN;
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  cr_assert_eq(impl->run(s, h->x, h->w, h->b, out, &ex), C1D_OK, "%s: %s", impl->name,
               c1d_error_detail());
}

static double rel_l2_of(const c1d_shape *s, const float *y, const double *ref) {
  c1d_metric_options opt;
  c1d_metrics m;
  c1d_metric_options_default(&opt);
  cr_assert_eq(c1d_metrics_compute(y, ref, c1d_y_count(s), &opt, &m), 0);
  cr_assert_eq(m.nonfinite, 0, "%lld non-finite elements", (long long)m.nonfinite);
  return m.rel_l2;
}

// --- descriptors -----------------------------------------------------------------------------------

Test(gpu_fast, are_registered_with_their_twins) {
  const c1d_impl *f = impl_named("gpu_fp32_fast"), *k = impl_named("gpu_kahan_fast");
  const c1d_impl *t = impl_named("gpu_tf32"), *x3 = impl_named("gpu_3xtf32");
  cr_assert_str_eq(f->twin, "naive");
  cr_assert(f->twin_bit_exact);
  cr_assert_eq(f->precision, C1D_PREC_FP32);
  cr_assert_str_eq(k->twin, "kahan_blocked");
  cr_assert(k->twin_bit_exact);
  cr_assert_eq(k->precision, C1D_PREC_FP32_COMP);
  cr_assert_str_eq(t->twin, "tf32_inputs");
  cr_assert_not(t->twin_bit_exact);
  cr_assert_eq(t->precision, C1D_PREC_TF32);
  cr_assert_str_eq(x3->twin, "split_3xtf32");
  cr_assert_not(x3->twin_bit_exact);
  cr_assert_eq(x3->precision, C1D_PREC_3XTF32);
  for (int i = 0; i < N_FAST; i++) {
    const c1d_impl *impl = impl_named(fast_names[i]);
    cr_assert_eq(impl->backend, C1D_BACKEND_GPU);
    cr_assert_not_null(c1d_find_impl(impl->twin), "%s's twin %s is not registered", impl->name,
                       impl->twin);
  }
}

Test(gpu_fast, refuse_what_they_cannot_run_with_a_reason) {
  const c1d_shape nine_taps = {1, 4, 4, 64, 9, 1, 0};
  /* (on a GPU other than Hopper the tensor-core kernels refuse every shape, naming the architecture) */
  cr_assert_not_null(impl_named("gpu_tf32")->supported(&nine_taps));
  cr_assert_not_null(impl_named("gpu_3xtf32")->supported(&nine_taps));
  cr_assert_null(impl_named("gpu_fp32_fast")->supported(&nine_taps));
  const c1d_shape wide = {1, 4, 4, 64, 3, (int64_t)1 << 20, 0}; /* pad 2^21 */
  for (int i = 0; i < N_FAST; i++) {
    const char *why = impl_named(fast_names[i])->supported(&wide);
    cr_assert_not_null(why, "%s accepts a pad of 2^21", fast_names[i]);
    cr_assert(strstr(why, "shared memory") || strstr(why, "K > 8"), "%s: %s", fast_names[i], why);
  }
}

// --- bit-exact twins -------------------------------------------------------------------------------

ParameterizedTestParameters(gpu_fp32_fast, matches_cpu_naive_bit_for_bit) {
  return cr_make_param_array(int, shape_indices(), N_SHAPES);
}

ParameterizedTest(int *si, gpu_fp32_fast, matches_cpu_naive_bit_for_bit) {
  skip_without_device();
  const c1d_shape *s = &shapes[*si];
  const c1d_dist dists[] = {C1D_DIST_NORMAL, C1D_DIST_ILL_CONDITIONED};
  for (int di = 0; di < 2; di++) {
    host_case h = make_host_case(s, dists[di], 1000 + *si, 0);
    run_cpu(impl_named("naive"), s, &h, h.twin);
    run_on_gpu(impl_named("gpu_fp32_fast"), s, &h, NULL);
    assert_same_bits(c1d_dist_name(dists[di]), s, h.y, h.twin);
    free_host_case(&h);
  }
}

ParameterizedTestParameters(gpu_kahan_fast, matches_kahan_blocked_bit_for_bit) {
  return cr_make_param_array(int, shape_indices(), N_SHAPES);
}

ParameterizedTest(int *si, gpu_kahan_fast, matches_kahan_blocked_bit_for_bit) {
  skip_without_device();
  const c1d_shape *s = &shapes[*si];
  host_case h = make_host_case(s, C1D_DIST_NORMAL, 1100 + *si, 0);
  run_cpu(impl_named("kahan_blocked"), s, &h, h.twin);
  run_on_gpu(impl_named("gpu_kahan_fast"), s, &h, NULL);
  assert_same_bits("normal", s, h.y, h.twin);
  free_host_case(&h);
}

Test(gpu_fp32_fast, equals_gpu_naive_bit_for_bit_at_full_width) {
  /* 256 x 256 channels, several tiles of times: the layout of the headline shape. */
  skip_without_device();
  const c1d_shape s = {2, 256, 256, 1024, 4, 1, 0};
  host_case h = make_host_case(&s, C1D_DIST_CONV_INIT, 77, 0);
  run_on_gpu(impl_named("gpu_naive"), &s, &h, NULL);
  memcpy(h.twin, h.y, (size_t)c1d_y_count(&s) * sizeof(float));
  run_on_gpu(impl_named("gpu_fp32_fast"), &s, &h, NULL);
  assert_same_bits("gpu_naive", &s, h.y, h.twin);
  free_host_case(&h);
}

// --- exactness on integers ---------------------------------------------------------------------------

ParameterizedTestParameters(gpu_fast, equal_the_oracle_exactly_on_integer_inputs) {
  return cr_make_param_array(int, shape_indices(), N_SHAPES);
}

ParameterizedTest(int *si, gpu_fast, equal_the_oracle_exactly_on_integer_inputs) {
  skip_without_device();
  const c1d_shape *s = &shapes[*si];
  host_case h = make_host_case(s, C1D_DIST_INTEGER, 1200 + *si, 1);
  cr_assert_leq(c1d_integer_range(s), 8, "integers beyond 8 may not be exact in TF32");
  for (int i = 0; i < N_FAST; i++) {
    const c1d_impl *impl = impl_named(fast_names[i]);
    const char *why = impl->supported(s);
    if (why) {
      cr_assert_gt(s->K, 8, "%s refuses shape %d: %s", impl->name, *si, why);
      continue;
    }
    run_on_gpu(impl, s, &h, NULL);
    for (int64_t e = 0; e < c1d_y_count(s); e++)
      cr_assert_eq((double)h.y[e], h.ref[e], "%s shape %d element %lld: %.9g vs %.17g", impl->name, *si,
                   (long long)e, h.y[e], h.ref[e]);
  }
  const c1d_impl *tc[8];
  const int ntc = tensor_core_kernels(C1D_PREC_TF32, tc, 4);
  const int ntc3 = tensor_core_kernels(C1D_PREC_3XTF32, tc + ntc, 4);
  for (int i = 0; i < ntc + ntc3; i++) {
    if (tc[i]->supported(s)) continue;
    run_on_gpu(tc[i], s, &h, NULL);
    for (int64_t e = 0; e < c1d_y_count(s); e++)
      cr_assert_eq((double)h.y[e], h.ref[e], "%s shape %d element %lld: %.9g vs %.17g", tc[i]->name, *si,
                   (long long)e, h.y[e], h.ref[e]);
  }
  free_host_case(&h);
}

// --- where the errors sit ----------------------------------------------------------------------------

/* C*K = 1024 as in the headline shape; 256 output channels, two batch rows of 2048 times. */
static const c1d_shape accuracy_shape = {2, 256, 256, 2048, 4, 1, 0};

Test(gpu_tf32, error_matches_the_tf32_model_within_20_percent) {
  skip_without_device();
  const c1d_shape *s = &accuracy_shape;
  host_case h = make_host_case(s, C1D_DIST_NORMAL, 61, 1);
  run_cpu(impl_named("tf32_inputs"), s, &h, h.twin);
  const double model = rel_l2_of(s, h.twin, h.ref);
  const c1d_impl *tc[4];
  const int ntc = tensor_core_kernels(C1D_PREC_TF32, tc, 4);
  cr_assert_geq(ntc, 1, "gpu_tf32 is registered");
  for (int i = 0; i < ntc; i++) {
    run_on_gpu(tc[i], s, &h, NULL);
    const double kernel = rel_l2_of(s, h.y, h.ref);
    cr_log_info("%s rel L2 %.4g, tf32_inputs model %.4g (ratio %.3f)", tc[i]->name, kernel, model,
                kernel / model);
    cr_assert_gt(kernel, 1e-4, "%s rel L2 %.3g: TF32 inputs put it near 3e-4", tc[i]->name, kernel);
    cr_assert_lt(kernel, 1e-3, "%s rel L2 %.3g", tc[i]->name, kernel);
    cr_assert_lt(fabs(kernel / model - 1.0), 0.2, "%s %.4g vs model %.4g", tc[i]->name, kernel, model);
  }
  free_host_case(&h);
}

/* Kernel and model side by side on the same inputs; returns kernel / model. */
static double kernel_over_model(const c1d_impl *kernel, const c1d_impl *model, const c1d_shape *s,
                                host_case *h, double *kernel_l2) {
  run_cpu(model, s, h, h->twin);
  const double m = rel_l2_of(s, h->twin, h->ref);
  run_on_gpu(kernel, s, h, NULL);
  const double k = rel_l2_of(s, h->y, h->ref);
  cr_log_info("%s rel L2 %.4g, model %s %.4g, ratio %.3f", kernel->name, k, model->name, m, k / m);
  *kernel_l2 = k;
  return k / m;
}

Test(gpu_3xtf32, is_float32_accurate_and_matches_its_model_within_20_percent) {
  skip_without_device();
  const c1d_shape *s = &accuracy_shape;
  host_case h = make_host_case(s, C1D_DIST_NORMAL, 62, 1);
  const c1d_impl *tc[4];
  const int ntc = tensor_core_kernels(C1D_PREC_3XTF32, tc, 4);
  cr_assert_geq(ntc, 1, "gpu_3xtf32 is registered");
  for (int i = 0; i < ntc; i++) {
    double k;
    const double ratio = kernel_over_model(tc[i], impl_named("split_3xtf32"), s, &h, &k);
    cr_assert_lt(k, 1e-6, "%s rel L2 %.3g", tc[i]->name, k);
    cr_assert_lt(fabs(ratio - 1.0), 0.2, "%s / split_3xtf32 = %.3f", tc[i]->name, ratio);
  }
  free_host_case(&h);
}

/* Neither the x path (the bulk tensor copy, or cp.async) nor the pipeline's depth (C1D_WGC_STAGES)
 * changes any output's order of operations: every combination gives the bits of the cp.async path with
 * three stages, on shapes with one, three and five time tiles, O past one block of channels, K = 1, 3, 4
 * and 8, a pad too wide for the tensor copy's box, L % 4 != 0 (the cp.async path either way), with and
 * without bias. The kernel reports the path it ran. */
Test(gpu_tensor_cores, give_the_same_bits_by_either_x_path_at_any_depth) {
  skip_without_device();
  static const c1d_shape path_shapes[] = {{2, 40, 300, 600, 3, 2, 1}, {1, 64, 256, 384, 4, 1, 0},
                                          {3, 9, 70, 129, 8, 1, 1},   {1, 33, 17, 640, 1, 1, 0},
                                          {1, 8, 40, 512, 3, 70, 1}};
  const char *names[] = {"gpu_tf32", "gpu_3xtf32"}, *depths[] = {"3", NULL, "6"};
  for (size_t si = 0; si < sizeof path_shapes / sizeof path_shapes[0]; si++) {
    const c1d_shape *s = &path_shapes[si];
    host_case h = make_host_case(s, C1D_DIST_NORMAL, 700 + (uint64_t)si, 0);
    /* the box: 128 times + the pad rounded up to 4, then to a row stride of 8 (mod 32) floats */
    const int64_t need = 128 + ((c1d_pad(s) + 3) & ~INT64_C(3)), box = need + ((8 - need % 32) + 32) % 32;
    const int tensor_copy_fits = s->L % 4 == 0 && box <= 256;
    for (int i = 0; i < 2; i++) {
      const c1d_impl *impl = impl_named(names[i]);
      cr_assert_null(impl->supported(s), "%s shape %zu", names[i], si);
      float *first = malloc((size_t)c1d_y_count(s) * sizeof(float));
      cr_assert_not_null(first);
      for (int xcopy = 0; xcopy < 2; xcopy++) {
        if (xcopy == 0) setenv("C1D_WGC_XCOPY", "cp", 1);
        else unsetenv("C1D_WGC_XCOPY");
        for (int d = 0; d < 3; d++) {
          if (depths[d]) setenv("C1D_WGC_STAGES", depths[d], 1);
          else unsetenv("C1D_WGC_STAGES");
          c1d_exec ex;
          run_on_gpu(impl, s, &h, &ex);
          const char *want = xcopy && tensor_copy_fits ? "x by tensor copy" : "x by cp.async";
          cr_assert(!strncmp(ex.algo, want, strlen(want)), "%s shape %zu: ran %s, expected %s", names[i], si,
                    ex.algo, want);
          if (xcopy == 0 && d == 0) memcpy(first, h.y, (size_t)c1d_y_count(s) * sizeof(float));
          else assert_same_bits(ex.algo, s, h.y, first);
        }
      }
      unsetenv("C1D_WGC_STAGES");
      unsetenv("C1D_WGC_XCOPY");
      free(first);
    }
    free_host_case(&h);
  }
}

Test(gpu_kahan_fast, is_more_accurate_than_float32_order) {
  skip_without_device();
  const c1d_shape *s = &accuracy_shape;
  host_case h = make_host_case(s, C1D_DIST_NORMAL, 63, 1);
  run_on_gpu(impl_named("gpu_fp32_fast"), s, &h, NULL);
  const double fp32 = rel_l2_of(s, h.y, h.ref);
  run_on_gpu(impl_named("gpu_kahan_fast"), s, &h, NULL);
  const double kahan = rel_l2_of(s, h.y, h.ref);
  cr_log_info("rel L2: gpu_kahan_fast %.4g, gpu_fp32_fast %.4g", kahan, fp32);
  cr_assert_lt(kahan, 1e-7, "gpu_kahan_fast rel L2 %.3g", kahan);
  cr_assert_lt(kahan * 4, fp32);
  free_host_case(&h);
}

// --- an output past 2^31 elements ---------------------------------------------------------------------

/* The naive order for one element, on the host. */
static float naive_element(const c1d_shape *s, const float *x, const float *w, const float *b, int64_t n,
                           int64_t o, int64_t t) {
  float acc = s->bias ? b[o] : 0.0f;
  for (int64_t c = 0; c < s->C; c++)
    for (int64_t k = 0; k < s->K; k++) {
      const int64_t src = c1d_source_time(s, t, k);
      acc = c1d_fma(src >= 0 ? x[c1d_x_index(s, n, c, src)] : 0.0f, w[c1d_w_index(s, o, c, k)], acc);
    }
  return acc;
}

Test(gpu_fast, write_every_element_of_an_output_past_2_to_the_31, .timeout = 600) {
  skip_without_device();
  /* y holds 2^31 + 320 elements (8.6 GB); integer inputs keep every kernel exact. */
  const c1d_shape s = {1, 2, 64, ((int64_t)1 << 25) + 5, 4, 1, 1};
  const int64_t ny = c1d_y_count(&s);
  cr_assert_gt(ny, (int64_t)1 << 31);
  host_case h = make_host_case(&s, C1D_DIST_INTEGER, 91, 0);
  const char *names[] = {"gpu_fp32_fast", "gpu_tf32"};
  for (int i = 0; i < 2; i++) {
    run_on_gpu(impl_named(names[i]), &s, &h, NULL);
    int64_t bad = 0;
    for (int64_t e = 0; e < ny; e++) bad += isnan(h.y[e]) != 0;
    cr_assert_eq(bad, 0, "%s left %lld elements unwritten", names[i], (long long)bad);
    /* Samples: a stride through everything, and the last 4096 elements (indices past 2^31). */
    for (int64_t e = 0; e < ny; e += e < ny - 4096 ? 9973 : 1) {
      const int64_t n = e / (s.O * s.L), o = e / s.L % s.O, t = e % s.L;
      const float want = naive_element(&s, h.x, h.w, h.b, n, o, t);
      cr_assert_eq(h.y[e], want, "%s element %lld (o=%lld t=%lld): %.9g vs %.9g", names[i], (long long)e,
                   (long long)o, (long long)t, h.y[e], want);
    }
  }
  free_host_case(&h);
}

#else /* built without CUDA */

Test(gpu_fast, are_absent_from_a_build_without_cuda) {
  const char *names[] = {"gpu_fp32_fast", "gpu_kahan_fast", "gpu_tf32", "gpu_3xtf32"};
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
    cr_assert_null(c1d_find_impl(names[i]), "%s is registered without CUDA", names[i]);
}

#endif
