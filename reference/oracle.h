/* The float64 oracle: y in double from the float32 inputs (promoted exactly, so every product is exact)
 * and, in the same pass, the magnitude m = |b| + sum |w*x| that every error bound scales with.
 * m is summed in float32 within reduction chunks of about 64 channel-taps and in double across them:
 * m is accurate to about 4e-6 relative (c1d_oracle_mag_rel_bound gives the bound for a shape; every
 * bound built on m scales with it), while every product |w*x| is a normal float32.
 * OpenMP-parallel; vectorised with AVX-512 or AVX2 + FMA where the CPU has them, chosen at run time (same
 * results: the order of the sums is fixed by the blocking, not by the instruction set, and every float
 * rounding is an explicit fma). */
#ifndef C1D_ORACLE_H
#define C1D_ORACLE_H

#include <stddef.h>

#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Progress callback: called from the calling thread with the fraction done (0..1); may be NULL. */
typedef void (*c1d_progress_fn)(double fraction, void *user);

/* The bytes c1d_oracle_f64 allocates for s on its own (packed w, bias blocks, per-thread tiles, for the
 * current OpenMP thread count); the caller's y and mag are not included. It does not grow with D. */
double c1d_oracle_f64_scratch_bytes(const c1d_shape *s);

/* The oracle's CPU kernel sets (reference/oracle_kernels.h), slowest first. */
typedef enum c1d_oracle_kernel {
  C1D_ORACLE_KERNEL_PORTABLE, /* plain C, vectorised by the compiler */
  C1D_ORACLE_KERNEL_AVX2,     /* x86 with AVX2 and FMA */
  C1D_ORACLE_KERNEL_AVX512,   /* x86 with AVX-512F */
  C1D_ORACLE_KERNEL_COUNT
} c1d_oracle_kernel;

/* "portable", "avx2" or "avx512" (the names C1D_ORACLE_KERNEL takes); "?" for anything else. */
const char *c1d_oracle_kernel_name(c1d_oracle_kernel k);

/* 1 if this CPU and build can run kernel set k, else 0. */
int c1d_oracle_kernel_available(c1d_oracle_kernel k);

/* The kernel set the oracle runs: the one the environment variable C1D_ORACLE_KERNEL names when it is
 * set and not empty, else the fastest this CPU can run. Returns C1D_ERR_USAGE for an unknown name and
 * C1D_ERR_UNSUPPORTED for a set this CPU cannot run (the detail says which); *k is set only on success. */
c1d_status c1d_oracle_kernel_select(c1d_oracle_kernel *k);

/* Fills y (N*O*L doubles) and, when mag is not NULL, mag (N*O*L doubles). b may be NULL iff !s->bias.
 * Returns C1D_ERR_NO_MEMORY if its scratch space cannot be allocated, and c1d_oracle_kernel_select's
 * error when C1D_ORACLE_KERNEL is bad; the caller owns every buffer. */
c1d_status c1d_oracle_f64(const c1d_shape *s, const float *x, const float *w, const float *b, double *y,
                          double *mag, c1d_progress_fn progress, void *user);

/* Every problem (reference/problem.h): groups, initial states st (N, C, (K-1)*D; NULL without), SiLU.
 * y receives act(b + sum), mag the magnitude of the sum before the activation, pre (may be NULL) the
 * sum itself (before the activation). Element types need nothing: the products are exact in double.
 * The dense problem runs the blocked oracle above; states run it over the inputs with their states
 * before them; groups run it per group, or (few terms per output, as depthwise) the definition's loop
 * in double. */
c1d_status c1d_oracle_f64_ex(const c1d_shape *s, const float *x, const float *w, const float *b,
                             const float *st, double *y, double *mag, double *pre, c1d_progress_fn progress,
                             void *user);

/* Channel-taps per reduction chunk of m's float32 partial sums (a chunk is max(KC/K, 1) whole channels,
 * so kc = that * K <= max(KC, K)). */
#define C1D_ORACLE_KC 64

/* The largest relative error of the oracle's m against the exact |b| + sum |w*x| for shape s:
 * gamma_kc(2^-24) for the float chunk sums (kc channel-taps per chunk, at most max(64, K)) plus
 * gamma_{chunks+1}(2^-53) for the double sum of the chunks. About 3.8e-6 for K <= 64. */
double c1d_oracle_mag_rel_bound(const c1d_shape *s);

/* The same operator by the definition's plain loops, single-threaded, for tests of the fast oracle. */
void c1d_oracle_direct(const c1d_shape *s, const float *x, const float *w, const float *b, double *y);

#ifdef __cplusplus
}
#endif
#endif
