/* Host-side cases of the GPU suites; see host_cases.h. */
#include "tests/support/host_cases.h"

#include <criterion/criterion.h>
#include <stdlib.h>

#include "harness/execute.h"
#include "harness/registry.h"
#include "reference/oracle.h"

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
