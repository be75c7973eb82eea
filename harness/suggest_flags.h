/* "Did you mean --activation silu?": a forgotten flag reads as a bug. For an output that the declared
 * problem calls a bug, the one other reading of the same tensors, a flag changed, under which it is
 * rounding: the activation flipped (none / silu), another dilation (without initial states, whose shape
 * pins D), or the other layout (only where C = O = L, since elsewhere the shapes fit one layout alone).
 * Groups have no other reading: w's shape fixes them.
 *
 * Cheap by construction: every reading is first scored on a fixed sample of 1024 outputs (the exact
 * value there against y, relative L2); only the closest, when it is at least twice as close as the
 * declared reading, is explained, and on the first batch rows and times only (about C1D_EXPLAIN_SAMPLE / 4
 * outputs, a problem of its own: causal, so a prefix in time needs nothing after it). The same prefix
 * under the declared flags must be a bug too, so a bug outside the prefix suggests nothing. The verdict
 * itself is never changed; the caller shows the flag beside it. */
#ifndef C1D_SUGGEST_FLAGS_H
#define C1D_SUGGEST_FLAGS_H

#include "numerics/classifier.h"
#include "reference/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct c1d_flag_suggestion {
  char flag[48];        /* "--activation silu", "--dilation 2", "--layout nlc"; "" when none fits */
  c1d_verdict verdict;  /* the output's verdict read with flag, on the part checked */
  int64_t rows, steps;  /* that part: batch rows 0..rows-1, times 0..steps-1 */
} c1d_flag_suggestion;

/* The flag under which y (host order (N, O, L), explained under s with the inputs x, w, b and the
 * initial states st, NULL without) is rounding (fp32-rounding, tf32-inputs or reduced-precision) while
 * under s it is a bug; out->flag is "" when no reading is. C1D_ERR_NO_MEMORY, or the oracle's error;
 * out->flag is "" then too. */
c1d_status c1d_suggest_flag(const c1d_shape *s, const float *x, const float *w, const float *b, const float *st,
                            const float *y, c1d_flag_suggestion *out);

#ifdef __cplusplus
}
#endif
#endif
