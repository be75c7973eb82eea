/* The user's test: conv1d against convlab's verdict, not a tolerance. allclose(1e-4, 1e-4) passes the
 * correct kernel and the planted bug alike; cr_assert_conv1d_rounding_only passes only the correct one,
 * and on the bug fails with convlab's words: the verdict, why, and where. */
#include <convlab/criterion.h>
#include <math.h>

#include "conv1d.h"
#include "inputs.h"

static float x[N * C * L], w[O * C * K], b[O], y[N * O * L];

static void setup(void) {
  make_inputs(x, w, b);
  conv1d(x, w, b, y, N, C, O, L, K, D);
}

TestSuite(conv1d, .init = setup);

Test(conv1d, is_rounding_only) {
  convlab_problem *p = the_problem();
  cr_expect_conv1d_rounding_only(p, x, w, b, y);
  convlab_problem_destroy(p);
}

/* The check a tolerance makes, for comparison: float64 sums as the exact result. */
Test(conv1d, passes_allclose) {
  for (int n = 0; n < N; n++)
    for (int o = 0; o < O; o++)
      for (int t = 0; t < L; t++) {
        double exact = b[o];
        for (int c = 0; c < C; c++)
          for (int k = 0; k < K; k++)
            if (t - (K - 1 - k) * D >= 0) exact += (double)w[(o * C + c) * K + k] * x[(n * C + c) * L + t - (K - 1 - k) * D];
        const double got = y[(n * O + o) * L + t];
        cr_assert(fabs(got - exact) <= 1e-4 + 1e-4 * fabs(exact), "y[%d,%d,%d] = %.9g, exact %.9g", n, o, t, got, exact);
      }
}
