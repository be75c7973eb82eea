/* What every report writer says about verdicts: the most severe trial's verdict, and the TF32 model's
 * prediction beside a TF32 row's observation. */
#include <math.h>

#include "harness/report.h"

static int severity(c1d_verdict v) {
  switch (v) {
    case C1D_VERDICT_BUG_GLOBAL: return 6;
    case C1D_VERDICT_BUG_LOCALIZED: return 5;
    case C1D_VERDICT_NON_FINITE: return 4;
    case C1D_VERDICT_INCONCLUSIVE: return 3;
    case C1D_VERDICT_REDUCED_PRECISION: return 2;
    case C1D_VERDICT_TF32_INPUTS: return 1;
    default: return 0;
  }
}

const c1d_trial_result *c1d_worst_verdict(const c1d_trial_result *trials, int n, int *same) {
  const c1d_trial_result *worst = NULL;
  for (int i = 0; i < n; i++)
    if (trials[i].explained &&
        (!worst || severity(trials[i].explanation.verdict) > severity(worst->explanation.verdict)))
      worst = &trials[i];
  *same = 0;
  for (int i = 0; worst && i < n; i++)
    *same += trials[i].explained && trials[i].explanation.verdict == worst->explanation.verdict;
  return worst;
}

double c1d_tf32_prediction(const c1d_impl_result *ir, const c1d_trial_result *t) {
  if (!t->explained || !t->explanation.models[C1D_MODEL_TF32_RNA].available) return NAN;
  /* 3xTF32 uses TF32 instructions but not TF32's accuracy: its model is split_3xtf32, not this one. */
  if (ir->impl && ir->impl->precision == C1D_PREC_3XTF32) return NAN;
  const int claims_tf32 = ir->impl && (ir->impl->precision == C1D_PREC_TF32 ||
                                       ir->impl->precision == C1D_PREC_TF32_ALLOWED);
  if (!claims_tf32 && t->used_tf32 != 1 && t->explanation.verdict != C1D_VERDICT_TF32_INPUTS)
    return NAN;
  return t->explanation.models[C1D_MODEL_TF32_RNA].rel_l2;
}
