/* A double-double dot product, used to check the float64 oracle on sampled elements.
 *
 * Each product of two floats has at most 48 significant bits, so (double)a * (double)b is exact.
 * The running sum is a double-double (hi, lo) kept normalised after every term: TwoSum(hi, p) gives
 * s + e == hi + p exactly, then TwoSum(s, e + lo) renormalises. The error of the whole sum stays near
 * n * 2^-106 * (largest partial sum), far below the double rounding the oracle is checked for.
 * TwoSum (Knuth, 6 operations) is used for both steps rather than FastTwoSum because after heavy
 * cancellation |e + lo| may exceed |s|, which FastTwoSum forbids. Requires -ffp-contract=off and no
 * fast-math (the project builds every file that way) so that no operation is fused or reordered. */
#include "reference/exact_dot.h"

/* s + e == a + b exactly, whatever the magnitudes. */
static inline void two_sum(double a, double b, double *s, double *e) {
  const double sum = a + b;
  const double bp = sum - a;
  const double ap = sum - bp;
  *s = sum;
  *e = (a - ap) + (b - bp);
}

/* acc += p, p exact. */
static inline void dd_add(c1d_dd *acc, double p) {
  double s, e;
  two_sum(acc->hi, p, &s, &e);
  two_sum(s, e + acc->lo, &acc->hi, &acc->lo);
}

c1d_dd c1d_dot_dd(const float *a, const float *b, long n) {
  c1d_dd acc = {0.0, 0.0};
  for (long i = 0; i < n; i++) dd_add(&acc, (double)a[i] * (double)b[i]);
  return acc;
}

c1d_dd c1d_exact_element(const c1d_shape *s, const float *x, const float *w, const float *b, int64_t n,
                         int64_t o, int64_t t) {
  c1d_dd acc = {s->bias ? (double)b[o] : 0.0, 0.0};
  const int64_t k0 = c1d_first_tap(s, t); /* taps before k0 read causal padding */
  for (int64_t c = 0; c < s->C; c++)
    for (int64_t k = k0; k < s->K; k++)
      dd_add(&acc, (double)w[c1d_w_index(s, o, c, k)] *
                       (double)x[c1d_x_index(s, n, c, c1d_source_time(s, t, k))]);
  return acc;
}
