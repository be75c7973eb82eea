/* The verdicts on a user's outputs for convlab explain and libconvlab (explain_outputs.h): the run, the
 * flag suggestions, the text and the JSON object. */
#include "harness/explain_outputs.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "harness/report.h"

void c1d_explain_config(c1d_run_config *cfg, double lambda) {
  c1d_run_config_default(cfg);
  cfg->lambda = lambda;
  cfg->progress = 0;
}

/* For each output called a bug, the flag under which it is rounding, into sug[i] (flag "" for none). A
 * hint beside the verdict: a check that fails leaves that output without one, and the verdicts as they
 * are. */
static void suggest(const c1d_run_config *cfg, const c1d_run_results *res, c1d_flag_suggestion *sug) {
  for (int i = 0; i < cfg->n_candidates; i++) {
    const c1d_trial_result *t = &res->impls[cfg->n_impls + i].trials[0];
    memset(&sug[i], 0, sizeof sug[i]);
    if (t->status != C1D_OK || !t->explained) continue;
    const c1d_verdict v = t->explanation.verdict;
    if (v != C1D_VERDICT_BUG_LOCALIZED && v != C1D_VERDICT_BUG_GLOBAL) continue; /* NaN is no flag's doing */
    if (c1d_suggest_flag(&cfg->shape, cfg->x, cfg->w, cfg->b, cfg->st, cfg->candidates[i].y, &sug[i]) != C1D_OK)
      c1d_error_clear();
  }
}

c1d_status c1d_explain_outputs(const c1d_run_config *cfg, c1d_run_results *res, c1d_flag_suggestion *sug) {
  c1d_status st = c1d_run(cfg, res);
  if (st != C1D_OK) return st;
  for (int i = 0; i < cfg->n_candidates; i++) {
    const c1d_impl_result *r = &res->impls[cfg->n_impls + i];
    if (r->n_trials < 1 || r->trials[0].status != C1D_OK || !r->trials[0].explained)
      return c1d_fail(C1D_ERR_INTERNAL, "%s could not be analysed: %s", r->name,
                      r->n_trials < 1 ? r->skip_reason : r->trials[0].error);
  }
  suggest(cfg, res, sug);
  return C1D_OK;
}

// --- the words -----------------------------------------------------------------------------------

static double pct(int64_t part, int64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0.0; }

/* "0" or "0-1": the first `count` indices. */
static const char *first(int64_t count, char *buf, size_t size) {
  if (count > 1) snprintf(buf, size, "0-%lld", (long long)(count - 1));
  else snprintf(buf, size, "0");
  return buf;
}

/* The verdict's first line, and right under it the suggestion: a forgotten flag reads as a bug. */
static void print_verdict(FILE *f, const c1d_explanation *e, const c1d_flag_suggestion *sug) {
  char line[600], rows[32], steps[32];
  c1d_verdict_headline(e, line, sizeof line);
  fprintf(f, "%s\n", line);
  if (sug->flag[0])
    fprintf(f, "  did you mean %s? With it the outputs checked (n %s, t %s) are %s; as given, a bug.\n", sug->flag,
            first(sug->rows, rows, sizeof rows), first(sug->steps, steps, sizeof steps),
            c1d_verdict_name(sug->verdict));
}

void c1d_explain_region(const c1d_explanation *e, char *buf, size_t size) {
  if (size > 0) buf[0] = '\0';
  if (e->region.count > 0)
    snprintf(buf, size, "%lld elements (%.3g%%), %s: n %s, o %s, t %s", (long long)e->region.count,
             100 * e->region.fraction, e->region.kind, e->region.n, e->region.o, e->region.t);
}

static void print_where(FILE *f, const c1d_explanation *e) {
  char where[512];
  c1d_explain_region(e, where, sizeof where);
  if (where[0]) fprintf(f, "  where: %s\n", where);
}

void c1d_explain_print(FILE *f, const c1d_explanation *e, const c1d_metrics *m, const c1d_shape *s,
                       const c1d_flag_suggestion *sug) {
  char shape[128];
  print_verdict(f, e, sug);
  c1d_shape_format(s, shape, sizeof shape);
  fprintf(f, "  why: %s\n", e->reason);
  fprintf(f, "  problem: %s; %lld outputs compared\n", shape, (long long)e->count);
  fprintf(f, "  relative L2 error: %.3e; predicted by the models on these inputs:", e->rel_l2);
  for (int k = 0; k < C1D_MODEL_COUNT; k++) /* the models the explainer evaluated */
    if (c1d_model_applies(e, k)) fprintf(f, " %s %.3e", c1d_model_key(k), e->models[k].rel_l2);
  fprintf(f, "\n");
  fprintf(f, "  median error in units of u*m: %.3g (fp32 model %.3g", e->cand_stats.z50, e->models[C1D_MODEL_FP32].z50);
  if (c1d_model_applies(e, C1D_MODEL_TF32_RNA)) fprintf(f, ", tf32 model %.3g", e->models[C1D_MODEL_TF32_RNA].z50);
  fprintf(f, ")\n");
  fprintf(f, "  beyond the float32 bounds: deterministic %.3g%%, probabilistic %.3g%%; beyond the TF32 "
             "bound: %.3g%%\n",
          pct(e->beyond_fp32_det, e->count), pct(e->beyond_fp32_prob, e->count), pct(e->beyond_tf32, e->count));
  fprintf(f, "  output fingerprint: %s (low 16 mantissa bits zero in %.1f%% of outputs, oracle %.1f%%; "
             "low 13: %.1f%%, oracle %.1f%%)\n",
          e->fingerprint, 100 * e->low16_zero, 100 * e->low16_zero_ref, 100 * e->low13_zero,
          100 * e->low13_zero_ref);
  print_where(f, e);
  fprintf(f, "  max abs error %.3e, max rel %.3e; failing allclose(1e-4, 1e-4): %.3g%%; non-finite: %lld\n",
          m->max_abs, m->max_rel, pct(m->fail_default, m->count), (long long)m->nonfinite);
}

void c1d_explain_print_short(FILE *f, const c1d_explanation *e, const c1d_flag_suggestion *sug) {
  print_verdict(f, e, sug);
  fprintf(f, "  why: %s\n", e->reason);
  print_where(f, e);
}

cJSON *c1d_explain_json(const c1d_explanation *e, const c1d_metrics *m, const c1d_shape *s, const char *name,
                        const c1d_flag_suggestion *sug, cJSON *files) {
  cJSON *root = c1d_explanation_json(e);
  if (!root) {
    cJSON_Delete(files);
    return NULL;
  }
  cJSON_AddStringToObject(root, "name", name);
  if (sug->flag[0]) {
    cJSON_AddStringToObject(root, "suggestion", sug->flag);
    cJSON_AddStringToObject(root, "suggestion_verdict", c1d_verdict_name(sug->verdict));
  }
  cJSON_AddItemToObject(root, "problem", c1d_problem_json(s));
  if (files) cJSON_AddItemToObject(root, "files", files);
  cJSON *mt = cJSON_AddObjectToObject(root, "metrics");
  cJSON_AddNumberToObject(mt, "max_abs", m->max_abs);
  cJSON_AddNumberToObject(mt, "max_rel", m->max_rel);
  cJSON_AddNumberToObject(mt, "rel_l2", isfinite(m->rel_l2) ? m->rel_l2 : -1);
  cJSON_AddNumberToObject(mt, "fail_allclose_1e-4", pct(m->fail_default, m->count) / 100.0);
  cJSON_AddNumberToObject(mt, "nonfinite", (double)m->nonfinite);
  return root;
}
