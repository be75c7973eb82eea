/* Tails and quantiles; see stats.h. */
#include "numerics/stats.h"

#include <math.h>

double c1d_normal_tail2(double z) { return erfc(fabs(z) / sqrt(2.0)); }

double c1d_normal_upper_quantile(double p) {
  if (p >= 0.5) return 0.0;
  double lo = 0.0, hi = 40.0;
  for (int i = 0; i < 200; i++) {
    double mid = 0.5 * (lo + hi);
    if (0.5 * erfc(mid / sqrt(2.0)) > p)
      lo = mid;
    else
      hi = mid;
  }
  return hi;
}

double c1d_chi2_upper_quantile(double nu, double p) {
  const double z = c1d_normal_upper_quantile(p), a = 2.0 / (9.0 * nu);
  const double c = 1.0 - a + z * sqrt(a);
  return nu * c * c * c;
}

double c1d_sum_upper_quantile_z(double n, double mu, double var, double z) {
  /* Gamma(shape k, scale theta) with k*theta = n*mu, k*theta^2 = n*var: theta/2 * chi2_{2k}, the
   * chi-square quantile by Wilson-Hilferty. */
  const double theta = var / mu, nu = 2.0 * n * mu * mu / var, a = 2.0 / (9.0 * nu);
  const double c = 1.0 - a + z * sqrt(a);
  return 0.5 * theta * nu * c * c * c;
}

double c1d_sum_upper_quantile(double n, double mu, double var, double p) {
  return c1d_sum_upper_quantile_z(n, mu, var, c1d_normal_upper_quantile(p));
}

double c1d_poisson_upper_quantile(double lambda, double p) {
  if (lambda <= 0.0) return 1.0;
  if (lambda > 1e6) return ceil(lambda + c1d_normal_upper_quantile(p) * sqrt(lambda) + 10.0);
  /* Upper tail by summing the pmf from the top down, in log space. */
  const double kmax = ceil(lambda + 40.0 * sqrt(lambda) + 100.0);
  double tail = 0.0;
  for (double k = kmax; k >= 0.0; k -= 1.0) {
    tail += exp(k * log(lambda) - lambda - lgamma(k + 1.0));
    if (tail > p) return k + 1.0;
  }
  return 0.0;
}

/* Summed from c up until the terms stop counting. */
double c1d_log_binomial_tail(int64_t k, double p, int64_t c) {
  if (c <= 0) return 0.0;
  if (c > k) return -INFINITY;
  const double lp = log(p), lq = log1p(-p), lk = lgamma((double)k + 1.0);
  double first = 0.0, sum = 0.0;
  for (int64_t j = c; j <= k; j++) {
    const double lt = lk - lgamma((double)j + 1.0) - lgamma((double)(k - j) + 1.0) + (double)j * lp +
                      (double)(k - j) * lq;
    if (j == c) first = lt;
    const double term = exp(lt - first);
    sum += term;
    if (term < 1e-17 * sum) break;
  }
  return first + log(sum);
}

