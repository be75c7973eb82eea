/* A dot product accurate to about 2^-106 relative to sum|terms| (double-double accumulation of
 * products that are exact in double), used to check the oracle itself on sampled elements. */
#ifndef C1D_EXACT_DOT_H
#define C1D_EXACT_DOT_H

#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A double-double value: hi + lo with |lo| <= ulp(hi)/2. */
typedef struct c1d_dd { double hi, lo; } c1d_dd;

/* Sum of a[i]*b[i] (float inputs, products exact in double) in double-double arithmetic. */
c1d_dd c1d_dot_dd(const float *a, const float *b, long n);

/* y[n,o,t] of the operator in double-double, one element. */
c1d_dd c1d_exact_element(const c1d_shape *s, const float *x, const float *w, const float *b, int64_t n,
                         int64_t o, int64_t t);

#ifdef __cplusplus
}
#endif
#endif
