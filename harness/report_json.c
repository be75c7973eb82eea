/* The JSON report (docs/report-format.md is its schema). Built as a cJSON tree; cJSON stores every
 * number as a double, which holds every count here exactly (counts stay below 2^40). NaN and infinities
 * have no JSON spelling and are written as null. Seeds are 64-bit integers and written as their exact
 * decimal text (add_seed). Out of memory, cJSON drops the item it could not
 * create (cJSON_Add* ignore NULL); the caller sees NULL only when the root or the printed text fails,
 * and a machine that cannot allocate a few kilobytes has already failed the run long before. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/report.h"
#include "harness/report_set.h"
#include "reference/dtype.h"
#include "harness/version.h"

#ifndef C1D_COMPILE_FLAGS
#define C1D_COMPILE_FLAGS "unknown"
#endif

static void add_num(cJSON *o, const char *key, double v) {
  if (isfinite(v))
    cJSON_AddNumberToObject(o, key, v);
  else
    cJSON_AddNullToObject(o, key);
}

static void add_str(cJSON *o, const char *key, const char *s) {
  if (s)
    cJSON_AddStringToObject(o, key, s);
  else
    cJSON_AddNullToObject(o, key);
}

/* A seed as the exact decimal integer (a JSON number has any number of digits; a double would round
 * seeds above 2^53). */
static void add_seed(cJSON *o, const char *key, uint64_t seed) {
  char text[32];
  snprintf(text, sizeof text, "%llu", (unsigned long long)seed);
  cJSON_AddRawToObject(o, key, text);
}

/* "" is recorded as null: the implementation did not say. */
static void add_text(cJSON *o, const char *key, const char *s) { add_str(o, key, s && s[0] ? s : NULL); }

static double frac(int64_t part, int64_t count) { return count > 0 ? (double)part / (double)count : 0.0; }

// --- sections ----------------------------------------------------------------------------------

cJSON *c1d_problem_json(const c1d_shape *s) {
  cJSON *p = cJSON_CreateObject();
  const struct { const char *k; int64_t v; } dims[] = {{"N", s->N}, {"C", s->C}, {"O", s->O},
                                                       {"L", s->L}, {"K", s->K}, {"D", s->D}};
  for (unsigned i = 0; i < sizeof dims / sizeof dims[0]; i++) add_num(p, dims[i].k, (double)dims[i].v);
  cJSON_AddBoolToObject(p, "bias", s->bias);
  add_num(p, "G", (double)c1d_groups(s));
  cJSON_AddBoolToObject(p, "initial_states", s->states);
  cJSON_AddStringToObject(p, "activation", s->act == C1D_ACT_SILU ? "silu" : "none");
  cJSON_AddStringToObject(p, "layout", s->layout == C1D_LAYOUT_NLC ? "nlc" : "ncl");
  cJSON *dt = cJSON_AddObjectToObject(p, "dtypes");
  const struct { const char *k; c1d_dtype d; } types[] = {
      {"x", s->dt.x}, {"w", s->dt.w}, {"b", s->dt.b}, {"initial_states", s->dt.s}, {"y", s->dt.y}};
  for (unsigned i = 0; i < sizeof types / sizeof types[0]; i++)
    cJSON_AddStringToObject(dt, types[i].k, c1d_dtype_name(types[i].d));
  return p;
}

static cJSON *problem_json(const c1d_run_results *r) {
  cJSON *p = c1d_problem_json(&r->shape);
  add_num(p, "flops", r->flops);
  return p;
}

static cJSON *inputs_json(const c1d_report_meta *meta, const c1d_run_results *r) {
  cJSON *in = cJSON_CreateObject();
  cJSON_AddStringToObject(in, "source", r->from_files ? "files" : "generated");
  add_str(in, "dist", r->from_files ? NULL : c1d_dist_name(r->dist));
  if (r->from_files)
    cJSON_AddNullToObject(in, "seed");
  else
    add_seed(in, "seed", r->seed);
  add_num(in, "trials", r->trials);
  /* CPU rows cover batch rows [0, cpu_batch_rows) when it is below N */
  add_num(in, "cpu_batch_rows", (double)(r->cpu_batch_rows > 0 ? r->cpu_batch_rows : r->shape.N));
  cJSON *files = cJSON_AddObjectToObject(in, "files");
  add_str(files, "x", meta->x_path);
  add_str(files, "w", meta->w_path);
  add_str(files, "b", meta->b_path);
  if (meta->n_y == 1) { /* one candidate: its path; several: the list, in the rows' order */
    add_str(files, "y", meta->y_paths[0]);
  } else if (meta->n_y > 1) {
    cJSON *ys = cJSON_AddArrayToObject(files, "y");
    for (int i = 0; i < meta->n_y; i++) cJSON_AddItemToArray(ys, cJSON_CreateString(meta->y_paths[i]));
  } else {
    cJSON_AddNullToObject(files, "y");
  }
  return in;
}

static void add_version(cJSON *o, const char *key, long v, long major_div, long minor_div) {
  char b[64];
  if (v <= 0) {
    cJSON_AddNullToObject(o, key);
    return;
  }
  /* CUDA: 13000 = 13.0; cuDNN 9 and cuBLAS as encoded by gpu/device.c: 91400 = 9.14.0. */
  if (minor_div == 10)
    snprintf(b, sizeof b, "%ld.%ld", v / major_div, (v % major_div) / minor_div);
  else
    snprintf(b, sizeof b, "%ld.%ld.%ld", v / major_div, (v % major_div) / minor_div, v % minor_div);
  cJSON_AddStringToObject(o, key, b);
}

static cJSON *machine_json(const c1d_machine *m) {
  if (!m) return cJSON_CreateNull();
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "cpu", m->cpu);
  add_num(o, "threads", m->threads);
  add_num(o, "memory_bytes", m->memory_bytes);
  if (!m->has_gpu) {
    cJSON_AddNullToObject(o, "gpu");
    add_text(o, "gpu_unavailable", m->gpu_reason);
    return o;
  }
  cJSON *g = cJSON_AddObjectToObject(o, "gpu");
  cJSON_AddStringToObject(g, "name", m->gpu_name);
  add_version(g, "driver", m->driver_version, 1000, 10);
  add_version(g, "runtime", m->runtime_version, 1000, 10);
  add_version(g, "cudnn", m->cudnn_version, 10000, 100);
  add_version(g, "cublas", m->cublas_version, 10000, 100);
  add_num(g, "sm_count", m->sm_count);
  char cc[16];
  snprintf(cc, sizeof cc, "%d.%d", m->cc_major, m->cc_minor);
  cJSON_AddStringToObject(g, "compute_capability", cc);
  cJSON_AddNullToObject(o, "gpu_unavailable");
  return o;
}

static cJSON *tolerances_json(const c1d_run_results *r) {
  cJSON *t = cJSON_CreateObject();
  add_num(t, "atol", r->atol);
  add_num(t, "rtol", r->rtol);
  add_num(t, "lambda", r->lambda);
  add_num(t, "default_atol", C1D_DEFAULT_ATOL);
  add_num(t, "default_rtol", C1D_DEFAULT_RTOL);
  return t;
}

// --- per trial ---------------------------------------------------------------------------------

static cJSON *metrics_json(const c1d_metrics *m) {
  cJSON *o = cJSON_CreateObject();
  add_num(o, "count", (double)m->count);
  add_num(o, "max_abs", m->max_abs);
  add_num(o, "argmax_abs", (double)m->argmax_abs);
  add_num(o, "max_rel", m->max_rel);
  add_num(o, "rel_l2", m->rel_l2);
  add_num(o, "ulp_p50", m->ulp_p50);
  add_num(o, "ulp_p99", m->ulp_p99);
  add_num(o, "ulp_max", m->ulp_max);
  add_str(o, "ulp_type", c1d_dtype_name((c1d_dtype)m->ulp_dtype)); /* y's type for bf16/fp16 outputs */
  add_num(o, "fail_default", (double)m->fail_default);
  add_num(o, "fail_default_frac", frac(m->fail_default, m->count));
  add_num(o, "fail_user", (double)m->fail_user);
  add_num(o, "fail_user_frac", frac(m->fail_user, m->count));
  add_num(o, "beyond_det", (double)m->beyond_det);
  add_num(o, "beyond_det_frac", frac(m->beyond_det, m->count));
  add_num(o, "beyond_prob", (double)m->beyond_prob);
  add_num(o, "beyond_prob_frac", frac(m->beyond_prob, m->count));
  add_num(o, "max_det_ratio", m->max_det_ratio);
  add_num(o, "max_prob_ratio", m->max_prob_ratio);
  add_num(o, "nonfinite", (double)m->nonfinite);
  add_num(o, "first_nonfinite", (double)m->first_nonfinite);
  add_num(o, "nonfinite_ref", (double)m->nonfinite_ref);
  return o;
}

static cJSON *hist_json(const c1d_log_hist *h) {
  cJSON *o = cJSON_CreateObject();
  add_num(o, "lo_log10", h->lo_log10);
  add_num(o, "hi_log10", h->hi_log10);
  cJSON *counts = cJSON_AddArrayToObject(o, "counts");
  for (int i = 0; i < h->bins && counts; i++)
    cJSON_AddItemToArray(counts, cJSON_CreateNumber((double)h->counts[i]));
  add_num(o, "zero", (double)h->zero);
  add_num(o, "below", (double)h->below);
  add_num(o, "above", (double)h->above);
  add_num(o, "nonfinite", (double)h->nonfinite);
  return o;
}

static cJSON *stats_json(const c1d_error_stats *st) {
  cJSON *o = cJSON_CreateObject();
  if (!st->available) return o;
  add_num(o, "rel_l2", st->rel_l2);
  add_num(o, "z50", st->z50);
  add_num(o, "z90", st->z90);
  return o;
}

cJSON *c1d_explanation_json(const c1d_explanation *e) {
  static const char *const accumulations[] = {"nearest", "truncated", "fp16", "bf16"};
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "verdict", c1d_verdict_name(e->verdict));
  cJSON_AddStringToObject(o, "reason", e->reason);
  add_str(o, "model", e->model >= 0 ? c1d_model_name(e->model) : NULL);
  add_str(o, "where", e->where[0] ? e->where : NULL);
  cJSON *d = cJSON_AddObjectToObject(o, "decision");
  add_str(d, "explanation", e->what[0] ? e->what : NULL);
  add_str(d, "model", e->model >= 0 ? c1d_model_key(e->model) : NULL);
  add_str(d, "model_alt", e->model_alt >= 0 ? c1d_model_key(e->model_alt) : NULL);
  add_str(d, "accumulation", e->model >= 0 ? accumulations[e->accumulation] : NULL);
  add_num(d, "kappa", e->kappa);
  cJSON_AddBoolToObject(d, "product_allowance", e->product_allowance);
  add_num(d, "fit_ratio", e->fit_ratio);
  cJSON_AddBoolToObject(d, "order_sensitive", e->order_sensitive);
  add_num(d, "order_ratio", e->order_ratio);
  add_num(d, "alpha", e->alpha);
  add_str(d, "test", e->test[0] ? e->test : NULL);
  cJSON_AddBoolToObject(d, "certain", e->certain);
  add_num(d, "unexplained_rms", e->unexplained_rms);
  add_num(d, "reference_rms", e->reference_rms);
  add_num(d, "detection_limit_32", e->detect_limit_32);
  add_num(d, "detection_limit_all", e->detect_limit_all);
  add_num(d, "exact_fraction", frac(e->exact, e->count));
  cJSON *ev = cJSON_AddObjectToObject(o, "evidence");
  add_num(ev, "count", (double)e->count);
  add_num(ev, "nonfinite", (double)e->nonfinite);
  add_num(ev, "beyond_fp32_det", frac(e->beyond_fp32_det, e->count));
  add_num(ev, "beyond_fp32_prob", frac(e->beyond_fp32_prob, e->count));
  add_num(ev, "beyond_tf32", frac(e->beyond_tf32, e->count));
  add_num(ev, "beyond_model", frac(e->beyond_model, e->count));
  add_num(ev, "rel_l2", e->rel_l2);
  cJSON_AddItemToObject(ev, "candidate_on_sample", stats_json(&e->cand_stats));
  cJSON *models = cJSON_AddObjectToObject(ev, "models");
  for (int m = 0; m < C1D_MODEL_COUNT; m++) /* {} where the model was not needed or does not apply */
    cJSON_AddItemToObject(models, c1d_model_key(m),
                          c1d_model_applies(e, m) ? stats_json(&e->models[m]) : cJSON_CreateObject());
  cJSON *fp = cJSON_AddObjectToObject(ev, "fingerprint");
  cJSON_AddStringToObject(fp, "format", e->fingerprint);
  add_num(fp, "low16_zero", e->low16_zero);
  add_num(fp, "low13_zero", e->low13_zero);
  add_num(fp, "low16_zero_oracle", e->low16_zero_ref);
  add_num(fp, "low13_zero_oracle", e->low13_zero_ref);
  if (e->repeat_checked)
    cJSON_AddBoolToObject(ev, "repeat_identical", e->repeat_identical);
  else
    cJSON_AddNullToObject(ev, "repeat_identical");
  cJSON *rg = cJSON_AddObjectToObject(o, "region");
  add_num(rg, "count", (double)e->region.count);
  add_num(rg, "fraction", e->region.fraction);
  add_text(rg, "kind", e->region.kind);
  add_text(rg, "class", c1d_region_class_name(e->region.cls));
  add_text(rg, "n", e->region.n);
  add_text(rg, "o", e->region.o);
  add_text(rg, "t", e->region.t);
  return o;
}

static cJSON *profile_json(const c1d_profile *p) {
  cJSON *o = cJSON_CreateObject();
  add_num(o, "width", (double)p->width);
  cJSON *mean = cJSON_AddArrayToObject(o, "mean"), *max = cJSON_AddArrayToObject(o, "max");
  for (int i = 0; i < p->bins && mean && max; i++) {
    cJSON_AddItemToArray(mean, cJSON_CreateNumber(p->mean[i]));
    cJSON_AddItemToArray(max, cJSON_CreateNumber(p->max[i]));
  }
  return o;
}

static cJSON *trial_json(const c1d_impl_result *ir, const c1d_trial_result *t, int timed) {
  cJSON *o = cJSON_CreateObject();
  add_seed(o, "seed", t->seed);
  cJSON_AddStringToObject(o, "status", t->status == C1D_OK ? "ok" : "failed");
  add_str(o, "error", t->status == C1D_OK ? NULL : t->error);
  if (t->status != C1D_OK) {
    cJSON_AddNullToObject(o, "metrics");
    cJSON_AddNullToObject(o, "histograms");
  } else {
    cJSON_AddItemToObject(o, "metrics", metrics_json(&t->metrics));
    cJSON *h = cJSON_AddObjectToObject(o, "histograms");
    cJSON_AddItemToObject(h, "abs_err", hist_json(&t->abs_err_hist));
    cJSON_AddItemToObject(h, "bound_ratio", hist_json(&t->bound_ratio_hist));
    cJSON *pr = cJSON_AddObjectToObject(o, "profiles");
    cJSON_AddItemToObject(pr, "t", profile_json(&t->err_t));
    cJSON_AddItemToObject(pr, "o", profile_json(&t->err_o));
  }
  if (t->explained)
    cJSON_AddItemToObject(o, "explanation", c1d_explanation_json(&t->explanation));
  else
    cJSON_AddNullToObject(o, "explanation");
  const double predicted = ir ? c1d_tf32_prediction(ir, t) : NAN;
  if (!isnan(predicted)) {
    cJSON *m = cJSON_AddObjectToObject(o, "tf32_model");
    add_num(m, "predicted_rel_l2", predicted);
    add_num(m, "observed_rel_l2", t->metrics.rel_l2);
  } else {
    cJSON_AddNullToObject(o, "tf32_model");
  }
  if (!timed) return o;
  if (t->repeat_checked)
    cJSON_AddBoolToObject(o, "repeat_identical", t->repeat_identical);
  else
    cJSON_AddNullToObject(o, "repeat_identical");
  if (t->repeats > 0) {
    cJSON *tm = cJSON_AddObjectToObject(o, "time_ms");
    add_num(tm, "median", t->time_median_ms);
    add_num(tm, "min", t->time_min_ms);
    add_num(tm, "repeats", t->repeats);
  } else {
    cJSON_AddNullToObject(o, "time_ms");
  }
  add_num(o, "gflops", t->gflops);
  add_text(o, "algo", t->algo);
  add_text(o, "math", t->math);
  if (t->used_tf32 < 0)
    cJSON_AddNullToObject(o, "used_tf32");
  else
    cJSON_AddBoolToObject(o, "used_tf32", t->used_tf32);
  return o;
}

static const char *state_name(c1d_result_state s) {
  return s == C1D_RESULT_SKIPPED ? "skipped" : s == C1D_RESULT_FAILED ? "failed" : "ran";
}

static cJSON *impl_json(const c1d_impl_result *ir) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", ir->name);
  cJSON_AddStringToObject(o, "backend", ir->backend);
  cJSON_AddStringToObject(o, "precision", ir->precision);
  cJSON_AddStringToObject(o, "summary", ir->summary);
  cJSON_AddStringToObject(o, "status", state_name(ir->state));
  add_str(o, "skip_reason", ir->state == C1D_RESULT_SKIPPED ? ir->skip_reason : NULL);
  cJSON *trials = cJSON_AddArrayToObject(o, "trials");
  for (int i = 0; i < ir->n_trials && trials; i++)
    cJSON_AddItemToArray(trials, trial_json(ir, &ir->trials[i], 1));
  return o;
}

static cJSON *comparison_json(const c1d_comparison *c) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "a", c->a);
  cJSON_AddStringToObject(o, "b", c->b);
  cJSON_AddStringToObject(o, "reference", c->b);
  add_num(o, "bound_u", 0x1p-23);
  cJSON *trials = cJSON_AddArrayToObject(o, "trials");
  for (int i = 0; i < c->n_trials && trials; i++)
    cJSON_AddItemToArray(trials, trial_json(NULL, &c->trials[i], 0));
  return o;
}

// --- the document ------------------------------------------------------------------------------

cJSON *c1d_report_json(const c1d_report_meta *meta, const c1d_run_results *r) {
  cJSON *root = cJSON_CreateObject();
  if (!root) return NULL;
  cJSON_AddStringToObject(root, "convlab_version", C1D_VERSION);
  add_str(root, "command", meta->command);
  if (r->run_id[0]) add_str(root, "run_id", r->run_id);
  if (r->saved_outputs) { /* where its outputs are, and the id their manifest carries */
    cJSON *so = cJSON_AddObjectToObject(root, "saved_outputs");
    add_str(so, "dir", c1d_staged_set_dest(r->saved_outputs));
    add_str(so, "manifest", "outputs.json");
    add_str(so, "run_id", r->run_id);
  }
  cJSON_AddItemToObject(root, "problem", problem_json(r));
  cJSON_AddItemToObject(root, "inputs", inputs_json(meta, r));
  cJSON_AddItemToObject(root, "machine", machine_json(meta->machine));
  cJSON_AddStringToObject(root, "compile_flags", C1D_COMPILE_FLAGS);
  cJSON_AddItemToObject(root, "tolerances", tolerances_json(r));
  cJSON *oracle = cJSON_AddObjectToObject(root, "oracle");
  add_str(oracle, "backend", r->oracle);
  if (r->oracle_kernel) add_str(oracle, "kernel", r->oracle_kernel);
  add_num(oracle, "time_ms", r->oracle_ms);
  cJSON *impls = cJSON_AddArrayToObject(root, "implementations");
  for (int i = 0; i < r->n_impls && impls; i++) cJSON_AddItemToArray(impls, impl_json(&r->impls[i]));
  /* What the run left out because it cannot run here (the default selection only): one group per reason. */
  cJSON *left = cJSON_AddArrayToObject(root, "unavailable");
  c1d_unavailable_group g;
  if (left && c1d_report_unavailable(r, &g, 1)) {
    cJSON *o = cJSON_CreateObject(), *names = cJSON_AddArrayToObject(o, "names");
    for (int i = 0; i < g.n && names; i++) cJSON_AddItemToArray(names, cJSON_CreateString(g.names[i]));
    add_str(o, "reason", g.reason);
    cJSON_AddItemToArray(left, o);
  }
  cJSON *cmps = cJSON_AddArrayToObject(root, "comparisons");
  for (int i = 0; i < r->n_comparisons && cmps; i++)
    cJSON_AddItemToArray(cmps, comparison_json(&r->comparisons[i]));
  return root;
}

char *c1d_report_json_text(const c1d_report_meta *meta, const c1d_run_results *r) {
  cJSON *root = c1d_report_json(meta, r);
  char *text = root ? cJSON_Print(root) : NULL, *out = NULL;
  cJSON_Delete(root);
  if (!text) return NULL;
  size_t n = strlen(text);
  out = malloc(n + 2);
  if (out) {
    memcpy(out, text, n);
    out[n] = '\n';
    out[n + 1] = '\0';
  }
  cJSON_free(text);
  return out;
}
