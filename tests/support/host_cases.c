/* Host-side cases of the GPU suites; see host_cases.h. */
#include "tests/support/host_cases.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "harness/execute.h"
#include "harness/registry.h"
#include "numerics/arith.h"
#include "reference/oracle.h"

#ifdef C1D_HAVE_CUDA
#include "gpu/device.h"
#endif

const c1d_impl *impl_named(const char *name) {
  const c1d_impl *impl = c1d_find_impl(name);
  cr_assert_not_null(impl, "%s is not registered", name);
  return impl;
}

void skip_without_device(void) {
  const char *why = c1d_gpu_why_unavailable();
  if (why) cr_skip_test("%s", why);
}

host_case make_host_case(const c1d_shape *s, c1d_dist dist, uint64_t seed, int with_oracle) {
  host_case h = {0};
  h.x = malloc((size_t)c1d_x_count(s) * sizeof(float));
  h.w = malloc((size_t)c1d_w_count(s) * sizeof(float));
  h.b = s->bias ? malloc((size_t)s->O * sizeof(float)) : NULL;
  h.y = malloc((size_t)c1d_y_count(s) * sizeof(float));
  h.twin = malloc((size_t)c1d_y_count(s) * sizeof(float));
  cr_assert(h.x && h.w && h.y && h.twin && (h.b || !s->bias));
  c1d_generate(s, dist, seed, h.x, h.w, h.b);
  if (with_oracle) {
    h.ref = malloc((size_t)c1d_y_count(s) * sizeof(double));
    cr_assert_not_null(h.ref);
    cr_assert_eq(c1d_oracle_f64(s, h.x, h.w, h.b, h.ref, NULL, NULL, NULL), C1D_OK);
  }
  return h;
}

void free_host_case(host_case *h) {
  free(h->x);
  free(h->w);
  free(h->b);
  free(h->y);
  free(h->twin);
  free(h->ref);
}

void assert_same_bits(const char *what, const c1d_shape *s, const float *a, const float *b) {
  const int64_t ny = c1d_y_count(s);
  if (memcmp(a, b, (size_t)ny * sizeof(float)) == 0) return;
  char text[128];
  for (int64_t i = 0; i < ny; i++)
    if (c1d_float_bits(a[i]) != c1d_float_bits(b[i])) {
      c1d_shape_format(s, text, sizeof text);
      cr_assert_fail("%s: y[n=%lld, o=%lld, t=%lld] is %a (bits %08x) against %a (bits %08x) at %s", what,
                     (long long)(i / s->L / s->O), (long long)(i / s->L % s->O), (long long)(i % s->L),
                     (double)a[i], c1d_float_bits(a[i]), (double)b[i], c1d_float_bits(b[i]), text);
    }
}

#ifdef C1D_HAVE_CUDA
void run_on_gpu(const c1d_impl *impl, const c1d_shape *s, host_case *h, c1d_exec *ex) {
  c1d_exec local;
  if (!ex) ex = &local;
  float *x = NULL, *w = NULL, *b = NULL, *y = NULL;
  const size_t nx = (size_t)c1d_x_count(s), nw = (size_t)c1d_w_count(s), ny = (size_t)c1d_y_count(s);
  memset(ex, 0, sizeof *ex);
  ex->used_tf32 = -1;
  cr_assert_null(impl->supported ? impl->supported(s) : NULL, "%s refuses the shape", impl->name);
  cr_assert_eq(c1d_gpu_malloc((void **)&x, nx * 4, "x"), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(c1d_gpu_malloc((void **)&w, nw * 4, "w"), C1D_OK, "%s", c1d_error_detail());
  cr_assert_eq(c1d_gpu_malloc((void **)&y, ny * 4, "y"), C1D_OK, "%s", c1d_error_detail());
  if (s->bias) {
    cr_assert_eq(c1d_gpu_malloc((void **)&b, (size_t)s->O * 4, "b"), C1D_OK);
    cr_assert_eq(c1d_gpu_upload(b, h->b, (size_t)s->O * 4), C1D_OK);
  }
  cr_assert_eq(c1d_gpu_upload(x, h->x, nx * 4), C1D_OK);
  cr_assert_eq(c1d_gpu_upload(w, h->w, nw * 4), C1D_OK);
  cr_assert_eq(c1d_gpu_poison(y, (int64_t)ny), C1D_OK);
  if (impl->setup)
    cr_assert_eq(impl->setup(s, ex), C1D_OK, "%s setup: %s", impl->name, c1d_error_detail());
  cr_assert_eq(impl->run(s, x, w, b, y, ex), C1D_OK, "%s run: %s", impl->name, c1d_error_detail());
  cr_assert_eq(c1d_gpu_synchronize(), C1D_OK, "%s: %s", impl->name, c1d_error_detail());
  cr_assert_eq(c1d_gpu_download(h->y, y, ny * 4), C1D_OK);
  if (impl->teardown) impl->teardown(ex);
  c1d_gpu_free(x);
  c1d_gpu_free(w);
  c1d_gpu_free(b);
  c1d_gpu_free(y);
}
#endif
