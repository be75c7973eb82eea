/* A test problem of any kind (groups, depthwise, initial states, SiLU, bf16/fp16 tensors) on the CPU:
 * inputs generated in their types with their states, the float64 oracle with its magnitude and the sum
 * before the activation, and the explainer prepared on them; an implementation run on it (into a
 * NaN-poisoned output, with the states in c1d_exec) and its output explained. Allocation failures and
 * failing calls are assertion failures. */
#ifndef C1D_TEST_LOWP_CASES_H
#define C1D_TEST_LOWP_CASES_H

#include "harness/explain.h"
#include "harness/inputs.h"
#include "reference/impl.h"

typedef struct lowp_problem {
  c1d_shape s;
  float *x, *w, *b, *st, *y; /* b and st always allocated (NULL passed where the problem has none) */
  double *ref, *mag, *pre;
  c1d_explainer ex;
} lowp_problem;

/* Inputs of dist and seed for s, the oracle on them and the explainer's evidence. */
void setup_lowp(lowp_problem *p, const c1d_shape *s, c1d_dist dist, uint64_t seed);
/* The inputs alone (ref, mag and pre unset, the explainer empty): for comparisons of bits. */
void setup_lowp_inputs(lowp_problem *p, const c1d_shape *s, c1d_dist dist, uint64_t seed);
void teardown_lowp(lowp_problem *p);

/* The problem's bias and states as an implementation gets them: NULL where it has none. */
const float *lowp_bias(const lowp_problem *p);
const float *lowp_states(const lowp_problem *p);

/* A CPU implementation on the problem into out (N*O*L floats, poisoned with NaN first). */
void run_lowp_cpu(lowp_problem *p, const c1d_impl *impl, float *out);

/* The explainer's verdict on an output y of the problem (no repeat information). */
c1d_explanation explain_lowp_output(lowp_problem *p, const float *y);

/* run_lowp_cpu into p->y, then explained. */
c1d_explanation explain_lowp(lowp_problem *p, const c1d_impl *impl);

#endif
