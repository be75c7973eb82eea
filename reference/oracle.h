/* The float64 oracle: y in double from the float32 inputs (promoted exactly, so every product is exact)
 * and, in the same pass, the magnitude m = |b| + sum |w*x| that every error bound scales with.
 * OpenMP-parallel; vectorised with AVX-512 where the CPU has it (same results: the order of the double
 * sums is fixed by the blocking, not by the instruction set). */
#ifndef C1D_ORACLE_H
#define C1D_ORACLE_H

#include <stddef.h>

#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Progress callback: called from the calling thread with the fraction done (0..1); may be NULL. */
typedef void (*c1d_progress_fn)(double fraction, void *user);

/* Fills y (N*O*L doubles) and, when mag is not NULL, mag (N*O*L doubles). b may be NULL iff !s->bias.
 * Returns C1D_ERR_NO_MEMORY if its scratch space cannot be allocated; the caller owns every buffer. */
c1d_status c1d_oracle_f64(const c1d_shape *s, const float *x, const float *w, const float *b, double *y,
                          double *mag, c1d_progress_fn progress, void *user);

/* The same operator by the definition's plain loops, single-threaded, for tests of the fast oracle. */
void c1d_oracle_direct(const c1d_shape *s, const float *x, const float *w, const float *b, double *y);

#ifdef __cplusplus
}
#endif
#endif
