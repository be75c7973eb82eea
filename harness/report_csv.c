/* The CSV report: one row per implementation (or candidate, or comparison) and trial, a fixed column
 * order (docs/report-format.md), RFC 4180 quoting. Empty cells mean "not applicable" (a skipped
 * implementation's metrics, an untimed candidate's time); non-finite numbers print as nan/inf, which
 * pandas and NumPy read. The implementations a default run leaves out because they cannot run here
 * (c1d_report_unavailable) follow the rows that ran, skipped, with the reason. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness/registry.h"
#include "harness/report.h"

static const char *const columns[] = {
    "name", "reference", "backend", "precision", "status", "skip_reason", "error", "trial", "seed",
    "N", "C", "O", "L", "K", "D", "bias", "dist", "flops", "time_median_ms", "time_min_ms", "repeats",
    "gflops", "count", "max_abs", "argmax_abs", "max_rel", "rel_l2", "ulp_p50", "ulp_p99", "ulp_max",
    "fail_default", "fail_default_frac", "fail_user", "fail_user_frac", "atol", "rtol", "beyond_det",
    "beyond_det_frac", "beyond_prob", "beyond_prob_frac", "max_det_ratio", "max_prob_ratio",
    "nonfinite", "first_nonfinite", "algo", "math", "used_tf32", "verdict", "region"};

#define NCOL ((int)(sizeof columns / sizeof columns[0]))

const char *const *c1d_report_csv_columns(int *n) {
  *n = NCOL;
  return columns;
}

/* Cells are collected as text, then written with quoting; the row builder checks the count. */
typedef struct row {
  char cell[NCOL][520]; /* an error detail is up to 511 characters */
  int n;
} row;

static void put(row *r, const char *s) {
  if (r->n < NCOL) snprintf(r->cell[r->n], sizeof r->cell[0], "%s", s ? s : "");
  r->n++;
}

static void put_num(row *r, double v) {
  char b[40];
  if (isnan(v))
    snprintf(b, sizeof b, "nan");
  else if (isinf(v))
    snprintf(b, sizeof b, v > 0 ? "inf" : "-inf");
  else
    snprintf(b, sizeof b, "%.17g", v);
  put(r, b);
}

static void put_int(row *r, int64_t v) {
  char b[32];
  snprintf(b, sizeof b, "%lld", (long long)v);
  put(r, b);
}

static void put_u64(row *r, uint64_t v) {
  char b[32];
  snprintf(b, sizeof b, "%llu", (unsigned long long)v);
  put(r, b);
}

static double frac(int64_t part, int64_t count) { return count > 0 ? (double)part / (double)count : 0.0; }

static void write_row(FILE *f, const row *r) {
  for (int i = 0; i < NCOL; i++) {
    const char *s = r->cell[i];
    if (i) fputc(',', f);
    if (strpbrk(s, ",\"\n\r")) {
      fputc('"', f);
      for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
      }
      fputc('"', f);
    } else {
      fputs(s, f);
    }
  }
  fputc('\n', f);
}

/* The identity and problem columns, shared by every kind of row. */
static void put_identity(row *r, const c1d_run_results *res, const char *name, const char *reference,
                         const char *backend, const char *precision, const char *status,
                         const char *skip_reason, const char *error, int trial, uint64_t seed) {
  put(r, name);
  put(r, reference);
  put(r, backend);
  put(r, precision);
  put(r, status);
  put(r, skip_reason);
  put(r, error);
  if (trial >= 0) {
    put_int(r, trial);
    put_u64(r, seed); /* all 64 bits: 2^64-1 is not -1 */
  } else {
    put(r, "");
    put(r, "");
  }
  const c1d_shape *s = &res->shape;
  put_int(r, s->N);
  put_int(r, s->C);
  put_int(r, s->O);
  put_int(r, s->L);
  put_int(r, s->K);
  put_int(r, s->D);
  put_int(r, s->bias);
  put(r, res->from_files ? "files" : c1d_dist_name(res->dist));
  put_num(r, res->flops);
}

static void put_measurements(row *r, const c1d_run_results *res, const c1d_trial_result *t) {
  const c1d_metrics *m = &t->metrics;
  int ok = t->status == C1D_OK;
  if (t->repeats > 0) {
    put_num(r, t->time_median_ms);
    put_num(r, t->time_min_ms);
    put_int(r, t->repeats);
    put_num(r, t->gflops);
  } else {
    for (int i = 0; i < 4; i++) put(r, "");
  }
  if (!ok) {
    for (int i = 0; i < 22; i++) put(r, ""); /* count .. first_nonfinite */
  } else {
    put_int(r, m->count);
    put_num(r, m->max_abs);
    put_int(r, m->argmax_abs);
    put_num(r, m->max_rel);
    put_num(r, m->rel_l2);
    put_num(r, m->ulp_p50);
    put_num(r, m->ulp_p99);
    put_num(r, m->ulp_max);
    put_int(r, m->fail_default);
    put_num(r, frac(m->fail_default, m->count));
    put_int(r, m->fail_user);
    put_num(r, frac(m->fail_user, m->count));
    put_num(r, res->atol);
    put_num(r, res->rtol);
    put_int(r, m->beyond_det);
    put_num(r, frac(m->beyond_det, m->count));
    put_int(r, m->beyond_prob);
    put_num(r, frac(m->beyond_prob, m->count));
    put_num(r, m->max_det_ratio);
    put_num(r, m->max_prob_ratio);
    put_int(r, m->nonfinite);
    put_int(r, m->first_nonfinite);
  }
  put(r, t->algo);
  put(r, t->math);
  put(r, t->used_tf32 < 0 ? "" : t->used_tf32 ? "1" : "0");
  put(r, t->explained ? c1d_verdict_name(t->explanation.verdict) : "");
  put(r, t->explained ? c1d_region_class_name(t->explanation.region.cls) : "");
}

void c1d_report_csv(FILE *f, const c1d_report_meta *meta, const c1d_run_results *res) {
  row r;
  r.n = 0;
  for (int i = 0; i < NCOL; i++) put(&r, columns[i]);
  write_row(f, &r);
  for (int i = 0; i < res->n_impls; i++) {
    const c1d_impl_result *ir = &res->impls[i];
    if (ir->state == C1D_RESULT_SKIPPED) {
      memset(&r, 0, sizeof r);
      put_identity(&r, res, ir->name, "oracle", ir->backend, ir->precision, "skipped", ir->skip_reason,
                   NULL, -1, 0);
      write_row(f, &r); /* the remaining cells are empty */
      continue;
    }
    for (int t = 0; t < ir->n_trials; t++) {
      const c1d_trial_result *tr = &ir->trials[t];
      memset(&r, 0, sizeof r);
      put_identity(&r, res, ir->name, "oracle", ir->backend, ir->precision,
                   tr->status == C1D_OK ? "ok" : "failed", NULL, tr->status == C1D_OK ? NULL : tr->error,
                   t, tr->seed);
      put_measurements(&r, res, tr);
      write_row(f, &r);
    }
  }
  /* What the run left out because it cannot run here: a skipped row each, as --impl naming it gives. */
  c1d_unavailable_group g;
  for (int i = 0, groups = c1d_report_unavailable(res, &g, 1); groups && i < g.n; i++) {
    const c1d_impl *impl = c1d_find_impl(g.names[i]); /* NULL in a build without CUDA */
    memset(&r, 0, sizeof r);
    put_identity(&r, res, g.names[i], "oracle", "gpu", impl ? c1d_precision_name(impl->precision) : "",
                 "skipped", g.reason, NULL, -1, 0);
    write_row(f, &r);
  }
  for (int i = 0; i < res->n_comparisons; i++) {
    const c1d_comparison *c = &res->comparisons[i];
    for (int t = 0; t < c->n_trials; t++) {
      const c1d_trial_result *tr = &c->trials[t];
      memset(&r, 0, sizeof r);
      put_identity(&r, res, c->a, c->b, "", "", tr->status == C1D_OK ? "ok" : "failed", NULL,
                   tr->status == C1D_OK ? NULL : tr->error, t, tr->seed);
      put_measurements(&r, res, tr);
      write_row(f, &r);
    }
  }
}
