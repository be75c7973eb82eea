/* Criterion assertions on a causal conv1d output (libconvlab, convlab.h): the test fails unless
 * convlab's verdict on y is allowed, and its message is convlab explain's own lines: the verdict in
 * plain words, why (for a verdict that is not a bug, ending with the detection limit) and where.
 *
 *   #include <convlab/criterion.h>
 *   Test(my_conv, is_rounding_only) {
 *     ... run the kernel into y ...
 *     cr_assert_conv1d_rounding_only(problem, x, w, b, y);   // fp32-rounding only: the contract holds
 *   }
 *
 * The _verdict_in forms take the initial states (NULL without) and the verdicts allowed, as CONVLAB_ALLOW
 * bits: CONVLAB_ROUNDING_ONLY, CONVLAB_ANY_ROUNDING (fp32-rounding, tf32-inputs, reduced-precision), or
 * CONVLAB_ROUNDING_ONLY | CONVLAB_ALLOW(CONVLAB_TF32_INPUTS) for a kernel meant to use TF32. A call
 * that fails (a NULL tensor, NaN in x) fails the test with convlab's one-line error. The cr_expect_
 * forms let the test go on. Without Criterion, convlab_check gives the same answer and message. */
#ifndef CONVLAB_CRITERION_H
#define CONVLAB_CRITERION_H

#include <criterion/criterion.h>

#include "convlab/convlab.h"

/* Room for the message: the verdict's line, a suggestion, why (at most 1 KiB) and where. */
#define CONVLAB_MESSAGE_SIZE 4096

#define CONVLAB_CR_CHECK_(assertion, problem, x, w, b, initial_states, y, allowed)                          \
  do {                                                                                                     \
    char convlab_message_[CONVLAB_MESSAGE_SIZE];                                                           \
    const int convlab_ok_ = convlab_check((problem), (x), (w), (b), (initial_states), (y), (allowed),      \
                                          convlab_message_, sizeof convlab_message_);                      \
    assertion(convlab_ok_, "%s", convlab_message_);                                                        \
  } while (0)

/* Fails the test unless y's verdict is one of allowed. */
#define cr_assert_conv1d_verdict_in(problem, x, w, b, initial_states, y, allowed) \
  CONVLAB_CR_CHECK_(cr_assert, problem, x, w, b, initial_states, y, allowed)
#define cr_expect_conv1d_verdict_in(problem, x, w, b, initial_states, y, allowed) \
  CONVLAB_CR_CHECK_(cr_expect, problem, x, w, b, initial_states, y, allowed)

/* Fails the test unless y is fp32-rounding: exact products, a float32 sum in some order (no states). */
#define cr_assert_conv1d_rounding_only(problem, x, w, b, y) \
  cr_assert_conv1d_verdict_in(problem, x, w, b, NULL, y, CONVLAB_ROUNDING_ONLY)
#define cr_expect_conv1d_rounding_only(problem, x, w, b, y) \
  cr_expect_conv1d_verdict_in(problem, x, w, b, NULL, y, CONVLAB_ROUNDING_ONLY)

#endif
