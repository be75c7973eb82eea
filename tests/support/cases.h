/* A test case on the CPU: generated inputs, an output buffer and the float64 oracle with its magnitude,
 * and an implementation run into a NaN-poisoned output. Allocation failures are assertion failures. */
#ifndef C1D_TEST_CASES_H
#define C1D_TEST_CASES_H

#include "harness/inputs.h"
#include "reference/impl.h"

typedef struct case_data {
  float *x, *w, *b, *y; /* b is NULL without bias */
  double *ref, *mag;    /* the oracle's y and m */
} case_data;

/* Inputs of dist and seed for shape s, and the oracle on them. */
case_data make_case(const c1d_shape *s, c1d_dist dist, uint64_t seed);
void free_case(case_data *d);

/* impl on d's inputs into d->y, poisoned with NaN first; asserts that run() succeeds. */
void run_impl(const c1d_impl *impl, const c1d_shape *s, case_data *d);

#endif
