/* The tests' problem and inputs: N=2, C=O=64, L=512, K=4 with a bias, the inputs as PyTorch's Conv1d
 * initializes them (w, b uniform in +-1/sqrt(C*K), x uniform in +-1), the same on every run. */
#ifndef INPUTS_H
#define INPUTS_H

#include <convlab/criterion.h>
#include <math.h>
#include <stdlib.h>

enum { N = 2, C = 64, O = 64, L = 512, K = 4, D = 1 };

static void make_inputs(float *x, float *w, float *b) {
  srand(2026);
  const float bound = 1.0f / sqrtf((float)(C * K));
  for (int i = 0; i < N * C * L; i++) x[i] = 2.0f * (float)rand() / (float)RAND_MAX - 1.0f;
  for (int i = 0; i < O * C * K; i++) w[i] = bound * (2.0f * (float)rand() / (float)RAND_MAX - 1.0f);
  for (int i = 0; i < O; i++) b[i] = bound * (2.0f * (float)rand() / (float)RAND_MAX - 1.0f);
}

/* The problem convlab judges: N, C, O, L, K with a bias (dilation 1, float32, (N, C, L) by default). */
static convlab_problem *the_problem(void) {
  convlab_problem *p = NULL;
  cr_assert_eq(convlab_problem_create(&p, N, C, O, L, K), CONVLAB_OK, "%s", convlab_last_error());
  cr_assert_eq(convlab_problem_set_dilation(p, D), CONVLAB_OK, "%s", convlab_last_error());
  cr_assert_eq(convlab_problem_set_bias(p, 1), CONVLAB_OK, "%s", convlab_last_error());
  return p;
}

#endif
