/* Error bounds for float dot products; see bounds.h for the sources. */
#include "numerics/bounds.h"

#include <math.h>

double c1d_gamma(int64_t n, double u) {
  double nu = (double)n * u;
  return nu >= 1.0 ? INFINITY : nu / (1.0 - nu);
}

double c1d_bound_det(int64_t n, double m, double u) { return c1d_gamma(n, u) * m; }

double c1d_bound_prob_factor(int64_t n, double u, double lambda) { return lambda * sqrt((double)n) * u; }

double c1d_bound_prob(int64_t n, double m, double u, double lambda) { return c1d_bound_prob_factor(n, u, lambda) * m; }

double c1d_bound_tf32_factor(int64_t n, double ut, double u) { return 2.0 * ut + ut * ut + c1d_gamma(n, u); }

double c1d_bound_tf32(int64_t n, double m, double ut, double u) { return c1d_bound_tf32_factor(n, ut, u) * m; }
