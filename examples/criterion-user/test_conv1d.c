/* The user's test: conv1d against convlab's verdict, not a tolerance. allclose(1e-4, 1e-4) passes the
 * correct kernel and the planted bug alike; cr_assert_conv1d_rounding_only passes only the correct one,
 * and on the bug fails with convlab's words: the verdict, why, and where. */
#include <convlab/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "conv1d.h"

enum { N = 2, C = 64, O = 64, L = 512, K = 4, D = 1 };

static float x[N * C * L], w[O * C * K], b[O], y[N * O * L];

/* Inputs as PyTorch's Conv1d initializes them: w, b uniform in +-1/sqrt(C*K), x uniform in +-1. */
static void setup(void) {
  srand(2026);
  const float bound = 1.0f / sqrtf((float)(C * K));
  for (int i = 0; i < N * C * L; i++) x[i] = 2.0f * (float)rand() / (float)RAND_MAX - 1.0f;
  for (int i = 0; i < O * C * K; i++) w[i] = bound * (2.0f * (float)rand() / (float)RAND_MAX - 1.0f);
  for (int i = 0; i < O; i++) b[i] = bound * (2.0f * (float)rand() / (float)RAND_MAX - 1.0f);
  conv1d(x, w, b, y, N, C, O, L, K, D);
}

TestSuite(conv1d, .init = setup);

Test(conv1d, is_rounding_only) {
  convlab_problem *p = NULL;
  cr_assert_eq(convlab_problem_create(&p, N, C, O, L, K), CONVLAB_OK, "%s", convlab_last_error());
  cr_assert_eq(convlab_problem_set_bias(p, 1), CONVLAB_OK, "%s", convlab_last_error());
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
