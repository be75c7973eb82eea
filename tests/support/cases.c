/* CPU test cases; see cases.h. */
#include "tests/support/cases.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/oracle.h"

case_data make_case(const c1d_shape *s, c1d_dist dist, uint64_t seed) {
  case_data d;
  d.x = malloc((size_t)c1d_x_count(s) * sizeof(float));
  d.w = malloc((size_t)c1d_w_count(s) * sizeof(float));
  d.b = s->bias ? malloc((size_t)s->O * sizeof(float)) : NULL;
  d.y = malloc((size_t)c1d_y_count(s) * sizeof(float));
  d.ref = malloc((size_t)c1d_y_count(s) * sizeof(double));
  d.mag = malloc((size_t)c1d_y_count(s) * sizeof(double));
  cr_assert(d.x && d.w && d.y && d.ref && d.mag && (d.b || !s->bias));
  c1d_generate(s, dist, seed, d.x, d.w, d.b);
  cr_assert_eq(c1d_oracle_f64(s, d.x, d.w, d.b, d.ref, d.mag, NULL, NULL), C1D_OK);
  return d;
}

void free_case(case_data *d) {
  free(d->x);
  free(d->w);
  free(d->b);
  free(d->y);
  free(d->ref);
  free(d->mag);
}

void run_impl(const c1d_impl *impl, const c1d_shape *s, case_data *d) {
  for (int64_t i = 0; i < c1d_y_count(s); i++) d->y[i] = NAN; /* poison */
  c1d_exec ex;
  memset(&ex, 0, sizeof ex);
  cr_assert_eq(impl->run(s, d->x, d->w, d->b, d->y, &ex), C1D_OK, "%s failed", impl->name);
}
