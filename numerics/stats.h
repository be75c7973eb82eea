/* Distribution tails and quantiles for the explainer's tests: the normal tail, chi-square and gamma
 * quantiles (Wilson-Hilferty), and a Poisson upper quantile. Pure arithmetic, no I/O. */
#ifndef C1D_STATS_H
#define C1D_STATS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* P(|Z| > z) for a standard normal Z. */
double c1d_normal_tail2(double z);

/* The z with P(Z > z) = p, for p in (0, 0.5] (bisection on erfc: exact to about 1e-12 in z). */
double c1d_normal_upper_quantile(double p);

/* The (1 - p) quantile of chi-square with nu degrees of freedom (Wilson-Hilferty; conservative in the
 * far tail for small nu). nu > 0. */
double c1d_chi2_upper_quantile(double nu, double p);

/* The (1 - p) quantile of a sum of n independent copies of a variable with mean mu and variance var
 * (> 0), by the gamma law with the same mean and variance. */
double c1d_sum_upper_quantile(double n, double mu, double var, double p);

/* The same with the normal quantile z = c1d_normal_upper_quantile(p) given (for many n at one p). */
double c1d_sum_upper_quantile_z(double n, double mu, double var, double z);

/* The smallest k with P(X >= k) <= p for X ~ Poisson(lambda). */
double c1d_poisson_upper_quantile(double lambda, double p);

/* log P(X >= c) for X ~ Binomial(k, p), 0 < p < 1. */
double c1d_log_binomial_tail(int64_t k, double p, int64_t c);

#ifdef __cplusplus
}
#endif
#endif
