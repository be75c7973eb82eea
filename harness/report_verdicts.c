/* What every report writer says about verdicts: the most severe trial's verdict and its first sentence,
 * the TF32 model's prediction beside a TF32 row's observation (where a TF32 model applies), and the
 * implementations a run left out because they cannot run here. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness/registry.h"
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
  if (!t->explained || !c1d_model_applies(&t->explanation, C1D_MODEL_TF32_RNA)) return NAN;
  /* 3xTF32 uses TF32 instructions but not TF32's accuracy: its model is split_3xtf32, not this one. */
  if (ir->impl && ir->impl->precision == C1D_PREC_3XTF32) return NAN;
  const int claims_tf32 = ir->impl && (ir->impl->precision == C1D_PREC_TF32 ||
                                       ir->impl->precision == C1D_PREC_TF32_ALLOWED);
  if (!claims_tf32 && t->used_tf32 != 1 && t->explanation.verdict != C1D_VERDICT_TF32_INPUTS)
    return NAN;
  return t->explanation.models[C1D_MODEL_TF32_RNA].rel_l2;
}

int c1d_model_applies(const c1d_explanation *e, int model) {
  if (!e || model < 0 || model >= C1D_MODEL_COUNT || !e->models[model].available) return 0;
  /* The fp32 model is the contract's own arithmetic: it applies even where it predicts no error (integer
   * inputs). Any other model that equals the exact result on every sampled element changed nothing
   * here: TF32 rounding of bf16 or fp16 inputs, which TF32 holds exactly. */
  return model == C1D_MODEL_FP32 || e->models[model].rel_l2 > 0.0 || e->models[model].z90 > 0.0;
}

// --- the verdict in one sentence -----------------------------------------------------------------

/* What a reduced-precision stage means, in words (convlab explain's words). */
static const char *reduced_stage(const c1d_explanation *e) {
  if (!strcmp(e->where, "inputs")) return "the inputs were rounded to a narrower type than given";
  if (!strcmp(e->where, "products")) return "the products were rounded (to bf16, or to about 22 bits) before the sum";
  if (!strcmp(e->where, "accumulation")) return "the sums were kept in fp16 or bf16";
  if (!strcmp(e->where, "output")) return "the result was rounded to a narrower format, or rounded twice";
  return strcmp(e->fingerprint, "fp32") ? "the outputs were stored in a narrower format than float32"
                                        : "precision was lost";
}

void c1d_verdict_headline(const c1d_explanation *e, char *buf, size_t size) {
  const c1d_region *r = &e->region;
  switch (e->verdict) {
    case C1D_VERDICT_FP32_ROUNDING:
      snprintf(buf, size, "Not a bug: rounding, consistent with float32 accumulation in some order "
                          "(fp32-rounding).");
      break;
    case C1D_VERDICT_TF32_INPUTS:
      snprintf(buf, size, "Not a bug: the inputs were rounded to TF32, as tensor cores do (tf32-inputs).");
      break;
    case C1D_VERDICT_REDUCED_PRECISION:
      snprintf(buf, size, "Rounding, but more than the contract allows: %s (reduced-precision%s%s).",
               reduced_stage(e), e->where[0] ? ", where: " : "", e->where);
      break;
    case C1D_VERDICT_BUG_LOCALIZED:
      snprintf(buf, size, "A bug in %s: n %s, o %s, t %s (bug-localized).", r->kind, r->n, r->o, r->t);
      break;
    case C1D_VERDICT_BUG_GLOBAL:
      snprintf(buf, size, "A bug, nearly everywhere: %.3g%% of the outputs are beyond every rounding model "
                          "(bug-global).", 100.0 * r->fraction);
      break;
    case C1D_VERDICT_NON_FINITE:
      snprintf(buf, size, "A bug: %lld outputs are NaN or Inf where the exact result is finite, %s%s: "
                          "n %s, o %s, t %s (non-finite).",
               (long long)e->nonfinite, r->cls == C1D_REGION_EVERYWHERE ? "across the whole output" : "in ",
               r->cls == C1D_REGION_EVERYWHERE ? "" : r->kind, r->n, r->o, r->t);
      break;
    default:
      snprintf(buf, size, "Inconclusive: the evidence does not decide (inconclusive).");
  }
}

// --- what a run left out --------------------------------------------------------------------------

static int among_rows(const c1d_run_results *r, const c1d_impl *impl) {
  for (int i = 0; i < r->n_impls; i++)
    if (r->impls[i].impl == impl) return 1;
  return 0;
}

int c1d_report_unavailable(const c1d_run_results *r, c1d_unavailable_group *groups, int max) {
  int n = 0;
  const c1d_impl *const *table = c1d_registry(&n);
  /* The default selection: every main-tier implementation that can run here is a row. */
  for (int i = 0; i < n; i++)
    if (table[i]->tier == C1D_TIER_MAIN && !c1d_impl_unavailable(table[i]) && !among_rows(r, table[i])) return 0;
  const char *why = c1d_backend_unavailable(C1D_BACKEND_GPU);
  if (!why || max < 1) return 0;
  c1d_unavailable_group *g = &groups[0];
  memset(g, 0, sizeof *g);
  g->reason = why;
  int count = 0;
  const char *const *names = c1d_gpu_main_names(&count);
  for (int i = 0; i < count && g->n < C1D_MAX_UNAVAILABLE; i++) {
    const c1d_impl *impl = c1d_find_impl(names[i]); /* NULL in a build without CUDA */
    if (impl && among_rows(r, impl)) continue;     /* named by --impl: its own row says why */
    g->names[g->n++] = names[i];
  }
  return g->n > 0;
}

void c1d_unavailable_text(const c1d_unavailable_group *g, char *buf, size_t size) {
  enum { SHOWN = 3 };
  size_t len = (size_t)snprintf(buf, size, "GPU rows (");
  for (int i = 0; i < g->n && i < SHOWN && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", g->names[i]);
  if (len < size && g->n > SHOWN) len += (size_t)snprintf(buf + len, size - len, ", ... %d in all", g->n);
  if (len < size) snprintf(buf + len, size - len, "): not run: %s", g->reason);
}
