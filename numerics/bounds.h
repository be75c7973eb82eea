/* Error bounds per element for a float dot product of n terms with magnitude m = sum|terms|
 * (Higham, Accuracy and Stability of Numerical Algorithms, and Higham & Mary, SISC 2019). */
#ifndef C1D_BOUNDS_H
#define C1D_BOUNDS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define C1D_U_FP32 0x1p-24     /* unit roundoff of float32, round to nearest */
#define C1D_U_TF32 0x1p-11     /* TF32 input rounding to nearest (cvt.rna) */
#define C1D_U_TF32_TRUNC 0x1p-10
#define C1D_U_BF16 0x1p-8
#define C1D_U_FP16 0x1p-11
#define C1D_DEFAULT_LAMBDA 6.0 /* probabilistic bound constant; see c1d_bound_prob */

/* gamma_n = n*u / (1 - n*u); +Inf when n*u >= 1. */
double c1d_gamma(int64_t n, double u);

/* Deterministic: |fl(s) - s| <= gamma_n * m for recursive summation in any order. */
double c1d_bound_det(int64_t n, double m, double u);

/* Probabilistic: lambda * sqrt(n) * u * m, exceeded with probability at most about
 * 2n*exp(-lambda^2 (1-u)^2 / 2) under Higham & Mary's model of independent rounding errors. */
double c1d_bound_prob(int64_t n, double m, double u, double lambda);

/* Inputs rounded to TF32 (unit roundoff ut), products and sums in float32:
 * (2*ut + ut^2 + gamma_n(u)) * m. The input rounding does not grow with n. */
double c1d_bound_tf32(int64_t n, double m, double ut, double u);

/* The factors of m in c1d_bound_prob and c1d_bound_tf32 (each bound is its factor times m, the same
 * bits): for loops that take them once per position. */
double c1d_bound_prob_factor(int64_t n, double u, double lambda);
double c1d_bound_tf32_factor(int64_t n, double ut, double u);

#ifdef __cplusplus
}
#endif
#endif
