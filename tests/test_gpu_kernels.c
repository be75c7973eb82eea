/* gpu_kernels: the story's kernels and the float64 GPU oracle. Each float32 kernel (gpu_naive,
 * gpu_tap_partial, gpu_kahan, gpu_tiled_smem) equals its CPU twin bit for bit on random inputs over a
 * table of awkward shapes, writes every element (its output is NaN-poisoned first), and gives the same
 * bits on a second run (a race would show here). gpu_oracle_f64, on both of its paths, agrees with the
 * CPU oracle within 1e-13*m for y, and for m within the CPU oracle's own bound on m (float32 chunks);
 * on integer inputs every kernel equals the oracle exactly.
 * GPU tests skip without a device; the "no device" test runs only without one. Run with --jobs 1. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/inputs.h"
#include "harness/registry.h"
#include "numerics/arith.h"
#include "reference/oracle.h"
#include "tests/support/host_cases.h"

#ifdef C1D_HAVE_CUDA
#include "gpu/device.h"
#include "gpu/oracle_f64.h"
#include "gpu/oracle_f64_paths.h"

extern const c1d_impl c1d_cpu_naive, c1d_cpu_tap_partial, c1d_cpu_kahan;
extern const c1d_impl c1d_gpu_naive, c1d_gpu_tap_partial, c1d_gpu_kahan, c1d_gpu_tiled_smem,
    c1d_gpu_oracle_f64_impl;

static const char *const gpu_names[] = {"gpu_naive", "gpu_tap_partial", "gpu_kahan",
                                        "gpu_tiled_smem", "gpu_oracle_f64"};
enum { N_GPU = sizeof gpu_names / sizeof gpu_names[0] };

/* Odd sizes; K 1..9; D 1..4; bias on and off; C = 1; O not a multiple of 8 (nor of the oracle's 64);
 * L shorter than (K-1)*D, and L not a multiple of 32 (nor of the oracle's 128); C past one tiled
 * stage (32) and past several oracle chunks (8); a window wider than the oracle's MMA path takes. */
static const c1d_shape shapes[] = {
    {1, 1, 1, 1, 1, 1, 0},       /* the smallest */
    {2, 3, 5, 37, 3, 2, 1},      /* odd everything */
    {3, 1, 9, 50, 9, 4, 1},      /* C = 1, K = 9, D = 4 */
    {2, 7, 13, 20, 9, 4, 0},     /* L = 20 < (K-1)*D = 32 */
    {1, 5, 3, 5, 8, 1, 1},       /* L = 5 < 7 */
    {2, 16, 8, 64, 4, 1, 0},     /* the headline's K and D, tiles exactly full */
    {2, 33, 17, 129, 5, 3, 1},   /* L one past a multiple of 32 and of 128 */
    {1, 37, 29, 200, 5, 3, 1},   /* the story's dilated shape */
    {2, 64, 24, 1000, 2, 1, 0},  /* K = 2 */
    {4, 8, 70, 33, 6, 2, 0},     /* O = 70: past one oracle block of 64 */
    {1, 300, 40, 97, 3, 1, 1},   /* C = 300: 10 tiled stages, 38 oracle chunks */
    {2, 17, 65, 300, 7, 1, 1},   /* K = 7 */
    {1, 11, 6, 150, 4, 4, 1},    /* K = 4 with D = 4 */
    {1, 9, 10, 260, 2, 97, 0},   /* (K-1)*D = 97: the oracle's direct path */
    {1, 4, 12, 80, 13, 1, 1},    /* K = 13: the oracle's direct path, tap_partial past 9 taps */
};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };

// --- helpers ---------------------------------------------------------------------------------------

static float *alloc_y(const c1d_shape *s) {
  float *y = malloc((size_t)c1d_y_count(s) * sizeof(float));
  cr_assert_not_null(y);
  return y;
}

static double *alloc_y64(const c1d_shape *s) {
  double *y = malloc((size_t)c1d_y_count(s) * sizeof(double));
  cr_assert_not_null(y);
  return y;
}

/* Device copies of one case's inputs. */
typedef struct dev_case {
  float *x, *w, *b;
} dev_case;

static dev_case upload_case(const c1d_shape *s, const host_case *h) {
  dev_case d = {0};
  const size_t nx = (size_t)c1d_x_count(s) * 4, nw = (size_t)c1d_w_count(s) * 4;
  cr_assert_eq(c1d_gpu_malloc((void **)&d.x, nx, "x"), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(c1d_gpu_malloc((void **)&d.w, nw, "w"), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(c1d_gpu_upload(d.x, h->x, nx), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(c1d_gpu_upload(d.w, h->w, nw), C1D_OK, "%s", c1d_error_detail());
  if (s->bias) {
    cr_assert_eq(c1d_gpu_malloc((void **)&d.b, (size_t)s->O * 4, "b"), C1D_OK);
    cr_assert_eq(c1d_gpu_upload(d.b, h->b, (size_t)s->O * 4), C1D_OK);
  }
  return d;
}

static void free_dev_case(dev_case *d) {
  c1d_gpu_free(d->x);
  c1d_gpu_free(d->w);
  c1d_gpu_free(d->b);
}

/* Poisons a device y, runs setup/run/teardown once, downloads y into y_host. */
static void run_uploaded(const c1d_impl *impl, const c1d_shape *s, const dev_case *d, float *y_host) {
  float *y = NULL;
  const int64_t ny = c1d_y_count(s);
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  cr_assert_null(impl->supported ? impl->supported(s) : NULL, "%s refuses the shape", impl->name);
  cr_assert_eq(c1d_gpu_malloc((void **)&y, (size_t)ny * 4, "y"), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(c1d_gpu_poison(y, ny), C1D_OK);
  if (impl->setup)
    cr_assert_eq(impl->setup(s, &ex), C1D_OK, "%s setup: %s", impl->name, c1d_error_detail());
  cr_assert_eq(impl->run(s, d->x, d->w, d->b, y, &ex), C1D_OK, "%s run: %s", impl->name,
               c1d_error_detail());
  cr_assert_eq(c1d_gpu_synchronize(), C1D_OK, "%s: %s", impl->name, c1d_error_detail());
  cr_assert_eq(c1d_gpu_download(y_host, y, (size_t)ny * 4), C1D_OK);
  if (impl->teardown) impl->teardown(&ex);
  c1d_gpu_free(y);
}

static void shape_text(const c1d_shape *s, char *buf) { c1d_shape_format(s, buf, 128); }

/* Fails naming the first element of y that is NaN: one the kernel never wrote. */
static void assert_all_written(const char *name, const c1d_shape *s, const float *y) {
  char text[128];
  for (int64_t i = 0; i < c1d_y_count(s); i++)
    if (isnan(y[i])) {
      shape_text(s, text);
      cr_assert_fail("%s left y[n=%lld, o=%lld, t=%lld] unwritten (NaN) at %s", name,
                     (long long)(i / s->L / s->O), (long long)(i / s->L % s->O),
                     (long long)(i % s->L), text);
    }
}

/* The twin property for one kernel and one shape: CPU twin once, GPU twice; every element written,
 * GPU == CPU bit for bit, and the two GPU runs identical. */
static void check_twin(const c1d_impl *gpu, const c1d_impl *cpu, const c1d_shape *s, uint64_t seed) {
  skip_without_device();
  cr_assert_str_eq(gpu->twin, cpu->name);
  cr_assert(gpu->twin_bit_exact);
  host_case h = make_host_case(s, C1D_DIST_NORMAL, seed, 0);
  float *want = alloc_y(s), *got = alloc_y(s), *again = alloc_y(s);
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  cr_assert_eq(cpu->run(s, h.x, h.w, h.b, want, &ex), C1D_OK, "%s: %s", cpu->name,
               c1d_error_detail());
  dev_case d = upload_case(s, &h);
  run_uploaded(gpu, s, &d, got);
  assert_all_written(gpu->name, s, got);
  char what[160];
  snprintf(what, sizeof what, "%s against its CPU twin %s", gpu->name, cpu->name);
  assert_same_bits(what, s, got, want);
  run_uploaded(gpu, s, &d, again);
  snprintf(what, sizeof what, "%s run twice", gpu->name);
  assert_same_bits(what, s, again, got);
  free_dev_case(&d);
  free(want);
  free(got);
  free(again);
  free_host_case(&h);
}

ParameterizedTestParameters(gpu_naive, matches_cpu_naive_bit_for_bit_on_every_run) {
  return cr_make_param_array(c1d_shape, shapes, N_SHAPES);
}
ParameterizedTest(const c1d_shape *s, gpu_naive, matches_cpu_naive_bit_for_bit_on_every_run) {
  check_twin(&c1d_gpu_naive, &c1d_cpu_naive, s, 101);
}

ParameterizedTestParameters(gpu_tap_partial, matches_cpu_tap_partial_bit_for_bit_on_every_run) {
  return cr_make_param_array(c1d_shape, shapes, N_SHAPES);
}
ParameterizedTest(const c1d_shape *s, gpu_tap_partial,
                  matches_cpu_tap_partial_bit_for_bit_on_every_run) {
  check_twin(&c1d_gpu_tap_partial, &c1d_cpu_tap_partial, s, 102);
}

ParameterizedTestParameters(gpu_kahan, matches_cpu_kahan_bit_for_bit_on_every_run) {
  return cr_make_param_array(c1d_shape, shapes, N_SHAPES);
}
ParameterizedTest(const c1d_shape *s, gpu_kahan, matches_cpu_kahan_bit_for_bit_on_every_run) {
  check_twin(&c1d_gpu_kahan, &c1d_cpu_kahan, s, 103);
}

ParameterizedTestParameters(gpu_tiled_smem, matches_cpu_naive_bit_for_bit_on_every_run) {
  return cr_make_param_array(c1d_shape, shapes, N_SHAPES);
}
ParameterizedTest(const c1d_shape *s, gpu_tiled_smem, matches_cpu_naive_bit_for_bit_on_every_run) {
  check_twin(&c1d_gpu_tiled_smem, &c1d_cpu_naive, s, 104);
}

// --- the float64 oracle ------------------------------------------------------------------------------

/* Runs the GPU oracle on one path into host y and m. */
static void gpu_oracle_on(c1d_gpu_oracle_path path, const c1d_shape *s, const dev_case *d, double *y,
                          double *m) {
  const size_t bytes = (size_t)c1d_y_count(s) * sizeof(double);
  double *dy = NULL, *dm = NULL;
  cr_assert_eq(c1d_gpu_malloc((void **)&dy, bytes, "y"), C1D_OK);
  cr_assert_eq(c1d_gpu_malloc((void **)&dm, bytes, "m"), C1D_OK);
  cr_assert_eq(c1d_gpu_oracle_f64_on(path, s, d->x, d->w, d->b, dy, dm), C1D_OK, "%s path: %s",
               c1d_gpu_oracle_path_name(path), c1d_error_detail());
  cr_assert_eq(c1d_gpu_synchronize(), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(c1d_gpu_download(y, dy, bytes), C1D_OK);
  cr_assert_eq(c1d_gpu_download(m, dm, bytes), C1D_OK);
  c1d_gpu_free(dy);
  c1d_gpu_free(dm);
}

static void assert_within(const char *what, const c1d_shape *s, const double *got, const double *want,
                          const double *m, double rel) {
  char text[128];
  for (int64_t i = 0; i < c1d_y_count(s); i++)
    if (!(fabs(got[i] - want[i]) <= rel * m[i])) {
      shape_text(s, text);
      cr_assert_fail("%s: element (n=%lld, o=%lld, t=%lld) is %.17g against %.17g (m = %.3g) at %s",
                     what, (long long)(i / s->L / s->O), (long long)(i / s->L % s->O),
                     (long long)(i % s->L), got[i], want[i], m[i], text);
    }
}

ParameterizedTestParameters(gpu_oracle_f64, agrees_with_the_cpu_oracle_within_1e_13_m) {
  return cr_make_param_array(c1d_shape, shapes, N_SHAPES);
}
ParameterizedTest(const c1d_shape *s, gpu_oracle_f64, agrees_with_the_cpu_oracle_within_1e_13_m) {
  skip_without_device();
  host_case h = make_host_case(s, C1D_DIST_NORMAL, 105, 0);
  double *want = alloc_y64(s), *want_m = alloc_y64(s), *got = alloc_y64(s), *got_m = alloc_y64(s);
  cr_assert_eq(c1d_oracle_f64(s, h.x, h.w, h.b, want, want_m, NULL, NULL), C1D_OK);
  dev_case d = upload_case(s, &h);
  const c1d_gpu_oracle_path paths[] = {C1D_ORACLE_PATH_MMA, C1D_ORACLE_PATH_DIRECT};
  for (int p = 0; p < 2; p++) {
    if (paths[p] == C1D_ORACLE_PATH_MMA && c1d_gpu_oracle_f64_path(s) != C1D_ORACLE_PATH_MMA)
      continue; /* the shape or the device is outside the MMA path */
    char what[64];
    snprintf(what, sizeof what, "y on the %s path", c1d_gpu_oracle_path_name(paths[p]));
    gpu_oracle_on(paths[p], s, &d, got, got_m);
    assert_within(what, s, got, want, want_m, 1e-13);
    /* The CPU oracle sums m in float32 chunks (reference/oracle.h): it is exact to its own bound. */
    snprintf(what, sizeof what, "m on the %s path", c1d_gpu_oracle_path_name(paths[p]));
    assert_within(what, s, got_m, want_m, want_m, c1d_oracle_mag_rel_bound(s) + 1e-13);
  }
  /* The descriptor writes the float32 rounding of the oracle's own y, on every run. */
  double *y64 = NULL;
  const size_t bytes = (size_t)c1d_y_count(s) * sizeof(double);
  cr_assert_eq(c1d_gpu_malloc((void **)&y64, bytes, "y64"), C1D_OK);
  cr_assert_eq(c1d_gpu_oracle_f64(s, d.x, d.w, d.b, y64, NULL), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(c1d_gpu_download(got, y64, bytes), C1D_OK);
  c1d_gpu_free(y64);
  float *rounded = alloc_y(s), *out = alloc_y(s), *again = alloc_y(s);
  for (int64_t i = 0; i < c1d_y_count(s); i++) rounded[i] = (float)got[i];
  run_uploaded(&c1d_gpu_oracle_f64_impl, s, &d, out);
  assert_all_written("gpu_oracle_f64", s, out);
  assert_same_bits("gpu_oracle_f64 against its float64 output rounded", s, out, rounded);
  run_uploaded(&c1d_gpu_oracle_f64_impl, s, &d, again);
  assert_same_bits("gpu_oracle_f64 run twice", s, again, out);
  free(rounded);
  free(out);
  free(again);
  free_dev_case(&d);
  free(want);
  free(want_m);
  free(got);
  free(got_m);
  free_host_case(&h);
}

/* The MMA path at a size with many blocks, chunks and both tile edges, against the direct path. */
Test(gpu_oracle_f64, mma_path_agrees_with_the_direct_path_on_a_larger_shape) {
  skip_without_device();
  const c1d_shape s = {3, 45, 150, 1100, 4, 2, 1};
  if (c1d_gpu_oracle_f64_path(&s) != C1D_ORACLE_PATH_MMA) cr_skip_test("no FP64 MMA on this device");
  host_case h = make_host_case(&s, C1D_DIST_CONV_INIT, 106, 0);
  dev_case d = upload_case(&s, &h);
  double *y = alloc_y64(&s), *m = alloc_y64(&s), *yd = alloc_y64(&s), *md = alloc_y64(&s);
  gpu_oracle_on(C1D_ORACLE_PATH_MMA, &s, &d, y, m);
  gpu_oracle_on(C1D_ORACLE_PATH_DIRECT, &s, &d, yd, md);
  assert_within("y, mma against direct", &s, y, yd, md, 1e-13);
  assert_within("m, mma against direct", &s, m, md, md, 1e-13);
  free_dev_case(&d);
  free(y);
  free(m);
  free(yd);
  free(md);
  free_host_case(&h);
}

// --- integer inputs: every kernel exact ------------------------------------------------------------

static const c1d_shape integer_shapes[] = {
    {2, 3, 5, 37, 3, 2, 1}, {1, 37, 29, 200, 5, 3, 1}, {2, 64, 70, 130, 4, 1, 0}, {1, 9, 10, 260, 2, 97, 1},
};

ParameterizedTestParameters(gpu_kernels, equal_the_oracle_exactly_on_integer_inputs) {
  return cr_make_param_array(c1d_shape, integer_shapes,
                             sizeof integer_shapes / sizeof integer_shapes[0]);
}
ParameterizedTest(const c1d_shape *s, gpu_kernels, equal_the_oracle_exactly_on_integer_inputs) {
  skip_without_device();
  host_case h = make_host_case(s, C1D_DIST_INTEGER, 107, 0);
  double *want = alloc_y64(s);
  cr_assert_eq(c1d_oracle_f64(s, h.x, h.w, h.b, want, NULL, NULL, NULL), C1D_OK);
  dev_case d = upload_case(s, &h);
  float *got = alloc_y(s);
  char text[128];
  shape_text(s, text);
  for (int i = 0; i < N_GPU; i++) {
    const c1d_impl *impl = impl_named(gpu_names[i]);
    run_uploaded(impl, s, &d, got);
    for (int64_t j = 0; j < c1d_y_count(s); j++)
      cr_assert_eq((double)got[j], want[j], "%s: element %lld is %.9g, exactly %.17g, at %s",
                   impl->name, (long long)j, (double)got[j], want[j], text);
  }
  free(got);
  free(want);
  free_dev_case(&d);
  free_host_case(&h);
}

// --- limits and errors -------------------------------------------------------------------------------

Test(gpu_tiled_smem, refuses_windows_wider_than_shared_memory_and_says_why) {
  const c1d_shape wide = {1, 4, 4, 100, 2, 20000, 0}; /* window 32 + 20000 floats: 80 KB */
  const c1d_shape fits = {1, 4, 4, 100, 9, 1000, 0};  /* 32 + 8000 floats + 72 weights: 32 KB */
  const char *why = c1d_gpu_tiled_smem.supported(&wide);
  cr_assert_not_null(why);
  cr_assert(strstr(why, "shared memory"), "the reason names no limit: %s", why);
  cr_assert_null(c1d_gpu_tiled_smem.supported(&fits));
  for (int i = 0; i < N_SHAPES; i++) cr_assert_null(c1d_gpu_tiled_smem.supported(&shapes[i]));
}

Test(gpu_oracle_f64, takes_the_direct_path_where_the_mma_path_cannot) {
  const c1d_shape long_window = {1, 4, 4, 100, 2, 97, 0}, many_taps = {1, 4, 4, 100, 13, 1, 0};
  cr_assert_eq(c1d_gpu_oracle_f64_path(&long_window), C1D_ORACLE_PATH_DIRECT);
  cr_assert_eq(c1d_gpu_oracle_f64_path(&many_taps), C1D_ORACLE_PATH_DIRECT);
}

Test(gpu_oracle_f64, reports_device_memory_exhaustion_clearly) {
  skip_without_device();
  const c1d_shape huge = {1, 1, 1, INT64_C(1) << 36, 1, 1, 0}; /* 512 GiB of float64 output */
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  cr_assert_eq(c1d_gpu_oracle_f64_impl.setup(&huge, &ex), C1D_ERR_DEVICE_MEMORY);
  cr_assert(strstr(c1d_error_detail(), "out of device memory"), "detail: %s", c1d_error_detail());
  cr_assert_null(ex.state);
}

Test(gpu_kernels, are_registered_with_their_twins) {
  const char *twins[] = {"naive", "tap_partial", "kahan", "naive", NULL};
  for (int i = 0; i < N_GPU; i++) {
    const c1d_impl *impl = impl_named(gpu_names[i]);
    cr_assert_eq(impl->backend, C1D_BACKEND_GPU);
    if (twins[i]) {
      cr_assert_str_eq(impl->twin, twins[i]);
      cr_assert(impl->twin_bit_exact);
      cr_assert_not_null(c1d_find_impl(twins[i]));
    }
  }
  cr_assert_eq(impl_named("gpu_oracle_f64")->precision, C1D_PREC_FP64);
}

Test(gpu_kernels, are_unavailable_without_a_device_with_the_reason) {
  if (!c1d_gpu_unavailable()) cr_skip_test("a CUDA device is present");
  for (int i = 0; i < N_GPU; i++) {
    const char *why = c1d_impl_unavailable(impl_named(gpu_names[i]));
    cr_assert_not_null(why, "%s claims to be available", gpu_names[i]);
    cr_assert(strstr(why, "no CUDA device"), "%s: %s", gpu_names[i], why);
  }
}

#else /* built without CUDA */

Test(gpu_kernels, are_absent_from_a_build_without_cuda) {
  const char *names[] = {"gpu_naive", "gpu_tap_partial", "gpu_kahan", "gpu_tiled_smem",
                         "gpu_oracle_f64"};
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
    cr_assert_null(c1d_find_impl(names[i]), "%s is registered without CUDA", names[i]);
}

#endif
